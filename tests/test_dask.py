"""thm3.dask: the reduction and the scan over dask.array inputs, against the sequential
fold; small cases on Dask's synchronous scheduler, and 10**7 elements in 16 uneven
chunks on a real `distributed.LocalCluster` with two worker processes (slow)."""
from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

from analyzed import analysis                                      # noqa: E402
from catalog import by_name                                        # noqa: E402
from thm3.backends import numpy_tree                               # noqa: E402
from thm3.backends.scan import prefix_results, run_sequential_prefixes, scan_parallel  # noqa: E402
from thm3.semantics.samples import random_arrays                  # noqa: E402

import thm3.dask as tdask                                          # noqa: E402

# sum, Welford, max prefix sum, online softmax, argmax with Index, a linear recurrence
CLUSTER_SAMPLES = ["sum", "welford", "mps", "safe_softmax", "argmax", "affine"]


def _values(v):
    return [np.asarray(x, dtype=np.float64) for x in (v if isinstance(v, tuple) else (v,))]


def _same(got, want, rel=1e-9):
    for u, v in zip(_values(got), _values(want), strict=True):
        assert u.shape == v.shape
        with np.errstate(all="ignore"):
            ok = (u == v) | (np.isnan(u) & np.isnan(v)) | (np.abs(u - v) <= rel * np.maximum(1.0, np.abs(v)))
        assert ok.all(), (u[~ok][:5], v[~ok][:5])


def _uneven(n: int, parts: int, rng) -> tuple:
    cuts = np.sort(rng.choice(np.arange(1, n), size=parts - 1, replace=False))
    return tuple(int(c) for c in np.diff(np.concatenate([[0], cuts, [n]])))


def _dask(arrays, chunks):
    return [da.from_array(x, chunks=(chunks,) + x.shape[1:]) for x in arrays]


@pytest.mark.parametrize("split_every", [2, 3, 8])
@pytest.mark.parametrize("name", CLUSTER_SAMPLES + ["first", "last", "vec_sum"])
def test_reduce_and_scan_on_small_uneven_chunks(name, split_every):
    """Groups of split_every adjacent partials keep list order: `affine`, `first`, `last`
    and `argmax`'s ties would come out wrong from any reordering."""
    a = analysis(str(by_name(name).path))
    rng = np.random.default_rng(split_every)
    n = 3001
    arrays, params = random_arrays(a.loop, n, 4, rng)
    chunks = _uneven(n, 11, rng)
    xs = _dask(arrays, chunks)
    want = numpy_tree.apply_result(a.loop, numpy_tree.run_sequential(a.loop, arrays, params), params)
    lazy = tdask.reduce(a, *xs, split_every=split_every, backend="numpy", **params)
    _same(lazy.compute(scheduler="sync"), want)
    prefixes = run_sequential_prefixes(a.loop, arrays, params)
    lazy = tdask.scan(a, *xs, backend="numpy", **params)
    assert isinstance(lazy, tdask.LazyState)
    assert all(len(f.chunks[0]) == len(chunks) for f in lazy.fields)
    got = lazy.compute(scheduler="sync")             # one object, one compute: a State
    assert got._fields == a.loop.field_names
    _same(tuple(got), prefixes)
    _same(tuple(got), tuple(a.scan(*arrays, **params)))
    assert all(len(f.chunks[0]) == len(chunks) for f in tdask.scan_arrays(a, *xs, backend="numpy", **params))
    results = tdask.scan(a, *xs, result=True, backend="numpy", **params)
    _same(results.compute(scheduler="sync"), prefix_results(a.loop, prefixes, params))
    _same(results.compute(scheduler="sync"), a.scan(*arrays, result=True, **params))


def test_combine_group_folds_left_to_right():
    a = analysis(str(by_name("affine").path))
    parts = [numpy_tree.run_sequential(a.loop, [np.array([m]), np.array([c])], {})
             for m, c in [(2.0, 1.0), (3.0, -1.0), (0.5, 4.0), (-1.0, 2.0)]]
    got = tdask.combine_group(a.loop, a.combine_fn, {}, *parts)
    want = numpy_tree.run_sequential(a.loop, [np.array([2.0, 3.0, 0.5, -1.0]), np.array([1.0, -1.0, 4.0, 2.0])], {})
    _same(got, want, rel=0)
    swapped = tdask.combine_group(a.loop, a.combine_fn, {}, parts[1], parts[0], *parts[2:])
    assert not np.allclose(_values(swapped), _values(want))


def test_empty_input_gives_the_identity():
    a = analysis(str(by_name("welford").path))
    x = da.zeros((0,), chunks=(0,))
    _same(tdask.reduce(a, x, backend="numpy").compute(scheduler="sync"), a.run(np.zeros(0)))
    _same(tuple(tdask.scan(a, x, backend="numpy").compute(scheduler="sync")), tuple(a.scan(np.zeros(0))))


def test_a_lazy_state_is_one_dask_collection():
    """dask.compute and dask.persist take it with other collections; a field is an
    attribute; the graph holds the analysis once per task as a small opaque spec."""
    import dask
    a = analysis(str(by_name("mps").path))
    x = np.random.default_rng(4).standard_normal(1000)
    lazy = tdask.scan(a, da.from_array(x, chunks=300), backend="numpy")
    assert dask.is_dask_collection(lazy)
    assert lazy.m is lazy.fields[1]
    state, total = dask.compute(lazy, da.from_array(x, chunks=300).sum(), scheduler="sync")
    _same(tuple(state), tuple(a.scan(x)))
    _same(total, x.sum())
    kept = dask.persist(lazy, scheduler="sync")[0]
    assert isinstance(kept, tdask.LazyState)
    _same(tuple(kept.compute(scheduler="sync")), tuple(state), rel=0)
    assert dask.base.tokenize(lazy) == dask.base.tokenize(tdask.scan(a, da.from_array(x, chunks=300), backend="numpy"))


@pytest.fixture(scope="module")
def cluster_client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=40) as cluster:
        with distributed.Client(cluster) as client:
            yield client


@pytest.mark.slow
@pytest.mark.parametrize("name", CLUSTER_SAMPLES)
def test_ten_million_on_a_local_cluster(name, cluster_client):
    """10**7 elements in 16 uneven chunks on two worker processes, against the plain left
    fold (compiled from the same rendering of `left` as the Numba backend, which the
    default tier checks against the Python fold)."""
    numba_tree = pytest.importorskip("thm3.backends.numba_tree")
    a = analysis(str(by_name(name).path))
    rng = np.random.default_rng(len(name))
    n = 10**7
    arrays, params = random_arrays(a.loop, n, 4, rng)
    if name == "affine":     # keep the composed map finite over 10**7 steps
        arrays[0] = rng.uniform(-1.0, 1.0, n)
    chunks = _uneven(n, 16, rng)
    xs = _dask(arrays, chunks)
    final = numba_tree.run_numba_sequential(a.loop, a.combine_fn, arrays, params)
    want = numpy_tree.apply_result(a.loop, final, params)
    got = cluster_client.compute(tdask.reduce(a, *xs, **params)).result()
    _same(got, want, rel=1e-7)
    prefixes = tdask.scan(a, *xs, **params).compute()     # one lazy object, computed on the cluster
    assert prefixes._fields == a.loop.field_names
    _same(tuple(p[-1] for p in prefixes), final, rel=1e-7)
    _same(tuple(prefixes), scan_parallel(a.loop, a.combine_fn, arrays, params), rel=1e-7)
    again = cluster_client.compute(tdask.scan(a, *xs, **params)).result()
    _same(tuple(again), tuple(prefixes), rel=0)


def _host(v):
    """CuPy values as NumPy ones (a tuple stays a tuple)."""
    if isinstance(v, tuple):
        return tuple(_host(x) for x in v)
    return v.get() if type(v).__module__.split(".")[0] == "cupy" else v


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["sum", "welford", "mps", "safe_softmax"])
def test_cupy_chunks_take_the_gpu_path(name, monkeypatch):
    """dask.array chunks that are CuPy arrays are reduced by the emitted CUDA kernel (not
    copied to the host), combined in order, and give what the sequential fold gives."""
    cp = pytest.importorskip("cupy")
    from thm3.backends.gpu import gpu
    api = gpu()
    calls = []
    real = api.reduce_state_cupy

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "reduce_state_cupy", spy)
    a = analysis(str(by_name(name).path))
    rng = np.random.default_rng(7)
    n = 100_003
    arrays, params = random_arrays(a.loop, n, 4, rng)
    chunks = _uneven(n, 7, rng)
    xs = [da.from_array(cp.asarray(x), chunks=(chunks,) + x.shape[1:], asarray=False) for x in arrays]
    want = numpy_tree.apply_result(a.loop, numpy_tree.run_sequential(a.loop, arrays, params), params)
    got = tdask.reduce(a, *xs, **params).compute(scheduler="sync")
    _same(_host(got), want, rel=1e-6)
    assert len(calls) == len(chunks)
