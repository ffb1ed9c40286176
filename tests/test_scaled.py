"""(max, *) and (min, *) steps, powers of a count in the step, and the exponential of a sum
that b keeps (issue 21): every backend runs the proved combine as the sequential loop does,
on lists long enough for 0.9 ** n to underflow, and the CUDA kernels compile."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import thm3
from analyzed import OnDemand
from thm3.ir import Op, walk
from stages import check_emitted_module, check_runs_as_the_loop, compile_kernels

CORPUS = Path(__file__).resolve().parents[1] / "bench" / "corpus"
PARAMS = {"semiring_peak_decay_param": {"decay": 0.7}, "powers_discount_forward_param": {"gamma": 0.9}}


def _normal(rng, n):
    return [rng.normal(size=n)]


def _positive(rng, n):
    return [rng.uniform(1.0, 2.0, n)]


def _timed(rng, n):
    return [rng.uniform(0.0, 1.0, n), rng.normal(size=n)]


def _flagged(high, ints=False):
    def data(rng, n):
        flags = rng.integers(0, 2, n).astype(np.int64)
        values = rng.integers(0, high + 1, n).astype(np.int64) if ints else rng.uniform(1.0, high, n)
        return [flags, values]
    return data


DATA = {
    "semiring_peak_meter": _normal, "semiring_peak_meter_inf": _normal, "semiring_cheapest_inflated": _positive,
    "semiring_peak_decay_param": _normal, "semiring_peak_hold_branch": _normal,
    "semiring_gated_inflation": _flagged(2.0), "semiring_fast_slow_peaks": _normal,
    "semiring_envelope_dt": _timed, "powers_ema_irregular": _timed,
    "powers_bitplane": lambda rng, n: [rng.integers(0, 2, n).astype(np.int64)],
    "powers_gated_digits": _flagged(9, ints=True), "powers_discount_forward_param": _normal,
}
NAMES = tuple(DATA)


@pytest.fixture(scope="module")
def analyses():
    return OnDemand(lambda name: thm3.analyze(CORPUS / f"{name}.py", timeout=60))


@pytest.mark.parametrize("name", NAMES)
def test_the_combine_runs_as_the_sequential_loop(name, analyses):
    a = analyses[name]
    assert a.verdict == "homomorphism", a.reason
    assert any(e.op in (Op.POWN, Op.EXP) for e in walk(a.combine_fn.outputs)), a.combine_fn
    check_runs_as_the_loop(a, DATA[name], PARAMS.get(name, {}), (0, 1, 2, 7, 1000, 9000))


@pytest.mark.parametrize("name", NAMES)
def test_numba_backend_agrees(name, analyses):
    pytest.importorskip("numba")
    a = analyses[name]
    arrays = DATA[name](np.random.default_rng(6), 9000)
    p = PARAMS.get(name, {})
    got, want = a.run(*arrays, backend="numba", **p), a.run(*arrays, **p)
    assert np.allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float), rtol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_the_emitted_module_reduces_and_scans_on_numpy(name, analyses, tmp_path):
    check_emitted_module(analyses[name], name, DATA[name], PARAMS.get(name, {}), tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
def test_the_kernels_compile(arch, analyses):
    from thm3.gpu.runtime import nvrtc
    if not nvrtc.available():
        pytest.skip("cuda-bindings (NVRTC) is not installed")
    for name in NAMES:
        for dtype in ("float32", "float64"):
            compile_kernels(analyses[name], name, arch, dtype)
