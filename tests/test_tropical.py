"""Finite control with (max, +) / (min, +) data (`thm3.synth.tropical`, issue 21): the
fields' semirings, the residuation fit, the combine of the route alone, and the copies
lift whose data copies start at the semiring's zero."""
from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import thm3  # noqa: E402
from corpus import by_name  # noqa: E402
from thm3.ir.normalize import normalize_loop  # noqa: E402
from thm3.semantics.equality import states_close  # noqa: E402
from thm3.semantics.evaluate import PYTHON, compiled  # noqa: E402
from thm3.semantics.samples import Domain, fold_left  # noqa: E402
from thm3.synth import finite, tropical, tropical_fit  # noqa: E402
from thm3.synth import finite_lift  # noqa: E402
from thm3.synth.semiring import MAX_PLUS, MIN_PLUS, RING  # noqa: E402


def _loop(name: str):
    return normalize_loop(thm3.parse_file(by_name(name).path))


def _source(tmp_path, body: str, fields: str, name: str = "loop.py"):
    p = tmp_path / name
    p.write_text("from typing import NamedTuple\nfrom thm3.lang import Bool, Int, Real, inf\n\n\n"
                 f"class State(NamedTuple):\n{fields}\n\n\ndef left(acc: State, x: Real) -> State:\n{body}\n")
    return normalize_loop(thm3.parse_file(p))


def _agrees(loop, fn, lists: int = 80):
    rng = np.random.default_rng(5)
    dom = Domain(loop)
    run = compiled(fn.outputs, PYTHON)
    names = [n for n, _ in fn.inputs]
    for i in range(lists):
        params = dom.params(rng, small=True)
        xs = dom.random_list(rng, params, int(rng.integers(0, 12)), small=i % 2 == 0)
        ys = dom.random_list(rng, params, int(rng.integers(0, 12)), small=i % 3 == 0)
        ha, hb, want = (fold_left(loop, zs, params) for zs in (xs, ys, xs + ys))
        got = run(dict(zip(names, list(ha) + list(hb) + [params[d.name] for d in loop.params])))
        assert states_close(tuple(got), tuple(want)), (xs, ys, got, want)


def test_each_data_field_is_read_over_its_own_semiring():
    loop = _loop("finite_reset_peak_total")
    m = finite.recognise(loop)
    groups = tropical.groups(m)
    names = {s: [loop.fields[i].name for i in idx] for s, idx in groups.items()}
    assert names == {MAX_PLUS: ["peak"], RING: ["total"], MIN_PLUS: ["dip"]}
    # a loop whose data is affine over (+, *) has no groups: the linear route reads it
    assert tropical.groups(finite.recognise(_loop("finite_sum_after_marker"))) is None


def test_a_max_field_that_reads_a_scaled_sum_is_in_no_semiring(tmp_path):
    # best = max(best, the old total) is (max, +) in both, but 2 * total + x is (+, *) only,
    # and a (+, *) field read by a max is in no one semiring with it
    loop = _source(tmp_path, "    on = acc.on or x < 0\n    total = 2 * acc.total + x if acc.on else acc.total\n"
                   "    return State(on, total, max(acc.best, acc.total))",
                   "    on: Bool = False\n    total: Real = 0.0\n    best: Real = -inf")
    with pytest.raises(finite.Failed, match=r"total, best read each other but are affine over no one semiring"):
        tropical.groups(finite.recognise(loop))


def test_a_field_read_by_a_max_joins_its_semiring(tmp_path):
    # total + 1 is (+, *) and (max, +) alike: read by best's max, it is read over (max, +)
    loop = _source(tmp_path, "    on = acc.on or x < 0\n    total = acc.total + 1 if acc.on else acc.total\n"
                   "    return State(on, total, max(acc.best, total))",
                   "    on: Bool = False\n    total: Real = 0.0\n    best: Real = -inf")
    groups = tropical.groups(finite.recognise(loop))
    assert {s: [loop.fields[i].name for i in idx] for s, idx in groups.items()} == {MAX_PLUS: ["total", "best"]}


def test_the_route_alone_composes_tropical_data_and_says_which_semirings():
    loop = _loop("finite_reset_peak_total")
    fn, how = finite.synthesize(loop, time.monotonic() + 20)
    assert "(max, +): peak" in how and "(min, +): dip" in how and "(+, *): total" in how
    _agrees(loop, fn)


@pytest.mark.parametrize("name", ["finite_reset_peak_total", "finite_up_streaks"])
def test_the_route_alone_proves_a_tropical_homomorphism(name):
    # the streaks: b's leading streak is the slope of b's trailing one only where it is not
    # 0, so that leaf is fitted on pairs of lists whole (a's trailing streak never above
    # its longest one drops out of the max)
    from test_finite import _alone, _proved
    loop = thm3.parse_file(by_name(name).path)
    got = _alone("finite", loop, 30)
    assert _proved(got), got.tried()
    assert "(max, +)" in next(iter(got.methods.values()))
    _agrees(normalize_loop(loop), got.combine)


def test_the_route_alone_composes_a_lifted_tropical_loop():
    # the armed high-water mark, lifted by its copy from "armed": the lifted loop's
    # combine is composed by the route, over (max, +)
    loop = _loop("finite_armed_high_water")
    (first, *_) = finite.lift_candidates(loop, time.monotonic() + 10)
    (copy,) = first.fields
    assert copy.default == -math.inf and copy.type is thm3.ir.Type.REAL
    lifted = normalize_loop(finite.with_added(loop, first.fields))
    fn, how = finite.synthesize(lifted, time.monotonic() + 20)
    assert "(max, +)" in how
    _agrees(lifted, fn)


def test_an_int_max_field_is_copied_from_its_own_start():
    # worst: Int = 0 has no -inf: its copies start at 0, and the combine reads
    # max(a's, b's copy), which holds since the level never falls below 0
    loop = _loop("finite_outage_worst")
    (first, *_) = finite.lift_candidates(loop, time.monotonic() + 10)
    worst = [a for a in first.fields if a.key.endswith("_worst")]
    assert len(worst) == 1 and worst[0].default == 0 and worst[0].type is thm3.ir.Type.INT
    lifted = normalize_loop(finite.with_added(loop, first.fields))
    fn, _ = finite.synthesize(lifted, time.monotonic() + 30)
    _agrees(lifted, fn)


@pytest.mark.parametrize("name,added", [("finite_armed_high_water", 1), ("finite_phase_peaks", 2),
                                        ("finite_hot_streak_min", 4), ("finite_outage_worst", 3),
                                        ("finite_toggled_peak_reset", 2), ("finite_phase_min_int", 2),
                                        ("finite_armed_mps", 3), ("finite_sweep_arrival", 4),
                                        ("finite_two_lane_gate", 6), ("finite_mixed_session", 6),
                                        ("finite_sentence_viterbi", 6), ("finite_toll_int", 6)])
def test_tropical_lifts_are_found_and_proved(name, added):
    a = thm3.analyze(by_name(name).path, lift=True, timeout=60)
    assert a.verdict.value == "not-homomorphism"
    la = a.lifted_analysis
    assert la is not None and len(a.lift_added) == added
    assert all(la.proofs[k] == "proved" for k in ("identity", "associativity", "homomorphism"))


def test_a_clear_the_control_does_not_hold_is_a_slope():
    # a negative reading clears the peak in both modes: the coefficient's product along a
    # list (0, or -inf once cleared) is no function of the toggle's transition function, so
    # the lift carries it, from 0, updated by the step's coefficient
    loop = _loop("finite_toggled_peak_reset")
    m = finite.recognise(loop)
    assert not tropical.determined(MAX_PLUS, m)
    (first, *_) = finite.lift_candidates(loop, time.monotonic() + 10)
    slopes = [a for a in first.fields if "_d0_0" in a.key]
    assert len(slopes) == 1 and slopes[0].default == 0.0
    assert "-inf" in repr(slopes[0].update) and "x < 0" in repr(slopes[0].update)
    lifted = normalize_loop(finite.with_added(loop, first.fields))
    fn, _ = finite.synthesize(lifted, time.monotonic() + 20)
    _agrees(lifted, fn)


def test_a_coefficient_that_reads_the_element_is_a_slope_fitted_on_bs_fields():
    # a max prefix sum while open: best's coefficient in the total is the element, so its
    # product along a list (the largest prefix sum from a state) is a slope; the slope of
    # the total in itself is the total, so that one is read as the field.  The total starts
    # at 0, not at the zero, and goes below it: the copies are from -inf, where they stay
    # (no reading adds to the data without the data), so only the slopes are kept
    loop = _loop("finite_armed_mps")
    (first, *_) = finite.lift_candidates(loop, time.monotonic() + 10)
    keys = sorted(a.key for a in first.fields)
    assert keys == ["fsm0_d1_0", "fsm1_d0_0", "fsm1_d1_0"], keys
    lifted = normalize_loop(finite.with_added(loop, first.fields))
    fn, how = finite.synthesize(lifted, time.monotonic() + 30)
    assert "(max, +)" in how
    _agrees(lifted, fn)


def test_the_fit_is_the_sparsest_greatest_subsolution():
    rng = np.random.default_rng(0)
    b = rng.normal(size=(40, 3))
    b[::7, 1] = -math.inf                       # b's second field at the zero on some lists
    v = np.maximum(b[:, 1] + 2.0, b[:, 2])      # max(b1 + 2, b2): the constant term is left out
    got = tropical_fit.fit_form(MAX_PLUS, b, v)
    assert got == [-math.inf, 2.0, 0.0, -math.inf]
    # over (min, +), the same read on negated values
    assert tropical_fit.fit_form(MIN_PLUS, -b, -v) == [math.inf, -2.0, 0.0, math.inf]
    # a single field alone where it does
    assert tropical_fit.fit_form(MAX_PLUS, b, b[:, 0] - 0.5) == [-0.5, -math.inf, -math.inf, -math.inf]
    # no form: a sum of two fields is not a max of shifts
    assert tropical_fit.fit_form(MAX_PLUS, np.nan_to_num(b, neginf=0.0), b[:, 0] + np.nan_to_num(b[:, 1], neginf=0.0)) is None


def test_tropical_products_compose_resets():
    # a reset (coefficient -inf) absorbs: kept then reset is reset, and the unit is neutral
    prod = tropical_fit.matrix_product(MAX_PLUS)
    keep = np.array([[0.0]])
    reset = np.array([[-math.inf]])
    assert prod(reset, keep)[0, 0] == -math.inf and prod(keep, keep)[0, 0] == 0.0
    unit = tropical_fit.unit_matrix(MAX_PLUS, 2)
    mat = np.array([[1.0, -math.inf], [3.0, 0.0]])
    assert np.array_equal(prod(unit, mat), mat) and np.array_equal(prod(mat, unit), mat)


def test_copies_come_from_the_zero_where_the_data_passes_its_start():
    # an arrival time from 0.0 over (min, +) that rises past 0: the map from each direction
    # is min(t + A, B), and a copy from 0 holds min(A, B), not B; the copies start at inf,
    # the initial direction's too, and the combine fitted on them agrees with the fold
    loop = _loop("finite_sweep_arrival")
    m = finite.recognise(loop)
    groups = tropical.groups(m)
    started = finite_lift._zero_started(m, groups)
    assert [loop.fields[j].name for j in started] == ["t"]
    assert finite_lift._passes_start(m, groups, started, time.monotonic() + 10)
    (first, *_) = finite.lift_candidates(loop, time.monotonic() + 10)
    copies = {a.key: a.default for a in first.fields if not a.key.startswith("fsm0_d") and "_d0_" not in a.key}
    assert copies == {"fsm0_t": math.inf, "fsm1_t": math.inf}, [a.key for a in first.fields]
    lifted = normalize_loop(finite.with_added(loop, first.fields))
    fn, _ = finite.synthesize(lifted, time.monotonic() + 30)
    _agrees(lifted, fn)


def test_copies_from_the_start_where_the_data_never_passes_it(tmp_path):
    # a worst level from 0 that only rises (a max of readings >= 0 and itself): the copies
    # from the start hold the offsets, and no copies from -inf are offered first
    loop = _source(tmp_path, "    assert x >= 0\n    if x > 100:\n        return State(not acc.on, acc.worst)\n"
                   "    if acc.on:\n        return State(acc.on, max(acc.worst, x))\n    return State(acc.on, acc.worst)",
                   "    on: Bool = False\n    worst: Real = 0.0")
    m = finite.recognise(loop)
    groups = tropical.groups(m)
    started = finite_lift._zero_started(m, groups)
    assert started and not finite_lift._passes_start(m, groups, started, time.monotonic() + 10)
    (first, *_) = finite.lift_candidates(loop, time.monotonic() + 10)
    assert all(a.default == 0.0 for a in first.fields if a.key.startswith("fsm")), first.fields


def test_a_group_over_plus_times_beside_a_tropical_one_gets_its_own_slopes():
    # a decayed revenue (0.5 a step while open) beside a cheapest price (+2 a step): 0.5 ** k
    # is no function of the toggle's transition function, so the (+, *) group carries its
    # slope from each state, as the (min, +) group does; without them no combine exists
    loop = _loop("finite_mixed_session")
    (first, *_) = finite.lift_candidates(loop, time.monotonic() + 10)
    keys = sorted(a.key for a in first.fields)
    assert {"fsm0_d0_0", "fsm1_d0_0"} <= set(keys) and {"fsm0_d1_1", "fsm1_d1_1"} <= set(keys), keys
    assert not any(k.endswith("_d0_1") or k.endswith("_d1_0") for k in keys), keys
    lifted = normalize_loop(finite.with_added(loop, first.fields))
    fn, _ = finite.synthesize(lifted, time.monotonic() + 30)
    _agrees(lifted, fn)


def test_the_fit_keeps_a_coefficient_that_rounding_would_lift_past_the_values():
    # the residuation bound c_0 = -2 - 5e-9 is attained: read as -2, the term passes the
    # values by 5e-9 on those rows; the fit keeps the bound where the rounded one fails
    rng = np.random.default_rng(1)
    b = rng.normal(size=(40, 2))
    v = np.maximum(b[:, 0] - 2.0 - 5e-9, b[:, 1])
    got = tropical_fit.fit_form(MAX_PLUS, b, v)
    assert got is not None and got[1] == 0.0 and math.isinf(got[2])
    assert abs(got[0] - (-2.0 - 5e-9)) < 1e-12
    # where the rounded coefficient fits, it is the one read
    assert tropical_fit.fit_form(MAX_PLUS, b, np.maximum(b[:, 0] - 2.0, b[:, 1]))[0] == -2.0


def test_slopes_are_read_from_a_start_near_the_values():
    # the 2-state HMM under a 3-phase clock: each list's slopes, read off folds from a large
    # start, equal its lifted slope fields to 1e-10 on random floats (from 2 ** 20 the
    # sums' rounding, 1e-10 a step, had passed the fit's 1e-9 in seven steps)
    loop = _loop("finite_phase_viterbi")
    (first, *_) = finite.lift_candidates(loop, time.monotonic() + 10)
    lifted = normalize_loop(finite.with_added(loop, first.fields))
    m = finite.recognise(lifted)
    by_state, _ = m.determined()
    folded = finite.sampled_ends(m, by_state)
    assert tropical_fit._big(m, folded) <= 2.0 ** 17
    slopes = tropical_fit.slopes_of(m, MAX_PLUS, folded, time.monotonic() + 10)
    names = [lifted.fields[i].name for i in m.data]
    k, j = names.index("b"), names.index("fsm2_d1_1")
    bdata = np.array([row[:-1] for _, _, row, _ in folded], dtype=float)
    assert np.allclose(slopes[:, 2, k, k], bdata[:, j], rtol=0, atol=1e-10)


# --- (max, *) and (min, *) data under finite control --------------------------------------

def test_scaled_data_under_control_is_read_over_max_times_or_min_times(tmp_path):
    from thm3.synth.semiring import MAX_TIMES_NONNEGATIVE, MIN_TIMES
    loop = _loop("finite_clip_peak")
    assert {s: [loop.fields[i].name for i in idx] for s, idx in tropical.groups(finite.recognise(loop)).items()} \
        == {MAX_TIMES_NONNEGATIVE: ["peak"]}
    loop = _loop("finite_min_ratio_market")
    assert {s: [loop.fields[i].name for i in idx] for s, idx in tropical.groups(finite.recognise(loop)).items()} \
        == {MIN_TIMES: ["cost"]}
    # a coefficient not shown nonnegative (x may be negative) puts it in no semiring
    loop = _source(tmp_path, "    c = acc.c or x > 1.0\n    return State(c, max(acc.peak * x, 1.0) if c else acc.peak)",
                   "    c: Bool = False\n    peak: Real = 0.0")
    with pytest.raises(finite.Failed):
        tropical.groups(finite.recognise(loop))


def test_a_min_times_coefficient_must_be_shown_positive(tmp_path):
    # +inf (the zero of (min, *)) times a rate of 0 is NaN in IEEE where the semiring's zero
    # absorbs: `assert r >= 0` is not enough, `assert r > 0` is
    def loop_with(cond):
        p = tmp_path / f"m{len(cond)}.py"
        p.write_text("from typing import NamedTuple\nfrom thm3.lang import Bool, Real\n\n\n"
                     "class State(NamedTuple):\n    on: Bool = True\n    cost: Real = 1000.0\n\n\n"
                     "def left(acc: State, r: Real, x: Real, t: Bool) -> State:\n"
                     f"    assert {cond}\n    assert x >= 0\n    o = acc.on != t\n"
                     "    return State(o, min(acc.cost * r, x) if o else min(acc.cost, x))\n")
        return normalize_loop(thm3.parse_file(p))
    with pytest.raises(finite.Failed):
        tropical.groups(finite.recognise(loop_with("r >= 0")))
    assert tropical.groups(finite.recognise(loop_with("r > 0")))


def test_the_fit_reads_scaled_forms_through_logarithms():
    from thm3.synth.semiring import MAX_TIMES_NONNEGATIVE, MIN_TIMES
    rng = np.random.default_rng(1)
    b = rng.uniform(0.0, 4.0, size=(40, 3))
    b[::5, 0] = 0.0                                 # b's first field at the zero of (max, *)
    v = np.maximum(0.5 * b[:, 0], 0.25 * b[:, 2])    # max(0.5 b0, 0.25 b2)
    assert tropical_fit.fit_form(MAX_TIMES_NONNEGATIVE, b, v) == [0.5, 0.0, 0.25, 0.0]
    # over (min, *), a field at 0 is a value like any (it absorbs the minimum)
    w = np.minimum(0.25 * b[:, 0], b[:, 1])
    assert tropical_fit.fit_form(MIN_TIMES, b, w) == [0.25, 1.0, math.inf, math.inf]
    # no form: a sum is no max of scaled fields; a negative value is in no (max, *) form
    assert tropical_fit.fit_form(MAX_TIMES_NONNEGATIVE, b, b[:, 0] + b[:, 1] + 1.0) is None
    assert tropical_fit.fit_form(MAX_TIMES_NONNEGATIVE, b, -v - 1.0) is None


def test_scaled_products_compose_with_an_absorbing_zero():
    from thm3.synth.semiring import MIN_TIMES
    prod = tropical_fit.matrix_product(MIN_TIMES)
    unit = tropical_fit.unit_matrix(MIN_TIMES, 2)
    mat = np.array([[0.5, math.inf], [0.0, 2.0]])
    assert np.array_equal(prod(unit, mat), mat) and np.array_equal(prod(mat, unit), mat)
    # the zero (+inf) absorbs a coefficient 0 where IEEE would give NaN
    assert prod(np.array([[0.0]]), np.array([[math.inf]]))[0, 0] == math.inf


def test_a_slope_hidden_by_the_top_is_no_reading():
    # over (min, *) a reading of 0 makes the fold 0 whatever the product: that list says
    # nothing of the slope, which is fitted on the others (NaN in `slopes_of`)
    loop = _loop("finite_min_ratio_market")
    (first, *_) = finite.lift_candidates(loop, time.monotonic() + 10)
    assert [a.default for a in first.fields if "d0" not in a.key] == [math.inf, math.inf]
    lifted = normalize_loop(finite.with_added(loop, first.fields))
    fn, how = finite.synthesize(lifted, time.monotonic() + 30)
    assert "(min, *)" in how
    _agrees(lifted, fn)


def test_the_route_alone_proves_a_scaled_homomorphism_with_a_power_of_a_count():
    from test_finite import _alone, _proved
    loop = thm3.parse_file(by_name("finite_stop_peak").path)
    got = _alone("finite", loop, 30)
    assert _proved(got), got.tried()
    assert "0.9 ** b.ticks" in thm3.ir.printer.to_text(got.combine.outputs[1]).replace("b_", "b.")
    _agrees(normalize_loop(loop), got.combine)


def test_copies_at_the_zero_of_max_times_are_dropped():
    # a homogeneous 2 x 2 (max, *) pair under a phase: its copies from the zero stay at 0
    # on every list and go; the lift is the products' other column from phase 0 and the
    # whole product from phase 1
    loop = _loop("finite_prob_viterbi_phase")
    (first, *_) = finite.lift_candidates(loop, time.monotonic() + 10)
    assert len(first.fields) == 6 and all("_d" in a.key for a in first.fields)


@pytest.mark.parametrize("name", ["finite_phase_weighted_peak", "finite_phase_weighted_best"])
def test_a_slope_is_added_where_the_offset_reads_the_controls_copy(name):
    # the phase weighs the reading, so each copy's offset reads the phase's copy; the
    # product of the coefficients (0.8 ** n, -n) is no function of the phase's transition
    # function and is added once (equal from every phase)
    loop = _loop(name)
    (first, *_) = finite.lift_candidates(loop, time.monotonic() + 10)
    assert [a.hint for a in first.fields if "slope" in a.hint] == [f"slope_{loop.fields[1].name}_"
                                                                   f"{loop.fields[1].name}_from0"]
    lifted = normalize_loop(finite.with_added(loop, first.fields))
    fn, how = finite.synthesize(lifted, time.monotonic() + 30)
    _agrees(lifted, fn)
