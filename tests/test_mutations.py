"""The prover must reject what is wrong: a wrong combine, a wrong identity, a
non-inductive invariant, a right fold that differs from the left."""
from __future__ import annotations

import dataclasses
import time

import thm3
from catalog import SAMPLES
from thm3.prove import laws as prove
from thm3.prove.combine import prove_combine, violation_on_samples
from thm3.syntax.frontend import parse_source
from thm3.ir import Expr, Fn, Op, Type, const, var
from thm3.analysis.invariants import infer
from thm3.prove.laws import Setting
from thm3.semantics.samples import make_triples

MPS = open(next(s for s in SAMPLES if s.name == "mps").path).read()
SOFTMAX = open(next(s for s in SAMPLES if s.name == "safe_softmax").path).read()


def _names(loop):
    return tuple((f"a.{f.name}", f.type) for f in loop.fields) + tuple((f"b.{f.name}", f.type) for f in loop.fields)


def _mps_combine(loop, m_term):
    a_s, b_s = var("a.s", Type.REAL), var("b.s", Type.REAL)
    return Fn(_names(loop), (Expr(Op.ADD, Type.REAL, (a_s, b_s)), m_term))


def _setting(loop):
    triples = make_triples(loop)
    inv, _ = infer(loop, triples, time.monotonic() + 30)
    return Setting(loop, inv), triples


def test_right_combine_is_proved():
    loop = parse_source(MPS)
    setting, triples = _setting(loop)
    m = Expr(Op.MAX, Type.REAL, (var("a.m", Type.REAL),
                                  Expr(Op.ADD, Type.REAL, (var("a.s", Type.REAL), var("b.m", Type.REAL)))))
    statuses, _, _ = prove_combine(loop, setting, _mps_combine(loop, m), triples, time.monotonic() + 30)
    assert statuses == {"identity": "proved", "associativity": "proved", "homomorphism": "proved"}


def test_wrong_combine_fails():
    """max(m1, m2) forgets to shift the right side by s1."""
    loop = parse_source(MPS)
    setting, triples = _setting(loop)
    wrong = Expr(Op.MAX, Type.REAL, (var("a.m", Type.REAL), var("b.m", Type.REAL)))
    combine = _mps_combine(loop, wrong)
    out = prove.prove_homomorphism(setting, combine, time.monotonic() + 30)
    assert not out.proved
    statuses, details, _ = prove_combine(loop, setting, combine, triples, time.monotonic() + 30)
    assert statuses["homomorphism"] == "failed", details
    assert "field m" in details["homomorphism"]


def test_wrong_identity_fails():
    """The same combine with init s = 1 instead of 0: the identity law breaks."""
    loop = parse_source(MPS)
    bad = dataclasses.replace(loop, fields=(dataclasses.replace(loop.fields[0], default=1.0),) + loop.fields[1:])
    m = Expr(Op.MAX, Type.REAL, (var("a.m", Type.REAL),
                                  Expr(Op.ADD, Type.REAL, (var("a.s", Type.REAL), var("b.m", Type.REAL)))))
    out = prove.prove_identity(Setting(bad, []), _mps_combine(bad, m), time.monotonic() + 30)
    assert not out.proved


def test_softmax_without_guard_makes_nan():
    """exp(m1 - max(m1, m2)) without the select: the identity gives -inf - -inf."""
    loop = parse_source(SOFTMAX)
    setting, _ = _setting(loop)
    am, bm, ad, bd = (var(n, Type.REAL) for n in ("a.m", "b.m", "a.d", "b.d"))
    mx = Expr(Op.MAX, Type.REAL, (am, bm))
    d = Expr(Op.ADD, Type.REAL, (
        Expr(Op.MUL, Type.REAL, (ad, Expr(Op.EXP, Type.REAL, (Expr(Op.SUB, Type.REAL, (am, mx)),)))),
        Expr(Op.MUL, Type.REAL, (bd, Expr(Op.EXP, Type.REAL, (Expr(Op.SUB, Type.REAL, (bm, mx)),))))))
    combine = Fn(_names(loop), (mx, d))
    assert not prove.identity_nan_free(setting, combine, time.monotonic() + 30).proved
    assert not prove.prove_identity(setting, combine, time.monotonic() + 30).proved


def test_non_inductive_invariant_rejected():
    """s >= 0 holds initially but a negative element breaks it."""
    loop = parse_source(MPS)
    s_nonneg = Expr(Op.GE, Type.BOOL, (var("acc.s", Type.REAL), const(0.0)))
    m_nonneg = Expr(Op.GE, Type.BOOL, (var("acc.m", Type.REAL), const(0.0)))
    flags, _ = prove.preserved_atoms(Setting(loop, [s_nonneg, m_nonneg]), [s_nonneg, m_nonneg],
                                     time.monotonic() + 30)
    assert flags == [False, True]
    inv, _ = infer(loop, make_triples(loop), time.monotonic() + 30)
    assert all(repr(e) != repr(s_nonneg) for e in inv)
    assert any(repr(e) == "acc.m >= acc.s" for e in inv)


def test_right_fold_that_differs():
    a = thm3.analyze(next(s for s in SAMPLES if s.name == "bad_right").path, lift=False)
    assert a.proofs["bird"] == "failed"
    assert "differ on" in a.bird_detail
    # the verdict still comes from left's function
    assert a.verdict == "homomorphism"


def test_timeout_is_unknown_never_proved():
    """A budget far below what the proofs need: the answer is "unknown", no law says
    "proved", and the analysis stops soon after the budget."""
    a = thm3.analyze(next(s for s in SAMPLES if s.name == "flash_attention").path, timeout=0.2, lift=False)
    assert a.verdict == "unknown"
    assert "time" in a.reason
    # a law the solver finished within the budget is proved (a warm worker gets that far in
    # 0.2 s); the three together, which would make a homomorphism, are not
    laws = [a.proofs[k] for k in ("identity", "associativity", "homomorphism")]
    assert laws.count("proved") < 3, a.proofs
    assert all("path(s)" in a.law_details[k] for k in ("identity", "associativity", "homomorphism")
               if a.proofs[k] == "proved"), a.law_details
    # where the prover was reached, the candidate stays shown with the reason that its laws
    # ran out of time (verdict_of); a verdict, kernel or proof never comes of it
    assert a.combine is None or "ran out before the laws were proved" in a.reason, a.reason
    assert a.seconds < 10


def test_laws_out_of_time_are_not_proved():
    """The prover itself: a deadline already past gives "timeout", never "proved"."""
    loop = parse_source(MPS)
    m = Expr(Op.MAX, Type.REAL, (var("a.m", Type.REAL),
                                  Expr(Op.ADD, Type.REAL, (var("a.s", Type.REAL), var("b.m", Type.REAL)))))
    out = prove.prove_associativity(Setting(loop, []), _mps_combine(loop, m), time.monotonic() - 1)
    assert out.status == "timeout" and not out.proved
