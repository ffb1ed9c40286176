"""Laws over (max, *) and (min, *) on nonnegatives decided by normal forms
(`thm3.prove.forms`, issue 21): proved where both sides are the same max (min) of
monomials on every case of the finite control, and never where a law fails on values."""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import thm3  # noqa: E402
from corpus import by_name  # noqa: E402
from stages import a, b, combine_of  # noqa: E402
from thm3.analysis.invariants import infer  # noqa: E402
from thm3.ir import Expr, Op, Type, const  # noqa: E402
from thm3.ir.normalize import normalize_loop  # noqa: E402
from thm3.prove import forms  # noqa: E402
from thm3.prove.laws import Setting, composes_on_finite  # noqa: E402
from thm3.prove.reachable import finite_fields  # noqa: E402
from thm3.semantics.evaluate import PYTHON, evaluate  # noqa: E402
from thm3.semantics.samples import make_triples  # noqa: E402
from thm3.synth import finite  # noqa: E402

R = Type.REAL


def _mul(x, y):
    return Expr(Op.MUL, R, (x, y))


def _max(x, y):
    return Expr(Op.MAX, R, (x, y))


def _min(x, y):
    return Expr(Op.MIN, R, (x, y))


def _loop(tmp_path, fields: str, body: str, elements: str = "x: Real"):
    p = tmp_path / "loop.py"
    p.write_text("from typing import NamedTuple\nfrom thm3.lang import Bool, Int, Real\n\n\n"
                 f"class State(NamedTuple):\n{fields}\n\n\ndef left(acc: State, {elements}) -> State:\n{body}\n")
    return thm3.parse_file(p)


def _setting(loop) -> Setting:
    inv, _ = infer(loop, make_triples(loop), time.monotonic() + 30)
    return Setting(loop, inv)


PEAK = ("    best: Real = 0\n    prod: Real = 1",
        "    assert x >= 0\n    return State(max(acc.best * x, x), acc.prod * x)")


def _peak_combine(loop):
    # the composition of x -> max(best * x, x): best's map is s -> max(s * prod, best)
    return combine_of(loop, best=_max(_mul(a("best"), b("prod")), b("best")), prod=_mul(a("prod"), b("prod")))


def test_a_max_times_combine_is_associative_by_normal_forms(tmp_path):
    loop = _loop(tmp_path, *PEAK)
    out = forms.law_by_forms(_setting(loop), _peak_combine(loop), "associativity", time.monotonic() + 10)
    assert out is not None and out.proved and "(max, *)" in out.detail


def _random_states(loop, rng, n):
    return [{f"{p}.{f.name}": float(rng.choice([0.0, 0.5, 1.0, 2.0, 3.0])) for f in loop.fields for p in "abc"}
            for _ in range(n)]


def _associative_on_values(loop, fn, rng) -> bool:
    names = [f.name for f in loop.fields]
    for env in _random_states(loop, rng, 200):
        def comb(x, y):
            e = {f"a.{k}": v for k, v in zip(names, x)} | {f"b.{k}": v for k, v in zip(names, y)}
            return tuple(evaluate(list(fn.outputs), e, PYTHON))
        x, y, z = ([env[f"{p}.{k}"] for k in names] for p in "abc")
        if comb(comb(x, y), z) != comb(x, comb(y, z)):
            return False
    return True


def test_normal_forms_never_prove_a_combine_that_fails_on_values(tmp_path):
    # mutants of the peak's combine: each one the forms prove must hold on values, and the
    # ones that fail on values must not be proved
    loop = _loop(tmp_path, *PEAK)
    setting = _setting(loop)
    ab, bp, ap, bb = _mul(a("best"), b("prod")), b("prod"), a("prod"), b("best")
    two = const(2.0)
    mutants = {
        "scaled": dict(best=_mul(_max(ab, bb), two), prod=_mul(ap, bp)),
        "swapped": dict(best=_max(_mul(b("best"), a("prod")), a("best")), prod=_mul(ap, bp)),
        "max prod": dict(best=_max(ab, bb), prod=_max(ap, bp)),
        "plain": dict(best=_max(ab, bb), prod=_mul(ap, bp)),
        "both": dict(best=_max(_max(ab, bb), a("best")), prod=_mul(ap, bp)),
    }
    rng = np.random.default_rng(3)
    proved = {}
    for name, outs in mutants.items():
        fn = combine_of(loop, **outs)
        out = forms.law_by_forms(setting, fn, "associativity", time.monotonic() + 10)
        proved[name] = out is not None and out.proved
        if proved[name]:
            assert _associative_on_values(loop, fn, rng), name
    assert proved == {"scaled": False, "swapped": True, "max prod": False, "plain": True, "both": False}
    for name in ("scaled", "max prod", "both"):
        assert not _associative_on_values(loop, combine_of(loop, **mutants[name]), rng), name


def test_values_not_shown_nonnegative_are_left_to_the_solver(tmp_path):
    # without `assert x >= 0` the fields may be negative, where x * max(s, t) is a min
    loop = _loop(tmp_path, PEAK[0], "    return State(max(acc.best * x, x), acc.prod * x)")
    assert forms.law_by_forms(_setting(loop), _peak_combine(loop), "associativity", time.monotonic() + 10) is None


def test_an_addition_is_outside_the_forms(tmp_path):
    loop = _loop(tmp_path, *PEAK)
    fn = combine_of(loop, best=Expr(Op.ADD, R, (a("best"), b("best"))), prod=_mul(a("prod"), b("prod")))
    assert forms.law_by_forms(_setting(loop), fn, "associativity", time.monotonic() + 10) is None


def test_a_min_times_step_law_under_a_sticky_flag(tmp_path):
    # the cheapest quote scaled by a positive rate until a halt: (min, *) under a Bool
    loop = _loop(tmp_path, "    halted: Bool = False\n    low: Real = 1000\n    rate: Real = 1",
                 "    assert x > 0\n    if acc.halted:\n        return acc\n"
                 "    return State(stop, min(acc.low * x, x), acc.rate * x)", "x: Real, stop: Bool")
    setting = _setting(loop)
    keep = Expr(Op.WHERE, R, (a("halted", Type.BOOL), a("low"), _min(_mul(a("low"), b("rate")), b("low"))))
    fn = combine_of(loop, halted=Expr(Op.OR, Type.BOOL, (a("halted", Type.BOOL), b("halted", Type.BOOL))),
                    low=keep,
                    rate=Expr(Op.WHERE, R, (a("halted", Type.BOOL), a("rate"), _mul(a("rate"), b("rate")))))
    assert composes_on_finite(setting, fn) and "halted" in finite_fields(loop, setting.invariants)
    out = forms.law_by_forms(setting, fn, "step", time.monotonic() + 10)
    assert out is not None and out.proved and "(min, *)" in out.detail and out.paths == 8
    # the low read from b's own start (1000) instead of b's list: the forms differ
    bad = combine_of(loop, halted=fn.outputs[0], low=Expr(Op.WHERE, R, (a("halted", Type.BOOL), a("low"),
                                                                        _min(a("low"), b("low")))),
                     rate=fn.outputs[2])
    assert forms.law_by_forms(setting, bad, "step", time.monotonic() + 10) is None


def test_the_lifted_phase_viterbi_is_proved_by_forms():
    # a 2 x 2 (max, *) pair under a `% 2` phase, lifted by its copies (6 fields): its step
    # law left the solver unfinished past 60 s
    loop = normalize_loop(thm3.parse_file(by_name("finite_prob_viterbi_phase").path))
    (first, *_) = finite.lift_candidates(loop, time.monotonic() + 10)
    lifted = normalize_loop(finite.with_added(loop, first.fields))
    fn, _ = finite.synthesize(lifted, time.monotonic() + 30)
    setting = _setting(lifted)
    assert composes_on_finite(setting, fn)
    t0 = time.monotonic()
    out = forms.law_by_forms(setting, fn, "step", time.monotonic() + 10)
    assert out is not None and out.proved and time.monotonic() - t0 < 2.0


def test_transport_skips_additive_polynomials_that_vanish_on_every_state():
    # `phase - phase ** 2` is additive on a {0, 1} phase only because it is 0 on every
    # state: no coordinate of psi, and SymPy's solve spent 47 s on such ones
    from thm3.synth import transport
    from thm3.synth.exact import exact_rows
    loop = normalize_loop(thm3.parse_file(by_name("finite_prob_viterbi_phase").path))
    rows = exact_rows(loop)
    for degree in (2, 3):
        for poly in transport.additive(rows, len(loop.fields), degree):
            assert any(transport._phi(poly, st) != 0 for r in rows for st in (r.a, r.b)), poly


# --- (max, +) and (min, +) ------------------------------------------------------------

def _mps(tmp_path):
    return _loop(tmp_path, "    s: Real = 0\n    m: Real = 0", "    return State(acc.s + x, max(acc.m, acc.s + x))")


def test_the_mps_combine_is_associative_by_affine_forms(tmp_path):
    from stages import mps_combine
    loop = _mps(tmp_path)
    out = forms.law_by_forms(_setting(loop), mps_combine(loop), "associativity", time.monotonic() + 10)
    assert out is not None and out.proved and "(max, +)" in out.detail and "affine forms" in out.detail


def _cmp(op, name, c):
    return Expr(op, Type.BOOL, (Expr(Op.VAR, R, (), f"acc.{name}"), const(c)))


def _random_term(rng, depth: int, kind: Op):
    leaves = [a("x"), a("y"), b("x"), b("y"), const(float(rng.integers(-2, 3)))]
    if kind is Op.MAX:
        leaves.append(const(-np.inf))
    if depth == 0 or rng.random() < 0.25:
        return leaves[rng.integers(len(leaves))]
    op = [kind, Op.ADD, Op.SUB, Op.MUL][rng.integers(4)]
    if op is Op.MUL:
        return Expr(Op.MUL, R, (const(float(rng.integers(-1, 3))), _random_term(rng, depth - 1, kind)))
    return Expr(op, R, (_random_term(rng, depth - 1, kind), _random_term(rng, depth - 1, kind)))


def _holds_on_values(loop, fn, values) -> bool:
    import itertools
    names = [f.name for f in loop.fields]

    def comb(u, v):
        e = {f"a.{k}": p for k, p in zip(names, u)} | {f"b.{k}": q for k, q in zip(names, v)}
        with np.errstate(all="ignore"):
            return tuple(float(t) for t in evaluate(list(fn.outputs), e, PYTHON))
    for u, v, w in itertools.product(values, repeat=3):
        l, r = comb(comb(u, v), w), comb(u, comb(v, w))
        if any(not (p == q or np.isnan(p) and np.isnan(q)) for p, q in zip(l, r)):
            return False
    return True


@pytest.mark.parametrize("ends", [False, True])
def test_affine_forms_never_prove_a_random_combine_that_fails_on_values(tmp_path, ends):
    # random combines of max, +, - and scalings over two fields: every one the forms call
    # associative is associative on every triple of states from a grid of values, -inf
    # included where the invariants let the fields be -inf
    loop = _loop(tmp_path, "    x: Real = 0\n    y: Real = 0", "    return State(max(acc.x, x), acc.y + x)")
    inv = [_cmp(Op.LT, f, np.inf) for f in ("x", "y")]
    if not ends:
        inv += [_cmp(Op.GT, f, -np.inf) for f in ("x", "y")]
    setting = Setting(loop, inv)
    grid = [-1.0, 0.0, 2.0] + ([-np.inf] if ends else [])
    values = [(p, q) for p in grid for q in grid]
    rng = np.random.default_rng(11 + ends)
    proved = 0
    for _ in range(300):
        fn = combine_of(loop, x=_random_term(rng, 3, Op.MAX), y=_random_term(rng, 3, Op.MAX))
        out = forms.law_by_forms(setting, fn, "associativity", time.monotonic() + 10)
        if out is not None and out.proved:
            proved += 1
            assert _holds_on_values(loop, fn, values), [repr(e) for e in fn.outputs]
    assert proved >= 5


def test_the_bird_check_of_a_max_times_fold_is_proved_by_forms(tmp_path):
    from thm3.prove.laws import prove_bird
    p = tmp_path / "peak.py"
    p.write_text("from typing import NamedTuple\nfrom thm3.lang import Real\n\n\n"
                 "class State(NamedTuple):\n    best: Real = 0\n    prod: Real = 1\n\n\n"
                 "def left(acc: State, x: Real) -> State:\n    assert x >= 0\n"
                 "    return State(max(acc.best * x, x), acc.prod * x)\n\n\n"
                 "def right(x: Real, acc: State) -> State:\n"
                 "    return State(max(x * acc.prod, acc.best), x * acc.prod)\n")
    loop = thm3.parse_file(p)
    out = prove_bird(_setting(loop), time.monotonic() + 20)
    assert out.proved and "normal forms over (max, *)" in out.detail
    # a right fold that reads the list backwards: the forms differ, and the solver decides
    q = tmp_path / "wrong.py"
    q.write_text(p.read_text().replace("max(x * acc.prod, acc.best)", "max(x * acc.best, acc.prod)"))
    wrong = thm3.parse_file(q)
    assert forms.law_by_forms(_setting(wrong), None, "bird", time.monotonic() + 10) is None


# --- coefficients nonnegative by asserted upper bounds -----------------------------------

def test_a_difference_is_nonnegative_where_the_asserts_bound_it():
    from thm3.synth.semiring import asserted_nonnegative, nonnegative, positive
    from thm3.ir import var
    src = ("from typing import NamedTuple\nfrom thm3.lang import Real\n\nfail: Real\n\n\n"
           "class State(NamedTuple):\n    s: Real = 0\n\n\n"
           "def left(acc: State, x: Real) -> State:\n    assert {a}\n    return State(acc.s * x)\n")
    one_minus = Expr(Op.SUB, R, (const(1.0), var("fail", R)))
    half_minus = Expr(Op.SUB, R, (const(0.5), var("fail", R)))
    loop = thm3.parse_source(src.format(a="0 <= fail <= 1"))
    known = asserted_nonnegative(loop)
    assert known.upper["fail"] == (1.0, False) and known.lower["fail"] == (0.0, False)
    assert nonnegative(one_minus, known) and not nonnegative(half_minus, known)
    assert not positive(one_minus, asserted_nonnegative(loop, strict=True))
    strict = thm3.parse_source(src.format(a="0 <= fail < 1"))
    assert positive(one_minus, asserted_nonnegative(strict, strict=True))
    loose = thm3.parse_source(src.format(a="fail <= 2"))
    assert not nonnegative(one_minus, asserted_nonnegative(loose))


RELIABILITY = """from typing import NamedTuple
from thm3.lang import Int, Real

fail: Real   # the chance that a check on an even tick finds the unit failed


class State(NamedTuple):
    phase: Int = 0
    up: Real = 1
    down: Real = 0


def left(acc: State, ok: Real) -> State:
    assert 0 <= fail <= {hi} and ok >= 0
    if acc.phase == 0:
        return State(1, acc.up * (1 - fail) * ok, max(acc.up * fail, acc.down))
    return State(0, acc.up * ok, acc.down)
"""


def test_a_phase_lift_with_a_one_minus_coefficient_is_proved_by_forms():
    # (1 - fail) is nonnegative by `fail <= 1`: the step is (max, *) on nonnegatives, its
    # copies lift it, and the step law's forms read (1 - fail) as one nonnegative atom
    loop = normalize_loop(thm3.parse_source(RELIABILITY.format(hi=1), name="reliability"))
    (first, *_) = finite.lift_candidates(loop, time.monotonic() + 10)
    lifted = normalize_loop(finite.with_added(loop, first.fields))
    fn, how = finite.synthesize(lifted, time.monotonic() + 30)
    assert "(max, *)" in how
    out = forms.law_by_forms(_setting(lifted), fn, "step", time.monotonic() + 10)
    assert out is not None and out.proved


def test_an_atom_not_shown_nonnegative_is_left_to_the_solver():
    # the same step with `fail <= 2`: 1 - fail may be negative, so no (max, *) form
    loop = normalize_loop(thm3.parse_source(RELIABILITY.format(hi=2), name="reliability"))
    ok = normalize_loop(thm3.parse_source(RELIABILITY.format(hi=1), name="reliability"))
    (first, *_) = finite.lift_candidates(ok, time.monotonic() + 10)
    lifted_ok = normalize_loop(finite.with_added(ok, first.fields))
    fn, _ = finite.synthesize(lifted_ok, time.monotonic() + 30)
    lifted = normalize_loop(finite.with_added(loop, first.fields))
    assert forms.law_by_forms(_setting(lifted), fn, "step", time.monotonic() + 10) is None
