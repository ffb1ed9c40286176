"""Bool fields and elements in the synthesis routes (issue 22): the interpolation route on
a state of Bool fields only (it has no numeric terms to fit: it crashed with "need at
least one array to stack"), and the weak-right-inverse route with a Bool element (a Z3
Bool has no SymPy side: it crashed with "'BoolRef' object has no attribute 'sp'")."""
from __future__ import annotations

import time

import pytest

import thm3
from thm3.semantics.samples import fold_left, make_triples
from thm3.synth import interpolation, inverse

ENDS_POSITIVE = '''"""Whether the list ends with a positive element."""
from typing import NamedTuple
from thm3.lang import Bool, Real


class State(NamedTuple):
    ends: Bool = False
    seen: Bool = False


def left(acc: State, x: Real) -> State:
    return State(x > 0, True)
'''

ENDS_ONE_ZERO = '''"""Whether the list ends with 1 then 0 (a homomorphism: b's first element and
whether b has two)."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    seen: Bool = False
    many: Bool = False
    first0: Bool = False
    last1: Bool = False
    ends10: Bool = False


def left(acc: State, x: Int) -> State:
    return State(True, acc.seen, acc.first0 if acc.seen else x == 0, x == 1, acc.last1 and x == 0)
'''

PEAK = '''"""A Bool element and a Bool field beside max and min."""
from typing import NamedTuple
from thm3.lang import Bool, Real


class State(NamedTuple):
    acc2: Real = 0
    low: Real = 0.5
    peak: Bool = False


def left(acc: State, x: Bool) -> State:
    return State(max(acc.low / 0.75, acc.low * 0.5, acc.acc2 * acc.acc2), min(acc.low, 4.5), acc.peak or acc.peak)
'''


def test_interpolation_of_an_all_bool_state():
    loop = thm3.parse_source(ENDS_POSITIVE)
    fn = interpolation.synthesize(loop, time.monotonic() + 30)
    from thm3.semantics.samples import batch_combine
    for xs in ([], [1.0], [-1.0], [1.0, -2.0]):
        for ys in ([], [2.0], [-1.0], [-1.0, 3.0]):
            a, b = fold_left(loop, [(x,) for x in xs], {}), fold_left(loop, [(y,) for y in ys], {})
            got = tuple(bool(v) for v in batch_combine(fn, a, b, {}))
            assert got == tuple(bool(v) for v in fold_left(loop, [(x,) for x in xs + ys], {})), (xs, ys)


def test_weak_right_inverse_with_a_bool_element():
    loop = thm3.parse_source(PEAK)
    try:
        inverse.synthesize(loop, make_triples(loop), time.monotonic() + 20)
    except inverse.Failed:
        pass                    # no inverse of the searched shape is an answer; a crash is not


@pytest.mark.slow
def test_peak_loop_end_to_end_answers():
    a = thm3.analyze_source(PEAK, timeout=20)
    assert a.verdict in ("homomorphism", "unknown")


@pytest.mark.slow
def test_ends_with_one_then_zero_end_to_end_answers():
    """The sketch finds no combine, so the interpolation route runs on the all-Bool state."""
    a = thm3.analyze_source(ENDS_ONE_ZERO, timeout=30, lift=False)
    assert a.verdict in ("homomorphism", "unknown"), a.reason
    if a.verdict == "unknown":
        assert "interpolation: none" in a.reason
