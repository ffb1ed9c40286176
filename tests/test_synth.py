"""Synthesis of the combine from `left`'s sketch: candidates agree with h(xs + ys) on
every sampled pair; the checker rejects a wrong term; the deadline is honoured."""
from __future__ import annotations

import time

import pytest

from stages import a, b, loop_of, mps_combine, mx
from thm3.errors import SolverTimeout
from thm3.ir.printer import to_text
from thm3.semantics.samples import batch_combine, make_triples
from thm3.semantics.equality import rows_close
from thm3.synth.check import Checker
from thm3.synth.sketch import field_order, synthesize


def _agrees(loop, combine, triples) -> bool:
    return all(bool(rows_close(g, w).all())
               for t in triples for g, w in zip(batch_combine(combine, t.a, t.b, t.params), t.c))


@pytest.mark.parametrize("name, want", [("sum", ["a.s + b.s"]), ("mps", ["a.s + b.s", "max(a.m, a.s + b.m)"]),
                                        ("count", ["a.n + b.n"]), ("all_positive", ["a.ok and b.ok"])])
def test_synthesize_finds_the_combine(name, want):
    loop = loop_of(name)
    triples = make_triples(loop)
    methods: dict = {}
    cands, tried = synthesize(loop, triples, deadline=time.monotonic() + 30, methods=methods)
    assert cands and tried > 0
    assert [to_text(e) for e in cands[0].outputs] == want
    assert set(methods) == set(loop.field_names)
    assert all(_agrees(loop, c, triples) for c in cands)


def test_checker_rejects_a_wrong_term():
    loop = loop_of("mps")
    triples = make_triples(loop)
    right = mps_combine(loop)
    check = Checker(right.inputs, triples, 1)
    assert check.passes(right.outputs[1])
    assert not check.passes(mx(a("m"), b("m")))


def test_fields_read_by_others_come_first():
    loop = loop_of("mps")          # m' = max(m, s') reads s'
    assert field_order(loop) == [0, 1]


def test_the_deadline_raises_solver_timeout():
    loop = loop_of("welford")
    with pytest.raises(SolverTimeout):
        synthesize(loop, make_triples(loop), deadline=time.monotonic() - 1)
