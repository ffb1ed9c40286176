"""Exact Ints (issue 22): `a.combine` and the sequential fold compute Int fields in
Python ints; the NumPy and Numba backends compute in int64 and raise OverflowError,
naming the field, rather than wrap; an Int literal beyond int64 is exact in the analysis
and refused, at its position, by the backends that compute in int64."""
from __future__ import annotations

import numpy as np
import pytest

import thm3
from thm3.backends.numpy_tree import run_sequential

HEAD = "from typing import NamedTuple\nfrom thm3.lang import Int\n\n"
SUM = HEAD + """class State(NamedTuple):
    s: Int = 0

def left(acc: State, x: Int) -> State:
    return State(acc.s + x)
"""
WIDE = HEAD + """class State(NamedTuple):
    s: Int = 0

def left(acc: State, x: Int) -> State:
    return State(acc.s + x * 100000000000000000000)
"""


@pytest.fixture(scope="module")
def int_sum():
    a = thm3.analyze_source(SUM, lift=False, timeout=30)
    assert a.verdict == "homomorphism"
    return a


def test_combine_is_exact_beyond_int64(int_sum):
    assert int_sum.combine((2**62,), (2**62,)).s == 2**63
    assert int_sum.combine((2**70,), (-1,)).s == 2**70 - 1


def test_the_sequential_fold_is_exact(int_sum):
    assert run_sequential(int_sum.loop, [np.array([2**62, 2**62])], {}) == (2**63,)


def test_numpy_backend_raises_on_overflow_naming_the_field(int_sum):
    with pytest.raises(OverflowError, match="Int field s overflows int64"):
        int_sum.run(np.array([2**62, 2**62]))
    with pytest.raises(OverflowError, match="Int field s"):
        int_sum.run(np.full(64, 2**58))          # in the tree of combines
    # at the edge, no false alarm: the exact sum is int64's least value
    assert int_sum.run(np.array([-2**62, -2**62])) == (-2**63,)
    assert int_sum.run(np.array([-2**63, 5, -1, 7])) == (-2**63 + 11,)


def test_numpy_checked_products_and_negation():
    a = thm3.analyze_source(HEAD + """class State(NamedTuple):
    p: Int = 1

def left(acc: State, x: Int) -> State:
    return State(acc.p * x)
""", lift=False, timeout=30)
    assert a.verdict == "homomorphism"
    assert a.run(np.array([2**31, 2**31 - 1])) == ((2**31) * (2**31 - 1),)
    with pytest.raises(OverflowError, match="Int field p"):
        a.run(np.array([2**32, 2**32]))
    with pytest.raises(OverflowError, match="Int field p"):
        a.run(np.array([-2**63, -1]))
    assert a.combine((2**40,), (2**40,)).p == 2**80


@pytest.mark.slow
def test_numba_backend_raises_on_overflow_naming_the_field(int_sum, tmp_path, monkeypatch):
    pytest.importorskip("numba")
    monkeypatch.setenv("THM3_CACHE_DIR", str(tmp_path))
    with pytest.raises(OverflowError, match="Int field s overflows int64"):
        int_sum.run(np.array([2**62, 2**62]), backend="numba")
    assert int_sum.run(np.array([-2**63, 5, -1, 7]), backend="numba") == (-2**63 + 11,)


@pytest.mark.slow
def test_numba_backend_checks_products(tmp_path, monkeypatch):
    """A product's check reads a and b alone: LLVM folded the old (a * b) // a != b to
    false, since to it a product that overflows is undefined, and 2**32 * 2**32 gave 0."""
    pytest.importorskip("numba")
    monkeypatch.setenv("THM3_CACHE_DIR", str(tmp_path))
    a = thm3.analyze_source(HEAD + """class State(NamedTuple):
    p: Int = 1

def left(acc: State, x: Int) -> State:
    return State(acc.p * x)
""", lift=False, timeout=30)
    for xs in ([2**32, 2**32], [-2**63, -1], [3037000500, 3037000500], [-2**62, 2, -1]):
        with pytest.raises(OverflowError, match="Int field p"):
            a.run(np.array(xs), backend="numba")
    for xs in ([2**31, 2**31 - 1], [-2**62, 2], [3037000499, 3037000499], [-1, -2**63 + 1]):
        assert a.run(np.array(xs), backend="numba") == (int(np.prod(np.array(xs, dtype=object))),)


def test_numba_renders_checked_int_operations():
    from thm3.backends.numba_tree import render
    a = thm3.analyze_source(SUM, lift=False, timeout=30)
    text = render(a.loop, a.combine_fn)
    assert "raise OverflowError('loop: the Int field s overflows int64 in left" in text
    assert "raise OverflowError('loop: the Int field s overflows int64 in the combine" in text


def test_a_literal_beyond_int64_is_exact_in_the_analysis():
    a = thm3.analyze_source(WIDE, lift=False, timeout=30)
    assert a.verdict == "homomorphism"
    assert a.combine((1,), (2,)).s == 3
    assert run_sequential(a.loop, [np.array([1, 2])], {}) == (3 * 10**20,)


def test_emit_refuses_a_literal_beyond_int64_at_its_position(tmp_path):
    pytest.importorskip("thm3.gpu.api")
    a = thm3.analyze_source(WIDE, path="wide.py", lift=False, timeout=30)
    with pytest.raises(thm3.LoopError) as err:
        a.emit(tmp_path)
    assert (err.value.line, err.value.col) == (8, 30)
    assert "beyond int64" in str(err.value) and str(err.value).startswith("wide.py:8:30:")
    assert not list(tmp_path.iterdir())


def test_a_literal_at_int64s_least_value_is_no_wide_literal():
    from thm3.syntax.frontend import wide_int_literal
    loop = thm3.parse_source(HEAD + """class State(NamedTuple):
    s: Int = 0

def left(acc: State, x: Int) -> State:
    return State(max(acc.s, x, -9223372036854775808))
""")
    assert wide_int_literal(loop, "the CUDA kernel") is None


# -- the CUDA kernels: checked int64 arithmetic, a flag the launcher reads ------------------

def test_kernels_check_int_arithmetic_and_compile():
    pytest.importorskip("thm3.gpu.api")
    from thm3.gpu.render import cuda as R
    from thm3.gpu.runtime import nvrtc
    a = thm3.analyze_source(SUM, lift=False, timeout=30)
    text = R.render(a.loop, a.combine_fn, dtype="float32")
    assert "r.s = thm3_add_ll(acc.s, x, 1);" in text and "r.s = thm3_add_ll(a.s, b.s, 1);" in text
    assert "__device__ int thm3_int_overflow" in text
    if not nvrtc.available():
        pytest.skip("NVRTC is not installed")
    for arch in ("sm_90", "sm_80"):
        nvrtc.compile_cubin(text, arch=arch)


def test_a_loop_without_int_arithmetic_has_no_overflow_flag():
    pytest.importorskip("thm3.gpu.api")
    from thm3.gpu.render import cuda as R
    from catalog import SAMPLES_DIR
    loop = thm3.parse_file(SAMPLES_DIR / "argmax.py")
    a = thm3.analyze(SAMPLES_DIR / "argmax.py", lift=False, timeout=30)
    assert "thm3_int_overflow" not in R.render(loop, a.combine_fn)


def test_the_checked_helpers_on_the_host(tmp_path):
    """The helpers of templates/int_checks.cu, built by g++, against Python's ints."""
    import shutil
    import subprocess
    if shutil.which("g++") is None:
        pytest.skip("no g++ to build host code")
    from thm3.gpu.render import cuda as R
    cases = [("add", 2**62, 2**62), ("add", -2**62, -2**62), ("add", -2**63, -1), ("sub", -2**63, 1),
             ("sub", 0, -2**63), ("sub", -1, -2**63), ("mul", 2**32, 2**31), ("mul", 2**32, 2**32),
             ("mul", -1, -2**63), ("mul", -2**63, -1), ("mul", -2**62, 2), ("mul", 0, -2**63),
             ("neg", -2**63, 0), ("neg", 5, 0)]
    calls = []
    for op, x, y in cases:
        args = f"{x}LL" if x != -2**63 else "THM3_LL_MIN"
        if op != "neg":
            args += ", " + (f"{y}LL" if y != -2**63 else "THM3_LL_MIN")
        calls.append(f"thm3_int_overflow = 0; r = thm3_{op}_ll({args}, 7); "
                     "printf(\"%lld %d\\n\", r, thm3_int_overflow);")
    src = tmp_path / "checks.cpp"
    src.write_text("#include <cstdio>\n#define __host__\n#define __device__\n#define __forceinline__ inline\n"
                   + R.INT_CHECKS + "\nint main() { long long r;\n" + "\n".join(calls) + "\nreturn 0; }\n")
    subprocess.run(["g++", "-std=c++17", "-fsanitize=undefined", "-fno-sanitize-recover=all", "-o",
                    str(tmp_path / "checks"), str(src)], check=True)
    lines = subprocess.run([str(tmp_path / "checks")], check=True, capture_output=True, text=True).stdout.split("\n")
    for (op, x, y), line in zip(cases, lines):
        exact = {"add": x + y, "sub": x - y, "mul": x * y, "neg": -x}[op]
        r, flag = map(int, line.split())
        fits = -2**63 <= exact < 2**63
        assert flag == (0 if fits else 7), (op, x, y)
        if fits:
            assert r == exact, (op, x, y)


# -- the emitted module's NumPy path: checked int64 arithmetic, as the library's ---------------

def _emitted(a, tmp_path):
    import importlib.util
    pytest.importorskip("thm3.gpu.api")
    py = next(p for p in a.emit(tmp_path) if str(p).endswith(".py"))
    spec = importlib.util.spec_from_file_location(f"emitted_{tmp_path.name}", py)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_emitted_numpy_path_raises_on_overflow_naming_the_field(int_sum, tmp_path):
    m = _emitted(int_sum, tmp_path)
    for call in (lambda xs: m.reduce(xs, backend="numpy"), lambda xs: m.reduce_state(xs, backend="numpy"),
                 lambda xs: m.scan(xs, backend="numpy")):
        with pytest.raises(OverflowError, match="Int field s overflows int64 in left"):
            call(np.array([2**62, 2**62]))
    # in the combines: runs of RUN elements, each in int64, whose sum is not
    with pytest.raises(OverflowError, match="Int field s overflows int64 in the combine"):
        m.reduce(np.full(3 * m.RUN, 2**52), backend="numpy")
    with pytest.raises(OverflowError, match="Int field s overflows int64 in the combine"):
        m.scan(np.full(3 * m.RUN, 2**52), backend="numpy")
    # exact where the sum fits, at the edge too, and no false alarm from a lane past the end
    assert m.reduce(np.array([-2**62, -2**62]), backend="numpy") == (-2**63,)
    xs = np.concatenate([np.zeros(m.RUN, dtype=np.int64), [2**62, 2**62 - 1]])
    assert m.reduce_state(xs, backend="numpy") == (2**63 - 1,)
    assert int(m.scan(xs, backend="numpy")[0][-1]) == 2**63 - 1
    rng = np.random.default_rng(0)
    xs = rng.integers(-2**40, 2**40, 5000)
    assert m.reduce(xs, backend="numpy") == (int(xs.sum()),)
    assert (m.scan(xs, backend="numpy")[0] == np.cumsum(xs)).all()
