"""Proofs of the three laws for a candidate combine, the law tests on samples when no
proof is reached, and how `prove_combine` reports them."""
from __future__ import annotations

import time

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
    assert statuses["identity"] == "proved"


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
    import z3
    from thm3.ir import Type
    from thm3.prove.laws import _path_equalities
    from thm3.semantics.symbolic import Explorer, Symbols

    syms = Symbols()
    syms.real("a.flag", Type.BOOL)
    x = syms.real("a.x", Type.REAL)
    y = syms.real("a.y", Type.REAL)
    ex = Explorer([], later())
    ex.path = [x.z3 == 2 * y.z3]
    (eq,) = _path_equalities(ex, syms)
    assert eq == x.sp - 2 * y.sp
