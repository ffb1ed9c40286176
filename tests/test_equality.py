"""The one comparison of computed states and its tolerance policy."""
from __future__ import annotations

import numpy as np

from thm3.semantics.equality import (APART, LAW, ROUND_OFF, ROUND_OFF_NO_NAN, SAMPLED, apart, close,
                                     rows_close, states_apart, states_close)

INF, NAN = float("inf"), float("nan")


def test_infinities_match_only_themselves():
    assert close(INF, INF) and close(-INF, -INF)
    assert not close(INF, -INF) and not close(INF, 1e300) and not close(1.0, INF, LAW)


def test_nan_policy():
    assert close(NAN, NAN) and not close(NAN, NAN, ROUND_OFF_NO_NAN)
    assert not close(NAN, 1.0)
    assert not apart(NAN, 1.0) and not apart(NAN, NAN)


def test_the_tolerances_are_ordered():
    """Each looser tolerance accepts what a tighter one does, and a gap between
    ROUND_OFF and APART is neither equal nor apart."""
    a = 1000.0
    for rel in (1e-12, 1e-8, 5e-7, 1e-3):
        b = a * (1 + rel)
        got = [bool(close(a, b, t)) for t in (ROUND_OFF, SAMPLED, LAW)]
        assert got == sorted(got), (rel, got)
    assert close(a, a * (1 + 1e-12)) and not apart(a, a * (1 + 1e-12))
    mid = a * (1 + 1e-7)
    assert not close(a, mid, ROUND_OFF) and not apart(a, mid, APART)
    assert apart(a, a * (1 + 1e-3)) and not close(a, a * (1 + 1e-3), LAW)


def test_bool_and_int_compare_exactly():
    assert close(True, True) and not close(True, False)
    assert close(np.int64(3), 3) and not close(np.int64(3), 4)


def test_rows_and_states():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    y = np.array([[1.0, 2.0], [3.0, 4.5]])
    assert rows_close(x, y).tolist() == [True, False]
    assert rows_close(np.array([1.0, NAN]), np.array([1.0, NAN])).tolist() == [True, True]
    assert states_close((1.0, np.array([1.0, 2.0])), (1.0 + 1e-12, np.array([1.0, 2.0])))
    assert not states_close((1.0, np.array([1.0, 2.0])), (1.0, np.array([1.0, 2.1])))
    assert states_apart((1.0, 2.0), (1.0, 3.0)) and not states_apart((1.0, NAN), (1.0, 5.0))
