"""The fuzzer (issue 15, item 5): random valid loop files judged by a brute-force oracle.

The oracle (tests/fuzz/oracle.py) is tested first on its own: it must find the
counterexample of every family member that is known not to be a homomorphism, and none
for the known homomorphisms.  Then thm3 is judged: no exception but `LoopError`, no wrong
verdict, every witness folded, every combine checked on random splits.  The quick tier
is a fixed list of cases, with those thm3 gets wrong today marked xfail(strict=True) and
the finding named; the slow tier draws loops with hypothesis (derandomized)."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, given, settings

import thm3
from fuzz.generate import (FAMILIES, affine_map, counter_with_constant, first_or_last_with_flag,
                           forgetful, from_seed, infinite_default_scaled, loops, prefix_suffix_max,
                           reciprocal, scripted)
from fuzz.oracle import counterexample, judge

TIMEOUT = 8.0

# Issue 15's findings, as members of the families that contain them.
FINDINGS = {
    "x_plus_3": forgetful(scripted(1, 3, "0")),
    "first_equal_7": first_or_last_with_flag(scripted("==", 7, True)),
    "flag_x_ge_10": first_or_last_with_flag(scripted(">=", 10, True)),
    "length_reached_9": counter_with_constant(scripted(9, "reached")),
    "minus_one_over_x": reciprocal(scripted(-1, "last", "-inf")),
    "inf_default_halved": infinite_default_scaled(scripted("-inf", "min(acc.a, x) / 2 + x")),
}
QUICK_SEEDS = list(range(6))

# The quick-tier cases thm3 answers wrongly today, with the finding (issue 15).
KNOWN_WRONG: dict[str, str] = {
    # x_plus_3, first_equal_7, flag_x_ge_10, length_reached_9: fixed (issue 15, soundness:
    # critical values in the samples and the witness search, refutation of unproved laws);
    # minus_one_over_x (witnesses in the real semantics) and inf_default_halved (symbolic _sign): fixed
}


def _case(name: str):
    return FINDINGS[name] if name in FINDINGS else from_seed(int(name.removeprefix("seed")))


QUICK = list(FINDINGS) + [f"seed{s}" for s in QUICK_SEEDS]


# --- the oracle by itself -------------------------------------------------------------------

ORACLE_CASES = {
    "mts alone": (prefix_suffix_max(scripted("suffix_alone")), True),
    "v * 2 + x": (affine_map(scripted(2, False)), True),
    "x + 3": (FINDINGS["x_plus_3"], True),
    "2 x - 3, init 1": (forgetful(scripted(2, -3, "1")), True),
    "mts with total": (prefix_suffix_max(scripted("suffix")), False),
    "v * 2 + x lifted": (affine_map(scripted(2, True)), False),
    "first 7": (FINDINGS["first_equal_7"], False),
}


@pytest.mark.parametrize("name", list(ORACLE_CASES))
def test_oracle_agrees_with_the_family(name):
    case, expect = ORACLE_CASES[name]
    found = counterexample(thm3.parse_source(case.source))
    assert (found is not None) == expect, found
    assert case.truth == ("not-homomorphism" if expect else "homomorphism")


def test_every_family_generates_valid_loops():
    seen = set()
    for seed in range(150):
        case = from_seed(seed)
        thm3.parse_source(case.source)
        seen.add(case.family)
    assert {f.__name__ for f in FAMILIES} <= seen


# --- thm3 judged ------------------------------------------------------------------------

def _quick_param(name: str):
    if name in KNOWN_WRONG:
        return pytest.param(name, id=name, marks=pytest.mark.xfail(strict=True, reason=KNOWN_WRONG[name]))
    return pytest.param(name, id=name)


@pytest.mark.parametrize("name", [_quick_param(n) for n in QUICK])
def test_quick_fuzz_case(name):
    case = _case(name)
    j = judge(case, timeout=TIMEOUT)
    assert j.outcome not in ("crash", "wrong"), f"{j.verdict}: {j.detail}\n{case.source}"


@pytest.mark.slow
# Was xfail(strict=True) while issue 15's classes stood (first draw failing: the BooleanAtom
# TypeError, then the IEEE-only witness for 2 / x); passes since the soundness merges.
@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          phases=[Phase.explicit, Phase.generate],     # no shrinking: each example costs seconds
          suppress_health_check=list(HealthCheck))
@given(loops())
def test_fuzz_hypothesis(case):
    j = judge(case, timeout=TIMEOUT)
    assert j.outcome not in ("crash", "wrong"), f"{j.verdict}: {j.detail}\n{case.source}"


# --- answers that exist are found -------------------------------------------------------------

@pytest.mark.parametrize("c, default", [(1, "inf"), (-1, "-inf"), (2, "inf")])
def test_reciprocal_last_with_colliding_default_is_solved(c, default):
    """v = c / x from v = ±inf, where IEEE's c / 0 equals the default: the synthesis
    samples folded in IEEE arithmetic made h([1, 0]) = inf, which no combine over the
    reals matches (the pass-through `a.v if b.v == inf else b.v` gives 1), so the family
    was "unknown" in 29 of 99 fuzz loops.  Folded with the proofs' division (x / 0 has no
    value) the combine is found and proved; the oracle skips splits with no state."""
    case = reciprocal(scripted(c, "last", default))
    j = judge(case, timeout=TIMEOUT)
    assert j.verdict == "homomorphism" and j.outcome == "ok", j.detail


@pytest.mark.parametrize("seed", [600456, 601951, 603568])
def test_transport_with_every_row_past_float64_does_not_crash(seed):
    """Fuzz seeds (2026-12-02, on the final tree) where every sampled row of the
    reciprocal transport's fit overflowed float64: the fit had no rows and NumPy raised
    on the empty maximum; now the route declines."""
    from fuzz.generate import from_seed
    from fuzz.oracle import judge
    j = judge(from_seed(seed, ()), timeout=10, seed=seed)
    assert j.outcome not in ("crash", "wrong", "overrun"), j.detail


def test_an_irrational_witness_is_folded_by_value():
    """Fuzz seed 802033 (2026-12-02): thm3's witness [-1/2 + sqrt(5)/2, 3] is right (x*x + x
    is 1 there, so `w == 1` holds), but the oracle compared SymPy numbers by spelling and
    judged the verdict wrong; its exact table now compares them by value."""
    import sympy
    from fuzz.fold import STRICT
    from fuzz.generate import from_seed
    from fuzz.oracle import judge
    from thm3.ir import Op
    phi = sympy.sqrt(5) / 2 - sympy.Rational(1, 2)
    assert STRICT[Op.EQ](phi * phi + phi, 1) is True and STRICT[Op.NE](phi * phi + phi, 1) is False
    j = judge(from_seed(802033, ()), timeout=10, seed=802033)
    assert j.verdict == "not-homomorphism" and j.outcome == "ok", j.detail
