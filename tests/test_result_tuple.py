"""`result` of several values (issue 23): a tuple, or a NamedTuple of named results, and
every backend returns it in that shape: the NumPy and Numba backends, `a.scan`, Dask, the
emitted module's NumPy path and its kernels (on the CPU emulation of CUDA, and compiled
by NVRTC for sm_90 and sm_80), the lifted loop's file."""
from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest
from click.testing import CliRunner

import thm3
from thm3.cli.main import main

HEAD = '''\
    """Mean and variance with the count."""
    from typing import NamedTuple
    from thm3.lang import Int, Real


    class State(NamedTuple):
        n: Int = 0
        s: Real = 0
        q: Real = 0
    '''
LEFT = '''

    def left(acc: State, x: Real) -> State:
        return State(acc.n + 1, acc.s + x, acc.q + x * x)
    '''
NAMED = HEAD + '''

    class Stats(NamedTuple):
        mean: Real
        var: Real
        n: Int
    ''' + LEFT + '''

    def result(acc: State) -> Stats:
        if acc.n == 0:
            return Stats(0.0, 0.0, 0)
        m = acc.s / acc.n
        return Stats(mean=m, var=acc.q / acc.n - m * m, n=acc.n)
    '''
TUPLE = HEAD + LEFT + '''

    def result(acc: State) -> tuple[Real, Real, Int]:
        if acc.n == 0:
            return (0.0, 0.0, 0)
        m = acc.s / acc.n
        return m, acc.q / acc.n - m * m, acc.n
    '''


def _file(tmp_path, text, name="stats"):
    p = tmp_path / f"{name}.py"
    p.write_text(textwrap.dedent(text))
    return p


@pytest.fixture(scope="module", params=["named", "tuple"])
def stats(request, tmp_path_factory):
    path = _file(tmp_path_factory.mktemp(request.param), NAMED if request.param == "named" else TUPLE)
    a = thm3.analyze(path)
    assert a.verdict == "homomorphism", a.reason
    return request.param, a


def _want(x):
    return (float(np.mean(x)), float(np.var(x)), len(x)) if len(x) else (0.0, 0.0, 0)


def _check_shape(kind, got):
    assert isinstance(got, tuple) and len(got) == 3
    if kind == "named":
        assert type(got).__name__ == "Stats" and got._fields == ("mean", "var", "n")
    else:
        assert not hasattr(got, "_fields")


def test_run_returns_the_declared_shape(stats):
    kind, a = stats
    x = np.random.default_rng(0).normal(size=5000)
    for backend in ("numpy", "numba"):
        got = a.run(x, backend=backend)
        _check_shape(kind, got)
        np.testing.assert_allclose(got, _want(x), rtol=1e-9)
    got32 = a.run(x.astype(np.float32))
    _check_shape(kind, got32)
    assert got32[0].dtype == np.float32 and got32[2] == 5000


def test_scan_results_in_the_declared_shape(stats):
    kind, a = stats
    x = np.random.default_rng(1).normal(size=300)
    for backend in ("numpy", "numba"):
        got = a.scan(x, backend=backend, result=True)
        _check_shape(kind, got)
        for k in (0, 10, 299):
            np.testing.assert_allclose([g[k] for g in got], _want(x[:k + 1]), rtol=1e-9, atol=1e-12)


def test_dask_returns_the_declared_shape(stats):
    da = pytest.importorskip("dask.array")
    import thm3.dask as tdask
    kind, a = stats
    x = np.random.default_rng(2).normal(size=1000)
    got = tdask.reduce(a, da.from_array(x, chunks=300)).compute()
    _check_shape(kind, got)
    np.testing.assert_allclose(got, _want(x), rtol=1e-9)
    scanned = tdask.scan(a, da.from_array(x, chunks=300), result=True).compute()
    _check_shape(kind, scanned)
    np.testing.assert_allclose([s[-1] for s in scanned], _want(x), rtol=1e-9)


def test_emitted_module_numpy_path_returns_the_declared_shape(stats, tmp_path, monkeypatch):
    from test_kernels import _import
    kind, a = stats
    _, py = a.emit(tmp_path, dtype="float64")
    monkeypatch.setitem(sys.modules, "cupy", None)
    module = _import(py)
    x = np.random.default_rng(3).normal(size=3000)
    got = module.reduce(x, backend="numpy")
    _check_shape(kind, got)
    np.testing.assert_allclose(got, _want(x), rtol=1e-9)


def test_kernels_return_the_declared_shape_on_the_emulation(stats, tmp_path, monkeypatch):
    import shutil
    if shutil.which("g++") is None:
        pytest.skip("no g++ to build the CPU emulation of the kernels")
    from test_kernels import _import, fake_cupy
    from thm3.gpu.render import cuda as render
    kind, a = stats
    _, py = a.emit(tmp_path, dtype="float64")
    spec = render.make_spec(a.loop, a.combine_fn, "float64", None)
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(spec, tmp_path))
    module = _import(py)
    x = np.random.default_rng(4).normal(size=10**4 + 3)
    got = module.reduce(x)
    _check_shape(kind, got)
    np.testing.assert_allclose([float(v) for v in got], _want(x), rtol=1e-9)
    rows = module.reduce_rows(np.stack([x[:500], x[500:1000]]))
    _check_shape(kind, rows)
    np.testing.assert_allclose([r[1] for r in rows], _want(x[500:1000]), rtol=1e-9)


def test_kernels_with_several_results_compile_with_nvrtc(stats):
    from thm3.gpu.render import cuda as render
    from thm3.gpu.runtime import nvrtc
    if not nvrtc.available():
        pytest.skip("cuda-bindings (NVRTC) is not installed: pip install 'thm3[nvrtc]'")
    kind, a = stats
    for dtype in ("float32", "float64"):
        source = render.render(a.loop, a.combine_fn, dtype=dtype)
        assert "out_result0" in source and "out_result2" in source
        for arch in ("sm_90", "sm_80"):
            ptx = nvrtc.compile_cuda(source, arch, "stats.cu").decode()
            assert ".entry thm3_reduce_rows(" in ptx


def test_cli_run_prints_the_named_results(tmp_path):
    r = CliRunner().invoke(main, ["run", str(_file(tmp_path, NAMED)), "--n", "1000"])
    assert r.exit_code == 0, r.output
    assert "parallel   Stats(mean=" in r.output and ", n=1000)" in r.output and "np." not in r.output


def test_lifted_loop_keeps_the_named_result(tmp_path):
    text = '''\
        """Kadane, both answers."""
        from typing import NamedTuple
        from thm3.lang import Real


        class State(NamedTuple):
            m: Real = 0
            t: Real = 0


        class Best(NamedTuple):
            best: Real
            tail: Real


        def left(acc: State, x: Real) -> State:
            t = max(acc.t + x, 0)
            return State(max(acc.m, t), t)


        def result(acc: State) -> Best:
            return Best(acc.m, acc.t)
        '''
    a = thm3.analyze(_file(tmp_path, text, "kadane2"))
    assert a.verdict == "not-homomorphism" and a.lifted is not None
    assert "class Best(NamedTuple):" in a.lifted and "return Best(" in a.lifted
    lifted = thm3.analyze_source(a.lifted, name="lifted")
    assert lifted.verdict == "homomorphism"
    x = np.random.default_rng(5).normal(size=2000)
    got = lifted.run(x)
    assert type(got).__name__ == "Best"
    best = max(0.0, max(np.cumsum(x) - np.minimum.accumulate(np.concatenate([[0], np.cumsum(x)]))[:-1]))
    assert got.best == pytest.approx(best)


@pytest.mark.parametrize("body, message, where", [
    ("def result(acc: State) -> Real:\n    return acc.s, acc.n\n",
     "`result` is declared to return one Real, this returns 2 values", (17, 12)),
    ("def result(acc: State) -> tuple[Real, Real]:\n    return acc.s, acc.q, acc.n\n",
     "`result` is declared to return 2 values, this returns 3", (17, 12)),
    ("def result(acc: State) -> tuple:\n    return acc.s\n",
     "`result` is declared to return several values, this is one", (17, 12)),
    ("def result(acc: State) -> tuple:\n    if acc.n > 0:\n        return acc.s, acc.q\n    return (acc.s,)\n",
     "this return gives 1 value(s), another gives 2", (19, 12)),
    ("def result(acc: State) -> tuple[Real, Bool]:\n    return acc.s, acc.n\n",
     "result value 2 is Bool but this value is Int", (17, 19)),
])
def test_bad_tuple_results_are_refused_at_the_return(tmp_path, body, message, where):
    text = textwrap.dedent(HEAD + LEFT) + "\n\n" + body
    p = tmp_path / "bad.py"
    p.write_text(text.replace("import Int, Real", "import Bool, Int, Real"))
    with pytest.raises(thm3.LoopError) as err:
        thm3.analyze(p)
    assert err.value.message == message and (err.value.line, err.value.col) == where, (
        err.value.message, err.value.line, err.value.col)


def test_a_result_class_that_result_does_not_return_is_refused(tmp_path):
    text = textwrap.dedent(NAMED).replace("-> Stats:", "-> Real:").replace(
        "return Stats(0.0, 0.0, 0)", "return 0.0").replace(
        "return Stats(mean=m, var=acc.q / acc.n - m * m, n=acc.n)", "return m")
    p = tmp_path / "unused.py"
    p.write_text(text)
    with pytest.raises(thm3.LoopError, match="class `Stats` is not what `result` returns"):
        thm3.analyze(p)
