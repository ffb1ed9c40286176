"""The kernel stage: thm3/backends/numpy_tree.py, gpu/render/cuda.py, gpu/runtime/nvrtc.py and gpu/api.py.

- the NumPy parallel form against the sequential fold, the reference;
- the CUDA printer: a table that covers every Op, precedence, golden sources;
- every rendered source compiles with NVRTC for sm_90 and sm_80;
- the `__host__ __device__` functions, built with g++, against NumPy on random states;
- the kernels themselves on a CPU emulation of CUDA's execution model (a thread per CUDA
  thread, barriers for __syncthreads and the shuffles), and the emitted module driving
  them through a stand-in for CuPy: launch shapes, argument order, tails, alignment;
- on a GPU (marked gpu, skipped without one): the emitted module against the fold.

The loops are built by hand in the IR, so that these tests depend on no frontend or
synthesis: mps, online softmax, Welford, a Vec sum, argmax with an Index, an all-positive
test with a loop parameter and a Bool state, and single-query attention (dot, Vec
parameter)."""
from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from thm3.semantics.evaluate import NUMPY, evaluate, quiet
from thm3.ir import Expr, FieldDecl, Fn, Loop, Op, ParamDecl, Type, const, var
from thm3.backends.numpy_tree import apply_result, run_parallel, run_sequential

from thm3.gpu import api as emit_mod
from thm3.gpu.render import cuda as render
from thm3.gpu.runtime import nvrtc

GOLDEN = Path(__file__).parent / "golden"
R, I, B, V = Type.REAL, Type.INT, Type.BOOL, Type.VEC
DIM = 4


# --- building loops by hand -------------------------------------------------------------

def _type(*xs) -> Type:
    ts = {x.type for x in xs}
    return V if V in ts else R if R in ts or B in ts else I


def add(a, b): return Expr(Op.ADD, _type(a, b), (a, b))
def sub(a, b): return Expr(Op.SUB, _type(a, b), (a, b))
def mul(a, b): return Expr(Op.MUL, _type(a, b), (a, b))
def div(a, b): return Expr(Op.DIV, V if V in (a.type, b.type) else R, (a, b))
def mx(a, b): return Expr(Op.MAX, _type(a, b), (a, b))
def exp(a): return Expr(Op.EXP, R, (a,))
def dot(u, w): return Expr(Op.DOT, R, (u, w))
def gt(a, b): return Expr(Op.GT, B, (a, b))
def eq(a, b): return Expr(Op.EQ, B, (a, b))
def and_(a, b): return Expr(Op.AND, B, (a, b))
def where(c, a, b): return Expr(Op.WHERE, _type(a, b), (c, a, b))


def _loop(name, title, fields, elements, params, left, combine, result=None, result_type=None):
    fields = tuple(FieldDecl(n, t, d, c) for n, t, d, c in fields)
    elements = tuple(ParamDecl(n, t, idx) for n, t, idx in elements)
    params = tuple(ParamDecl(n, t) for n, t in params)
    state = lambda p: tuple((f"{p}.{f.name}", f.type) for f in fields)      # noqa: E731
    loose = tuple((p.name, p.type) for p in elements + params)
    fn_params = tuple((p.name, p.type) for p in params)
    names = {f"{p}.{f.name}": var(f"{p}.{f.name}", f.type) for p in ("acc", "a", "b") for f in fields}
    names.update({p.name: var(p.name, p.type) for p in elements + params})
    loop = Loop(name=name, title=title, path=f"{name}.py", source="", fields=fields,
                elements=elements, params=params,
                left=Fn(state("acc") + loose, tuple(left(names))),
                result=Fn(state("acc") + fn_params, (result(names),)) if result else None,
                result_type=result_type)
    return loop, Fn(state("a") + state("b") + fn_params, tuple(combine(names)))


def _mps():
    def left(n):
        s = add(n["acc.s"], n["x"])
        return s, mx(n["acc.m"], s)
    return _loop("mps", "Maximum prefix sum", [("s", R, 0.0, "sum so far"), ("m", R, 0.0, "best prefix sum")],
                 [("x", R, False)], [], left,
                 lambda n: (add(n["a.s"], n["b.s"]), mx(n["a.m"], add(n["a.s"], n["b.m"]))),
                 lambda n: n["acc.m"], R)


def _scale(mi, m):
    return where(eq(mi, m), const(1.0), exp(sub(mi, m)))


def _softmax():
    def left(n):
        m = mx(n["acc.m"], n["x"])
        return m, add(mul(n["acc.d"], exp(sub(n["acc.m"], m))), exp(sub(n["x"], m)))

    def combine(n):
        m = mx(n["a.m"], n["b.m"])
        return m, add(mul(n["a.d"], _scale(n["a.m"], m)), mul(n["b.d"], _scale(n["b.m"], m)))
    return _loop("softmax", "Online softmax statistics",
                 [("m", R, float("-inf"), "largest element"), ("d", R, 0.0, "sum of exp(x - m)")],
                 [("x", R, False)], [], left, combine)


def _welford():
    def left(n):
        count = add(n["acc.n"], const(1))
        delta = sub(n["x"], n["acc.mean"])
        mean = add(n["acc.mean"], div(delta, count))
        return count, mean, add(n["acc.M2"], mul(delta, sub(n["x"], mean)))

    def combine(n):
        count = add(n["a.n"], n["b.n"])
        delta = sub(n["b.mean"], n["a.mean"])
        empty = eq(count, const(0))
        mean = add(n["a.mean"], where(empty, const(0.0), div(mul(delta, n["b.n"]), count)))
        spread = div(mul(mul(mul(delta, delta), n["a.n"]), n["b.n"]), count)
        return count, mean, add(add(n["a.M2"], n["b.M2"]), where(empty, const(0.0), spread))
    return _loop("welford", "Welford variance",
                 [("n", I, 0, "count"), ("mean", R, 0.0, "mean"), ("M2", R, 0.0, "sum of squared deviations")],
                 [("x", R, False)], [], left, combine,
                 lambda n: where(gt(n["acc.n"], const(0)), div(n["acc.M2"], n["acc.n"]), const(0.0)), R)


def _vec_sum():
    return _loop("vec_sum", "Vector sum", [("s", V, 0, "elementwise sum")], [("x", V, False)], [],
                 lambda n: (add(n["acc.s"], n["x"]),), lambda n: (add(n["a.s"], n["b.s"]),),
                 lambda n: n["acc.s"], V)


def _argmax():
    def left(n):
        better = gt(n["x"], n["acc.best"])
        return where(better, n["x"], n["acc.best"]), where(better, n["i"], n["acc.idx"])

    def combine(n):
        better = gt(n["b.best"], n["a.best"])       # a tie keeps the earlier index
        return where(better, n["b.best"], n["a.best"]), where(better, n["b.idx"], n["a.idx"])
    return _loop("argmax", "Argmax, first index",
                 [("best", R, float("-inf"), "largest"), ("idx", I, -1, "its first index")],
                 [("x", R, False), ("i", I, True)], [], left, combine)


def _all_above():
    return _loop("all_above", "All above a threshold", [("ok", B, True, "every element > t")],
                 [("x", R, False)], [("t", R)],
                 lambda n: (and_(n["acc.ok"], gt(n["x"], n["t"])),),
                 lambda n: (and_(n["a.ok"], n["b.ok"]),))


def _attention():
    def left(n):
        s = mul(n["scale"], dot(n["q"], n["k"]))
        m = mx(n["acc.m"], s)
        c, e = exp(sub(n["acc.m"], m)), exp(sub(s, m))
        return m, add(mul(n["acc.d"], c), e), add(mul(n["acc.o"], c), mul(e, n["v"]))

    def combine(n):
        m = mx(n["a.m"], n["b.m"])
        ca, cb = _scale(n["a.m"], m), _scale(n["b.m"], m)
        return m, add(mul(n["a.d"], ca), mul(n["b.d"], cb)), add(mul(n["a.o"], ca), mul(n["b.o"], cb))
    return _loop("attention", "One query row of attention",
                 [("m", R, float("-inf"), "largest score"), ("d", R, 0.0, "sum of exp(score - m)"),
                  ("o", V, 0, "sum of exp(score - m) * v")],
                 [("k", V, False), ("v", V, False)], [("q", V), ("scale", R)], left, combine,
                 lambda n: where(gt(n["acc.d"], const(0.0)), div(n["acc.o"], n["acc.d"]),
                                 mul(const(0.0), n["acc.o"])), V)


LOOPS = {f.__name__[1:]: f for f in (_mps, _softmax, _welford, _vec_sum, _argmax, _all_above, _attention)}


def data(name: str, n: int, rng, dim: int = DIM):
    """Element arrays and loop parameters for a loop of LOOPS (float64)."""
    match name:
        case "argmax":
            return [rng.integers(0, 50, n).astype(np.float64)], {}     # many ties
        case "vec_sum":
            return [rng.normal(size=(n, dim))], {}
        case "attention":
            return [rng.normal(size=(n, dim)), rng.normal(size=(n, dim))], \
                   {"q": rng.normal(size=dim), "scale": 0.5}
        case "all_above":
            return [rng.normal(3.0, 1.0, n)], {"t": 0.5}
        case _:
            return [rng.normal(size=n)], {}


def closed_form(name: str, arrays, params) -> tuple:
    """The final state by plain NumPy (float64), for sizes where the fold is too slow."""
    x = arrays[0]
    match name:
        case "mps":
            return x.sum(), max(0.0, np.cumsum(x).max())
        case "softmax":
            m = x.max()
            return m, np.exp(x - m).sum()
        case "welford":
            return len(x), x.mean(), ((x - x.mean()) ** 2).sum()
        case "vec_sum":
            return (x.sum(axis=0),)
        case "argmax":
            return x.max(), int(np.argmax(x))
        case "all_above":
            return (bool((x > params["t"]).all()),)
        case "attention":
            s = params["scale"] * (x @ params["q"])
            p = np.exp(s - s.max())
            return s.max(), p.sum(), p @ arrays[1]


def assert_states(got, want, rtol=1e-9, atol=1e-9, what=""):
    assert len(got) == len(want), what
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64),
                                   rtol=rtol, atol=atol, equal_nan=True, err_msg=f"{what} field {k}")


@pytest.fixture(scope="module", params=sorted(LOOPS))
def case(request):
    return request.param, *LOOPS[request.param]()


# --- the NumPy parallel form ------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 2, 7, 1000 + 7])
def test_parallel_equals_sequential(case, n):
    name, loop, combine = case
    arrays, params = data(name, n, np.random.default_rng(n))
    want = run_sequential(loop, arrays, params)
    for block, width in ((4, 1 << 15), (1, 1), (3, 2), (8, 4), (1024, 1 << 15)):
        got = run_parallel(loop, combine, arrays, params, block=block, width=width)
        assert_states(got, want, what=f"{name} n={n} block={block} width={width}")
        if name in ("argmax", "all_above"):
            assert all(np.array_equal(g, w) for g, w in zip(got, want))
    assert_states([apply_result(loop, run_parallel(loop, combine, arrays, params), params)],
                  [apply_result(loop, want, params)])


@pytest.mark.parametrize("n", [5, 64, 65, 4097])
def test_parallel_chunks_change_no_combine(case, n):
    # a chunk of 2**k runs is a whole subtree: any width gives the very same floats
    name, loop, combine = case
    arrays, params = data(name, n, np.random.default_rng(n))
    whole = run_parallel(loop, combine, arrays, params, block=3, width=1 << 20)
    for width in (1, 2, 8, 64):
        got = run_parallel(loop, combine, arrays, params, block=3, width=width)
        assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(whole, got)), width


def test_parallel_million(case):
    name, loop, combine = case
    arrays, params = data(name, 10**6, np.random.default_rng(6))
    got = run_parallel(loop, combine, arrays, params)
    assert_states(got, closed_form(name, arrays, params), rtol=1e-8, atol=1e-8, what=name)


def test_parallel_empty_is_the_identity(case):
    name, loop, combine = case
    arrays, params = data(name, 0, np.random.default_rng(0))
    got = run_parallel(loop, combine, arrays, params, dim=DIM)
    want = tuple(np.zeros(DIM) if f.type is V else f.default for f in loop.fields)
    assert_states(got, want)


def test_parallel_float32_stays_float32():
    loop, combine = _softmax()
    x = np.random.default_rng(1).normal(size=5000)
    got = run_parallel(loop, combine, [x], {}, dtype=np.float32)
    assert all(np.asarray(v).dtype == np.float32 for v in got)
    assert_states(got, run_sequential(loop, [x], {}), rtol=1e-5)


def test_parallel_keeps_list_order():
    # affine maps compose in order only: (a1, b1) then (a2, b2) is (a1 a2, b1 a2 + b2)
    fields = [("a", R, 1.0, ""), ("b", R, 0.0, "")]
    loop, combine = _loop("affine", "Affine maps", fields, [("p", R, False), ("q", R, False)], [],
                          lambda n: (mul(n["acc.a"], n["p"]), add(mul(n["acc.b"], n["p"]), n["q"])),
                          lambda n: (mul(n["a.a"], n["b.a"]), add(mul(n["a.b"], n["b.a"]), n["b.b"])))
    rng = np.random.default_rng(3)
    p, q = rng.uniform(0.9, 1.1, 3001), rng.normal(size=3001)
    want = run_sequential(loop, [p, q], {})
    assert_states(run_parallel(loop, combine, [p, q], {}, block=5, width=8), want, rtol=1e-9)


def test_parallel_rejects_wrong_inputs():
    loop, combine = _mps()
    with pytest.raises(ValueError, match="expected 1 arrays"):
        run_parallel(loop, combine, [], {})
    loop, combine = _all_above()
    with pytest.raises(ValueError, match="missing loop parameters t"):
        run_parallel(loop, combine, [np.ones(3)], {})


# --- the printer ----------------------------------------------------------------------

def test_cuda_table_covers_every_op():
    assert set(render.CUDA) == set(Op)


def _print(e: Expr, dtype="float32", names=None) -> str:
    loop, combine = _mps()
    spec = render.make_spec(loop, combine, dtype)
    p = render.Printer(spec, names or {"a": "a", "b": "b", "c": "c", "k": "k"})
    return p.expr(e).text


@pytest.mark.parametrize("build, text", [
    (lambda a, b, c: sub(a, sub(b, c)), "a - (b - c)"),
    (lambda a, b, c: sub(sub(a, b), c), "a - b - c"),
    (lambda a, b, c: mul(add(a, b), c), "(a + b) * c"),
    (lambda a, b, c: add(a, mul(b, c)), "a + b * c"),
    (lambda a, b, c: div(a, mul(b, c)), "a / (b * c)"),
    (lambda a, b, c: Expr(Op.NEG, R, (Expr(Op.NEG, R, (a,)),)), "-(-a)"),
    (lambda a, b, c: Expr(Op.NEG, R, (add(a, b),)), "-(a + b)"),
    (lambda a, b, c: sub(a, const(-1.5)), "a - -1.5f"),
    (lambda a, b, c: exp(sub(a, b)), "exp2f((a - b) * 1.4426950408889634f)"),
    (lambda a, b, c: exp(a), "exp2f(a * 1.4426950408889634f)"),
    (lambda a, b, c: mul(Expr(Op.LOG, R, (a,)), b), "log2f(a) * 0.6931471805599453f * b"),
    (lambda a, b, c: where(gt(a, b), a, where(eq(b, c), b, c)), "a > b ? a : b == c ? b : c"),
    (lambda a, b, c: add(where(gt(a, b), a, b), c), "(a > b ? a : b) + c"),
    (lambda a, b, c: Expr(Op.OR, B, (and_(gt(a, b), gt(b, c)), gt(a, c))), "(a > b && b > c) || a > c"),
    (lambda a, b, c: Expr(Op.NOT, B, (gt(a, b),)), "!(a > b)"),
    (lambda a, b, c: mx(a, Expr(Op.MIN, R, (b, c))), "thm3_max(a, thm3_min(b, c))"),
    (lambda a, b, c: Expr(Op.POW, R, (add(a, b),), 3), "thm3_powi(a + b, 3)"),
    (lambda a, b, c: Expr(Op.POW, R, (a,), -2), "1.0f / thm3_powi(a, 2)"),
    (lambda a, b, c: Expr(Op.ABS, R, (a,)), "fabsf(a)"),
    (lambda a, b, c: mul(a, const(float("-inf"))), "a * -THM3_INF_F"),
])
def test_printer_precedence(build, text):
    a, b, c = (var(x, R) for x in "abc")
    assert _print(build(a, b, c)) == text


def test_printer_converts_ints_like_numpy():
    k, j = var("k", I), var("a", I)
    assert _print(div(k, j)) == "(float)k / (float)a"                  # true division
    assert _print(mx(k, var("b", R))) == "thm3_max((float)k, b)"
    assert _print(add(k, const(1))) == "k + 1"
    assert _print(add(var("b", R), const(2))) == "b + 2.0f"
    assert _print(Expr(Op.ABS, I, (k,))) == "thm3_abs(k)"
    assert _print(exp(var("b", R)), "float64") == "exp2(b * 1.4426950408889634)"


def test_shared_values_are_computed_once():
    loop, combine = _attention()
    text = render.render_functions(loop, combine, dim=8)
    left = text[text.index("State thm3_left("):text.index("State thm3_combine(")]
    assert left.count("+= q[d] * k[d]") == 1                 # dot once, the score reused
    assert left.count("exp2f") == 2
    comb = text[text.index("State thm3_combine("):text.index("void thm3_result(")]
    assert comb.count("exp2f") == 2                          # equal subtrees shared too


def test_names_that_are_cpp_keywords():
    loop, combine = _loop("kw", "Keywords", [("int", R, 0.0, ""), ("d", R, 0.0, "")],
                          [("float", R, False)], [("a", R)],
                          lambda n: (add(n["acc.int"], mul(n["float"], n["a"])), n["acc.d"]),
                          lambda n: (add(n["a.int"], n["b.int"]), n["a.d"]))
    src = render.render(loop, combine)
    assert "float int_;" in src and "float float_" in src and "float a_)" in src
    if nvrtc.available():
        nvrtc.compile_cuda(src)


def test_int_max_with_a_literal_compiles(build_dir):
    # max over an Int and an int literal: the helpers take two types (long long and int)
    loop, combine = _loop("clamp", "Clamped count", [("c", I, 0, "")], [("x", R, False)], [],
                          lambda n: (mx(add(n["acc.c"], where(gt(n["x"], const(0.0)), const(1), const(-1))),
                                        const(0)),),
                          lambda n: (mx(add(n["a.c"], n["b.c"]), const(0)),))
    src = render.render(loop, combine)
    # |c| <= the length (a step of +-1, clamped; a.c + b.c): the sum needs no int64 check
    # (thm3/analysis/int_bounds.py), where an unbounded one has it (test_exact_ints.py)
    assert "thm3_max(a.c + b.c, 0)" in src and "thm3_add_ll(a." not in src
    if nvrtc.available():
        nvrtc.compile_cuda(src)
    if shutil.which("g++"):
        _build(build_dir, render.render_functions(loop, combine))


# --- NVRTC ------------------------------------------------------------------------------

needs_nvrtc = pytest.mark.skipif(not nvrtc.available(), reason="cuda-bindings (NVRTC) is not installed")


@needs_nvrtc
@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_kernels_compile(case, dtype, arch):
    name, loop, combine = case
    ptx = nvrtc.compile_cuda(render.render(loop, combine, dtype=dtype, dim=64), arch, f"{name}.cu").decode()
    for kernel in ("thm3_reduce_blocks", "thm3_reduce_partials", "thm3_reduce_rows"):
        assert f".entry {kernel}(" in ptx
    assert "ld.local" not in ptx and "st.local" not in ptx            # no spills to local memory
    if render.make_spec(loop, combine, dtype, 64).vector_loads:
        # 16-byte vector loads (through the read-only path where the compiler proves it;
        # tests/test_sass.py holds the machine code to LDG.E.128)
        wide = ("v4.f32",) if dtype == "float32" else ("v2.f64",)
        assert any(f"ld.global.{nc}{w}" in ptx for nc in ("nc.", "") for w in wide)


@needs_nvrtc
def test_compile_error_carries_the_log():
    with pytest.raises(nvrtc.CompileError, match=r"bad\.cu.*error"):
        nvrtc.compile_cuda("__global__ void k() { undefined_name(); }", name="bad.cu")


@needs_nvrtc
def test_combine_lane_renders_concatenate():
    loop, combine = _attention()
    lane = render.render_combine_lane(loop, combine, "float32")
    assert ("void thm3_combine_lane(float a_m, float a_d, float a_o,\n" in lane
            and "float& r_m, float& r_d, float& r_o)" in lane)
    other = render.render_combine_lane(*_softmax(), "float32", name="softmax_lane")
    kernel = "extern \"C\" __global__ void k(float* x) { thm3_combine_lane(x[0], x[1], x[2], x[3], x[4], " \
             "x[5], x[6], x[7], x[8]); softmax_lane(x[0], x[1], x[2], x[3], x[4], x[5]); }"
    nvrtc.compile_cuda(lane + lane + other + kernel)


def test_combine_lane_refuses_what_mixes_lanes():
    loop, _ = _attention()
    n = {f"{p}.{f}": var(f"{p}.{f}", t) for p in "ab" for f, t in (("m", R), ("d", R), ("o", V))}
    n["q"] = var("q", V)
    state = tuple((k, v.type) for k, v in n.items() if k != "q")
    with pytest.raises(ValueError, match="dot"):
        render.render_combine_lane(loop, Fn(state, (dot(n["a.o"], n["b.o"]), n["a.d"], n["a.o"])))
    with pytest.raises(ValueError, match="Vec loop parameter"):
        render.render_combine_lane(loop, Fn(state + (("q", V),), (n["a.m"], n["a.d"], mul(n["a.o"], n["q"]))))


# --- golden sources ---------------------------------------------------------------------

@pytest.mark.parametrize("name, dtype", [("mps", "float32"), ("welford", "float64")])
def test_golden_source(name, dtype):
    loop, combine = LOOPS[name]()
    text = render.render(loop, combine, dtype=dtype)
    path = GOLDEN / f"{name}.{dtype}.cu"
    if os.environ.get("THM3_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    assert text == path.read_text(), f"{path} differs; THM3_UPDATE_GOLDEN=1 rewrites it"


# --- the functions on the host (g++) ----------------------------------------------------

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="no g++ to build host code")


def _build(tmp: Path, source: str, std: str = "c++17") -> ctypes.CDLL:
    key = hashlib.sha1(source.encode()).hexdigest()[:16]
    lib = tmp / f"lib{key}.so"
    if not lib.exists():
        cpp = tmp / f"{key}.cpp"
        cpp.write_text(source)
        subprocess.run(["g++", f"-std={std}", "-O1", "-pthread", "-shared", "-fPIC", "-x", "c++",
                        "-o", str(lib), str(cpp)], check=True, capture_output=True)
    return ctypes.CDLL(str(lib))


@pytest.fixture(scope="session")
def build_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("kernels")


def state_dtype(spec) -> np.dtype:
    layout = render.state_layout(spec)
    numpy_of = {"float": np.float32, "double": np.float64, "long long": np.int64, "bool": np.bool_}
    vec = {f.name for f in spec.loop.fields if f.type is V}
    return np.dtype({"names": [n for n, *_ in layout],
                     "formats": [(numpy_of[c], (k,)) if n in vec else numpy_of[c] for n, c, k, _ in layout],
                     "offsets": [o for *_, o in layout], "itemsize": render.state_bytes(spec)})


def _ctype(arg):
    if arg.pointer:
        return ctypes.c_void_p
    return {"float": ctypes.c_float, "double": ctypes.c_double, "long long": ctypes.c_longlong,
            "int": ctypes.c_int, "bool": ctypes.c_bool}[arg.ctype]


def _pack(arg, value):
    if arg.pointer:
        return ctypes.c_void_p(value.ctypes.data if value.size else 0)
    return _ctype(arg)(np.asarray(value).item())


def _numpy_of(ctype: str):
    return {"float": np.float32, "double": np.float64, "long long": np.int64, "bool": np.bool_}[ctype]


def _host_library(spec, build_dir):
    loop = spec.loop
    params = [render.KernelArg(render.c_name(p.name), spec.ctype(p.type), p.type is V, "param", p.name)
              for p in loop.params]
    elems = [f"const {spec.ctype(p.type)}* e{k}" for k, p in enumerate(loop.elements)]
    elem_at = [f"e{k} + j * THM3_DIM" if p.type is V else f"e{k}[j]" for k, p in enumerate(loop.elements)]
    pdecl = "".join(f", {a.decl(False)}" for a in params)
    pnames = "".join(f", {a.name}" for a in params)
    source = render.render_functions(loop, spec.combine, dtype=spec.real.name, dim=spec.dim) + f"""
extern "C" void host_combine(long long count, const State* a, const State* b{pdecl}, State* out) {{
    for (long long j = 0; j < count; ++j) out[j] = thm3_combine(a[j], b[j]{pnames});
}}
extern "C" void host_left(long long count, const State* acc, {", ".join(elems)}{pdecl}, State* out) {{
    for (long long j = 0; j < count; ++j) out[j] = thm3_left(acc[j], {", ".join(elem_at)}{pnames});
}}
extern "C" long long host_state_size() {{ return sizeof(State); }}
"""
    return _build(build_dir, source), params


def random_states(spec, count: int, rng):
    """States with moderate values; every fifth one the identity."""
    st = np.zeros(count, state_dtype(spec))
    for f in spec.loop.fields:
        match f.type:
            case Type.REAL:
                st[f.name] = rng.normal(0, 3, count)
            case Type.VEC:
                st[f.name] = rng.normal(0, 3, (count, spec.dim))
            case Type.INT:
                st[f.name] = rng.integers(0, 9, count)
            case Type.BOOL:
                st[f.name] = rng.integers(0, 2, count).astype(bool)
        st[f.name][::5] = 0 if f.type is V else f.default
    if spec.loop.name == "softmax":         # d > 0 where m is finite: reachable states
        st["d"] = np.where(np.isinf(st["m"]), 0, np.abs(st["d"]) + 0.1)
    return st


def _numpy_fn(spec, fn: Fn, env: dict) -> list:
    with quiet():
        return evaluate(fn.outputs, env, NUMPY)


def _field_env(spec, prefix: str, st) -> dict:
    return {f"{prefix}.{f.name}": st[f.name].astype(np.float64 if f.type in (R, V) else st[f.name].dtype)
            .reshape(len(st), -1) for f in spec.loop.fields}


@needs_gxx
@pytest.mark.parametrize("dtype, rtol", [("float64", 1e-12), ("float32", 2e-5)])
def test_host_functions_agree_with_numpy(case, dtype, rtol, build_dir):
    name, loop, combine = case
    spec = render.make_spec(loop, combine, dtype, DIM)
    lib, params = _host_library(spec, build_dir)
    assert lib.host_state_size() == render.state_bytes(spec) == state_dtype(spec).itemsize
    rng = np.random.default_rng(11)
    count = 500
    a, b = random_states(spec, count, rng), random_states(spec, count, rng)
    _, pvalues = data(name, 0, rng)
    pvalues = {k: np.asarray(v, _numpy_of(spec.real.ctype)) if np.ndim(v) else v for k, v in pvalues.items()}
    pargs = [_pack(p, pvalues[p.of]) for p in params]
    out = np.zeros(count, state_dtype(spec))
    lib.host_combine(ctypes.c_longlong(count), ctypes.c_void_p(a.ctypes.data), ctypes.c_void_p(b.ctypes.data),
                     *pargs, ctypes.c_void_p(out.ctypes.data))
    env = {**_field_env(spec, "a", a), **_field_env(spec, "b", b), **pvalues}
    want = _numpy_fn(spec, combine, env)
    for f, w in zip(loop.fields, want):
        np.testing.assert_allclose(out[f.name].reshape(count, -1).astype(np.float64),
                                   np.broadcast_to(w, (count, DIM if f.type is V else 1)),
                                   rtol=rtol, atol=rtol, equal_nan=True, err_msg=f"combine {f.name}")

    arrays, _ = data(name, count, rng)
    elements, it = [], iter(arrays)
    for p in loop.elements:
        elements.append(np.arange(count, dtype=np.int64) if p.index
                        else np.ascontiguousarray(next(it), _numpy_of(spec.ctype(p.type))))
    lib.host_left(ctypes.c_longlong(count), ctypes.c_void_p(a.ctypes.data),
                  *[ctypes.c_void_p(e.ctypes.data) for e in elements], *pargs, ctypes.c_void_p(out.ctypes.data))
    env = {**_field_env(spec, "acc", a), **pvalues}
    env.update({p.name: e.astype(np.float64 if p.type in (R, V) else e.dtype).reshape(count, -1)
                for p, e in zip(loop.elements, elements)})
    want = _numpy_fn(spec, loop.left, env)
    for f, w in zip(loop.fields, want):
        np.testing.assert_allclose(out[f.name].reshape(count, -1).astype(np.float64),
                                   np.broadcast_to(w, (count, DIM if f.type is V else 1)),
                                   rtol=rtol * 10, atol=rtol * 10, equal_nan=True, err_msg=f"left {f.name}")


# --- the kernels on a CPU emulation of CUDA -------------------------------------------------

EMULATION = r"""
// CUDA's execution model on the CPU, just enough for thm3's kernels: a block is THM3_BLOCK
// std::threads, __syncthreads a barrier, __shared__ a static (one block runs at a time),
// __shfl_down_sync an exchange through memory between two warp barriers.
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>
#define __global__
#define __launch_bounds__(...)
inline double __drcp_rn(double x) { return 1.0 / x; }
#define __shared__ static
// A reusable barrier (a generation count under a mutex: libstdc++ 12's std::barrier was
// seen to hang and to let threads through early with 256 threads).
class emu_barrier {
    std::mutex m_;
    std::condition_variable cv_;
    const unsigned count_;
    unsigned waiting_ = 0, generation_ = 0;
public:
    explicit emu_barrier(unsigned count) : count_(count) {}
    void arrive_and_wait() {
        std::unique_lock<std::mutex> lock(m_);
        const unsigned generation = generation_;
        if (++waiting_ == count_) {
            waiting_ = 0;
            ++generation_;
            cv_.notify_all();
        } else {
            cv_.wait(lock, [&] { return generation != generation_; });
        }
    }
};
struct emu_dim3 { unsigned x = 0, y = 0, z = 0; };
static thread_local emu_dim3 threadIdx, blockIdx;
static emu_dim3 blockDim, gridDim;
static emu_barrier* emu_block;
static std::vector<std::unique_ptr<emu_barrier>> emu_warps;
static unsigned long long emu_lanes[32][32];
inline void __syncthreads() { emu_block->arrive_and_wait(); }
template <class V> V __shfl_down_sync(unsigned, V v, int offset) {
    static_assert(sizeof(V) <= 8, "one register");
    const unsigned w = threadIdx.x / 32, l = threadIdx.x % 32;
    std::memcpy(&emu_lanes[w][l], &v, sizeof v);
    emu_warps[w]->arrive_and_wait();
    V r = v;
    if (l + offset < 32) std::memcpy(&r, &emu_lanes[w][l + offset], sizeof v);
    emu_warps[w]->arrive_and_wait();
    return r;
}
template <class... P, class... A> void emu_launch(unsigned grid, void (*kernel)(P...), A... args) {
    gridDim.x = grid;
    blockDim.x = THM3_BLOCK;
    for (unsigned b = 0; b < grid; ++b) {
        emu_barrier block(THM3_BLOCK);
        emu_block = &block;
        emu_warps.clear();
        for (int w = 0; w < THM3_BLOCK / 32; ++w) emu_warps.emplace_back(new emu_barrier(32));
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < THM3_BLOCK; ++t)
            threads.emplace_back([=] { threadIdx.x = t; blockIdx.x = b; kernel((P)args...); });
        for (auto& t : threads) t.join();
    }
}
"""

KERNELS = ("thm3_reduce_blocks", "thm3_reduce_partials", "thm3_reduce_rows")


def flag_wrappers(source: str) -> list[str]:
    """`emu_<flag>()`, the address of each device flag of `source` (a static global in the
    emulation): thm3_int_overflow, thm3_uncovered."""
    return [f'extern "C" int* emu_{flag}() {{ return &{flag}; }}'
            for flag in ("thm3_int_overflow", "thm3_uncovered") if flag in source]


def emulated_flag(lib, name: str = "thm3_uncovered") -> ctypes.c_int:
    """The emulation's device flag `name`, read and written in place."""
    getter = getattr(lib, f"emu_{name}")
    getter.restype = ctypes.c_void_p
    return ctypes.c_int.from_address(getter())


def emulation_library(spec, source: str, build_dir, block: int | None = None, items: int | None = None):
    """`source` with CUDA emulated on threads; `emu_<kernel>(grid, args...)` launches."""
    wrappers = []
    for kernel in KERNELS:
        args = render.kernel_args(spec, kernel)
        decl = ", ".join(["unsigned grid"] + [f"{'void*' if a.pointer else a.ctype} {a.name}" for a in args])
        wrappers.append(f'extern "C" void emu_{kernel}({decl}) '
                        f'{{ emu_launch(grid, {kernel}, {", ".join(a.name for a in args)}); }}')
    wrappers += flag_wrappers(source)
    shape = "".join(f"#define {k} {v}\n" for k, v in (("THM3_BLOCK", block), ("THM3_ITEMS", items)) if v)
    if not block:
        shape += f"#define THM3_BLOCK {render.BLOCK}\n"
    return _build(build_dir, shape + EMULATION + source + "\n" + "\n".join(wrappers))


class Emulated:
    """The three kernels of one loop, launched on the emulation from NumPy arrays."""

    def __init__(self, spec, build_dir, block=64, items=4):
        self.spec, self.block = spec, block
        self.lib = emulation_library(spec, render.render(spec.loop, spec.combine, dtype=spec.real.name,
                                                         dim=spec.dim), build_dir, block, items)

    def launch(self, kernel: str, grid: int, values: dict):
        args = render.kernel_args(self.spec, kernel)
        getattr(self.lib, f"emu_{kernel}")(ctypes.c_uint(grid), *[_pack(a, values[a.name]) for a in args])

    def _inputs(self, arrays, params, n):
        values = {f"in_{p.name}": a for p, a in zip(self.spec.data_elements, arrays)}
        values["n"] = n
        for p in self.spec.loop.params:
            v = params[p.name]
            values[render.c_name(p.name)] = (np.ascontiguousarray(v, _numpy_of(self.spec.real.ctype))
                                             if p.type is V else _numpy_of(self.spec.ctype(p.type))(v))
        return values

    def _outputs(self, count: int) -> dict:
        out = {}
        for a in render.kernel_args(self.spec, "thm3_reduce_rows"):
            if a.kind == "output":
                shape = (count, self.spec.dim) if a.vec else (count,)
                out[a.name] = np.full(shape, -7, _numpy_of(a.ctype))        # poisoned
        return out

    def reduce(self, arrays, params, grid: int):
        n = len(arrays[0]) if arrays else 0
        values = self._inputs(arrays, params, n)
        values["partial"] = np.zeros(grid * render.state_bytes(self.spec), np.uint8)
        self.launch("thm3_reduce_blocks", grid, values)
        values.update(self._outputs(1), count=grid)
        self.launch("thm3_reduce_partials", 1, values)
        return [values[f"out_{f.name}"][0] for f in self.spec.loop.fields]

    def rows(self, arrays, params):
        rows, n = arrays[0].shape[:2]
        values = {**self._inputs(arrays, params, n), **self._outputs(rows)}
        self.launch("thm3_reduce_rows", rows, values)
        return [values[f"out_{f.name}"] for f in self.spec.loop.fields]


def _device_arrays(spec, arrays):
    return [np.ascontiguousarray(a, _numpy_of(spec.ctype(p.type))) for p, a in zip(spec.data_elements, arrays)]


def _tolerance(dtype):
    return (2e-4, 2e-4) if dtype == "float32" else (1e-10, 1e-10)


@pytest.fixture(scope="module")
def emulated(build_dir):
    made = {}

    def get(name, dtype, block=64, items=4):
        key = (name, dtype, block, items)
        if key not in made:
            loop, combine = LOOPS[name]()
            made[key] = Emulated(render.make_spec(loop, combine, dtype, DIM), build_dir, block, items)
        return made[key]
    return get


def _check_reduce(emu, name, n, grid, rng, arrays=None):
    spec = emu.spec
    if arrays is None:
        arrays, params = data(name, n, rng)
    else:
        params = data(name, 0, rng)[1]
    dev = _device_arrays(spec, arrays)
    got = emu.reduce(dev, params, grid)
    ref = [a.astype(np.float64) for a in dev]
    want = run_sequential(spec.loop, ref, params) if n <= 5000 else closed_form(name, ref, params)
    rtol, atol = _tolerance(spec.real.name)
    assert_states(got, want, rtol, atol, what=f"{name} {spec.real.name} n={n} grid={grid}")
    if name in ("argmax", "all_above"):
        assert all(np.array_equal(g, w) for g, w in zip(got, want)), (got, want)


@needs_gxx
@pytest.mark.parametrize("n", [0, 1, 31, 128, 1000, 4099])
def test_emulated_kernels_float32(case, n, emulated):
    name = case[0]
    rng = np.random.default_rng(n)
    for grid in (1, 3, 7):
        _check_reduce(emulated(name, "float32"), name, n, grid, rng)


@needs_gxx
@pytest.mark.parametrize("name", ["mps", "welford", "argmax"])
def test_emulated_kernels_float64(name, emulated):
    rng = np.random.default_rng(2)
    for n, grid in ((0, 1), (1, 2), (333, 3), (4099, 5)):
        _check_reduce(emulated(name, "float64"), name, n, grid, rng)


@needs_gxx
@pytest.mark.parametrize("name", ["mps", "softmax", "argmax"])
def test_emulated_unaligned_arrays_take_the_scalar_path(name, emulated):
    emu = emulated(name, "float32")
    rng = np.random.default_rng(5)
    arrays, _ = data(name, 2001, rng)
    x = np.ascontiguousarray(arrays[0], np.float32)
    for offset in (1, 2, 3):
        view = x[offset:]
        assert view.ctypes.data % 16
        _check_reduce(emu, name, len(view), 3, rng, [view])


@needs_gxx
def test_emulated_default_launch_shape(emulated):
    emu = emulated("mps", "float32", block=None, items=None)          # 256 threads, 16 items
    rng = np.random.default_rng(8)
    for n, grid in ((20000, 4), (8192, 2), (5, 1)):
        _check_reduce(emu, "mps", n, grid, rng)


@needs_gxx
def test_emulated_argmax_ties_across_blocks(emulated):
    emu = emulated("argmax", "float32")
    x = np.zeros(3000, np.float32)
    x[[700, 1500, 2999]] = 5.0                        # the first maximum is in block 1 of 3
    got = emu.reduce([x], {}, 3)
    assert got[0] == 5.0 and got[1] == 700


@needs_gxx
@pytest.mark.parametrize("name", ["mps", "argmax", "vec_sum", "attention"])
@pytest.mark.parametrize("n", [37, 1000])
def test_emulated_rows(name, n, emulated):
    emu = emulated(name, "float32")
    rng = np.random.default_rng(n)
    rows = 3
    per_row = [data(name, n, rng) for _ in range(rows)]
    params = per_row[0][1]
    stacked = [np.stack([r[0][k] for r in per_row]) for k in range(len(per_row[0][0]))]
    got = emu.rows(_device_arrays(emu.spec, stacked), params)
    for r in range(rows):
        ref = [a[r].astype(np.float32).astype(np.float64) for a in stacked]
        want = run_parallel(emu.spec.loop, emu.spec.combine, ref, params)
        assert_states([g[r] for g in got], want, 2e-4, 2e-4, what=f"row {r}")


@needs_gxx
def test_emulated_nan_and_inf_follow_the_fold(emulated):
    """The kernels alone, where their order of combines gives the loop's answer anyway
    (softmax at -inf does not: the module's launcher mends that, below)."""
    rng = np.random.default_rng(9)
    for name in ("mps", "softmax", "argmax"):
        emu = emulated(name, "float32")
        for poison in (np.nan, np.inf, -np.inf):
            arrays, _ = data(name, 1500, rng)
            x = arrays[0]
            x[rng.integers(0, 1500, 3)] = poison
            if name == "softmax" and poison == -np.inf:
                continue        # a run from the identity at -inf: (-inf, NaN), outside the proof
            _check_reduce(emu, name, 1500, 3, rng, [x])


@needs_gxx
def test_the_kernels_flag_what_the_proof_does_not_cover(emulated):
    """thm3_uncovered: set by a NaN or infinite element, or by a combine whose operands or
    value leave the reals (softmax's run that starts at -inf); not by a clean list."""
    emu = emulated("softmax", "float32")
    flag = emulated_flag(emu.lib)
    rng = np.random.default_rng(10)
    x = rng.normal(size=1500).astype(np.float32)
    flag.value = 0
    emu.reduce([x], {}, 3)
    assert flag.value == 0
    y = x.copy()
    y[256] = -np.inf                                 # a warp tile's first element (block 64, items 4)
    emu.reduce([y], {}, 3)
    assert flag.value == 1
    emu = emulated("mps", "float32")
    flag = emulated_flag(emu.lib)
    flag.value = 0
    z = rng.normal(size=1000).astype(np.float32)
    z[500] = 3e38                                    # finite, and the sums overflow float32
    z[501] = 3e38
    emu.reduce([z], {}, 3)
    assert flag.value == 1


# --- the emitted module, on the emulation through a stand-in for CuPy ------------------------

class _DeviceArray(np.ndarray):
    def get(self):
        return np.asarray(self).copy()


def fake_cupy(spec, build_dir) -> types.ModuleType:
    """Just the CuPy the emitted module uses, running its kernels on the emulation."""
    cp = types.ModuleType("cupy")
    cp.uint8 = np.uint8

    def as_device(a):
        return np.ascontiguousarray(a).view(_DeviceArray)
    cp.asarray = lambda a, dtype=None: as_device(np.asarray(a, dtype))
    cp.ascontiguousarray = as_device
    cp.empty = lambda shape, dtype=np.float64: as_device(     # poisoned, as device memory may be
        np.full(shape, 0x55 if np.dtype(dtype) == np.uint8 else -7, dtype))

    class Device:
        id = 0
        attributes = {"MultiProcessorCount": 2}
    cp.cuda = types.SimpleNamespace(Device=Device, runtime=types.SimpleNamespace(getDevice=lambda: 0))

    class RawModule:
        def __init__(self, code, options=()):
            self.lib = emulation_library(spec, code, build_dir)

        def get_function(self, name):
            lib, args = self.lib, render.kernel_args(spec, name)

            class Kernel:
                @property
                def attributes(self):
                    raise AttributeError("no attributes in the emulation")

                def __call__(self, grid, block, values):
                    assert block == (render.BLOCK,) and len(values) == len(args)
                    getattr(lib, f"emu_{name}")(ctypes.c_uint(grid[0]),
                                                *[_pack(a, np.asarray(v)) for a, v in zip(args, values)])
            return Kernel()

        def get_global(self, name):         # a device flag: the emulation's C global
            assert name in ("thm3_int_overflow", "thm3_uncovered"), name
            getter = getattr(self.lib, f"emu_{name}")
            getter.restype = ctypes.c_void_p
            return getter()
    cp.RawModule = RawModule
    cp.int32 = np.int32
    cp.ndarray = lambda shape, dtype, memptr: np.ctypeslib.as_array(
        (ctypes.c_int32 * int(np.prod(shape))).from_address(memptr)).view(_DeviceArray)
    return cp


def _import(path: Path):
    spec = importlib.util.spec_from_file_location(f"emitted_{path.stem}_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_emit_writes_an_importable_module(tmp_path):
    loop, combine = _mps()
    cu, py = emit_mod.emit(loop, combine, tmp_path)
    assert (cu, py) == (tmp_path / "mps.cu", tmp_path / "mps.py")
    assert cu.read_text() == render.render(loop, combine)
    module = _import(py)                              # no CuPy needed to import it
    assert module.SOURCE == cu.read_text()
    assert "Maximum prefix sum" in module.__doc__ and "m = max(a.m, a.s + b.m)" in module.__doc__
    assert "m = max(a.m, a.s + b.m)" in module.reduce.__doc__
    assert module.FIELDS == (("s", "Real"), ("m", "Real")) and module.RESULT == "Real"
    assert module.STATE_BYTES == 8 and module.BLOCK == 256 and module.ITEMS == 64   # two fields: long tiles
    subprocess.run([sys.executable, "-c", f"import runpy; runpy.run_path({str(py)!r})"], check=True,
                   env={**os.environ, "PYTHONPATH": ""}, cwd=tmp_path)   # needs neither thm3 nor CuPy


def test_emit_needs_dim_for_vec(tmp_path):
    with pytest.raises(ValueError, match="dim"):
        emit_mod.emit(*_vec_sum(), tmp_path)


def _emitted_on_the_emulation(name, tmp_path, build_dir, monkeypatch):
    """(loop, combine, spec, the emitted module) with CuPy the emulation's stand-in."""
    loop, combine = LOOPS[name]()
    dim = DIM if name == "attention" else None
    _, py = emit_mod.emit(loop, combine, tmp_path, dim=dim)
    spec = render.make_spec(loop, combine, "float32", dim)
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(spec, build_dir))
    return loop, combine, spec, _import(py)


@needs_gxx
@pytest.mark.parametrize("name", ["mps", "welford", "argmax", "attention", "softmax", "all_above"])
def test_emitted_module_on_the_emulation(name, tmp_path, build_dir, monkeypatch):
    loop, combine, spec, module = _emitted_on_the_emulation(name, tmp_path, build_dir, monkeypatch)
    rng = np.random.default_rng(4)
    for n in (0, 1, 31, 1000, 10**4 + 3):                 # 10**4 + 3: 20 warp tiles, 8 blocks
        arrays, params = data(name, n, rng)
        dev = [a.astype(np.float32) for a in arrays]
        state = module.reduce_state(*dev, **params)
        want = run_sequential(loop, [a.astype(np.float64) for a in dev], params)
        assert_states(state, want, 2e-4, 2e-4, what=f"{name} n={n}")
        answer = module.reduce(*dev, **params)
        if loop.result is None:
            assert_states(answer, want, 2e-4, 2e-4)
        else:
            np.testing.assert_allclose(answer, apply_result(loop, want, params), 2e-4, 2e-4)
    rows = [data(name, 77, rng)[0] for _ in range(5)]
    stacked = [np.stack([r[k] for r in rows]).astype(np.float32) for k in range(len(rows[0]))]
    states = module.reduce_rows_state(*stacked, **params)
    for r in range(5):
        want = run_sequential(loop, [a[r].astype(np.float64) for a in stacked], params)
        assert_states([s[r] for s in states], want, 2e-4, 2e-4)


@needs_gxx
@pytest.mark.parametrize("name, dtype", [("softmax", "float32"), ("welford", "float64"), ("argmax", "float32"),
                                         ("attention", "float32"), ("all_above", "float32")])
def test_the_kernels_flag_nothing_on_a_clean_list(name, dtype, emulated):
    """No spurious flag: every combine the kernels make on a clean list (identity padding,
    blocks with no tile, lanes past the end) stays in the proof's reals, so the GPU keeps
    the list (a flag would send every list to the host)."""
    emu = emulated(name, dtype)
    flag = emulated_flag(emu.lib)
    rng = np.random.default_rng(13)
    for n, grid in ((0, 1), (1, 3), (257, 2), (1000, 7), (4099, 3)):
        arrays, params = data(name, n, rng)
        flag.value = 0
        emu.reduce(_device_arrays(emu.spec, arrays), params, grid)
        assert flag.value == 0, (name, n, grid)
    rows = [data(name, 77, rng)[0] for _ in range(3)]
    flag.value = 0
    emu.rows(_device_arrays(emu.spec, [np.stack([r[k] for r in rows]) for k in range(len(rows[0]))]), params)
    assert flag.value == 0


@needs_gxx
@pytest.mark.parametrize("name", ["softmax", "mps", "argmax", "attention"])
def test_the_emitted_module_computes_again_on_the_host_what_the_kernels_flag(name, tmp_path, build_dir,
                                                                           monkeypatch):
    """-inf, inf and NaN at the starts of warp tiles: the kernels flag them, and reduce,
    reduce_state and reduce_rows give the loop's answer (the host's NumPy path, in list
    order); a clean list stays on the device."""
    loop, combine, spec, module = _emitted_on_the_emulation(name, tmp_path, build_dir, monkeypatch)
    host = []
    real = module._reduce_numpy
    monkeypatch.setattr(module, "_reduce_numpy", lambda arrays, params: host.append(1) or real(arrays, params))
    rng = np.random.default_rng(12)
    tile = 32 * spec.items
    arrays, params = data(name, 4 * tile + 5, rng)
    clean = [a.astype(np.float32) for a in arrays]
    module.reduce_state(*clean, **params)
    assert not host
    for poison in (-np.inf, np.inf, np.nan):
        dev = [a.copy() for a in clean]
        dev[0][[tile, 3 * tile, 3 * tile + 1]] = poison
        want = run_sequential(loop, [a.astype(np.float64) for a in dev], params)
        got = module.reduce_state(*dev, **params)
        assert host
        assert_states(got, want, 2e-4, 2e-4, what=f"{name} at {poison}")
        rows = module.reduce_rows_state(*[np.stack([a, a]) for a in dev], **params)
        for r in range(2):
            assert_states([s[r] for s in rows], want, 2e-4, 2e-4, what=f"{name} row {r} at {poison}")
        host.clear()


@needs_gxx
def test_a_real_parameter_outside_the_reals_goes_to_the_host(tmp_path, build_dir, monkeypatch):
    loop, combine, spec, module = _emitted_on_the_emulation("all_above", tmp_path, build_dir, monkeypatch)
    host = []
    real = module._reduce_numpy
    monkeypatch.setattr(module, "_reduce_numpy", lambda arrays, params: host.append(1) or real(arrays, params))
    x = np.random.default_rng(15).normal(3.0, 1.0, 1000).astype(np.float32)
    for t, calls in ((0.5, 0), (np.nan, 1), (-np.inf, 1)):
        got = module.reduce_state(x, t=t)
        assert got == run_sequential(loop, [x.astype(np.float64)], {"t": t}), t
        assert len(host) == calls, t
        host.clear()


# --- on a GPU ---------------------------------------------------------------------------------

def _emitted(name, tmp_path, dtype="float32", dim=None):
    loop, combine = LOOPS[name]()
    _, py = emit_mod.emit(loop, combine, tmp_path, dtype=dtype, dim=dim)
    return loop, combine, _import(py)


GPU_LOOPS = ["mps", "softmax", "welford", "argmax", "vec_sum", "attention", "all_above"]


@pytest.mark.gpu
@pytest.mark.parametrize("name", GPU_LOOPS)
@pytest.mark.parametrize("n", [0, 1, 31, 1000, 2**20 + 3])
def test_gpu_reduce(name, n, tmp_path):
    import cupy
    dim = 64 if name in ("vec_sum", "attention") else None
    loop, combine, module = _emitted(name, tmp_path, dim=dim)
    rng = np.random.default_rng(n)
    arrays, params = data(name, n, rng, dim or DIM)
    dev = [cupy.asarray(a, dtype=np.float32) for a in arrays]
    ref = [a.astype(np.float32).astype(np.float64) for a in arrays]
    want = run_sequential(loop, ref, params) if n <= 1000 else run_parallel(loop, combine, ref, params)
    got = module.reduce_state(*dev, **params)
    assert_states(got, want, 1e-4, 1e-3, what=f"{name} n={n}")
    if name == "argmax":
        assert got[1] == want[1]
    if loop.result is not None:
        np.testing.assert_allclose(module.reduce(*dev, **params), apply_result(loop, want, params), 1e-4, 1e-3)


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["mps", "welford", "argmax"])
def test_gpu_reduce_float64(name, tmp_path):
    import cupy
    loop, combine, module = _emitted(name, tmp_path, dtype="float64")
    arrays, params = data(name, 3 * 10**5 + 11, np.random.default_rng(1))
    got = module.reduce_state(*[cupy.asarray(a) for a in arrays], **params)
    assert_states(got, run_parallel(loop, combine, arrays, params), 1e-10, 1e-9)


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["mps", "softmax", "argmax"])
def test_gpu_nan_and_inf(name, tmp_path, monkeypatch):
    """NaN and infinities (-inf at warp tiles' starts too: softmax's (-inf, NaN) from the
    identity) as the loop has them, through thm3_uncovered and the host; a clean list
    never leaves the GPU."""
    import cupy
    loop, combine, module = _emitted(name, tmp_path)
    host = []
    real = module._reduce_numpy
    monkeypatch.setattr(module, "_reduce_numpy", lambda arrays, params: host.append(1) or real(arrays, params))
    rng = np.random.default_rng(7)
    tile = 32 * module.ITEMS
    for n in (1000, 2**16 + 5):
        arrays, params = data(name, n, rng)
        module.reduce_state(cupy.asarray(arrays[0].astype(np.float32)))
        assert not host, "a clean list went to the host"
        for poison in (np.nan, np.inf, -np.inf):
            x = arrays[0].astype(np.float32)
            x[rng.integers(0, n, 3)] = poison
            x[[0, tile, 3 * tile] if n > 3 * tile else [0]] = poison
            want = run_sequential(loop, [x.astype(np.float64)], params)
            assert_states(module.reduce_state(cupy.asarray(x)), want, 1e-4, 1e-3, what=f"{name} {poison}")
            assert host
            host.clear()


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["mps", "welford", "attention"])
def test_gpu_rows(name, tmp_path):
    import cupy
    dim = 64 if name == "attention" else None
    loop, combine, module = _emitted(name, tmp_path, dim=dim)
    rng = np.random.default_rng(3)
    for rows, n in ((64, 1000), (3, 4097), (5, 0)):
        per = [data(name, n, rng, dim or DIM) for _ in range(rows)]
        params = per[0][1]
        stacked = [np.stack([p[0][k] for p in per]).astype(np.float32) for k in range(len(per[0][0]))]
        states = module.reduce_rows_state(*[cupy.asarray(a) for a in stacked], **params)
        for r in range(rows):
            want = run_parallel(loop, combine, [a[r].astype(np.float64) for a in stacked], params)
            assert_states([cupy.asnumpy(s[r]) for s in states], want, 1e-4, 1e-3, what=f"row {r}")


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.parametrize("name", ["mps", "argmax"])
def test_gpu_reduce_two_to_the_28(name, tmp_path):
    import cupy
    loop, combine, module = _emitted(name, tmp_path)
    n = 2**28
    x = cupy.random.default_rng(28).standard_normal(n, dtype=cupy.float32)
    got = module.reduce_state(x)
    x64 = x.astype(cupy.float64)
    if name == "mps":
        want = (float(x64.sum()), max(0.0, float(cupy.cumsum(x64).max())))
        assert_states(got, want, 1e-4, 0.5)          # float32 sums of 2**28 normals
    else:
        assert got[1] == int(cupy.argmax(x)) and got[0] == float(x.max())


# --- the runtime: its cache, and a backend that is not there ----------------------------------

class _AnalysisLike:
    """What the runtime reads of an Analysis: the loop and its combine."""
    __slots__ = ("loop", "combine_fn")

    def __init__(self, loop, combine_fn):
        self.loop, self.combine_fn = loop, combine_fn


def _analysis_like(name):
    return _AnalysisLike(*LOOPS[name]())


def test_runtime_cache_follows_the_loop_not_the_object_id(monkeypatch):
    """Issue 15's finding: modules were cached by id(analysis) without keeping the analysis
    alive; once it was collected, the next analysis at the same address got its kernel.
    Here every object has the same id, as a freed analysis and the next one do."""
    from thm3.gpu import api as runtime
    monkeypatch.setattr(runtime, "id", lambda obj: 0, raising=False)
    first = _analysis_like("mps")
    mps_source = runtime.module_for(first).SOURCE
    del first
    other = _analysis_like("welford")
    module = runtime.module_for(other)
    assert module.SOURCE != mps_source
    assert module.NAME == other.loop.name
    assert module.SOURCE == render.render(other.loop, other.combine_fn)


def test_missing_cupy_names_the_extras(monkeypatch):
    from thm3.errors import BackendUnavailable
    from thm3.gpu import api as runtime
    monkeypatch.setitem(sys.modules, "cupy", None)          # import cupy raises ImportError
    with pytest.raises(BackendUnavailable, match=r"thm3\[cuda12\].*thm3\[cuda13\]"):
        runtime.run_cupy(_analysis_like("mps"), np.ones(10))


def test_emitted_module_without_cupy_names_the_extras(tmp_path, monkeypatch):
    _, py = emit_mod.emit(*LOOPS["mps"](), tmp_path)
    module = _import(py)
    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(module.BackendUnavailable, match=r"thm3\[cuda12\]"):
        module.reduce(np.ones(10, np.float32))


def test_cli_run_without_cupy_exits_2(monkeypatch):
    from click.testing import CliRunner
    from thm3.cli.main import main
    monkeypatch.setitem(sys.modules, "cupy", None)
    sample = Path(__file__).resolve().parents[1] / "samples" / "sum.py"
    result = CliRunner().invoke(main, ["run", str(sample), "--backend", "cupy", "--n", "100"])
    assert result.exit_code == 2, result.output
    assert "thm3[cuda12]" in result.output


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_emitted_module_runs_on_numpy_without_cupy(name, tmp_path, monkeypatch):
    """backend="numpy": the emitted module's own NumPy twin (runs folded with left side by
    side, neighbours combined level by level), against the sequential fold; CuPy blocked."""
    loop, combine = LOOPS[name]()
    dim = DIM if any(x.type is V for x in loop.fields + loop.elements + loop.params) else None
    _, py = emit_mod.emit(loop, combine, tmp_path, dim=dim)
    monkeypatch.setitem(sys.modules, "cupy", None)
    module = _import(py)
    rng = np.random.default_rng(11)
    for n in (0, 1, 1000, 5000 + 3):
        arrays, params = data(name, n, rng)
        dev = [a.astype(np.float32) if a.dtype == np.float64 else a for a in arrays]
        state = module.reduce_state(*(dev or [n]), backend="numpy", **params)
        want = run_sequential(loop, [a.astype(np.float64) if a.dtype == np.float32 else a for a in dev], params)
        assert_states(state, want, 2e-4, 2e-4, what=f"{name} n={n}")
        answer = module.reduce(*(dev or [n]), backend="numpy", **params)
        if loop.result is not None:
            np.testing.assert_allclose(answer, apply_result(loop, want, params), 2e-4, 2e-4)
    with pytest.raises(ValueError, match="backend"):
        module.reduce(*(dev or [n]), backend="torch", **params)


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_emitted_scan_runs_on_numpy_without_cupy(name, tmp_path, monkeypatch):
    """The emitted module's `scan(..., backend="numpy")`: every prefix state on the CPU,
    against the sequential prefixes; CuPy blocked.  (Issue 23: its error said "run with
    backend='numpy'" while scan took `backend` as a loop parameter.)"""
    from thm3.backends.scan import run_sequential_prefixes
    loop, combine = LOOPS[name]()
    dim = DIM if any(x.type is V for x in loop.fields + loop.elements + loop.params) else None
    _, py = emit_mod.emit(loop, combine, tmp_path, dim=dim)
    monkeypatch.setitem(sys.modules, "cupy", None)
    module = _import(py)
    rng = np.random.default_rng(12)
    for n in (0, 1, 7, 1024, 3000 + 5):
        arrays, params = data(name, n, rng)
        dev = [a.astype(np.float32) if a.dtype == np.float64 else a for a in arrays]
        got = module.scan(*(dev or [n]), backend="numpy", **params)
        assert len(got) == len(loop.fields) and all(len(g) == n for g in got)
        want = run_sequential_prefixes(loop, [a.astype(np.float64) if a.dtype == np.float32 else a for a in dev],
                                       params)
        for g, w, f in zip(got, want, loop.fields):
            np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64), 2e-4, 2e-4,
                                       err_msg=f"{name} n={n} field {f.name}")
    with pytest.raises(ValueError, match="backend"):
        module.scan(*(dev or [n]), backend="torch", **params)


def test_exp_certified_nonpositive_uses_ex2_approx_in_left_and_combine_only():
    """With the stability certificate (every exp argument of left and the combine <= 0)
    their float32 exps take ex2.approx alone; the result's exps, which it does not cover,
    and every float64 exp keep the library's."""
    loop, combine = LOOPS["softmax"]()
    plain = render.render(loop, combine)
    fast = render.render(loop, combine, exp_nonpositive=True)
    call = "thm3_exp2_nonpositive("
    assert plain.count(call) == 1                       # the helper's definition only
    left = fast[fast.index("State thm3_left"):fast.index("State thm3_combine")]
    comb = fast[fast.index("State thm3_combine"):fast.index("// ---- the reduction")]
    assert call in left and call in comb
    if "thm3_result" in fast:
        res = fast[fast.index("void thm3_result"):]
        assert call not in res[:res.index("\n}\n")]
    assert render.render(loop, combine, dtype="float64", exp_nonpositive=True).count(call) == 1


def test_runtime_passes_the_certificate_on():
    from thm3.gpu import api as runtime
    loop, combine = LOOPS["softmax"]()
    proved = types.SimpleNamespace(loop=loop, combine_fn=combine, stability={"exp_overflow": "proved"})
    tested = types.SimpleNamespace(loop=loop, combine_fn=combine, stability={"exp_overflow": "tested"})
    assert runtime.module_for(proved).SOURCE.count("thm3_exp2_nonpositive(") > 1
    assert runtime.module_for(tested).SOURCE.count("thm3_exp2_nonpositive(") == 1
