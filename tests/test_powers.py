"""`c ** n` with an Int exponent (issue 21, "powers"): the loop-file form, its meaning in
every table, the proofs' reading (c ** (x + y) == c ** x * c ** y), the combines that read
a decay off a count (the semiring route and the finite route, each alone), and the code
every backend runs, checked against the sequential fold."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
import z3

import thm3
import thm3.synth as synth
from analyzed import OnDemand
from stages import check_emitted_module, check_runs_as_the_loop, compile_kernels, proved, route_alone
from thm3.errors import LoopError
from thm3.ir import Expr, Fn, Op, Type, const, var, walk
from thm3.ir.printer import to_text
from thm3.semantics.samples import fold_left
from thm3.semantics.symbolic import Explorer, Fin, SymbolicTable, constant
from thm3.synth.exact import EXACT, NotRational
from thm3.synth.powers import read_power
from thm3.syntax.frontend import parse_source

CORPUS = Path(__file__).resolve().parents[1] / "bench" / "corpus"
HOMS = ("powers_decay_count", "powers_gated_halving", "powers_discount_forward", "powers_two_mode_decay",
        "powers_ema_count", "powers_two_mode_param")
PARAMS = {"powers_ema_count": {"alpha": 0.3}, "powers_two_mode_param": {"p": 0.7}}

LOOP = '''"""A decay with its count."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    n: Int = 0
    v: Real = 0


def left(acc: State, x: Real) -> State:
    return State(acc.n + 1, {step})
'''


def _parse(step: str):
    return parse_source(LOOP.format(step=step), "decay.py")


# --- the loop file ------------------------------------------------------------------------

@pytest.mark.parametrize("step, text", [
    ("0.9 * acc.v + x * 0.5 ** acc.n", "0.9 * acc.v + x * 0.5 ** acc.n"),
    ("acc.v + 0.99 ** (acc.n + 1) * x", "acc.v + 0.99 ** (acc.n + 1) * x"),
    ("acc.v * 2.0 ** -acc.n + x", "acc.v * 2.0 ** -acc.n + x"),
    ("acc.v + (-0.5) ** acc.n * x", "acc.v + (-0.5) ** acc.n * x"),
    ("acc.v - 0.5 ** acc.n", "acc.v - 0.5 ** acc.n"),
])
def test_a_power_of_an_int_parses_prints_and_reads_back(step, text):
    loop = _parse(step)
    out = loop.left.outputs[1]
    assert any(e.op is Op.POWN for e in walk([out]))
    assert to_text(out) == text
    again = _parse(to_text(out)).left.outputs[1]
    assert to_text(again) == text


@pytest.mark.parametrize("step, message", [
    ("acc.v + 2 ** acc.n", "takes a Real base, not an Int"),
    ("acc.v + 0.5 ** x", "needs an integer exponent"),
])
def test_a_power_without_a_real_base_and_an_int_exponent_is_refused_where_it_is(step, message):
    with pytest.raises(LoopError) as err:
        _parse(step)
    text = str(err.value)
    assert message in text and "decay.py:12:" in text and "0.5 ** acc.n" in text


def test_every_table_gives_the_integer_power():
    from fractions import Fraction
    from thm3.semantics.evaluate import NUMPY, PYTHON
    from thm3.semantics.reals import REALS
    for c, n in ((0.75, 3), (0.75, 0), (2.0, -2), (-0.5, 3)):
        want = Fraction(c) ** n
        assert PYTHON[Op.POWN](c, n) == float(want)
        assert float(NUMPY[Op.POWN](np.float64(c), np.int64(n))) == float(want)
        assert EXACT[Op.POWN](Fraction(c), Fraction(n)) == want
        assert REALS[Op.POWN](Fraction(c), n) == want
    with pytest.raises(NotRational):
        EXACT[Op.POWN](Fraction(3, 4), Fraction(5000))


# --- the proofs' reading --------------------------------------------------------------------

def _int(name):
    return Fin(sp.Symbol(name, integer=True), z3.ToReal(z3.Int(name)))


@pytest.mark.parametrize("c", [0.9, -0.5, 3.0])
def test_the_prover_splits_a_sum_in_the_exponent_and_nothing_else(c):
    ex = Explorer([], deadline=float("inf"))
    t = SymbolicTable(ex, lazy=False)
    n, m = _int("n"), _int("m")
    base = constant(c, Type.REAL)
    one = Fin(sp.Integer(1), z3.RealVal(1))

    def power(e):
        return t.op_pown(base, e).z3
    assert ex.valid(power(t.op_add(n, m)) == power(n) * power(m))
    assert ex.valid(power(t.op_add(n, one)) == t.op_mul(base, t.op_pown(base, n)).z3)
    assert ex.valid(power(t.op_sub(n, n)) == 1)
    assert ex.valid(power(t.op_neg(n)) * power(n) == 1)
    assert not ex.valid(power(n) == power(m))
    assert not ex.valid(power(t.op_add(n, n)) == power(n))
    assert not ex.valid(power(t.op_add(n, one)) == power(n))
    if c > 0:
        assert ex.valid(power(n) > 0)
    else:
        assert not ex.valid(power(n) > 0)


def test_a_zero_base_splits_on_the_exponent():
    """0 ** n: 0 for n > 0, 1 for n == 0, no value (the proofs' NaN, as 1 / 0) for n < 0."""
    from thm3.semantics.symbolic import isnan
    ex = Explorer([], deadline=float("inf"))
    t = SymbolicTable(ex, lazy=False)
    got = [t.op_pown(constant(0.0, Type.REAL), _int("n")) for _ in ex.paths()]
    values = sorted(str(g.sp) for g in got if not isnan(g))
    assert values == ["0", "1"] and sum(isnan(g) for g in got) == 1, got


# --- reading the power off samples -------------------------------------------------------------

def test_read_power_finds_the_base_and_the_factor():
    t = np.array([0, 1, 2, 3, 5, 2, 7])
    got = read_power(3.0 * 0.75 ** t, {"b.m": np.array([1, 1, 1, 1, 1, 1, 1]), "b.n": t}, prefix="")
    assert to_text(got) == "3.0 * 0.75 ** b.n"
    assert to_text(read_power((-0.5) ** t, {"n": t})) == "(-0.5) ** b.n"
    assert read_power(0.75 ** t + 0.01, {"n": t}) is None          # not a power
    assert read_power(0.75 ** (t * t), {"n": t}) is None
    assert read_power(np.ones(7), {"n": t}) is None                 # c = 1: a constant, not a power
    # a parameter's coefficient as the base, its value varying with the sampled parameters
    alpha = np.array([0.5, 0.5, 0.25, 0.25, 0.1, 0.1, 0.5])
    base = Expr(Op.SUB, Type.REAL, (const(1.0, Type.REAL), var("alpha", Type.REAL)))
    got = read_power((1 - alpha) ** t, {"n": t}, bases=[(base, 1 - alpha)])
    assert to_text(got) == "(1.0 - alpha) ** b.n"
    assert read_power((1 - alpha) ** (t + 1), {"n": t}, bases=[(base, 1 - alpha)]) is None


# --- the routes, each alone ------------------------------------------------------------------

def _combine_text(got) -> str:
    return " ".join(to_text(o) for o in got.combine.outputs)


@pytest.mark.parametrize("name, power", [("powers_decay_count", "0.9 ** b.n"),
                                         ("powers_ema_count", "(1.0 - alpha) ** b.n")])
def test_the_semiring_route_reads_the_decay_off_the_count(name, power):
    loop = thm3.parse_file(CORPUS / f"{name}.py")
    got = route_alone(loop, (synth.route_named("semiring"),), 30)
    assert proved(got), got.statuses
    assert power in _combine_text(got)


@pytest.mark.parametrize("name, c", [("powers_two_mode_decay", "0.5"), ("powers_two_mode_param", "p")])
def test_the_finite_route_reads_each_modes_decay_off_its_count(name, c):
    loop = thm3.parse_file(CORPUS / f"{name}.py")
    got = route_alone(loop, (synth.route_named("finite"),), 30)
    assert proved(got), got.statuses
    text = _combine_text(got)
    assert f"{c} ** b.n0" in text and f"{c} ** b.n1" in text


def test_the_semiring_route_reads_a_product_of_two_counts_powers():
    # a quiet sample halves the peak, a loud one keeps 0.9 of it: after b's list a's peak
    # is scaled by 0.5 ** b.quiet_n * 0.9 ** b.loud_n, neither power alone
    loop = thm3.parse_file(CORPUS / "semiring_release_counts.py")
    got = route_alone(loop, (synth.route_named("semiring"),), 30)
    assert proved(got), got.statuses
    text = _combine_text(got)
    assert "0.5 ** b.quiet_n" in text and "0.9 ** b.loud_n" in text


def test_a_product_of_powers_is_read_only_where_it_holds():
    from thm3.synth.powers import read_power_product
    rng = np.random.default_rng(3)
    n1, n2, n3 = (rng.integers(0, 9, size=30) for _ in range(3))
    v = 2.0 * 0.5 ** n1 * 1.25 ** n3
    got = read_power_product(v, {"n1": n1, "n2": n2, "n3": n3})
    assert to_text(got) in ("2.0 * (0.5 ** b.n1 * 1.25 ** b.n3)", "2.0 * 0.5 ** b.n1 * 1.25 ** b.n3"), to_text(got)
    # one sample off by a relative 1e-6 refutes it; a sum of powers is no product of them
    w = v.copy()
    w[7] *= 1 + 1e-6
    assert read_power_product(w, {"n1": n1, "n2": n2, "n3": n3}) is None
    assert read_power_product(0.5 ** n1 + 0.25 ** n2, {"n1": n1, "n2": n2}) is None


def test_a_decay_close_to_one_is_read_as_a_power_not_as_the_identity():
    """0.99999 a step: within NumPy's default tolerance of 1, which made every word's
    coefficient look fixed by the control state; no fraction with a small denominator is
    it, so the base is the step's own constant."""
    text = (CORPUS / "powers_two_mode_decay.py").read_text().replace("0.5 * acc.", "0.99999 * acc.")
    loop = parse_source(text, "close_to_one.py")
    got = route_alone(loop, (synth.route_named("finite"),), 30)
    assert proved(got), got.statuses
    assert "0.99999 ** b.n0" in _combine_text(got)


def test_a_wrong_base_or_count_is_refuted_not_proved():
    from thm3.analysis.invariants import infer
    from thm3.prove.combine import prove_combine
    from thm3.prove.laws import Setting
    from thm3.semantics.samples import make_triples
    loop = thm3.parse_file(CORPUS / "powers_decay_count.py")
    triples = make_triples(loop)
    inv, _ = infer(loop, triples, time.monotonic() + 30)
    setting = Setting(loop, inv)
    R, I = Type.REAL, Type.INT

    def combine(c, exponent):
        v = Expr(Op.ADD, R, (Expr(Op.MUL, R, (Expr(Op.POWN, R, (const(c, R), exponent)), var("a.v", R))),
                             var("b.v", R)))
        return Fn((("a.n", I), ("a.v", R), ("b.n", I), ("b.v", R)),
                  (Expr(Op.ADD, I, (var("a.n", I), var("b.n", I))), v))
    right = combine(0.9, var("b.n", I))
    statuses, _, _ = prove_combine(loop, setting, right, triples, time.monotonic() + 30)
    assert set(statuses.values()) == {"proved"}
    for wrong in (combine(0.8, var("b.n", I)), combine(0.9, var("a.n", I)),
                  combine(0.9, Expr(Op.ADD, I, (var("b.n", I), const(1, I))))):
        statuses, details, _ = prove_combine(loop, setting, wrong, triples, time.monotonic() + 30)
        assert "failed" in statuses.values(), (statuses, details)


# --- every backend against the sequential fold -----------------------------------------------

@pytest.fixture(scope="module")
def analyses():
    return OnDemand(lambda name: thm3.analyze(CORPUS / f"{name}.py", timeout=60))


def _data(name, rng, n):
    if name.startswith("powers_two_mode"):
        return [rng.choice([0, 1], n, p=[0.8, 0.2]).astype(np.int64), rng.normal(size=n)]
    return [rng.normal(size=n)]


@pytest.mark.parametrize("name", HOMS)
def test_the_combine_runs_as_the_sequential_loop(name, analyses):
    a = analyses[name]
    assert a.verdict == "homomorphism", a.reason
    assert any(e.op is Op.POWN for e in walk(a.combine_fn.outputs)) or name == "powers_discount_forward"
    check_runs_as_the_loop(a, lambda rng, n: _data(name, rng, n), PARAMS.get(name, {}), (0, 1, 2, 7, 1000, 4099))


@pytest.mark.parametrize("name", HOMS)
def test_numba_backend_agrees(name, analyses):
    pytest.importorskip("numba")
    a = analyses[name]
    arrays = _data(name, np.random.default_rng(6), 5000)
    p = PARAMS.get(name, {})
    got, want = a.run(*arrays, backend="numba", **p), a.run(*arrays, **p)
    assert np.allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float), rtol=1e-12)


@pytest.mark.parametrize("name", HOMS)
def test_the_emitted_module_reduces_and_scans_on_numpy(name, analyses, tmp_path):
    check_emitted_module(analyses[name], name, lambda rng, n: _data(name, rng, n), PARAMS.get(name, {}), tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
def test_power_kernels_compile(arch, analyses):
    from thm3.gpu.runtime import nvrtc
    if not nvrtc.available():
        pytest.skip("cuda-bindings (NVRTC) is not installed")
    for name in HOMS:
        for dtype, spelled in (("float32", "powf("), ("float64", "pow(")):
            assert spelled in compile_kernels(analyses[name], name, arch, dtype)


# --- a step that reads a power of a count: the power as a field ------------------------------

def test_a_power_of_a_count_in_the_step_becomes_a_field():
    from thm3.ir.normalize import normalize_loop
    from thm3.synth.powers import with_power_fields
    loop = normalize_loop(thm3.parse_file(CORPUS / "powers_bitplane.py"))
    extended, meaning = with_power_fields(loop)
    assert extended.field_names == ("v", "k", "pow_k")
    assert to_text(extended.left.outputs[0]) == "acc.v + bit * (2.0 ** -1 * acc.pow_k)"
    assert to_text(extended.left.outputs[2]) == "2.0 ** -1 * acc.pow_k"
    assert extended.fields[2].default == 1.0 and list(meaning) == ["pow_k"]
    base, k, n = meaning["pow_k"]
    assert (to_text(base), k, n) == ("2.0", -1, "k")
    # the added field is the power on every list: fold both and compare
    rng = np.random.default_rng(0)
    for _ in range(20):
        xs = [(int(b),) for b in rng.integers(0, 2, int(rng.integers(0, 12)))]
        v, k, p = fold_left(extended, xs, {})
        assert float(p) == 2.0 ** -int(k) and (float(v), int(k)) == tuple(x.item() for x in fold_left(loop, xs, {}))


@pytest.mark.parametrize("step", [
    "acc.v + x * 0.5 ** acc.m, acc.n + 1, acc.m * 2",         # m doubles: no count
    "acc.v + x * 0.5 ** (acc.n * acc.m), acc.n + 1, acc.m",   # the exponent reads two fields
    "acc.v + x * acc.v ** acc.n, acc.n + 1, acc.m",           # the base reads the state
])
def test_no_power_field_where_the_exponent_is_no_count(step):
    from thm3.ir.normalize import normalize_loop
    from thm3.synth.powers import with_power_fields
    text = LOOP.replace("    v: Real = 0\n", "    v: Real = 0\n    m: Int = 1\n").replace(
        "State(acc.n + 1, {step})", "State({step})")
    text = text.replace("class State(NamedTuple):\n    n: Int = 0\n    v: Real = 0\n    m: Int = 1",
                        "class State(NamedTuple):\n    v: Real = 0\n    n: Int = 0\n    m: Int = 1")
    loop = normalize_loop(parse_source(text.format(step=step), "no_count.py"))
    assert with_power_fields(loop) is None


@pytest.mark.parametrize("name, expected", [("powers_bitplane", "a.v + b.v * 2.0 ** -a.k"),
                                            ("powers_gated_digits", "a.v + b.v * 0.1 ** a.k"),
                                            ("powers_discount_forward_param", "a.g + b.g * gamma ** a.t")])
def test_the_semiring_route_reads_a_power_the_step_takes_of_its_count(name, expected):
    """The step reads the state through c ** (k * n + e), n a count: with the power as a
    field the step is affine, and the composition, written back in the loop's own fields,
    is proved by the semiring route alone."""
    loop = thm3.parse_file(CORPUS / f"{name}.py")
    got = route_alone(loop, (synth.route_named("semiring"),), 60)
    assert proved(got), got.statuses
    assert to_text(got.combine.outputs[0]) == expected


# --- the exponential of a sum that b keeps ------------------------------------------------------

def test_read_exponential_reads_exp_of_a_field_and_nothing_else():
    from thm3.synth.powers import read_exponential
    t = np.array([0.0, 0.5, 1.25, 3.0, 0.75])
    assert to_text(read_exponential(np.exp(-t), {"t": t})) == "exp(-b.t)"
    assert to_text(read_exponential(2.0 * np.exp(-0.5 * t), {"t": t})) == "2.0 * exp(-0.5 * b.t)"
    assert read_exponential(np.exp(-t) + 0.01, {"t": t}) is None         # no exponential
    assert read_exponential(np.exp(-t * t), {"t": t}) is None            # not linear in the field


@pytest.mark.parametrize("name, expected", [("semiring_envelope_dt", "max(exp(-b.t) * a.peak, b.peak)"),
                                            ("powers_ema_irregular", "exp(-0.5 * b.t) * a.v + b.v")])
def test_the_semiring_route_reads_the_exponential_of_b_s_elapsed_time(name, expected):
    """The product of exp(-c dt) over b's list is exp(-c * b.t); its laws need exp(u + v) ==
    exp(u) * exp(v), which the prover now states between exp terms whose arguments add up."""
    loop = thm3.parse_file(CORPUS / f"{name}.py")
    got = route_alone(loop, (synth.route_named("semiring"),), 60)
    assert proved(got), got.statuses
    assert to_text(got.combine.outputs[0]) == expected


def test_a_wrong_exponential_is_not_proved():
    """exp(-2 * b.t) in place of exp(-b.t): the product facts are equations only where the
    arguments' linear forms add up, so no law of the wrong combine is proved from them."""
    from thm3.analysis.invariants import infer
    from thm3.prove.combine import prove_combine
    from thm3.prove.laws import Setting
    from thm3.semantics.samples import make_triples
    from thm3.ir.normalize import normalize_loop
    from thm3.synth import semiring
    loop = thm3.parse_file(CORPUS / "semiring_envelope_dt.py")
    fn, _ = semiring.synthesize(normalize_loop(loop))
    R = Type.REAL
    wrong_exp = Expr(Op.EXP, R, (Expr(Op.MUL, R, (const(-2.0, R), var("b.t", R))),))
    peak = Expr(Op.MAX, R, (Expr(Op.MUL, R, (wrong_exp, var("a.peak", R))), var("b.peak", R)))
    wrong = Fn(fn.inputs, (peak, fn.outputs[1]))
    triples = make_triples(loop)
    inv, _ = infer(loop, triples, time.monotonic() + 30)
    statuses, _, _ = prove_combine(loop, Setting(loop, inv), wrong, triples, time.monotonic() + 30)
    assert statuses["associativity"] != "proved" and statuses["homomorphism"] != "proved", statuses
