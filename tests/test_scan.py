"""The scan: every prefix state, inclusive and in list order, on NumPy, Numba and CUDA,
against the sequential prefixes (the plain left fold, keeping every state); `a.combine`
on batches of States; Vec defaults other than 0."""
from __future__ import annotations

import re

import numpy as np
import pytest

import thm3
from analyzed import analysis
from catalog import HOMOMORPHISMS, by_name
from closeness import same as _same
from thm3.backends import numpy_tree
from thm3.backends.scan import (monoid_ufuncs, prefix_results, run_sequential_prefixes, scan_accumulate,
                                scan_numpy, scan_parallel)
from thm3.errors import UsageError
from thm3.ir import Fn, Op, Type, var
from thm3.ir.core import Expr
from thm3.semantics.samples import random_arrays


def _dim(a):
    uses_vec = any(x.type is Type.VEC for x in a.loop.fields + a.loop.elements + a.loop.params)
    return 4 if uses_vec else None


def _finite_case(a, n, rng):
    """Random inputs on which the sequential fold stays finite (Horner's with |t| > 1
    overflows on long lists, where two orders round inf - inf differently)."""
    dim = _dim(a) or 4
    for _ in range(8):
        arrays, params = random_arrays(a.loop, n, dim, rng)
        prefixes = run_sequential_prefixes(a.loop, arrays, params)
        if all(_in_range(p) for p in prefixes):
            return arrays, params, prefixes
    pytest.skip(f"{a.loop.name}: no random list of {n} elements keeps every prefix within floating-point "
                "range (a product under- or overflows there, and then no two orders of rounding agree)")


def _in_range(p) -> bool:
    """Finite, and far from overflow and underflow (where the order of rounding decides)."""
    v = np.abs(np.asarray(p, dtype=np.float64))
    return bool(np.all(np.isfinite(v)) and np.all((v == 0) | ((v > 1e-250) & (v < 1e250))))


@pytest.fixture
def small_numba_chunks(monkeypatch):
    """Numba chunks of 64 elements, so that n = 1007 crosses many chunk boundaries."""
    numba_tree = pytest.importorskip("thm3.backends.numba_tree")
    monkeypatch.setattr(numba_tree, "CHUNK", 64)
    return numba_tree


@pytest.mark.parametrize("n", [0, 1, 1007])
@pytest.mark.parametrize("sample", HOMOMORPHISMS, ids=lambda s: s.name)
def test_numpy_scan_equals_sequential_prefixes(sample, n):
    a = analysis(str(sample.path))
    arrays, params, want = _finite_case(a, n, np.random.default_rng(n + 11))
    # 16 lanes: runs of 63 elements, so the carried prefixes cross many runs
    got = scan_parallel(a.loop, a.combine_fn, arrays, params, lanes=16)
    _same(got, want)
    _same(tuple(a.scan(*arrays, **params)), want)
    _same(a.scan(*arrays, result=True, **params), prefix_results(a.loop, want, params))


@pytest.mark.parametrize("n", [0, 1, 1007])
@pytest.mark.parametrize("sample", HOMOMORPHISMS, ids=lambda s: s.name)
def test_numba_scan_and_reduce_equal_sequential(sample, n, small_numba_chunks):
    a = analysis(str(sample.path))
    arrays, params, want = _finite_case(a, n, np.random.default_rng(n + 11))
    _same(small_numba_chunks.scan_numba(a.loop, a.combine_fn, arrays, params), want)
    final = numpy_tree.run_sequential(a.loop, arrays, params)
    _same(small_numba_chunks.run_numba(a.loop, a.combine_fn, arrays, params), final)
    _same(a.run(*arrays, backend="numba", **params), numpy_tree.apply_result(a.loop, final, params))
    _same(small_numba_chunks.run_numba_sequential(a.loop, a.combine_fn, arrays, params), final, rel=0)


@pytest.mark.slow
@pytest.mark.parametrize("sample", HOMOMORPHISMS, ids=lambda s: s.name)
def test_scans_at_a_million(sample):
    a = analysis(str(sample.path))
    arrays, params, want = _finite_case(a, 10**6, np.random.default_rng(5))
    _same(scan_parallel(a.loop, a.combine_fn, arrays, params), want)
    numba_tree = pytest.importorskip("thm3.backends.numba_tree")
    _same(numba_tree.scan_numba(a.loop, a.combine_fn, arrays, params), want)


NAN_SAMPLES = ["sum", "max", "min", "mps", "safe_softmax", "logsumexp", "argmax", "welford", "product",
               "top2", "affine"]


@pytest.mark.parametrize("n", [1, 2, 1007])
@pytest.mark.parametrize("name", NAN_SAMPLES)
def test_nan_and_inf_as_the_sequential_loop(name, n, small_numba_chunks):
    """NaN, inf and -inf placed in the input: every backend's prefixes and final state
    carry them where the sequential loop does."""
    a = analysis(str(by_name(name).path))
    rng = np.random.default_rng(n)
    arrays, params = random_arrays(a.loop, n, 4, rng)
    for x in arrays:
        if x.dtype.kind == "f":
            at = rng.integers(0, n, size=3)
            x[at[0]], x[at[1]], x[at[2]] = np.inf, -np.inf, np.nan
    want = run_sequential_prefixes(a.loop, arrays, params)
    _same(scan_parallel(a.loop, a.combine_fn, arrays, params, lanes=8), want)
    _same(small_numba_chunks.scan_numba(a.loop, a.combine_fn, arrays, params), want)
    final = numpy_tree.run_sequential(a.loop, arrays, params)
    _same(small_numba_chunks.run_numba(a.loop, a.combine_fn, arrays, params), final)
    _same(numpy_tree.run_parallel(a.loop, a.combine_fn, arrays, params), final)


def test_index_counts_from_the_offset():
    """A part of a longer list (a Dask chunk) reads Index from its place in the list."""
    a = analysis(str(by_name("argmax").path))
    x = np.random.default_rng(0).standard_normal(300)
    whole = run_sequential_prefixes(a.loop, [x], {})
    part = scan_parallel(a.loop, a.combine_fn, [x[100:]], {}, lanes=8, offset=100)
    # the part's own argmax positions are global positions of elements >= 100
    assert part[1].min() >= 100
    state = numpy_tree.run_parallel(a.loop, a.combine_fn, [x[100:]], {}, offset=100)
    assert state[1] == 100 + int(np.argmax(x[100:]))
    assert whole[1][-1] == int(np.argmax(x))


def test_scan_of_a_non_commutative_combine_keeps_order():
    """Composition of affine maps: swapping any two operands changes the answer."""
    a = analysis(str(by_name("affine").path))
    rng = np.random.default_rng(2)
    xs = [rng.uniform(-1.1, 1.1, 513), rng.standard_normal(513)]
    want = run_sequential_prefixes(a.loop, xs, {})
    for lanes in (1, 2, 3, 7, 64, 513, 4096):
        _same(scan_parallel(a.loop, a.combine_fn, xs, {}, lanes=lanes), want)


# --- the accumulate route: a combine that is a monoid ufunc field by field -----------------

POSITIONS = '''"""Sum of the positions of the positive elements, and their count."""
from typing import NamedTuple
from thm3.lang import Index, Int, Real


class State(NamedTuple):
    t: Int = 0      # sum of the positions of the positive elements
    k: Int = 0      # how many there are


def left(acc: State, x: Real, i: Index) -> State:
    return State(acc.t + (i if x > 0 else 0), acc.k + (1 if x > 0 else 0))
'''


def test_monoid_ufuncs_are_read_off_the_combine():
    ufuncs = lambda name: monoid_ufuncs(*(lambda a: (a.loop, a.combine_fn))(analysis(str(by_name(name).path))))  # noqa: E731
    assert ufuncs("sum") == [np.add]
    assert ufuncs("range") == [np.maximum, np.minimum]
    assert ufuncs("all_positive") == [np.logical_and]
    assert ufuncs("any_negative") == [np.logical_or]
    assert ufuncs("vec_sum") == [np.add]
    # a monoid in one field but not in another: the blocked scan
    for name in ("mps", "brackets", "affine", "welford", "argmax", "mean", "first"):
        assert ufuncs(name) is None, name
    loop = analysis(str(by_name("range").path)).loop
    hi, lo = (var("a.hi", Type.REAL), var("b.hi", Type.REAL)), (var("a.lo", Type.REAL), var("b.lo", Type.REAL))

    def fn(*outputs):
        return Fn(tuple((f"{s}.{f.name}", Type.REAL) for s in "ab" for f in loop.fields), outputs)

    def op(o, x, y):
        return Expr(o, Type.REAL, (x, y))
    low = op(Op.MIN, *lo)
    assert monoid_ufuncs(loop, fn(op(Op.MAX, *hi), low)) == [np.maximum, np.minimum]
    assert monoid_ufuncs(loop, fn(op(Op.ADD, hi[1], hi[0]), low)) == [np.add, np.minimum]   # + commutes
    assert monoid_ufuncs(loop, fn(op(Op.MAX, hi[1], hi[0]), low)) is None   # ties: which zero
    assert monoid_ufuncs(loop, fn(op(Op.SUB, *hi), low)) is None
    assert monoid_ufuncs(loop, fn(op(Op.MAX, hi[0], lo[1]), low)) is None   # another field
    assert monoid_ufuncs(loop, fn(op(Op.MAX, hi[0], hi[0]), low)) is None
    assert monoid_ufuncs(loop, fn(op(Op.MAX, *hi), op(Op.MIN, lo[0], op(Op.ADD, *lo)))) is None


def _monoidal(sample) -> bool:
    """The catalog's combine is a product of ufunc monoids: each field `a.f op b.f`
    (op one of + * and or) or `max`/`min(a.f, b.f)`."""
    pats = [r"a\.{f} (\+|\*|and|or) b\.{f}", r"(max|min)\(a\.{f}, b\.{f}\)"]
    return all(any(re.fullmatch(p.format(f=re.escape(f)), text) for p in pats) for f, text in sample.combine)


# from the catalog, not from analyses at collection time (which would analyse every
# sample for a default tier that keeps only some of them)
ACCUMULATED = [s for s in HOMOMORPHISMS if _monoidal(s)]


def test_the_accumulate_route_is_taken_exactly_for_monoid_combines():
    """monoid_ufuncs recognises the derived combine of every catalog sample whose
    expected combine is a product of ufunc monoids, and of no other."""
    assert len(ACCUMULATED) >= 8
    for s in HOMOMORPHISMS:
        a = analysis(str(s.path))
        assert (monoid_ufuncs(a.loop, a.combine_fn) is not None) == (s in ACCUMULATED), s.name


@pytest.mark.parametrize("n", [0, 1, 1007])
@pytest.mark.parametrize("sample", ACCUMULATED, ids=lambda s: s.name)
def test_accumulate_scan_equals_sequential_prefixes(sample, n):
    """Chunks of 64 elements, so the carried prefix crosses many chunk boundaries."""
    a = analysis(str(sample.path))
    arrays, params, want = _finite_case(a, n, np.random.default_rng(n + 3))
    ufuncs = monoid_ufuncs(a.loop, a.combine_fn)
    _same(scan_accumulate(a.loop, ufuncs, arrays, params, chunk=64), want)
    _same(scan_numpy(a.loop, a.combine_fn, arrays, params), want)


@pytest.mark.parametrize("name", ["sum", "max", "min", "product", "range"])
def test_accumulate_scan_with_nan_and_inf(name):
    a = analysis(str(by_name(name).path))
    rng = np.random.default_rng(7)
    arrays, params = random_arrays(a.loop, 500, 4, rng)
    arrays[0][[3, 200, 499]] = [np.inf, np.nan, -np.inf]
    want = run_sequential_prefixes(a.loop, arrays, params)
    _same(scan_accumulate(a.loop, monoid_ufuncs(a.loop, a.combine_fn), arrays, params, chunk=64), want)


def test_accumulate_scan_reads_index_from_the_offset():
    a = thm3.analyze_source(POSITIONS, name="positions")
    # t, a sum of positions, grows as n**2: no bound proves a.t + b.t in int64, so
    # scan_numpy takes the checked blocked scan (the count k alone would accumulate)
    assert monoid_ufuncs(a.loop, a.combine_fn) is None
    x = np.random.default_rng(8).standard_normal(1000)
    want = run_sequential_prefixes(a.loop, [x], {})
    got = scan_accumulate(a.loop, [np.add, np.add], [x], {}, chunk=64)
    _same(got, want)
    assert got[0].dtype == np.int64 and got[0][-1] == int(np.flatnonzero(x > 0).sum())
    part = scan_numpy(a.loop, a.combine_fn, [x[300:]], {}, offset=300)
    assert part[0][-1] == int(np.flatnonzero(x > 0)[np.flatnonzero(x > 0) >= 300].sum())


def test_a_monoid_in_one_field_only_takes_the_blocked_scan():
    """mps: s = a.s + b.s is a monoid, m = max(a.m, a.s + b.m) is not; accumulating s
    alone and m as a max would be wrong, the blocked scan is right."""
    a = analysis(str(by_name("mps").path))
    x = np.random.default_rng(9).standard_normal(1007)
    want = run_sequential_prefixes(a.loop, [x], {})
    _same(scan_numpy(a.loop, a.combine_fn, [x], {}), want)
    wrong = scan_accumulate(a.loop, [np.add, np.maximum], [x], {})
    assert not np.allclose(wrong[1], want[1])


# --- a.combine on batches -----------------------------------------------------------------

def test_combine_on_batches_is_lane_by_lane():
    """Before: fields given as arrays came back as lane 0 only."""
    a = analysis(str(by_name("welford").path))
    rng = np.random.default_rng(3)
    xs, ys = rng.standard_normal((2, 5, 7))
    hx = [numpy_tree.run_sequential(a.loop, [x], {}) for x in xs]
    hy = [numpy_tree.run_sequential(a.loop, [y], {}) for y in ys]
    batch = lambda states: a.State(*(np.array(f) for f in zip(*states)))  # noqa: E731
    got = a.combine(batch(hx), batch(hy))
    assert all(np.shape(f) == (5,) for f in got)
    for i in range(5):
        _same(tuple(f[i] for f in got), numpy_tree.run_sequential(a.loop, [np.concatenate([xs[i], ys[i]])], {}))
    # one State against a batch broadcasts the single one
    one = a.combine(hx[0], batch(hy))
    _same(tuple(f[3] for f in one), tuple(a.combine(hx[0], hy[3])))


def test_combine_on_vec_batches():
    a = analysis(str(by_name("vec_sum").path))
    u, v = np.arange(12.0).reshape(3, 4), np.ones((3, 4))
    got = a.combine((u,), (v,))
    assert np.array_equal(got[0], u + v)
    assert np.array_equal(a.combine((u[1],), (v[1],))[0], u[1] + v[1])


def test_combine_refuses_batches_of_different_sizes():
    a = analysis(str(by_name("mps").path))
    with pytest.raises(UsageError, match="different sizes"):
        a.combine((np.zeros(3), np.zeros(3)), (np.zeros(4), np.zeros(4)))
    with pytest.raises(UsageError, match="shape"):
        a.combine((np.zeros((2, 2)), np.zeros(2)), (0.0, 0.0))


# --- Vec defaults ----------------------------------------------------------------------------

GATED = '''"""Gated vector recurrence: h = a * h + x lane by lane, with the product of the gates."""
from typing import NamedTuple
from thm3.lang import Vec


class State(NamedTuple):
    A: Vec = 1      # the gates' product so far
    h: Vec = 0


def left(acc: State, a: Vec, x: Vec) -> State:
    return State(acc.A * a, a * acc.h + x)
'''


def test_a_vec_default_may_be_any_number():
    a = thm3.analyze_source(GATED, name="gated")
    assert a.loop.fields[0].default == 1.0
    assert a.verdict == "homomorphism"
    assert all(a.proofs[k] == "proved" for k in ("identity", "associativity", "homomorphism"))
    rng = np.random.default_rng(4)
    gates, xs = rng.uniform(0.5, 1.0, (301, 3)), rng.standard_normal((301, 3))
    final = numpy_tree.run_sequential(a.loop, [gates, xs], {})
    assert np.allclose(final[0], np.prod(gates, axis=0))
    _same(numpy_tree.run_parallel(a.loop, a.combine_fn, [gates, xs], {}), final)
    want = run_sequential_prefixes(a.loop, [gates, xs], {})
    _same(scan_parallel(a.loop, a.combine_fn, [gates, xs], {}, lanes=8), want)
    empty = scan_parallel(a.loop, a.combine_fn, [gates[:0], xs[:0]], {})
    assert empty[0].shape == (0, 3)


def test_a_vec_default_may_not_be_a_bool():
    with pytest.raises(thm3.LoopError, match="does not fit field `A: Vec`"):
        thm3.analyze_source(GATED.replace("A: Vec = 1", "A: Vec = True"), name="gated")


# --- CUDA ------------------------------------------------------------------------------------

@pytest.mark.parametrize("sample", HOMOMORPHISMS, ids=lambda s: s.name)
def test_scan_kernels_compile(sample):
    nvrtc = pytest.importorskip("thm3.gpu.runtime.nvrtc")
    if not nvrtc.available():
        pytest.skip("NVRTC (cuda-bindings + nvidia-cuda-nvrtc-cu12) is not installed")
    from thm3.gpu.render import cuda as R
    from thm3.gpu.render.module import reduction_module
    from thm3.gpu.render.scan import render_scan
    a = analysis(str(sample.path))
    for dtype in ("float32", "float64"):
        src = render_scan(a.loop, a.combine_fn, dtype=dtype, dim=_dim(a))
        for name in ("thm3_scan_blocks", "thm3_scan_partials", "thm3_scan_down", "thm3_scan_rows"):
            assert f"void __launch_bounds__(THM3_SCAN_BLOCK)\n{name}(" in src
        for arch in ("sm_90", "sm_80"):
            assert nvrtc.compile_cuda(src, arch=arch, name=f"{sample.name}.scan.cu")
    text = reduction_module(a.loop, a.combine_fn, R.render(a.loop, a.combine_fn, dim=_dim(a)), dim=_dim(a))
    namespace: dict = {}
    exec(compile(text, f"{sample.name}.py", "exec"), namespace)   # thm3's own output; no CuPy needed
    assert callable(namespace["scan"]) and callable(namespace["scan_rows"])


def _cupy_scan_check(name, n, *, specials=True):
    import cupy
    a = analysis(str(by_name(name).path))
    rng = np.random.default_rng(n % 1000)
    arrays, params = random_arrays(a.loop, n, 4, rng)
    if specials and n > 2:
        for x in arrays:
            if x.dtype.kind == "f":
                x[[1, n // 2, n - 1]] = [np.inf, np.nan, -np.inf]
    got = a.scan(*[cupy.asarray(x) for x in arrays], backend="cupy", **params)
    got = tuple(cupy.asnumpy(f) for f in got)
    want = scan_parallel(a.loop, a.combine_fn, arrays, params)
    _same(got, want, rel=1e-9)


@pytest.mark.gpu
@pytest.mark.parametrize("n", [0, 1, 2, 100_003])
@pytest.mark.parametrize("name", ["sum", "mps", "welford", "safe_softmax", "argmax", "affine"])
def test_cuda_scan_equals_numpy(name, n):
    _cupy_scan_check(name, n)


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.parametrize("name", ["sum", "argmax"])
def test_cuda_scan_past_two_to_the_31(name):
    """64-bit indexing: positions beyond 2**31 - 1, and an argmax index beyond it."""
    _cupy_scan_check(name, 2**31 + 5, specials=False)


@pytest.mark.gpu
def test_cuda_scan_rows():
    import cupy
    from thm3.gpu.api import emitted_module
    a = analysis(str(by_name("mps").path))
    x = np.random.default_rng(9).standard_normal((5, 3001))
    mod = emitted_module(a.loop, a.combine_fn, dtype="float64", dim=None)
    got = [cupy.asnumpy(f) for f in mod.scan_rows(cupy.asarray(x))]
    for r in range(5):
        _same(tuple(f[r] for f in got), run_sequential_prefixes(a.loop, [x[r]], {}), rel=1e-9)
