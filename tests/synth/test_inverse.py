"""The weak right inverse (`thm3.synth.inverse`) by cases: a state that is its own short
list only by how many of its fields still hold their initial value (the two most recent
distinct ids: none, one or two so far) gets g(b) chosen by b's pattern, and the combine
foldl(left, a, g(b)) proved as a whole; a g whose elements break the loop's
preconditions never counts as giving a state back."""
from __future__ import annotations

import random
import time

import numpy as np

import thm3
from thm3.ir import Type, var
from thm3.semantics.samples import make_triples
from thm3.synth import inverse

from test_synth_routes import CORPUS, _alone, _proved

RECENT = CORPUS / "last_two_distinct.py"


def _fold(xs, state=(-1, -1)):
    r1, r2 = state
    for x in xs:
        if x != r1:
            r1, r2 = x, r1
    return (r1, r2)


def test_the_route_alone_proves_the_recency_list_by_cases():
    got = _alone("weak right inverse", RECENT, 30)
    assert _proved(got), got.tried()
    assert "by cases" in got.methods["r1"], got.methods


def test_the_combine_by_cases_agrees_with_the_fold_on_random_splits():
    a = thm3.analyze(RECENT, lift=False, timeout=60)
    assert a.verdict == "homomorphism" and all(a.proofs[k] == "proved" for k in ("associativity", "identity", "homomorphism")), a.proofs
    rng = random.Random(3)
    for _ in range(400):
        xs = [rng.randrange(4) for _ in range(rng.randrange(6))]
        ys = [rng.randrange(4) for _ in range(rng.randrange(6))]
        assert tuple(a.combine(_fold(xs), _fold(ys))) == _fold(xs + ys), (xs, ys)


def test_a_list_that_breaks_the_precondition_gives_nothing_back():
    loop = thm3.parse_file(RECENT)
    triples = list(make_triples(loop))
    rows = inverse._Rows(loop, triples[0], slice(None))
    r1, r2 = rows.t
    g = [(var("b.r2", Type.INT),), (var("b.r1", Type.INT),)]
    one_id = (np.asarray(r2).ravel() == -1) & (np.asarray(r1).ravel() != -1)
    assert one_id.any()
    # on states with one id, g = [r2, r1] folds -1 first, which the loop's assert refuses
    assert not rows.meets_preconditions(g, rows=one_id)
    assert not rows.gives_back(g, rows=one_id, preconditions=True) and rows.gives_back(g, rows=one_id)
    two_ids = np.asarray(r2).ravel() != -1
    assert rows.meets_preconditions(g, rows=two_ids) and rows.gives_back(g, rows=two_ids, preconditions=True)


THREE_SUMS = """from typing import NamedTuple
from thm3.lang import Real

class State(NamedTuple):
    p: Real = 0
    q: Real = 0
    r: Real = 0

def left(acc: State, x: Real, y: Real, z: Real) -> State:
    return State(acc.p + x, acc.q + y, acc.r + z)
"""


def test_more_patterns_than_pieces_get_no_inverse_by_cases():
    loop = thm3.parse_source(THREE_SUMS)
    triples = list(make_triples(loop))
    full = [inverse._Rows(loop, t, slice(None)) for t in triples]
    t0 = time.monotonic()
    try:
        inverse._piecewise(loop, time.monotonic() + 10, full)
    except inverse.Failed as e:
        assert "8 patterns" in str(e) and "no inverse by cases" in str(e), str(e)
    else:
        raise AssertionError(f"three independent sums give 2**3 patterns, more than {inverse.MAX_PIECES} cases")
    assert time.monotonic() - t0 < 2.0
