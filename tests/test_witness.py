"""The witness search: every loop of the catalog without a combine over its state gets a
witness, fast, that folding the lists again confirms; every homomorphism gets none.

The re-check folds with `thm3.semantics.samples.fold_left`, not with the search's own batched
folds, so a witness stands on the reference interpreter's word."""
from __future__ import annotations

import time

import numpy as np
import pytest
from catalog import HOMOMORPHISMS, NOT_HOMOMORPHISMS, SAMPLES_DIR

from thm3 import parse_file, parse_source
from thm3.ir import Type
from thm3.semantics.equality import states_close
from thm3.semantics.samples import fold_left
from thm3.analysis.witness import Witness, check_witness, find_witness, states_far, to_elements

# y' = a * y + b over (a, b) pairs: no combine over y alone (the composed map needs the
# product of the a's); two element parameters, so elements are lists.
LINEAR_RECURRENCE = '''"""Linear recurrence y' = a * y + b, keeping y only."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    y: Real = 0     # the value so far


def left(acc: State, a: Real, b: Real) -> State:
    return State(a * acc.y + b)
'''

# A Bool element: whether the list ends with a run of at least two True.
TWO_AT_END = '''"""Two at the end: whether the last two elements are both True."""
from typing import NamedTuple
from thm3.lang import Bool


class State(NamedTuple):
    prev: Bool = False  # the last element was True
    both: Bool = False  # the last two were True


def left(acc: State, x: Bool) -> State:
    return State(x, acc.prev and x)
'''


def _params(loop, w: Witness) -> dict:
    out = {}
    for d in loop.params:
        v = w.params[d.name]
        out[d.name] = np.asarray(v, dtype=np.float64) if d.type is Type.VEC else v
    return out


def _recheck(loop, w: Witness) -> None:
    """h(xs1) == h(xs2) and h(ys + xs1) != h(ys + xs2), folded by the reference fold."""
    assert w.side == "right"
    params = _params(loop, w)
    xs1, xs2, ys = (to_elements(loop, xs) for xs in (w.xs1, w.xs2, w.ys))
    assert ys, "a witness needs a non-empty prefix"
    assert states_close(fold_left(loop, xs1, params, dim=2), fold_left(loop, xs2, params, dim=2))
    assert states_far(fold_left(loop, ys + xs1, params, dim=2), fold_left(loop, ys + xs2, params, dim=2))


@pytest.mark.parametrize("sample", NOT_HOMOMORPHISMS, ids=lambda s: s.name)
def test_not_homomorphism_has_witness(sample):
    loop = parse_file(sample.path)
    t0 = time.monotonic()
    w = find_witness(loop)
    elapsed = time.monotonic() - t0
    assert w is not None, sample.name
    assert elapsed < 1.0, f"{sample.name}: {elapsed:.2f} s"
    _recheck(loop, w)
    assert check_witness(loop, w)
    # one element parameter: elements are plain numbers
    assert all(isinstance(x, (int, float, bool)) for x in w.xs1 + w.xs2 + w.ys)


@pytest.mark.parametrize("sample", HOMOMORPHISMS, ids=lambda s: s.name)
def test_homomorphism_has_none(sample):
    loop = parse_file(sample.path)
    t0 = time.monotonic()
    assert find_witness(loop, timeout=1.0) is None, sample.name
    assert time.monotonic() - t0 < 1.5


def test_witness_is_shortest_on_mts():
    # [] and [-1] both have best tail 0; the prefix [1] tells them apart.
    w = find_witness(parse_file(SAMPLES_DIR / "mts.py"))
    assert (w.xs1, w.xs2, w.ys) == ([], [-1.0], [1.0])
    assert "h([]) == h([-1])" in w.describe()


def test_several_element_parameters_give_lists():
    loop = parse_source(LINEAR_RECURRENCE)
    w = find_witness(loop)
    assert w is not None
    assert all(isinstance(e, list) and len(e) == 2 for e in w.xs1 + w.xs2 + w.ys)
    _recheck(loop, w)


def test_bool_elements():
    loop = parse_source(TWO_AT_END)
    w = find_witness(loop)
    assert w is not None
    _recheck(loop, w)


def test_parameters_are_recorded():
    # Horner's rule is a sum for t = 1: the witness must use another t, and say which.
    w = find_witness(parse_file(SAMPLES_DIR / "horner.py"))
    assert w is not None and w.params["t"] != 1


def test_check_witness_refuses_a_non_witness():
    loop = parse_file(SAMPLES_DIR / "mts.py")
    assert not check_witness(loop, Witness([], [1.0], [1.0]))      # h differs already
    assert not check_witness(loop, Witness([], [-1.0], [-1.0]))     # the prefix does not tell


EMA_WITH_LENGTH = '''"""an EMA whose rate comes with each element, and the length"""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    y: Real = 0
    n: Int = 0


def left(acc: State, x: Real, alpha: Real) -> State:
    assert 0 < alpha < 1
    return State(alpha * acc.y + (1 - alpha) * x, acc.n + 1)
'''


def test_two_values_inside_an_open_interval_tell_a_product_from_a_length():
    """With one value of alpha in (0, 1), alpha**n is a function of the length n and
    (y, n) would look like a homomorphism; a second value in the interval gives the
    witness (and the lifting search, which proves each candidate, skips this one)."""
    from thm3.semantics.critical import around
    inside = [v for v in around([0.0, 1.0], integer=False) if 0 < v < 1]
    assert len(inside) >= 2
    loop = parse_source(EMA_WITH_LENGTH)
    w = find_witness(loop, timeout=5.0)
    assert w is not None and check_witness(loop, w)
    alphas = {e[1] for xs in (w.xs1, w.xs2, w.ys) for e in to_elements(loop, xs)}
    assert len(alphas) >= 2, w.describe()
