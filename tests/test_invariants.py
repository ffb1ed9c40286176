"""Houdini invariants: candidate atoms from the loop, kept only when inductive."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

import thm3
from thm3.ir.printer import to_text

from stages import later, loop_of
from thm3.analysis.invariants import candidates, infer
from thm3.semantics.evaluate import NUMPY, evaluate, quiet
from thm3.semantics.samples import make_triples


def _texts(exprs):
    return {repr(e).replace("acc.", "") for e in exprs}


def test_mps_invariants():
    loop = loop_of("mps")
    inv, timed_out = infer(loop, make_triples(loop), later())
    assert not timed_out
    assert {"m >= 0", "m >= s"} <= _texts(inv)
    assert "s >= 0" not in _texts(inv)                   # false on [-1]
    assert _texts(inv) <= _texts(candidates(loop))


def test_invariants_hold_on_reachable_states():
    loop = loop_of("safe_softmax")
    triples = make_triples(loop)
    inv, _ = infer(loop, triples, later())
    assert inv
    for t in triples:
        env = {f"acc.{f.name}": v for f, v in zip(loop.fields, t.c)} | t.params
        with quiet():
            for e, v in zip(inv, evaluate(inv, env, NUMPY)):
                assert bool(np.all(v)), repr(e)


def test_no_time_keeps_nothing_unproved():
    loop = loop_of("mps")
    inv, timed_out = infer(loop, make_triples(loop), 0.0)
    assert timed_out and inv == []


def test_an_equality_left_tests_carries_facts():
    # the longest increasing run tests lead == n (the leading run is the whole list); then
    # the trailing run and the best are the whole list too, and not otherwise
    loop = thm3.parse_file(Path(__file__).resolve().parents[1] / "bench" / "corpus" / "autolifter_lis_lifted.py")
    inv, timed_out = infer(loop, make_triples(loop), time.monotonic() + 30)
    text = {to_text(i) for i in inv}
    assert not timed_out
    assert "not acc.lead == acc.n or acc.trail == acc.n" in text
    assert "acc.lead == acc.n or not acc.trail == acc.n" in text
    assert "not acc.lead == acc.n or acc.best == acc.n" in text
