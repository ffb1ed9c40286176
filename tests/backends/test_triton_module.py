"""The Triton module (`thm3 emit --target triton`): its kernels and host functions run in
the NumPy stand-in for Triton (tests/triton_emulator.py, whose `tl.reduce` reorders) against
the sequential fold, on every sample homomorphism with scalar values (the corpus in the slow
tier); `tl.reduce` only where commutativity is proved, checked on the text and on the
TTIR of Triton's own compiler for sm_90 and sm_80 (no GPU needed) where Triton installs."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import thm3
from analyzed import analysis
from catalog import HOMOMORPHISMS, by_name
from closeness import close, running_magnitude
from thm3.backends.numpy_tree import run_sequential
from thm3.backends.scan import run_sequential_prefixes
from thm3.backends.triton_module import render
from thm3.errors import UsageError
from thm3.ir import Type
from thm3.semantics.samples import random_arrays
from thm3.syntax.frontend import parse_file
from triton_emulator import compile_kernels, load

SIZES = [0, 1, 1000, 1007]


def _scalar(loop) -> bool:
    return not any(x.type is Type.VEC for x in loop.fields + loop.elements + loop.params)


# read from the parsed loop: collection analyses nothing (the analyses run in the tests)
SCALAR = [s for s in HOMOMORPHISMS if _scalar(parse_file(s.path))]


def _in_range(p) -> bool:
    v = np.abs(np.asarray(p, dtype=np.float64))
    return bool(np.all(np.isfinite(v)) and np.all((v == 0) | ((v > 1e-250) & (v < 1e250))))


def _module(a, commutativity=None):
    mod = load(render(a.loop, a.combine_fn, commutativity=commutativity or a.proofs["commutativity"]))
    mod.BLOCK = 16          # many blocks, and states reduced and scanned over several levels
    return mod


def _check(a, seed, normwise=False):
    mod = _module(a)
    for n in SIZES:
        rng = np.random.default_rng(seed + n)
        try:
            for _ in range(8):
                arrays, params = random_arrays(a.loop, n, 4, rng)
                want = run_sequential_prefixes(a.loop, arrays, params, n=n)
                if all(_in_range(p) for p in want):
                    break
            else:
                continue
        except OverflowError:           # an Int field leaves int64 on the data: so says the module
            with pytest.raises(OverflowError):
                mod.reduce_state(*arrays, n=n, **params)
            continue
        scale = running_magnitude(want, n) if normwise else None
        assert close(mod.scan(*arrays, n=n, **params), want, scale=scale), (a.loop.name, n)
        assert close(mod.reduce_state(*arrays, n=n, **params), run_sequential(a.loop, arrays, params, n=n),
                      scale=scale[-1] if normwise and n else None), (a.loop.name, n)
        if n == 1000 and arrays:        # 4 rows of 250
            rows = [x.reshape(4, 250) for x in arrays]
            got, every = mod.reduce_rows(*rows, **params), mod.scan_rows(*rows, **params)
            for r in range(4):
                row = [x[r] for x in rows]
                prefixes = run_sequential_prefixes(a.loop, row, params)
                top = running_magnitude(prefixes, 250) if normwise else None
                assert close([g[r] for g in got], run_sequential(a.loop, row, params),
                              scale=top[-1] if normwise else None), (a.loop.name, r)
                assert close([e[r] for e in every], prefixes, scale=top), (a.loop.name, r)


@pytest.mark.parametrize("sample", SCALAR, ids=lambda s: s.name)
def test_the_kernels_equal_the_sequential_fold(sample):
    _check(analysis(str(sample.path)), 7)


def _corpus_scalar_homomorphisms():
    from corpus import HOMOMORPHISMS as CORPUS_HOMS
    return CORPUS_HOMS


@pytest.mark.slow
@pytest.mark.parametrize("entry", _corpus_scalar_homomorphisms(), ids=lambda e: e.name)
def test_the_kernels_on_every_corpus_homomorphism(entry):
    a = analysis(str(entry.path))
    if a.combine_fn is None or not _scalar(a.loop):
        pytest.skip(f"{entry.name}: {a.verdict}, or Vec values")
    _check(a, 11, normwise=True)


@pytest.mark.parametrize("sample", SCALAR, ids=lambda s: s.name)
def test_tl_reduce_only_where_commutativity_is_proved(sample):
    a = analysis(str(sample.path))
    text = render(a.loop, a.combine_fn, commutativity=a.proofs["commutativity"])
    assert ("tl.reduce(" in text) == (a.proofs["commutativity"] == "proved"), a.proofs["commutativity"]
    assert "tl.associative_scan(" in text
    assert f"COMMUTATIVITY = {a.proofs['commutativity']!r}" in text


@pytest.mark.parametrize("name", ["mps", "affine", "last"])
def test_the_stand_in_catches_tl_reduce_of_a_combine_that_is_not_commutative(name):
    """The test is able to fail: the same combine claimed commutative takes tl.reduce, whose
    reordering the stand-in does, and the reduction comes out wrong."""
    a = analysis(str(by_name(name).path))
    assert a.proofs["commutativity"] == "failed"
    x = np.random.default_rng(0).standard_normal(1000)
    arrays = [x] * len([p for p in a.loop.elements if not p.index])
    want = run_sequential(a.loop, arrays, {})
    assert close(_module(a).reduce_state(*arrays), want)
    assert not close(_module(a, commutativity="proved").reduce_state(*arrays), want)


def test_an_int_overflow_raises(tmp_path):
    path = tmp_path / "int_product.py"
    path.write_text('"""Int product."""\nfrom typing import NamedTuple\nfrom thm3.lang import Int\n\n\n'
                    "class State(NamedTuple):\n    p: Int = 1\n\n\n"
                    "def left(acc: State, x: Int) -> State:\n    return State(acc.p * x)\n")
    a = thm3.analyze(str(path), lift=False)
    mod = _module(a)
    assert mod.OVERFLOW and mod.reduce_state(np.array([2, -3, 5, 7])) == (-210,)
    with pytest.raises(OverflowError):
        mod.reduce_state(np.full(70, 3))
    with pytest.raises(OverflowError):
        mod.scan(np.full(70, 3))


def test_vec_values_are_refused_with_the_targets_that_take_them():
    a = analysis(str(by_name("vec_sum").path))
    with pytest.raises(UsageError, match="--target jax"):
        render(a.loop, a.combine_fn)


def test_emit_target_triton_writes_the_module(tmp_path):
    out = subprocess.run([sys.executable, "-m", "thm3", "emit", "--sample", "affine", "-o", str(tmp_path),
                          "--target", "triton"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    text = (tmp_path / "affine_triton.py").read_text()
    compile(text, "affine_triton.py", "exec")
    assert "tl.reduce(" not in text and "tree in list order" in text


# --- Triton's own compiler, for a GPU target, without a GPU --------------------------------

COMPILED = ["mps", "sum", "count_above"]


@pytest.mark.parametrize("arch", [90, 80])
@pytest.mark.parametrize("name", COMPILED)
def test_triton_compiles_every_kernel_and_keeps_tl_reduce_to_commutative_combines(name, arch, tmp_path):
    pytest.importorskip("triton")
    a = analysis(str(by_name(name).path))
    path = tmp_path / f"{name}_triton.py"
    path.write_text(render(a.loop, a.combine_fn, commutativity=a.proofs["commutativity"]))
    ttir = compile_kernels(path, arch, "fp32" if arch == 80 else "fp64")
    reduces = {k: "tt.reduce" in v for k, v in ttir.items()}
    if a.proofs["commutativity"] == "proved":
        assert reduces["reduce_kernel"] and reduces["rows_reduce_kernel"]
    else:
        assert not any(reduces.values()), reduces
    assert "tt.scan" in ttir["scan_kernel"] and "tt.scan" in ttir["rows_scan_kernel"]


@pytest.mark.slow
@pytest.mark.parametrize("sample", SCALAR, ids=lambda s: s.name)
def test_triton_compiles_every_sample_for_sm_90(sample, tmp_path):
    pytest.importorskip("triton")
    a = analysis(str(sample.path))
    path = tmp_path / f"{sample.name}_triton.py"
    path.write_text(render(a.loop, a.combine_fn, commutativity=a.proofs["commutativity"]))
    ttir = compile_kernels(path, 90)
    if a.proofs["commutativity"] != "proved":
        assert not any("tt.reduce" in v for v in ttir.values())
