"""The laws by cases on the reachable control (`thm3.prove.reachable`), the integer-only
fit of a composed combine's data read modulo m, and the pruning of looser bounds."""
from __future__ import annotations

import time

import numpy as np

import thm3
from thm3.analysis.invariants import _prune, infer
from thm3.ir import Op, Type, const, var, walk
from thm3.prove import laws, paths
from thm3.prove.reachable import control_cases, disjuncts, selects_on_first
from thm3.semantics.samples import make_triples
from thm3.synth import finite
from thm3.synth.readback import lift_candidates

# a clamped index in 0..3 with two coupled fields mod 97: the slope of u in v is the sum of
# the indices, which is v / 2 over the integers but not modulo 97
CLAMPED = '''
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    i: Int = 0
    u: Int = 0
    v: Int = 0


def left(acc: State, x: Int) -> State:
    i = min(acc.i + 1, 3) if x > 0 else max(acc.i - 1, 0)
    u = (acc.u + i * acc.v + 1) % 97
    v = (acc.v + 2 * i) % 97
    return State(i, u, v)
'''


def _lifted():
    loop = thm3.parse_source(CLAMPED)
    got = lift_candidates(loop, time.monotonic() + 30)
    assert got, "the clamped walk has a composition lift"
    return finite.with_added(loop, got[0].fields)


def test_a_combine_read_modulo_m_has_integer_coefficients_only():
    lifted = _lifted()
    fn, _ = finite.synthesize(lifted, time.monotonic() + 30)
    coefficients = [e.arg for e in walk(list(fn.outputs)) if e.op is Op.CONST and not isinstance(e.arg, bool)]
    assert coefficients and all(float(c) == round(float(c)) for c in coefficients), \
        "a fraction (v / 2) in a combine reduced mod 97 is not the slope's residue"


def test_the_step_law_of_a_composed_combine_is_proved_by_cases_on_the_reachable_control():
    lifted = _lifted()
    fn, _ = finite.synthesize(lifted, time.monotonic() + 30)
    inv, timed_out = infer(lifted, make_triples(lifted), time.monotonic() + 30)
    assert not timed_out
    control = control_cases(inv, 1)
    assert control is not None and len(control) >= 4, "the reachable control is an invariant's disjunction"
    assert selects_on_first(fn, control)
    setting = laws.Setting(lifted, inv)
    out = laws.prove_step_law(setting, fn, time.monotonic() + 60)
    assert out.proved, out.detail
    right = laws.prove_identity(setting, fn, time.monotonic() + 30, sides="right")
    assert right.proved, right.detail
    # a combine that reads b's v where it should add b's offset to u is not the
    # composition: neither the first run nor the cases prove it
    reads = lambda e, name: any(v.op is Op.VAR and v.arg == name for v in walk([e]))  # noqa: E731
    assert reads(fn.outputs[1], "b.u")
    bad = thm3.ir.Fn(fn.inputs, tuple(_swap_var(e, "b.u", "b.v") if k == 1 else e
                                      for k, e in enumerate(fn.outputs)))
    assert not reads(bad.outputs[1], "b.u")
    assert not laws.prove_step_law(setting, bad, time.monotonic() + 30).proved


def test_the_split_alone_proves_the_step_law(monkeypatch):
    """With no time for the first run, only the cases can prove the law: the detail says so."""
    lifted = _lifted()
    fn, _ = finite.synthesize(lifted, time.monotonic() + 30)
    inv, _ = infer(lifted, make_triples(lifted), time.monotonic() + 30)
    monkeypatch.setattr(paths, "SPLIT_SHARE", 0.0)          # read where `Law` runs
    monkeypatch.setattr(paths, "SPLIT_MIN_SECONDS", 0.0)
    out = laws.prove_step_law(laws.Setting(lifted, inv), fn, time.monotonic() + 90)
    assert out.proved, out.detail
    assert out.detail.startswith("by cases on the "), out.detail


def _swap_var(e, old: str, new: str):
    from thm3.ir import substitute
    (v,) = [x for x in walk([e]) if x.op is Op.VAR and x.arg == old]
    return substitute([e], {old: var(new, v.type)})[0]


def test_disjuncts_read_only_equalities_of_fields_to_constants():
    i, j = var("acc.i", Type.INT), var("acc.j", Type.INT)
    eq = lambda x, c: thm3.ir.Expr(Op.EQ, Type.BOOL, (x, const(c, Type.INT)))  # noqa: E731
    both = lambda p, q: thm3.ir.Expr(Op.AND, Type.BOOL, (p, q))  # noqa: E731
    inv = thm3.ir.Expr(Op.OR, Type.BOOL, (both(eq(i, 0), eq(j, 1)), both(eq(i, 2), eq(j, 0))))
    assert disjuncts(inv) == [{"i": 0, "j": 1}, {"i": 2, "j": 0}]
    loose = thm3.ir.Expr(Op.OR, Type.BOOL, (eq(i, 0), thm3.ir.Expr(Op.LE, Type.BOOL, (j, const(1, Type.INT)))))
    assert disjuncts(loose) is None
    assert control_cases([inv], 13) is None, "2 ** 13 cases is past the limit"


def test_looser_constant_bounds_are_pruned_and_the_tightest_kept_once():
    x = var("acc.x", Type.REAL)
    le = lambda c: thm3.ir.Expr(Op.LE, Type.BOOL, (x, const(c, Type.REAL)))  # noqa: E731
    ge = lambda c: thm3.ir.Expr(Op.GE, Type.BOOL, (x, const(c, Type.REAL)))  # noqa: E731
    kept = _prune([le(4.0), le(1.0), le(126.0), ge(0.0), ge(-3.0), le(1.0)])
    bounds = sorted((a.op.name, float(a.src[1].arg)) for a in kept)
    assert bounds == [("GE", 0.0), ("LE", 1.0)]
    assert np.isfinite(float(kept[0].src[1].arg))


def test_associativity_of_a_composed_combine_is_the_step_law_first(monkeypatch):
    """A combine that selects on its first operand's reachable control is a composition of
    the step's maps: its step law (one operand split, 64 cases for a framing scanner's lift)
    proves associativity, and associativity over three states (two operands split: 4096
    cases) is never run first: it cost a 20-field lift a quarter of its time."""
    from thm3.prove import combine as laws_of_combine
    lifted = _lifted()
    fn, _ = finite.synthesize(lifted, time.monotonic() + 30)
    triples = make_triples(lifted)
    inv, _ = infer(lifted, triples, time.monotonic() + 30)
    setting = laws.Setting(lifted, inv)
    assert laws.composes_on_control(setting, fn)
    calls = []
    direct = laws.prove_associativity
    monkeypatch.setattr(laws, "prove_associativity", lambda *a, **k: calls.append(1) or direct(*a, **k))
    out, steps = laws_of_combine._associativity(lifted, setting, fn, triples, time.monotonic() + 90)
    assert out.proved and steps is out, out.detail
    assert out.detail == laws_of_combine.STEP_LAW
    assert calls == [], "associativity over three states ran before the step law"


def test_the_run_before_the_split_is_capped_and_gets_the_rest_after_it(monkeypatch):
    """The run over all states before the split gets SPLIT_MAX_SECONDS at most, not a
    share of a long deadline (a 20-field lift lost 34 s there; its 64 cases took 6.6 s);
    where the split does not prove the law and that run timed out, it runs again with
    the time left."""
    lifted = _lifted()
    fn, _ = finite.synthesize(lifted, time.monotonic() + 30)
    inv, _ = infer(lifted, make_triples(lifted), time.monotonic() + 30)
    seen = []

    def fake(self, build, check, mode):
        seen.append((mode.split_control, mode.deadline - time.monotonic()))
        return laws.Outcome("timeout", "")

    monkeypatch.setattr(laws.Law, "_run_modes", fake)
    monkeypatch.setattr(laws.Law, "run", lambda self, build, check, mode=None: (
        lambda m: self._run_split(build, check, m) if m.control is not None else fake(self, build, check, m))(
            self.mode if mode is None else mode))
    out = laws.prove_step_law(laws.Setting(lifted, inv), fn, time.monotonic() + 300)
    assert not out.proved
    assert [s for s, _ in seen] == [False, True, False], seen
    assert seen[0][1] <= laws.SPLIT_MAX_SECONDS + 0.5, seen
    assert seen[2][1] > 250, "the run after the split gets the time left"
