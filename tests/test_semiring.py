"""The semiring route (thm3/synth/semiring.py): `left` read as an affine map over a
semiring in each spelling, and refused where it is not one; the combine as the
composition, which the route alone proves where the other routes do not; the lift as the
composed map's reduced entries, as small as the catalog's smallest lift."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

import thm3
import thm3.synth as synth
from corpus import by_name
from corpus_semiring import ENTRIES
from stages import proved, route_alone
from thm3.analysis.invariants import infer
from thm3.ir import Expr, Fn, Op, Type, const, substitute, var, walk
from thm3.ir.normalize import normalize_loop
from thm3.ir.printer import to_text
from thm3.lift.search import lift
from thm3.prove.combine import prove_combine
from thm3.prove.laws import Setting
from thm3.semantics.samples import fold_left, make_triples
from thm3.synth import semiring, semiring_lift, semiring_samples

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "bench" / "corpus"


def _loop(body: str, fields: str, elements: str = "x: Real"):
    """A loop file from its State fields and `left`'s body (each already indented)."""
    text = "\n".join([
        "from typing import NamedTuple",
        "from thm3.lang import Bool, Int, Real, exp, inf, where",
        "", "", "class State(NamedTuple):", fields, "", "",
        f"def left(acc: State, {elements}) -> State:", body, ""])
    return thm3.parse_source(text)


# --- recognition: each semiring, each spelling -------------------------------------------

@pytest.mark.parametrize("fields, body, elements, name", [
    ("    y: Real = 0", "    return State(a * acc.y + b)", "a: Real, b: Real", "(+, *)"),
    ("    y: Real = 0", "    return State((acc.y - a) / 2 + b)", "a: Real, b: Real", "(+, *)"),
    ("    y: Real = 0", "    if a > 0:\n        return State(acc.y * a)\n    return State(acc.y + b)",
     "a: Real, b: Real", "(+, *)"),
    ("    h: Int = 0", "    return State((acc.h * 31 % 7 + x) % 7)", "x: Int", "(+, *) mod 7"),
    ("    v: Real = 0\n    w: Real = -inf", "    return State(max(acc.v + x, acc.w), acc.v - 1)", "x: Real",
     "(max, +)"),
    ("    v: Real = 0\n    w: Real = -inf",
     "    if acc.v + x > acc.w + x:\n        return State(acc.v + x, acc.v)\n    return State(acc.w + x, acc.v)",
     "x: Real", "(max, +)"),
    ("    v: Real = 0\n    w: Real = -inf",
     "    return State(where(acc.v > acc.w - 1, acc.v + x, acc.w - 1 + x), acc.v)", "x: Real", "(max, +)"),
    ("    d: Real = 0\n    e: Real = inf", "    return State(min(acc.d + x, acc.e + 1), acc.d if x > 0 else acc.e)",
     "x: Real", "(min, +)"),
    ("    p: Bool = True\n    q: Bool = False", "    return State((acc.p and x > 0) or acc.q, acc.p or (acc.q and x < 1))",
     "x: Real", "(or, and)"),
    ("    p: Bool = True\n    q: Bool = False", "    return State(where(x > 0, acc.q, acc.p), acc.p)", "x: Real",
     "(or, and)"),
])
def test_recognised(fields, body, elements, name):
    step = semiring.recognise(_loop(body, fields, elements))
    assert step is not None and step.semiring.name == name


@pytest.mark.parametrize("fields, body, elements, name", [
    ("    v: Real = 0", "    return State(max(acc.v * 0.5, abs(x)))", "x: Real", "(max, *) on nonnegatives"),
    ("    v: Real = 0", "    return State(max(acc.v * 0.5, x))", "x: Real", "(max, *)"),
    ("    v: Real = -inf", "    return State(max(0.9 * acc.v, x))", "x: Real", "(max, *)"),
    ("    v: Real = 0", "    return State(max(acc.v * 0.5, -x * x))", "x: Real", "(max, *)"),
    ("    v: Real = inf", "    return State(min(acc.v / 2, x))", "x: Real", "(min, *)"),
    ("    v: Real = 1\n    w: Real = 0", "    return State(max(acc.v * 0.9, acc.w * abs(x)), acc.w * exp(x))",
     "x: Real", "(max, *) on nonnegatives"),
    ("    v: Real = 0", "    assert a >= 0\n    return State(max(acc.v * a, x))", "a: Real, x: Real",
     "(max, *)"),
])
def test_recognised_scaling(fields, body, elements, name):
    """(max, *) and (min, *): every coefficient nonnegative from its form (a constant, abs, exp,
    an element a precondition bounds below by 0); on nonnegatives where the fields start at
    0 or more and the offsets are nonnegative too."""
    step = semiring.recognise(_loop(body, fields, elements))
    assert step is not None and step.semiring.name == name


@pytest.mark.parametrize("body", ["    return State(max(acc.v * -0.5, x))", "    return State(max(acc.v * x, x))",
                                  "    return State(min(acc.v * (x - 1), 0.0))"])
def test_a_coefficient_not_shown_nonnegative_is_no_scaling_step(body):
    assert semiring.recognise(_loop(body, "    v: Real = 0")) is None


@pytest.mark.parametrize("name, expected", [
    ("semiring_peak_meter", "max(0.5 ** b.ticks * a.peak, b.peak)"),
    ("semiring_peak_meter_inf", "max((-inf if a.peak == -inf else 0.9 ** b.n * a.peak), b.peak)"),
    ("semiring_cheapest_inflated", "min((inf if a.cost == inf else 1.05 ** b.t * a.cost), b.cost)"),
    ("semiring_peak_decay_param", "max(decay ** b.n * a.peak, b.peak)"),
    ("semiring_gated_inflation", "min((inf if a.cost == inf else 1.1 ** b.busy * a.cost), b.cost)"),
])
def test_a_scaled_peak_is_composed_with_its_count_group_by_group(name, expected):
    """The peak's group is affine over (max, *) or (min, *), the count's over (+, *); the
    peak's composed coefficient is read from the count's field of b, which no combine of
    the peak's group alone can read (the product route declines)."""
    loop = thm3.parse_file(CORPUS / f"{name}.py")
    assert semiring.recognise(loop) is None
    fn, how = semiring.synthesize(normalize_loop(loop))
    assert to_text(fn.outputs[0]) == expected and "group by group" in how
    got = route_alone(loop, (synth.route_named("semiring"),), 60)
    assert proved(got), got.statuses
    product = route_alone(loop, (synth.route_named("product"),), 30)
    assert product.combine is None


def test_a_peak_held_from_zero_reads_b_as_the_offset_only_where_it_never_falls_below_init():
    """b.peak is T_b(0), so max(E a, b.peak) is T_b(a) where E a >= E 0: true of a peak held
    from 0 (it never falls below 0), false of one that may go negative: there the offset
    is not read and the route says so."""
    held = _loop("    return State(max(acc.v * 0.5, x), acc.n + 1)", "    v: Real = 0\n    n: Int = 0")
    fn, _ = semiring.synthesize(normalize_loop(held))
    assert to_text(fn.outputs[0]) == "max(0.5 ** b.n * a.v, b.v)"
    dips = _loop("    return State(max(acc.v * 0.5, x) - 1, acc.n + 1)", "    v: Real = 0\n    n: Int = 0")
    with pytest.raises(semiring.Failed):
        semiring.synthesize(normalize_loop(dips))


@pytest.mark.parametrize("fields, body", [
    ("    y: Real = 0\n    z: Real = 1", "    return State(acc.y * acc.z + x, acc.z)"),     # a product of two fields
    ("    y: Real = 0", "    return State(acc.y * acc.y + x)"),                            # not linear
    ("    y: Real = 0", "    return State(exp(acc.y) + x)"),
    ("    v: Real = 0\n    w: Real = 0", "    return State(max(acc.v, acc.w) * x, acc.w)"),  # max, then a scale
    ("    v: Real = 0\n    w: Real = 0", "    return State(max(acc.v + x, acc.w * 2), acc.w)"),
    ("    v: Real = 0\n    w: Real = 0", "    return State(max(acc.v, acc.w) + min(acc.v, x), acc.w)"),  # max and min
    ("    y: Real = 0", "    return State(acc.y + x if acc.y > 0 else x)"),                  # a branch on the state
    ("    h: Int = 0", "    return State((acc.h * 3 + 1) % 7 % 5)"),                        # two moduli
    ("    p: Bool = False", "    return State(not acc.p)"),
])
def test_not_recognised(fields, body):
    loop = _loop(body, fields)
    assert semiring.recognise(loop) is None
    with pytest.raises(semiring.Failed):
        semiring.synthesize(loop)


def test_recognition_fails_fast_on_other_loops():
    """A loop outside the class is refused from its ops, before any sampling."""
    loop = thm3.parse_file(CORPUS / "three_smallest.py")
    t0 = time.perf_counter()
    for _ in range(20):
        assert semiring.recognise(loop) is None
    assert (time.perf_counter() - t0) / 20 < 0.01


def test_mod_reads_the_modulus_and_the_reduced_fields():
    step = semiring.recognise(thm3.parse_file(CORPUS / "powers_adler32.py"))
    assert step.semiring.modulus == 65521 and step.reduced == {"a", "b"}


# --- synthesis: the composition, in the state's own fields --------------------------------

@pytest.mark.parametrize("name, expected", [
    ("semiring_viterbi2_matrix", "max(b.m00 + a.m00, b.m01 + a.m10)"),
    ("semiring_two_lanes_matrix", "min(b.d00 + a.d00, b.d10 + a.d01)"),
    ("semiring_reach2_matrix", "b.r00 and a.r00 or b.r10 and a.r01"),
    ("semiring_rolling_hash_pow", "(b.pw * a.h + b.h) % 1000003"),
    ("powers_adler32", "(a.a - 1 + b.a) % 65521"),
    ("powers_discounted_return", "a.g + b.g * a.d"),
])
def test_composition_is_written_in_the_fields(name, expected):
    fn, how = semiring.synthesize(thm3.parse_file(CORPUS / f"{name}.py"))
    assert to_text(fn.outputs[0]) == expected
    assert "composition" in how


@pytest.mark.parametrize("name", [e.name for e in ENTRIES if e.truth == "homomorphism"
                                  and semiring.recognise(thm3.parse_file(e.path)) is not None])
def test_composition_agrees_with_the_reference_combine(name):
    """The route's combine, evaluated, equals the catalog's hand-written combine on folds."""
    entry = by_name(name)
    loop = thm3.parse_file(entry.path)
    fn, _ = semiring.synthesize(loop)
    from thm3.semantics.evaluate import call
    rng = np.random.default_rng(3)
    from thm3.semantics.samples import Domain
    dom = Domain(loop)
    for params in entry.params:
        for _ in range(20):
            xs = dom.random_list(rng, params, int(rng.integers(0, 6)))
            ys = dom.random_list(rng, params, int(rng.integers(0, 6)))
            a, b = fold_left(loop, xs, params), fold_left(loop, ys, params)
            got = call(fn, *a, *b, *[params[d.name] for d in loop.params])
            want = entry.combine(tuple(v.item() for v in a), tuple(v.item() for v in b), params)
            assert np.allclose(np.asarray(got, dtype=float).ravel(), np.asarray(want, dtype=float), equal_nan=True)


def test_not_carried_says_which_entry():
    with pytest.raises(semiring.Failed, match=r"entry \(v0, v1\).*lift"):
        semiring.synthesize(thm3.parse_file(CORPUS / "semiring_viterbi2_vector.py"))


def _alone(routes, path: Path, seconds: float = 40.0):
    return route_alone(thm3.parse_file(path), routes, seconds)


_proved = proved


def test_only_the_semiring_route_proves_the_boolean_relation_product():
    """A three-state automaton's relations composed over (or, and), nine Bool fields: the
    route alone proves the composition; the other routes together find none that agrees
    (the sketch's space is cut on nine fields, interpolation and transport fit numbers)."""
    got = _alone((synth.route_named("semiring"),), CORPUS / "semiring_reach3_matrix.py")
    assert _proved(got) and got.route == "semiring", got.tried()
    assert got.attempts[0].seconds < 10.0


@pytest.mark.slow
def test_the_other_routes_do_not_prove_the_boolean_relation_product():
    # the two composition routes (a Boolean relation is finite-state too) left out
    others = tuple(r for r in synth.ROUTES if r.name not in ("semiring", "finite"))
    rest = _alone(others, CORPUS / "semiring_reach3_matrix.py", seconds=20.0)
    assert not _proved(rest), rest.tried()


def test_interpolation_on_a_state_of_flags_only_fails_cleanly():
    """Found with reach3: interpolation's extrema over no numeric field raised a NumPy
    ValueError (np.stack of nothing) instead of failing the route."""
    from thm3.synth import interpolation
    loop = thm3.parse_file(CORPUS / "semiring_reach3_matrix.py")
    try:
        interpolation.synthesize(loop, time.monotonic() + 20)
    except interpolation.Failed:
        pass


def test_the_route_is_in_routes():
    assert synth.route_named("semiring").find is not None


# --- lifting: the reduced composed map, as small as the catalog's lift ---------------------

def _units(name: str):
    loop = thm3.parse_file(CORPUS / f"{name}.py")
    return semiring.lift_units(loop, lambda f, g, full: f"{'M' if full else 'm'}_{f}_{g}")


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.lift is not None], ids=lambda e: e.name)
def test_reduced_unit_has_the_catalog_size(entry):
    units = _units(entry.name)
    assert units and not units[0].full
    assert len(units[0].keys) == entry.lift, [units[0].names[k] for k in units[0].keys]


def test_reduced_unit_reads_back_named_fields():
    (reduced, full) = _units("powers_fletcher16")
    assert [reduced.names[k] for k in reduced.keys] == ["n"] and to_text(reduced.updates[reduced.keys[0]]) == \
        "1 + acc.m_s2_s1"
    assert len(full.keys) == 4
    (mod_power,) = _units("semiring_rolling_hash")
    assert [mod_power.names[k] for k in mod_power.keys] == ["pw"]
    assert to_text(mod_power.updates[mod_power.keys[0]]) == "B * acc.m_h_h % 1000003"
    (power,) = _units("powers_decay_param")
    assert [power.names[k] for k in power.keys] == ["pw"] and "c ** (number of elements" in \
        power.comments[power.keys[0]]


def test_the_power_candidate_of_a_state_under_mod_m_is_reduced_mod_m():
    """The lift search's own power candidate (beside the composed map's): where every product
    of the state by B stands inside `% m`, the power is B * pw % m, bounded, not B ** n."""
    from thm3.lift.candidates import Candidates
    for name in ("semiring_rolling_hash", "powers_decay_param"):
        built = Candidates(thm3.parse_file(CORPUS / f"{name}.py"), np.random.default_rng(0)).build()
        powers = [to_text(c.update) for c in built if c.hint == "pw"]
        assert powers, name
        if name == "semiring_rolling_hash":
            assert all(p.endswith("% 1000003") for p in powers), powers
        else:
            assert not any("%" in p for p in powers), powers


def test_the_lifted_rolling_hash_runs_on_ten_thousand_ints_with_a_large_base():
    """The lifted power is reduced mod p like the hash: a.run on n = 10,000 random ints with
    B = 10**9 + 7 has no int64 overflow and equals the sequential fold in Python ints."""
    a = thm3.analyze(CORPUS / "semiring_rolling_hash.py", lift=True, timeout=30)
    lifted = a.lifted_analysis
    assert lifted is not None and str(lifted.verdict) == "homomorphism", a.reason
    rng = np.random.default_rng(11)
    xs = rng.integers(-10**6, 10**6, size=10_000)
    for base in (10**9 + 7, 31):
        h = 0
        for x in xs.tolist():
            h = (h * base + x) % 1000003
        got = lifted.run(xs, B=base)
        assert int(got[0]) == h and int(got[1]) == pow(base, len(xs), 1000003), (base, got)


def test_reduced_unit_drops_the_column_the_state_holds():
    """Viterbi's scores from state 0 are the product's first column: only the other is added."""
    reduced = _units("semiring_viterbi2_vector")[0]
    assert set(reduced.keys) == {("v0", "v1"), ("v1", "v1")}


@pytest.mark.parametrize("name", ["semiring_viterbi2_vector", "powers_fletcher16", "semiring_viterbi2_prob"] + [
    pytest.param(n, marks=pytest.mark.slow) for n in ("semiring_mwis_path", "powers_halving", "semiring_rolling_hash",
                                                      "semiring_affine_scan", "powers_decay_param")])
def test_lift_adds_the_catalog_number_of_fields(name):
    res = lift(thm3.parse_file(CORPUS / f"{name}.py"), timeout=20.0)
    assert res.loop is not None, res.reason
    assert len(res.added) == by_name(name).lift, res.added


def test_a_composition_not_proved_names_its_semiring():
    """Where the prover leaves a law of the composition unproved, the route's attempt says
    which class the loop was read as (Adler-32: (+, *) mod 65521)."""
    loop = thm3.parse_file(CORPUS / "powers_adler32.py")
    got = synth.synthesize(loop, make_triples(loop), deadline=time.monotonic() + 30,
                           routes=(synth.route_named("semiring"),),
                           prove=lambda c: ({"identity": "proved", "associativity": "tested"}, {}, False))
    (attempt,) = got.attempts
    assert attempt.outcome == "not proved" and "over (+, *) mod 65521" in attempt.detail, attempt


def test_a_loop_outside_the_class_says_so():
    loop = thm3.parse_file(CORPUS / "three_smallest.py")
    got = synth.synthesize(loop, make_triples(loop), deadline=time.monotonic() + 30,
                           routes=(synth.route_named("semiring"),), prove=lambda c: ({}, {}, False))
    (attempt,) = got.attempts
    assert attempt.outcome == "none" and "not affine" in attempt.detail


def test_a_tropical_map_of_int_fields_is_sampled_in_floats():
    """brackets (Int depth and lowest depth over (min, +)) once raised OverflowError: the
    zero, inf, was put into an int64 array.  Its composed map is read, and found not
    carried by the state."""
    loop = thm3.parse_file(ROOT / "samples" / "brackets.py")
    assert semiring.recognise(loop).semiring.name == "(min, +)"
    with pytest.raises(semiring.Failed, match="entry"):
        semiring.synthesize(loop)


def test_a_select_with_one_term_added_to_both_sides_is_a_max():
    """normalize: `u + w if u > v else v + w` is max(u, v) + w (and min for the other
    side), so the if/else Viterbi step and its max() twin read as one (max, +) map."""
    from thm3.ir.normalize import normalize
    spelled = thm3.parse_file(CORPUS / "semiring_viterbi2_vector.py")
    twin = thm3.parse_file(CORPUS / "semiring_viterbi2_vector_max.py")
    texts = {to_text(e).replace(".0", "") for e in (normalize(spelled.left.outputs)[0], twin.left.outputs[0])}
    assert texts == {"max(acc.v0, acc.v1 - 1) + e0"}
    loop = _loop("    return State(acc.v + x if acc.v > acc.w else acc.w + x, acc.v)",
                 "    v: Real = 0\n    w: Real = 0")
    assert to_text(normalize(loop.left.outputs)[0]) == "max(acc.v, acc.w) + x"
    loop = _loop("    return State(x + acc.w if acc.v > acc.w else x + acc.v, acc.v)",
                 "    v: Real = 0\n    w: Real = 0")
    assert to_text(normalize(loop.left.outputs)[0]) == "min(acc.v, acc.w) + x"
    loop = _loop("    return State(acc.v + x if acc.v > acc.w else acc.w + 1, acc.v)",
                 "    v: Real = 0\n    w: Real = 0")
    assert normalize(loop.left.outputs)[0].op.name == "WHERE"      # different shifts: a select still


def test_a_tropical_lift_of_int_fields_has_real_entries():
    """longest_ones (Int fields over (max, +)) once raised OverflowError in the lift: an
    entry's initial value -inf was made an int."""
    loop = thm3.parse_file(ROOT / "samples" / "longest_ones.py")
    units = semiring.lift_units(loop, lambda f, g, full: f"{'M' if full else 'm'}_{f}_{g}")
    assert units and all(u.updates[k].type.name == "REAL" for u in units for k in u.keys)
    assert any(v == -float("inf") for u in units for v in u.defaults.values())


# --- the composition lemma (thm3.prove.composed) -------------------------------------------

def _setting_and_triples(path=None, loop=None):
    loop = loop or thm3.parse_file(path)
    triples = make_triples(loop)
    inv, _ = infer(loop, triples, time.monotonic() + 10)
    return loop, Setting(loop, inv), triples


@pytest.mark.parametrize("name", ["semiring_viterbi3_matrix", "semiring_lanes3_matrix"])
def test_a_wide_tropical_matrix_is_proved_by_the_composition_lemma(name):
    """Nine fields, each with an infinite case: associativity over three states splits on
    2**18 cases (the analysis ran past 60 s); the lemma E(left(b, x)) == A(x) (x) E(b) is
    over one state, and gives all three laws."""
    from thm3.prove.composed import HOW
    loop, setting, triples = _setting_and_triples(CORPUS / f"{name}.py")
    got = _alone((synth.route_named("semiring"),), CORPUS / f"{name}.py")
    assert got.route == "semiring" and got.combine is not None, got.tried()
    statuses, details, _ = prove_combine(loop, setting, got.combine, triples, time.monotonic() + 30)
    assert all(s == "proved" for s in statuses.values()), (statuses, details)
    assert all(HOW in details[law] for law in ("identity", "associativity", "homomorphism")), details


def test_the_composition_lemma_refuses_a_wrong_reading(monkeypatch):
    """The reading of the composed map off b's fields is sampled; the lemma proves it.  Two
    entries swapped (the same combine text, a wrong E) is not proved, and the laws go to
    the prover one by one."""
    from thm3.prove import composed
    path = CORPUS / "semiring_reach3_matrix.py"
    loop, setting, triples = _setting_and_triples(path)
    got = _alone((synth.route_named("semiring"),), path)
    real = semiring.composition

    def swapped(work, step):
        fn, reading, offset = real(work, step)
        keys = [k for k in reading if k[0] != k[1]]
        wrong = dict(reading)
        wrong[keys[0]], wrong[keys[1]] = reading[keys[1]], reading[keys[0]]
        return fn, wrong, offset

    assert composed.prove_composed(loop, setting, got.combine, time.monotonic() + 30).proved
    monkeypatch.setattr(semiring, "composition", swapped)
    out = composed.prove_composed(loop, setting, got.combine, time.monotonic() + 30)
    assert out is not None and not out.proved, out
    assert "not shown" in out.detail or "identity" in out.detail, out.detail


# (max, +): d starts at 0, so b's own d is not the offset; c (from the zero) carries it
_LIFTED_OFFSET = ("    return State(acc.s + a, max(acc.d + a, b), max(acc.c + a, b))",
                  "    s: Real = 0\n    d: Real = 0\n    c: Real = -inf", "a: Real, b: Real")

_AFFINE = [
    (_LIFTED_OFFSET[1], _LIFTED_OFFSET[0], _LIFTED_OFFSET[2], None),
    # (+, *): z reads y, which has an offset, and has none itself (d(ys) is not 0 on z)
    ("    y: Real = 0\n    z: Real = 0\n    n: Real = 0", "    return State(acc.y + a, acc.z + acc.y, acc.n + 1)",
     "a: Real", None),
    # (+, *): y' = a y + b beside the product of the a's, init not the zero
    ("    y: Real = 1\n    w: Real = 1", "    return State(a * acc.y + b, a * acc.w)", "a: Real, b: Real", None),
    # (max, +): d' = max(d + a, b) beside the sum of the a's (which starts at the one, 0)
    ("    s: Real = 0\n    d: Real = -inf", "    return State(acc.s + a, max(acc.d + a, b))", "a: Real, b: Real", None),
    # (+, *) mod p: a rolling hash beside B**n, as written
    ("    h: Int = 0\n    pw: Int = 1", "    return State((acc.h * 31 + x) % 1009, acc.pw * 31 % 1009)", "x: Int", 1009),
]


@pytest.mark.parametrize("fields, body, elements, modulus", _AFFINE)
def test_the_composition_lemma_proves_an_affine_step_as_written(fields, body, elements, modulus):
    """A step with an offset whose state carries the composed map (E(b)) and its offset
    (b's own fields): the lemma gives all three laws, and the combine is the fold's on
    random splits."""
    from thm3.prove import composed
    loop, setting, triples = _setting_and_triples(loop=_loop(body, fields, elements))
    fn, _ = semiring.synthesize(loop)
    out = composed.prove_composed(loop, setting, fn, time.monotonic() + 20)
    assert out is not None and out.proved, out
    assert (composed.HOW_MOD.format(m=modulus) if modulus else composed.HOW) == out.detail
    statuses, details, _ = prove_combine(loop, setting, fn, triples, time.monotonic() + 20)
    assert all(v == "proved" for v in statuses.values()) and composed.HOW in details["associativity"], details
    rng = np.random.default_rng(7)
    ints = modulus is not None
    for n in (0, 1, 2, 5, 9):
        xs = [tuple(int(v) if ints else float(v) for v in rng.integers(-4, 5, len(loop.elements)))
              for _ in range(n)]
        for k in range(n + 1):
            whole = fold_left(loop, xs, {})
            a, b = fold_left(loop, xs[:k], {}), fold_left(loop, xs[k:], {})
            got = composed_apply(fn, loop, a, b)
            assert all(np.isclose(float(g), float(w)) for g, w in zip(got, whole)), (xs, k, got, whole)


def composed_apply(fn, loop, a, b):
    from thm3.semantics.evaluate import PYTHON, evaluate
    env = {f"a.{f.name}": v for f, v in zip(loop.fields, a)} | {f"b.{f.name}": v for f, v in zip(loop.fields, b)}
    return evaluate(list(fn.outputs), env, PYTHON)


def test_the_composition_lemma_declines_an_offset_the_state_does_not_carry():
    """d' = max(d + a, b) from d = 0, not the (max, +) zero: h(ys).d = max(sum(a), d(ys)),
    and no field of b is the offset d(ys) alone.  The route says so (a lift adds the
    offset), and the lemma does not apply."""
    from thm3.prove import composed
    from thm3.ir.normalize import normalize_loop
    loop, setting, _ = _setting_and_triples(loop=_loop(
        "    return State(acc.s + a, max(acc.d + a, b))", "    s: Real = 0\n    d: Real = 0", "a: Real, b: Real"))
    with pytest.raises(semiring.Failed, match="row d's offset of the composed map is no field of b"):
        semiring.synthesize(loop)
    step = semiring.whole_affine(normalize_loop(loop))
    wrong = Fn(tuple((f"{p}.{f.name}", f.type) for p in "ab" for f in loop.fields),
               (semiring.arith(Op.ADD, var("a.s", Type.REAL), var("b.s", Type.REAL)),
                Expr(Op.MAX, Type.REAL, (semiring.arith(Op.ADD, var("b.s", Type.REAL), var("a.d", Type.REAL)),
                                         var("b.d", Type.REAL)))))
    assert step is not None and composed.prove_composed(loop, setting, wrong, time.monotonic() + 10) is None


def test_the_composition_lemma_refuses_a_wrong_offset(monkeypatch):
    """The offset's reading is sampled too; the lemma proves it.  b's own d in place of
    the lifted offset c (the same E, a wrong D, a combine that is wrong on lists) is not
    proved: D(init) is not the zero."""
    from thm3.prove import composed
    loop, setting, _ = _setting_and_triples(loop=_loop(*_LIFTED_OFFSET))
    real = semiring.composition

    def wrong(work, step):
        fn, reading, offset = real(work, step)
        assert repr(offset["d"]) == "b.c"
        outs = tuple(substitute([o], {"b.c": var("b.d", Type.REAL)})[0] if i == 1 else o
                     for i, o in enumerate(fn.outputs))
        return Fn(fn.inputs, outs), reading, offset | {"d": var("b.d", Type.REAL)}

    assert composed.prove_composed(loop, setting, semiring.synthesize(loop)[0], time.monotonic() + 20).proved
    monkeypatch.setattr(semiring, "composition", wrong)
    fn, _, _ = wrong(normalize_loop(loop), semiring.whole_affine(normalize_loop(loop)))
    xs = [(-5.0, -9.0), (1.0, -7.0)]
    assert not np.isclose(composed_apply(fn, loop, fold_left(loop, xs[:1], {}), fold_left(loop, xs[1:], {}))[1],
                          fold_left(loop, xs, {})[1])
    out = composed.prove_composed(loop, setting, fn, time.monotonic() + 20)
    assert out is not None and not out.proved and "D(init)" in out.detail, out


@pytest.mark.parametrize("fields, body, applies", [
    ("    h: Int = 2000", "    return State((acc.h * 31 + x) % 1009)", False),            # init is no remainder
    # an unreduced count reads no reduced field: its rows are asked exactly
    ("    h: Int = 0\n    n: Int = 0", "    return State((acc.h * 31 + x) % 1009, acc.n + 1)", True),
])
def test_the_composition_lemma_modulo_m_needs_reduced_fields_to_start_as_remainders(fields, body, applies):
    from thm3.prove import composed
    from thm3.ir.normalize import normalize_loop
    loop, setting, _ = _setting_and_triples(loop=_loop(body, fields, "x: Int"))
    step = semiring.whole_affine(normalize_loop(loop))
    assert step is not None and step.semiring.modulus == 1009
    assert composed._applies(normalize_loop(loop), step) is applies


def test_an_entry_polynomial_in_the_length_is_read_mod_m_and_proved_by_the_lemma(monkeypatch):
    """A third running sum mod 251 with its length: entry (s3, s1) of the composed map is
    n (n + 1) / 2, read as 126 n + 126 n**2 (126 the inverse of 2 mod 251) with n taken
    mod 251 first, and proved by the lemma with the count's rows exact; a reading off by
    one coefficient is refuted by the lemma."""
    from thm3.ir import transform
    from thm3.ir.normalize import normalize_loop
    from thm3.prove import composed
    loop, setting, _ = _setting_and_triples(CORPUS / "powers_fletcher3_len.py")
    work = normalize_loop(loop)
    step = semiring.whole_affine(work)
    fn, reading, _ = semiring.composition(work, step)
    entry = reading[("s3", "s1")]
    consts = sorted(e.arg for e in walk([entry]) if e.op is Op.CONST and e.type is Type.INT)
    assert 126 in consts and any(e.op is Op.MOD and e.src[0].op is Op.VAR and e.src[0].arg == "b.n"
                                 for e in walk([entry])), repr(entry)
    rng = np.random.default_rng(5)
    for _ in range(30):
        xs = [(int(v),) for v in rng.integers(-300, 300, size=int(rng.integers(0, 40)))]
        cut = int(rng.integers(0, len(xs) + 1))
        got = composed_apply(fn, loop, fold_left(loop, xs[:cut], {}), fold_left(loop, xs[cut:], {}))
        assert tuple(int(v) for v in got) == tuple(int(v) for v in fold_left(loop, xs, {})), xs
    out = composed.prove_composed(loop, setting, fn, time.monotonic() + 30)
    assert out is not None and out.proved and "modulo 251" in out.detail, out
    real = semiring.composition

    def wrong(work, step):
        fn, reading, offset = real(work, step)

        def rule(e, go):
            return const(125, Type.INT) if e.op is Op.CONST and e.arg == 126 else None
        bad = {k: transform([v], rule)[0] for k, v in reading.items()}
        return Fn(fn.inputs, tuple(transform(list(fn.outputs), rule))), bad, offset
    monkeypatch.setattr(semiring, "composition", wrong)
    fn2, _, _ = wrong(work, step)
    out = composed.prove_composed(loop, setting, fn2, time.monotonic() + 30)
    assert out is not None and not out.proved, out


def test_an_entry_needing_an_inverse_mod_m_that_does_not_exist_is_not_read():
    # mod 256, n (n + 1) / 2 has no form with integer coefficients: the route fails with its reason
    loop = _loop("    s1 = (acc.s1 + x) % 256\n    s2 = (acc.s2 + s1) % 256\n"
                 "    return State(s1, s2, (acc.s3 + s2) % 256, acc.n + 1)",
                 "    s1: Int = 0\n    s2: Int = 0\n    s3: Int = 0\n    n: Int = 0", "x: Int")
    with pytest.raises(semiring.Failed, match=r"entry \(s3, s1\)"):
        semiring.synthesize(loop)


# --- Cayley-Hamilton: k coefficients of A's first powers in place of A**n's k*k entries ----

def test_the_cayley_hamilton_unit_folds_to_the_matrix_power():
    """For the constant companion matrix A of a three-tap IIR filter, the unit's three
    fields folded over n elements satisfy ch0 I + ch1 A + ch2 A**2 == A**n, for any taps."""
    from thm3.lift.candidates import with_fields, Aux
    loop = thm3.parse_file(CORPUS / "semiring_iir3.py")
    hamilton = _units("semiring_iir3")[0]
    assert [hamilton.names[k] for k in hamilton.keys] == ["ch0", "ch1", "ch2"] and "Cayley-Hamilton" in hamilton.how
    cands = [Aux(hamilton.fields[k], hamilton.names[k], hamilton.updates[k].type, hamilton.defaults[k],
                  hamilton.updates[k], "", "", 0) for k in hamilton.keys]
    lifted = with_fields(loop, cands)
    rng = np.random.default_rng(4)
    for n in range(8):
        taps = {name: float(v) for name, v in zip(("a1", "a2", "a3"), rng.normal(size=3))}
        A = np.array([[taps["a1"], taps["a2"], taps["a3"]], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
        state = fold_left(lifted, [(float(v),) for v in rng.normal(size=n)], taps)
        got = state[3] * np.eye(3) + state[4] * A + state[5] * A @ A
        assert np.allclose(got, np.linalg.matrix_power(A, n)), n


def test_no_cayley_hamilton_unit_where_the_matrix_reads_the_element():
    # Horner's rule with the element in the matrix (h' = x h): the entries are no constants
    loop = _loop("    return State(x * acc.h + 1.0, acc.h)", "    h: Real = 0\n    g: Real = 0")
    step = semiring_lift._moving_block(loop)
    assert step is not None and semiring_lift._cayley_hamilton(loop, step, lambda *k: "k", Type.REAL) is None


def test_the_linear_reading_of_a_cayley_hamilton_lift_is_proved_by_the_lemma():
    """The lifted filter's composed map: each entry of A**n as a linear form in b's ch
    fields with coefficients in the taps, read exactly off the samples and proved by the
    composition lemma (E(init) == I with the parameters symbolic)."""
    from thm3.prove.composed import prove_composed
    text = (CORPUS / "semiring_iir3.py").read_text().replace(
        "    y2: Real = 0    # two steps before\n",
        "    y2: Real = 0    # two steps before\n    ch0: Real = 1\n    ch1: Real = 0\n    ch2: Real = 0\n").replace(
        "return State(a1 * acc.y + a2 * acc.y1 + a3 * acc.y2 + x, acc.y, acc.y1)",
        "return State(a1 * acc.y + a2 * acc.y1 + a3 * acc.y2 + x, acc.y, acc.y1, a3 * acc.ch2, "
        "acc.ch0 + a2 * acc.ch2, acc.ch1 + a1 * acc.ch2)")
    loop = normalize_loop(thm3.parse_source(text))
    fn, reading, _ = semiring.composition(loop, semiring.whole_affine(loop))
    assert to_text(reading[("y2", "y")]) == "b.ch2"
    assert to_text(reading[("y1", "y")]) == "b.ch1 + a1 * b.ch2"
    assert to_text(reading[("y", "y")]) == "b.ch0 + a1 * b.ch1 + a2 * b.ch2 + a1 * a1 * b.ch2"
    triples = list(make_triples(loop))
    inv, _ = infer(loop, triples, time.monotonic() + 10)
    out = prove_composed(loop, Setting(loop, inv), fn, time.monotonic() + 30)
    assert out is not None and out.status == "proved", out
    # a reading one coefficient off is no composed map: the lemma refuses it
    wrong = Fn(fn.inputs, tuple(substitute([e], {"b.ch2": var("b.ch1", Type.REAL)})[0] if i == 0 else e
                                for i, e in enumerate(fn.outputs)))
    assert prove_composed(loop, Setting(loop, inv), wrong, time.monotonic() + 30) is None


def test_a_column_that_is_no_linear_form_has_no_linear_reading():
    rng = np.random.default_rng(0)
    loop = _loop("    return State(2.0 * acc.p + x, acc.q + x)", "    p: Real = 0\n    q: Real = 0")
    p, q = rng.normal(size=200), rng.normal(size=200)
    basis = semiring_samples._LinearBasis({"p": p, "q": q}, loop)
    assert to_text(semiring.read_linear(3 * p - q / 2, basis, Type.REAL)) == "3.0 * b.p + -1.0 / 2.0 * b.q"
    assert semiring.read_linear(p * q, basis, Type.REAL) is None
    assert semiring.read_linear(np.sqrt(np.abs(p)), basis, Type.REAL) is None


@pytest.mark.parametrize("name, fields", [("semiring_iir3", 3), ("semiring_coupled_pair", 2)])
def test_a_constant_matrix_recurrence_lifts_by_cayley_hamilton(name, fields):
    """The lift adds k fields (not k*k) and its combine, proved, agrees with the fold on
    random splits."""
    a = thm3.analyze(CORPUS / f"{name}.py", timeout=30)
    lifted = a.lifted_analysis
    assert lifted is not None and str(lifted.verdict) == "homomorphism", a.reason
    assert [x.split(":")[0] for x in a.lift_added] == [f"ch{i}" for i in range(fields)]
    rng = np.random.default_rng(5)
    params = {p.name: float(v) for p, v in zip(lifted.loop.params, rng.normal(size=3))}
    for _ in range(30):
        xs, ys = rng.normal(size=rng.integers(0, 6)), rng.normal(size=rng.integers(0, 6))
        fold = lambda zs: fold_left(lifted.loop, [(float(v),) for v in zs], params)  # noqa: E731
        got = lifted.combine(fold(xs), fold(ys), **params) if params else lifted.combine(fold(xs), fold(ys))
        assert np.allclose(np.array(got, dtype=float), np.array(fold(np.concatenate([xs, ys])), dtype=float))


MWIS_FULL = """from typing import NamedTuple
from thm3.lang import Real, inf

bonus: Real


class State(NamedTuple):
    inc: Real = 0
    exc: Real = 0
    mii: Real = 0
    mie: Real = -inf
    mei: Real = -inf
    mee: Real = 0


def left(acc: State, x: Real) -> State:
    return State(acc.exc + x + bonus, max(acc.inc, acc.exc), acc.mei + x + bonus, acc.mee + x + bonus,
                 max(acc.mii, acc.mei), max(acc.mie, acc.mee))
"""


def test_an_entry_is_read_from_the_field_that_carries_it_not_an_equal_original():
    """From (0, 0) the best weight with the last vertex, inc, equals the product's entry
    mie on every reachable state (starting from 'excluded' is never worse), but not on
    every invariant state: read as b.inc the lemma fails; read as b.mie it proves."""
    loop = normalize_loop(thm3.parse_source(MWIS_FULL))
    _, reading, _ = semiring.composition(loop, semiring.whole_affine(loop))
    assert to_text(reading[("inc", "exc")]) == "b.mie" and to_text(reading[("exc", "exc")]) == "b.mee"
    a = thm3.analyze_source(MWIS_FULL, lift=False, timeout=30)
    assert all(a.proofs[k] == "proved" for k in ("identity", "associativity", "homomorphism")), a.proofs
    assert "E(init) == I" in a.law_details["associativity"]


def test_the_reduced_unit_adds_an_entry_an_original_field_equals_on_reachable_states_only():
    """From (0, 0) the independent set's inc equals the product's entry from 'excluded' on
    every reachable state, but its own update is not that entry's: the reduced unit adds
    the entry (all four here) rather than read it from inc, and the lift is proved."""
    loop = thm3.parse_source(MWIS_FULL.replace("    mii: Real = 0\n    mie: Real = -inf\n    mei: Real = -inf\n"
                                               "    mee: Real = 0\n", "").replace(
        "return State(acc.exc + x + bonus, max(acc.inc, acc.exc), acc.mei + x + bonus, acc.mee + x + bonus,\n"
        "                 max(acc.mii, acc.mei), max(acc.mie, acc.mee))", "return State(acc.exc + x + bonus, max(acc.inc, acc.exc))"))
    reduced = semiring.lift_units(loop, lambda f, g, full: f"{'M' if full else 'm'}_{f}_{g}")[0]
    assert len(reduced.keys) == 4 and not reduced.full
    # the catalogued independent set (from (-inf, 0)) still reads both of its own fields
    assert len(_units("semiring_mwis_path")[0].keys) == 2


def test_a_field_that_copies_a_remainder_is_read_as_reduced():
    """A continuant mod m: q' = p holds a remainder because p's update is one (from initial
    remainders), so the step is affine over (+, *) mod m on the whole state, and its lift is
    the second column of the product of the step matrices, proved by the composition lemma.
    Before, q's update without `% m` made q unreduced, reading the reduced p: no lift."""
    loop = thm3.parse_file(CORPUS / "semiring_continuant_mod.py")
    step = semiring.whole_affine(normalize_loop(loop))
    assert step is not None and step.reduced == frozenset({"p", "q"}), step
    a = thm3.analyze(CORPUS / "semiring_continuant_mod.py", lift=True, timeout=30)
    assert a.verdict == "not-homomorphism" and a.lifted is not None
    assert len(a.lift_added) == 2, a.lift_added
    b = thm3.analyze_source(a.lifted, lift=False)
    assert b.verdict == "homomorphism"
    assert "E(init) == I" in b.to_json()["proof_details"]["associativity"]


@pytest.mark.parametrize("name, n", [("semiring_peak_meter_inf", 20000)])
def test_the_identity_combined_with_a_long_list_is_no_nan(name, n):
    """0.9 ** b.n underflows to 0 past 7,000 elements: times the identity's -inf that is a
    NaN, which a tree padded with the identity would spread; the loop, scaling one step at
    a time, keeps the -inf.  The combine selects the infinity first."""
    from thm3.semantics.evaluate import call
    loop = thm3.parse_file(CORPUS / f"{name}.py")
    fn, _ = semiring.synthesize(normalize_loop(loop))
    xs = [(float(v),) for v in np.random.default_rng(0).uniform(1.0, 2.0, n)]
    b = fold_left(loop, xs, {})
    init = tuple(f.default for f in loop.fields)
    got = call(fn, *init, *b)
    assert all(float(g) == float(w) for g, w in zip(got, b)), (got, b)


def test_a_coefficient_of_unknown_sign_is_named_with_the_assert_that_would_place_it():
    """The issue's rule: a loop of a class that ends without the class's combine says which
    class it was read as and what failed; here the sign of a parameter's coefficient."""
    loop = thm3.parse_file(CORPUS / "semiring_signed_feedback.py")
    with pytest.raises(semiring.Failed, match=r"\(v\) is a max of scaled fields, but the coefficient k is not "
                                              r"shown nonnegative.*`assert k >= 0`"):
        semiring.synthesize(normalize_loop(loop))
    text = (CORPUS / "semiring_signed_feedback.py").read_text().replace(
        "    return State(max(k * acc.v, x), acc.n + 1)", "    assert k >= 0\n    return State(max(k * acc.v, x), acc.n + 1)")
    fn, how = semiring.synthesize(normalize_loop(thm3.parse_source(text)))
    assert to_text(fn.outputs[0]) == "max(k ** b.n * a.v, b.v)" and "(max, *)" in how


def test_the_composition_lemma_proves_a_max_times_matrix_on_nonnegatives():
    """Viterbi in probabilities lifted by the other column of the product: over (max, *) on
    nonnegatives the matrix product is associative, and the lemma gives all three laws
    (the laws over three states were not proved within 60 s)."""
    from thm3.prove import composed
    from thm3.syntax.loopfile import loop_text
    from thm3.lift import lift as lift_loop
    res = lift_loop(thm3.parse_file(CORPUS / "semiring_viterbi2_prob.py"), timeout=20.0)
    assert res.loop is not None, res.reason
    lifted = thm3.parse_source(loop_text(res.loop))
    loop, setting, triples = _setting_and_triples(loop=lifted)
    fn, _ = semiring.synthesize(loop)
    out = composed.prove_composed(loop, setting, fn, time.monotonic() + 20)
    assert out is not None and out.proved and out.detail == composed.HOW, out
