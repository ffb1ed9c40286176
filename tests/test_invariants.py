"""Houdini invariants: candidate atoms from the loop, kept only when inductive."""
from __future__ import annotations

import numpy as np

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
