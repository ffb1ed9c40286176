"""NaN where the proof stops (`thm3/backends/guard.py`): every CPU backend's reduction and
scan against the sequential fold on lists holding -inf, inf and NaN at the starts of runs
and chunks, where a run's state from the identity is NaN but the loop's is not
(log-sum-exp at -inf), and on a loop whose fold leaves NaN behind where its combine would
keep it.  The unguarded tree is shown to be wrong on the same lists, so the tests can fail."""
from __future__ import annotations

import numpy as np
import pytest

import thm3
from analyzed import analysis
from catalog import HOMOMORPHISMS
from closeness import same
from thm3.backends import guard, numpy_tree
from thm3.backends.numpy_tree import Inputs, Plan, Tree, run_parallel, run_sequential, value_table
from thm3.backends.scan import run_sequential_prefixes, scan_numpy, scan_parallel
from thm3.ir import Type

N = 67
SPOTS = [(0,), (4,), (16, 17), (32, 33, 34, 35), (4, 8, 12, 64), (66,)]


def _scalar_real(a) -> bool:
    data = [p for p in a.loop.elements if not p.index]
    return (a.verdict.value == "homomorphism" and data and all(p.type is Type.REAL for p in data)
            and not any(p.type is Type.VEC for p in a.loop.params)
            and not any(f.type is Type.VEC for f in a.loop.fields))


SAMPLES = [s for s in HOMOMORPHISMS]


def _lists(a, seed):
    rng = np.random.default_rng(seed)
    count = len([p for p in a.loop.elements if not p.index])
    for special in (-np.inf, np.inf, np.nan):
        for spots in SPOTS:
            xs = [rng.normal(size=N) for _ in range(count)]
            xs[0][list(spots)] = special
            yield xs


def _params(a):
    return {p.name: 0.5 for p in a.loop.params}


def _cases():
    for s in SAMPLES:
        yield pytest.param(s.path, id=s.name)


@pytest.mark.parametrize("path", list(_cases()))
def test_numpy_and_numba_agree_with_the_loop_at_specials(path, monkeypatch):
    a = analysis(str(path))
    if not _scalar_real(a):
        pytest.skip("Real elements only")
    params = _params(a)
    try:
        from thm3.backends import numba_tree
        monkeypatch.setattr(numba_tree, "CHUNK", 8)          # chunks start at 0, 8, 16, ...
    except ImportError:
        numba_tree = None
    for seed, xs in enumerate(_lists(a, 1)):
        want = run_sequential(a.loop, xs, params)
        prefixes = run_sequential_prefixes(a.loop, xs, params)
        for block in (1, 4):
            same(run_parallel(a.loop, a.combine_fn, xs, params, block=block, width=4), want)
        for lanes in (4, 16, 67):
            same(scan_parallel(a.loop, a.combine_fn, xs, params, lanes=lanes), prefixes)
        same(scan_numpy(a.loop, a.combine_fn, xs, params), prefixes)
        if numba_tree is not None:
            same(numba_tree.run_numba(a.loop, a.combine_fn, xs, params), want)
            same(numba_tree.scan_numba(a.loop, a.combine_fn, xs, params), prefixes)


@pytest.mark.parametrize("name", ["safe_softmax", "logsumexp", "online_softmax_values", "welford", "top2"])
def test_jax_agrees_with_the_loop_at_specials(name):
    pytest.importorskip("jax")
    from catalog import by_name
    from thm3.backends.jax_tree import run_jax, scan_jax
    a = analysis(str(by_name(name).path))
    params = _params(a)
    for xs in _lists(a, 2):
        want = run_sequential(a.loop, xs, params)
        prefixes = run_sequential_prefixes(a.loop, xs, params)
        for lanes in (4, 16):
            same(run_jax(a.loop, a.combine_fn, xs, params, lanes=lanes), want)
            same(scan_jax(a.loop, a.combine_fn, xs, params, lanes=lanes), prefixes)


def _softmax():
    from catalog import by_name
    return analysis(str(by_name("safe_softmax").path))


def test_the_unguarded_tree_is_wrong_where_a_run_starts_at_minus_inf():
    """The defect the guard mends: the runs' states from the identity, combined, are NaN
    where the loop is finite."""
    a = _softmax()
    x = np.random.default_rng(0).normal(size=16)
    x[4] = -np.inf
    want = run_sequential(a.loop, [x], {})
    assert np.isfinite(want).all()
    data = Inputs(a.loop, [x], {}, np.float64, None, None)
    table = value_table(np.float64)
    totals = Plan(a.loop, data, 4, table, a.combine_fn).fold_runs(0, 16)
    assert guard.uncovered_lanes(a.loop, totals).tolist() == [False, True, False, False]
    unguarded = Tree(a.loop, a.combine_fn, data, table).reduce(totals)
    assert np.isnan(unguarded[1]).all()
    same(run_parallel(a.loop, a.combine_fn, [x], {}), want)


def test_carry_folds_only_the_runs_a_nan_touches(monkeypatch):
    a = _softmax()
    x = np.random.default_rng(1).normal(size=4096 * 4)
    x[[8, 4096, 4100]] = -np.inf                 # runs of 4: runs 2, 1024 and 1025 start there
    folded = []
    real = guard.Span.__call__

    def counting(self, state, begin, end):
        folded.append((begin, end))
        return real(self, state, begin, end)

    monkeypatch.setattr(guard.Span, "__call__", counting)
    got = scan_parallel(a.loop, a.combine_fn, [x], {}, lanes=4096)
    assert folded == [(8, 12), (4096, 4100), (4100, 4104)]
    same(got, run_sequential_prefixes(a.loop, [x], {}))


# A loop whose fold forgets a NaN (the select keeps x when acc.m is NaN) while max(a.m, b.m)
# keeps it: the combine is proved over the reals, and the NaN is the loop's business.
FORGETFUL = '''
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    m: Real = -inf


def left(acc: State, x: Real) -> State:
    return State(acc.m if acc.m >= x else x)
'''


def test_a_nan_in_the_data_is_carried_as_the_loop_carries_it(tmp_path):
    path = tmp_path / "forgetful_max.py"
    path.write_text(FORGETFUL)
    a = thm3.analyze(str(path), timeout=60)
    assert a.verdict.value == "homomorphism"
    x = np.random.default_rng(3).normal(size=1000)
    x[2], x[5] = 100.0, np.nan                     # the largest, then forgotten at the NaN
    want = run_sequential(a.loop, [x], {})
    assert want[0] == x[6:].max()                  # the loop starts again after the NaN
    same(run_parallel(a.loop, a.combine_fn, [x], {}), want)
    same(scan_numpy(a.loop, a.combine_fn, [x], {}), run_sequential_prefixes(a.loop, [x], {}))
    same(tuple(a.run(x)), want)


def test_span_counts_index_from_the_whole_list():
    a = analysis(str(next(s.path for s in HOMOMORPHISMS if s.name == "argmax")))
    x = np.random.default_rng(4).normal(size=50)
    data = Inputs(a.loop, [x[20:]], {}, np.float64, None, None, offset=20)
    span = guard.Span(a.loop, data, np.float64, value_table(np.float64), a.combine_fn)
    best, idx = span(numpy_tree.batched_identity(a.loop, 1, None, np.float64), 0, 30)
    assert (best[0, 0], idx[0, 0]) == (x[20:].max(), np.argmax(x[20:]) + 20)


# The largest rise x_j - x_i (i < j, or the element itself against +inf): the loop meets
# -inf - -inf (NaN) once the minimum is -inf and x is -inf, where the combine's
# b.best and b.hi - a.lo give inf; covered states hold finite values or the identity's.
RISE = '''
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    lo: Real = inf
    hi: Real = -inf
    best: Real = -inf


def left(acc: State, x: Real) -> State:
    return State(min(acc.lo, x), max(acc.hi, x), max(acc.best, x - acc.lo))
'''


def _file(tmp_path, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    a = thm3.analyze(str(path), timeout=60)
    assert a.verdict.value == "homomorphism", a.reason
    return a


def test_an_infinity_the_loop_turns_into_nan_is_the_loops(tmp_path):
    a = _file(tmp_path, "rise", RISE)
    x = np.random.default_rng(5).normal(size=200)
    x[[40, 120]] = -np.inf                         # 120 starts a run of 4: inf there before the guard
    want = run_sequential(a.loop, [x], {})
    assert np.isnan(want[2])                        # -inf - -inf in the loop
    same(run_parallel(a.loop, a.combine_fn, [x], {}), want)
    same(scan_parallel(a.loop, a.combine_fn, [x], {}, lanes=16), run_sequential_prefixes(a.loop, [x], {}))


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_dask_joins_chunks_as_the_loop_does(backend, tmp_path):
    """-inf at chunk starts (log-sum-exp) and inside one (the rise): the merges give way to
    the chunks folded in order, and each chunk's scan starts from its carried state."""
    da = pytest.importorskip("dask.array")
    pytest.importorskip(backend)
    import thm3.dask as tdask
    from thm3.backends.numpy_tree import apply_result
    for a, spots in ((_softmax(), [100, 300, 301]), (_file(tmp_path, "rise", RISE), [150, 420])):
        x = np.random.default_rng(6).normal(size=500)
        x[spots] = -np.inf
        lazy = da.from_array(x, chunks=100)
        want = apply_result(a.loop, run_sequential(a.loop, [x], {}), {})
        same(tdask.reduce(a, lazy, backend=backend, split_every=2).compute(), want)
        same(tuple(tdask.scan(a, lazy, backend=backend).compute()), run_sequential_prefixes(a.loop, [x], {}))


def _corpus():
    from corpus import HOMOMORPHISMS as CORPUS
    return CORPUS


def _finite_magnitude(prefixes, n):
    top = np.zeros(n)
    for p in prefixes:
        v = np.abs(np.asarray(p, dtype=np.float64)).reshape(n, -1)
        top = np.maximum(top, np.where(np.isfinite(v), v, 0).max(axis=1))
    return np.maximum.accumulate(top)


@pytest.mark.slow
@pytest.mark.parametrize("entry", _corpus(), ids=lambda e: e.name)
def test_every_corpus_homomorphism_at_specials(entry, tmp_path):
    """-inf, inf and NaN at the starts of runs in every float input, NumPy against the
    sequential fold, and the emitted module's NumPy path (prefixes compared relative to the largest finite magnitude so far:
    another order's rounding, not its specials).  Numba is tested on the samples above:
    a compiled module for each of the corpus's loops held gigabytes for the rest of a
    serial test session, and the timing tests after it missed their deadlines."""
    from thm3.semantics.samples import random_arrays
    a = analysis(str(entry.path))
    if a.combine_fn is None:
        pytest.skip(f"{entry.name}: {a.verdict}")
    rng = np.random.default_rng(7)
    vec = any(x.type is Type.VEC for x in a.loop.fields + a.loop.elements + a.loop.params)
    module = _module(a, tmp_path, dim=4 if vec else None)   # its NumPy path, runs of 4
    for special in (-np.inf, np.inf, np.nan):
        for spots in [(0,), (16, 17), (4, 8, 12, 64)]:
            arrays, params = random_arrays(a.loop, N, 4, rng)
            floats = [x for x in arrays if x.dtype.kind == "f"]
            if not floats:
                pytest.skip(f"{entry.name}: no Real input")
            for x in floats:
                x[list(spots)] = special
            try:
                prefixes = run_sequential_prefixes(a.loop, arrays, params, n=N, dim=4)
            except OverflowError:
                continue
            scale = _finite_magnitude(prefixes, N)
            want = tuple(p[-1] for p in prefixes)
            kw = dict(n=N, dim=4)
            same(run_parallel(a.loop, a.combine_fn, arrays, params, block=4, width=4, **kw), want,
                 rel=1e-6, scale=np.asarray(scale[-1]))
            same(scan_parallel(a.loop, a.combine_fn, arrays, params, lanes=16, **kw), prefixes,
                 rel=1e-6, scale=scale)
            same(scan_numpy(a.loop, a.combine_fn, arrays, params, **kw), prefixes, rel=1e-6, scale=scale)
            data = list(arrays) or [N]
            same(module.reduce_state(*data, backend="numpy", **params), want, rel=1e-6, scale=np.asarray(scale[-1]))
            same(module.scan(*data, backend="numpy", **params), prefixes, rel=1e-6, scale=scale)


# --- the emitted module's own NumPy path (gpu/runtime/host.py, backend="numpy") ------------

def _module(a, tmp_path, dim=None, dtype="float64"):
    import importlib.util
    from thm3.gpu import api as emit_mod
    _, py = emit_mod.emit(a.loop, a.combine_fn, tmp_path, dtype=dtype, dim=dim)
    spec = importlib.util.spec_from_file_location(f"guarded_{a.loop.name}", py)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.RUN = 4                                   # runs start at 0, 4, 8, ...
    return module


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("path", list(_cases()))
def test_the_emitted_modules_numpy_path_agrees_with_the_loop_at_specials(path, dtype, tmp_path):
    """float64, and float32 against the loop in float64 (its rounding apart): the same
    NaN and infinities."""
    a = analysis(str(path))
    if not _scalar_real(a):
        pytest.skip("Real elements only")
    module = _module(a, tmp_path, dtype=dtype)
    params = _params(a)
    rel = 1e-8 if dtype == "float64" else 1e-4
    for xs in _lists(a, 3):
        got = [x.astype(dtype) for x in xs]
        same(module.reduce_state(*got, backend="numpy", **params), run_sequential(a.loop, xs, params), rel)
        same(module.scan(*got, backend="numpy", **params), run_sequential_prefixes(a.loop, xs, params), rel)


def _count_folds(module, monkeypatch) -> list:
    """The spans [begin, end) the module folds element by element, in order."""
    folded = []
    real_fold = module._fold_span

    def counting(state, xs, begin, end, ps, out=None):
        folded.append((begin, end))
        return real_fold(state, xs, begin, end, ps, out)

    monkeypatch.setattr(module, "_fold_span", counting)
    return folded


def test_the_emitted_module_was_wrong_without_the_guard_and_folds_only_what_it_must(tmp_path, monkeypatch):
    """Without the cover check (every run and combine taken as covered) the module's
    NumPy path gives log-sum-exp's NaN where the loop is finite; with it, only the runs
    that hold a -inf are folded element by element."""
    a = _softmax()
    module = _module(a, tmp_path)
    x = np.random.default_rng(8).normal(size=64)
    x[[8, 33]] = -np.inf                             # run 2 starts at -inf; run 8 holds one
    want = run_sequential(a.loop, [x], {})
    assert np.isfinite(want).all()
    folded = _count_folds(module, monkeypatch)
    same(module.reduce_state(x, backend="numpy"), want)
    assert folded == [(8, 12), (32, 36)]
    folded.clear()
    same(module.scan(x, backend="numpy"), run_sequential_prefixes(a.loop, [x], {}))
    assert folded == [(8, 12), (32, 36)]
    monkeypatch.setattr(module, "_uncovered", lambda state: np.zeros(len(state[0]), dtype=bool))
    monkeypatch.setattr(module, "_not_covered", lambda xs, n, ps, size: np.zeros(-(-n // size), dtype=bool))
    assert np.isnan(module.reduce_state(x, backend="numpy")[1])
    assert np.isnan(module.scan(x, backend="numpy")[1][8:]).all()


def test_the_emitted_module_keeps_the_loops_nan_and_forgets_what_it_forgets(tmp_path):
    forgetful, rise = _file(tmp_path, "forgetful_max", FORGETFUL), _file(tmp_path, "rise", RISE)
    x = np.random.default_rng(3).normal(size=1000)
    x[2], x[5] = 100.0, np.nan
    y = np.random.default_rng(5).normal(size=200)
    y[[40, 120]] = -np.inf
    for a, v in ((forgetful, x), (rise, y)):
        module = _module(a, tmp_path / a.loop.name)
        want = run_sequential(a.loop, [v], {})
        same(module.reduce_state(v, backend="numpy"), want)
        same(module.scan(v, backend="numpy"), run_sequential_prefixes(a.loop, [v], {}))
        module.RUN = 1024                            # one run: no combine at all
        same(module.reduce_state(v, backend="numpy"), want)


def test_the_emitted_module_joins_shorter_runs_where_few_are_touched(tmp_path, monkeypatch):
    """Three -inf in 512 elements with runs of 128: the list is cut again into runs of
    SHORT (32), and only the three runs of 32 that hold them are folded element by
    element; the stretches between them are joined by the combine."""
    a = _softmax()
    module = _module(a, tmp_path)
    module.RUN = 128
    short = module.SHORT
    x = np.random.default_rng(9).normal(size=512 + 5)
    spots = [70, 150, 200, 515]
    x[spots] = -np.inf
    folded = _count_folds(module, monkeypatch)
    runs = [(s // short * short, min(len(x), s // short * short + short)) for s in spots]
    same(module.reduce_state(x, backend="numpy"), run_sequential(a.loop, [x], {}))
    assert folded == runs
    folded.clear()
    same(module.scan(x, backend="numpy"), run_sequential_prefixes(a.loop, [x], {}))
    assert folded == runs


def test_the_emitted_module_folds_on_where_a_combine_of_covered_runs_overflows(tmp_path, monkeypatch):
    """A sum whose runs are finite and whose combine is inf (not the identity's 0): the
    stretch gives way to runs one at a time, the combine that overflows to the fold, and
    the rest of the list is folded from inf, as the loop folds it."""
    from catalog import by_name
    a = analysis(str(by_name("sum").path))
    module = _module(a, tmp_path)
    x = np.zeros(64)
    x[[1, 9, 17]] = 1e308                            # one a run of 4; inf from the second on
    x[30] = -1e308
    want = run_sequential(a.loop, [x], {})
    assert want[0] == np.inf
    folded = _count_folds(module, monkeypatch)
    same(module.reduce_state(x, backend="numpy"), want)
    assert folded == [(b, b + 4) for b in range(8, 64, 4)]      # run 0 and 1 joined, then inf
    same(module.scan(x, backend="numpy"), run_sequential_prefixes(a.loop, [x], {}))


def test_the_modules_scalar_helpers_mean_what_thm3s_python_table_means():
    """`_left_py`'s helpers (gpu/runtime/host.py) against the table of thm3's sequential
    fold on Python values, at the values where Python raises and NumPy does not."""
    import math
    from thm3.gpu.runtime import host
    from thm3.ir import Op
    from thm3.semantics.evaluate import PYTHON
    reals = [0.0, -0.0, 1.0, -2.5, 1e-320, 1e308, -1e308, 710.0, -750.0, math.inf, -math.inf, math.nan]
    pairs = {Op.EXP: host._sexp, Op.EXP2: host._sexp2, Op.LOG: host._slog, Op.LOG2: host._slog2,
             Op.SQRT: host._ssqrt}
    for op, f in pairs.items():
        for x in reals:
            same(f(x), PYTHON[op](x))
    for a in reals + [0, 3, -2]:
        for b in reals + [0, 2]:
            same(host._sdiv(a, b), PYTHON[Op.DIV](a, b))
            same(host._smax(a, b), PYTHON[Op.MAX](a, b))
            same(host._smin(a, b), PYTHON[Op.MIN](a, b))
        for n in (-3, -1, 0, 1, 2, 5):
            same(host._spow(a, n), PYTHON[Op.POW](a, n))
            same(host._spown(a, n), PYTHON[Op.POWN](a, n))
