"""Proofs of the three laws for a candidate combine, the law tests on samples when no
proof is reached, and how `prove_combine` reports them."""
from __future__ import annotations

import time
from pathlib import Path

from stages import a, b, combine_of, later, mps_combine, mx, prepared
from thm3.prove.combine import prove_combine, violation_on_samples
from thm3.prove.laws import prove_associativity, prove_homomorphism, prove_identity


def test_mps_laws_are_proved():
    loop, triples, setting = prepared("mps")
    combine = mps_combine(loop)
    for prove in (prove_identity, prove_associativity, prove_homomorphism):
        out = prove(setting, combine, later())
        assert out.proved, (prove.__name__, out.detail)
        assert out.paths >= 1


def test_a_wrong_combine_is_not_proved_and_fails_on_samples():
    """m = max(a.m, b.m) forgets a's sum: associative, with identity, but not h(xs + ys)."""
    loop, triples, setting = prepared("mps")
    wrong = combine_of(loop, s=mps_combine(loop).outputs[0], m=mx(a("m"), b("m")))
    assert prove_identity(setting, wrong, later()).proved
    assert not prove_homomorphism(setting, wrong, later()).proved
    bad = violation_on_samples("homomorphism", loop, wrong, triples)
    assert bad.startswith("field m:") and " != " in bad
    assert violation_on_samples("identity", loop, wrong, triples) == ""
    statuses, details, _ = prove_combine(loop, setting, wrong, triples, later())
    assert statuses["homomorphism"] == "failed" and details["homomorphism"] == bad
    # refuted on the folded lists before any prover ran: the other laws are not tried
    assert statuses["identity"] == "skipped" and "not tried" in details["identity"]


def test_no_time_means_no_proof():
    loop, triples, setting = prepared("mps")
    statuses, details, timed_out = prove_combine(loop, setting, mps_combine(loop), triples,
                                                 time.monotonic() - 1)
    assert timed_out
    assert set(statuses.values()) == {"tested"}       # true on samples, never "proved"
    assert all("not proved" in d for d in details.values())


def test_path_equalities_name_the_right_symbols_after_a_bool_operand():
    """A Bool operand has a Z3 constant and no SymPy symbol; the equalities of a path
    must still read every other Z3 constant as its own SymPy symbol."""
    from thm3.ir import Type
    from thm3.prove.equal import _path_equalities
    from thm3.semantics.symbolic import Explorer, Symbols

    syms = Symbols()
    syms.real("a.flag", Type.BOOL)
    x = syms.real("a.x", Type.REAL)
    y = syms.real("a.y", Type.REAL)
    ex = Explorer([], later())
    ex.path = [x.z3 == 2 * y.z3]
    (eq,) = _path_equalities(ex, syms)
    assert eq == x.sp - 2 * y.sp


def test_rational_identities_are_decided_exactly():
    import sympy as sp
    from thm3.prove.rational import rational_is_zero
    x, y, n, m = sp.symbols("x y n m")
    assert rational_is_zero(x / y * y - x) is True
    assert rational_is_zero(1 / (x - y) + 1 / (y - x)) is True
    assert rational_is_zero((x + 1) ** 2 - x ** 2 - 2 * x - 1) is True
    assert rational_is_zero(x / (2 * y) - x / y / 2) is True
    assert rational_is_zero(x - y) is False
    assert rational_is_zero(1 / (x + y) - 1 / x - 1 / y) is False
    assert rational_is_zero(sp.exp(x) - 1) is None          # not a rational function
    # the mean's update composed: (n*a + m*b)/(n + m) against the pairwise form
    a, b = sp.symbols("a b")
    assert rational_is_zero((n * a + m * b) / (n + m) - (a + (b - a) * m / (n + m))) is True


def test_moment_associativity_splits_on_the_empty_operand():
    # Pébay's M3/M4 combine is an identity of rational functions only where every count is
    # nonzero; with n == 0 the invariants give mean == m2 == m3 == m4 == 0
    import time
    import thm3
    from thm3.analysis.invariants import infer
    from thm3.prove.laws import Setting, emptiness_group, prove_associativity
    from thm3.semantics.samples import make_triples
    from thm3.synth import transport
    loop = thm3.parse_file(Path(__file__).resolve().parents[1] / "bench" / "corpus" / "moments_kurtosis.py")
    inv, _ = infer(loop, make_triples(loop), time.monotonic() + 20)
    setting = Setting(loop, inv)
    assert emptiness_group(setting)[:2] == ("n", 0)
    fn, _ = transport.synthesize(loop, time.monotonic() + 60)
    assert prove_associativity(setting, fn, time.monotonic() + 60).proved
