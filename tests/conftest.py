"""Test tiers: the default run needs no GPU; `gpu` tests run only where CuPy sees a CUDA
device and are skipped elsewhere with the reason shown; `slow` marks heavy work (deselect
with -m "not slow").  The markers are registered here as well as in pyproject.toml, so a
run from another rootdir knows them too.

`REPRESENTATIVE` names the families of cases (one case a sample or a configuration) in
which every case costs a second or more: a kernel compiled by NVRTC, an emulated launch,
a Dask cluster, a lifting search.  The default tier keeps the cases listed there, chosen
to cover each kind of loop the family exercises; the family's other cases are marked
`slow`, and CI (`.ci/run`: the fast tier, then the slow tier) still runs them all.
`SAMPLE_FAMILIES`, one case a catalog sample (each analyses or lifts its sample), keep
`REPRESENTATIVE_SAMPLES`.

The budget: beyond those marks, a test that `tests/durations.txt` records at
`BUDGET_SECONDS` or more (serially, on this project's 2-core machine; `python
tests/durations.py` records it) runs in the slow tier, except each test file's cheapest
test, so that every file has a test in the fast tier.  A test not recorded (a new one)
stays in the fast tier until the next recording.  THM3_FAST_TIER=all switches the budget
off."""
from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skipped without one)")
    config.addinivalue_line("markers", "slow: heavy solver or large-n work")


@functools.cache
def _no_gpu_reason() -> str | None:
    try:
        import cupy
    except Exception as err:            # not installed, or its CUDA libraries do not load
        return f"no CuPy ({type(err).__name__}: {err})"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as err:            # no driver
        return f"CuPy sees no CUDA device ({type(err).__name__}: {err})"
    return None if count > 0 else "CuPy sees no CUDA device"


# A loop of each kind, for the families with one case a catalog sample (each analyses
# its sample, a second or so): plain monoids, a Vec, a Bool, a pair of ranks, a division
# tidied (Welford), prefix sums, a wrong right fold, max segment, exp and log, an index,
# a lifted loop, a flag; and non-homomorphisms of several shapes.
REPRESENTATIVE_SAMPLES = {"sum", "vec_sum", "all_positive", "top2", "welford", "mps", "bad_right", "mss",
                          "safe_softmax", "logsumexp_lse", "argmax", "ema_lifted", "line_of_sight",
                          "kadane", "is_sorted", "atoi", "horner", "recurrence2"}
SAMPLE_FAMILIES = (
    "test_analysis.py::test_verdict", "test_analysis.py::test_catalog_combine_and_invariants",
    "test_analysis.py::test_laws_proved", "test_analysis.py::test_combine_matches_fold",
    "test_analysis.py::test_witness_is_real",
    "test_scan.py::test_numpy_scan_equals_sequential_prefixes", "test_scan.py::test_numba_scan_and_reduce_equal_sequential",
    "test_samples_kernels.py::test_numpy_backend_equals_sequential_fold",
    "test_witness.py::test_homomorphism_has_none", "test_witness.py::test_not_homomorphism_has_witness",
    "test_lift.py::test_lift_found", "test_lift.py::test_lift_keeps_the_original_fields",
    "test_lift.py::test_lifted_text_explains_itself", "test_lift.py::test_lifted_loop_has_no_witness",
)

REPRESENTATIVE: dict[str, set[str]] = {
    # kernels: a scalar sum, a Vec, a division (Welford), exp (softmax), an index (argmax)
    "test_samples_kernels.py::test_sample_kernel_compiles": {"sum"},    # welford, safe_softmax: test_sass
    "test_scan.py::test_scan_kernels_compile": {"welford"},
    "test_kernels.py::test_kernels_compile": {"mps-float32-sm_90", "welford-float64-sm_80"},   # attention: test_attention_render
    "test_kernels.py::test_emulated_kernels_float32": {"welford-1000"},   # argmax: the scan's emulation
    "test_kernels.py::test_emulated_unaligned_arrays_take_the_scalar_path": {"mps"},
    "test_kernels.py::test_emitted_module_on_the_emulation": {"mps"},      # attention: test_attention_emulated
    "test_kernels.py::test_emulated_kernels_float64": {"welford"},
    "test_kernels.py::test_emulated_rows": {"37-attention", "1000-mps"},
    "test_kernels.py::test_host_functions_agree_with_numpy": {"mps-float64-1e-12", "attention-float32-2e-05"},
    # attention: causal, split in two, float16
    "test_attention_emulated.py::test_emulated_kernels": {"float16-1-1-33-130-64-True-2-2"},
    "test_attention_emulated.py::test_cupy_runner_under_the_emulator": {"float32-40-90-64-False-2"},
    "test_attention_render.py::test_nvrtc_compiles": {"float16-64-False-90", "bfloat16-128-True-80",
                                                      "float32-64-True-90"},
    "test_attention_render.py::test_nvrtc_registers_fit_without_spills": {"64-1", "128-8"},
    # Dask: a sum, an index, a Vec, each split differently
    "test_dask.py::test_reduce_and_scan_on_small_uneven_chunks": {"sum-2", "argmax-8", "vec_sum-3"},
    # lifting and analysing the lifted loop: a flag (is_sorted), a recurrence (horner)
    "test_lift_analyzed.py::test_lift_is_a_proved_homomorphism": {"is_sorted", "horner"},
    # the CUDA scan on the emulation: a non-commutative combine across blocks (an index: test_emulated_scan_argmax_positions_cross_blocks)
    "test_scan_emulated.py::test_emulated_scan": {"4099-mps"},   # argmax: ..._argmax_positions_cross_blocks
    "test_scan_emulated.py::test_emulated_scan_empty": {"welford"},
    "test_scan_emulated.py::test_emulated_scan_nan_and_inf_follow_the_fold": {"mps"},
    "test_scan_emulated.py::test_emulated_scan_rows": {"argmax"},
    "test_numba.py::test_shifted_exponentials_are_exact_on_every_special_value": {"safe_softmax"},
    "test_fuzz.py::test_quick_fuzz_case": {"x_plus_3", "first_equal_7", "flag_x_ge_10", "length_reached_9",
                                           "inf_default_halved", "seed0", "seed1"},
}


# Single tests of several seconds whose behaviour a default-tier test also reaches:
# large logits (the emulated attention kernel is run by test_emulated_kernels).
SLOW_SINGLES = {"test_attention_emulated.py::test_emulated_large_logits",
                # a 150-field loop past --timeout (the CLI's --json and memory-bound tests stay)
                "test_bounds.py::test_a_step_that_overruns_timeout_is_stopped",
                # Pebay's M4 through the prover (test_rational_identities_are_decided_exactly stays)
                "test_prove.py::test_moment_associativity_splits_on_the_empty_operand",
                # every witness search over division loops (the other soundness findings stay)
                "test_soundness.py::test_witness_never_divides_by_zero",
                # the fields of four lifts (test_lift_found checks each lift that a kept sample needs)
                "test_lift.py::test_expected_fields",
                # every catalog sample analysed (the accumulate scan's own tests stay)
                "test_scan.py::test_the_accumulate_route_is_taken_exactly_for_monoid_combines"}


BUDGET_SECONDS = 0.15
DURATIONS = Path(__file__).resolve().parent / "durations.txt"


@functools.cache
def _recorded() -> dict[str, float]:
    """node id -> seconds, as tests/durations.py recorded them."""
    if not DURATIONS.is_file():
        return {}
    out = {}
    for line in DURATIONS.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            seconds, nodeid = line.split(" ", 1)
            out[nodeid] = float(seconds)
    return out


def over_budget(nodeids, recorded: dict[str, float], budget: float = BUDGET_SECONDS) -> set[str]:
    """The node ids to send to the slow tier: those recorded at `budget` seconds or more,
    less each file's cheapest test (so every file keeps one test in the fast tier)."""
    by_file: dict[str, list[str]] = {}
    for nodeid in nodeids:
        by_file.setdefault(nodeid.split("::")[0], []).append(nodeid)
    out = set()
    for ids in by_file.values():
        dear = [i for i in ids if recorded.get(i, 0.0) >= budget]
        if len(dear) == len(ids):
            dear.remove(min(ids, key=lambda i: (recorded.get(i, 0.0), i)))
        out.update(dear)
    return out


def _family_and_case(item) -> tuple[str, str | None]:
    nodeid = item.nodeid.split("/")[-1]
    if "[" not in nodeid:
        return nodeid, None
    family, case = nodeid.split("[", 1)
    return family, case[:-1]


@pytest.hookimpl(tryfirst=True)      # before -m "not slow" deselects by mark
def pytest_collection_modifyitems(config, items):
    seen: dict[str, set] = {}
    for item in items:
        family, case = _family_and_case(item)
        seen.setdefault(family, set()).add(case)
        keep = REPRESENTATIVE.get(family)
        if (keep is not None and case not in keep) or family in SLOW_SINGLES:
            item.add_marker(pytest.mark.slow)
        elif family in SAMPLE_FAMILIES and case is not None and case.split("-")[0] not in REPRESENTATIVE_SAMPLES:
            item.add_marker(pytest.mark.slow)
    if os.environ.get("THM3_FAST_TIER") != "all":
        fast = [item for item in items if item.get_closest_marker("slow") is None]
        dear = over_budget([item.nodeid for item in fast], _recorded())
        for item in fast:
            if item.nodeid in dear:
                item.add_marker(pytest.mark.slow)
    # A kept case that no longer exists (a renamed parameter) would leave its family with
    # nothing in the default tier: refuse to run instead.
    lost = [f"{family}[{case}]" for family, keep in REPRESENTATIVE.items() if family in seen
            for case in sorted(keep - seen[family])]
    lost += [f"{family}[any of {', '.join(sorted(REPRESENTATIVE_SAMPLES))}]" for family in SAMPLE_FAMILIES
             if family in seen and not any(c is not None and c.split("-")[0] in REPRESENTATIVE_SAMPLES
                                           for c in seen[family])]
    if lost:
        raise pytest.UsageError("tests/conftest.py keeps cases that are not collected: " + ", ".join(lost))
    # the marker itself, not a keyword: keywords hold the path's folder names too (a checkout
    # in a folder named gpu would skip every test)
    gpu_items = [item for item in items if item.get_closest_marker("gpu") is not None]
    if gpu_items and (reason := _no_gpu_reason()):
        for item in gpu_items:
            item.add_marker(pytest.mark.skip(reason=reason))
