"""The bound read from the step (thm3/analysis/int_bounds.py): a count cannot leave int64,
so its operations go unchecked in the NumPy, Numba and CUDA backends and in the emitted
module's NumPy path; every other Int operation stays checked; a list longer than the
bound's length is refused."""
from __future__ import annotations

import numpy as np
import pytest

import thm3
from thm3.analysis.int_bounds import LENGTH_LIMIT, IntBounds, unchecked
from thm3.ir import Op, Type, walk

HEAD = "from typing import NamedTuple\nfrom thm3.lang import Index, Int, Real\n\n"


def _analysis(fields: str, step: str, element: str = "x: Real"):
    src = HEAD + f"class State(NamedTuple):\n{fields}\n\ndef left(acc: State, {element}) -> State:\n    return State({step})\n"
    a = thm3.analyze_source(src, lift=False, timeout=30)
    assert a.combine_fn is not None, a.reason
    return a


def _int_ops(outputs):
    return [e for e in walk(list(outputs)) if e.type is Type.INT and e.op in (Op.ADD, Op.SUB, Op.MUL, Op.NEG)]


def test_a_count_is_bounded_by_the_length():
    a = _analysis("    n: Int = 0\n    s: Real = 0", "acc.n + 1, acc.s + x")
    assert IntBounds(a.loop, a.combine_fn).bounds == {"n": (0, 1)}
    for side, fn in (("left", a.loop.left), ("combine", a.combine_fn)):
        ops = _int_ops(fn.outputs)
        assert ops and unchecked(a.loop, a.combine_fn, fn.outputs, side) == set(ops)


def test_a_bounded_increment_of_either_branch():
    a = _analysis("    n: Int = 0", "acc.n + 3 if x > 0 else acc.n - 2")
    assert IntBounds(a.loop, a.combine_fn).bounds == {"n": (0, 3)}


def test_an_index_sum_is_quadratic_and_stays_checked():
    a = _analysis("    n: Int = 0\n    t: Int = 0", "acc.n + 1, acc.t + acc.n", "x: Real")
    b = IntBounds(a.loop, a.combine_fn).bounds
    assert b["n"] == (0, 1) and b["t"] is None


@pytest.mark.parametrize("fields, step, element", [
    ("    s: Int = 0", "acc.s + x", "x: Int"),              # an element: unbounded
    ("    p: Int = 1", "acc.p * 2", "x: Real"),             # doubling: exponential
    ("    s: Int = 0", "acc.s + i", "i: Index"),            # positions: quadratic
])
def test_growth_past_linear_keeps_the_checks(fields, step, element):
    a = _analysis(fields, step, element)
    assert set(IntBounds(a.loop, a.combine_fn).bounds.values()) == {None}
    for side, fn in (("left", a.loop.left), ("combine", a.combine_fn)):
        assert not unchecked(a.loop, a.combine_fn, fn.outputs, side)


def test_the_backends_drop_the_counts_checks_only():
    """Welford: n + 1 and a.n + b.n unchecked everywhere; a.n * b.n (quadratic) checked."""
    from catalog import SAMPLES_DIR
    from thm3.backends.numba_tree import render
    a = thm3.analyze(SAMPLES_DIR / "welford.py", lift=False, timeout=30)
    text = render(a.loop, a.combine_fn)
    assert "overflows int64 in left" not in text
    assert text.count("overflows int64 in the combine") == 1 and "_mul_overflows(a0, b0)" in text
    pytest.importorskip("thm3.gpu.api")
    from thm3.gpu.render import cuda as R
    from thm3.gpu.render.module import numpy_source
    cu = R.render(a.loop, a.combine_fn, dtype="float64")
    assert "thm3_add_ll(acc." not in cu and "thm3_add_ll(a." not in cu and "thm3_mul_ll(a.n, b.n, 3)" in cu
    py = numpy_source(a.loop, a.combine_fn)
    assert "_iadd" not in py and "_imul(a_n, b_n, 3, 'the combine')" in py


def test_counts_stay_exact_and_checked_sums_still_raise():
    a = _analysis("    n: Int = 0\n    s: Int = 0", "acc.n + 1, acc.s + x", "x: Int")
    xs = np.arange(5000)
    assert a.run(xs) == (5000, int(xs.sum()))
    with pytest.raises(OverflowError, match="Int field s"):
        a.run(np.array([2**62, 2**62]))
    with pytest.raises(OverflowError, match="Int field s"):
        a.scan(np.array([2**62, 2**62]))


def test_a_longer_list_than_the_bound_is_refused():
    from thm3.backends.numpy_tree import run_parallel
    a = _analysis("    n: Int = 0", "acc.n + 1", "i: Index")
    with pytest.raises(OverflowError, match="longer than 2\\*\\*56"):
        run_parallel(a.loop, a.combine_fn, [], {}, n=LENGTH_LIMIT + 1)
    with pytest.raises(OverflowError, match="longer than 2\\*\\*56"):   # a chunk far along the list
        run_parallel(a.loop, a.combine_fn, [], {}, n=10, offset=LENGTH_LIMIT)
    assert run_parallel(a.loop, a.combine_fn, [], {}, n=10, offset=LENGTH_LIMIT - 10) == (10,)


def test_the_accumulate_scan_of_an_int_sum_is_checked():
    """The NumPy scan of a monoid combine ran `np.add.accumulate`, which wrapped an Int sum;
    it takes that route now only for sums the bound proves in range (a count)."""
    from thm3.backends.scan import monoid_ufuncs
    a = _analysis("    s: Int = 0", "acc.s + x", "x: Int")
    assert monoid_ufuncs(a.loop, a.combine_fn) is None
    with pytest.raises(OverflowError, match="Int field s"):
        a.scan(np.array([2**62, 2**62]))
    assert (a.scan(np.array([2**61, 2**61, -5])).s == [2**61, 2**62, 2**62 - 5]).all()
    c = _analysis("    n: Int = 0", "acc.n + 1")
    assert monoid_ufuncs(c.loop, c.combine_fn) == [np.add]
