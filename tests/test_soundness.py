"""Issue 15's findings, one test each: never a "homomorphism" no solver stands behind,
witnesses that hold in the semantics of the proofs, no internal errors, no false
"bounded", no false pass.  Each loop is the smallest one that showed the defect."""
from __future__ import annotations

import math

import pytest

import thm3
from thm3.cli.main import _difference

HEAD = "from typing import NamedTuple\nfrom thm3.lang import Bool, Index, Int, Real, inf\n\n"


def analyze(body: str, **kw):
    kw.setdefault("lift", False)
    kw.setdefault("timeout", 30.0)
    return thm3.analyze_source(HEAD + body, **kw)


# -- internal errors ------------------------------------------------------------------

@pytest.mark.parametrize("step", ["max(acc.a * 2, x)", "max((acc.a + x) / 2, x)",
                                  "max(acc.a / temperature, x)"])
def test_infinite_default_times_constant_is_no_internal_error(step):
    """-inf * 2 asked `_sign` of a SymPy number, whose comparison gives sympy.true."""
    a = analyze(f"""temperature: Real

class State(NamedTuple):
    a: Real = -inf

def left(acc: State, x: Real) -> State:
    return State({step})
""")
    assert a.verdict in ("homomorphism", "not-homomorphism", "unknown")
    if a.verdict == "not-homomorphism":
        assert a.witness is not None


# -- bounded Bird ----------------------------------------------------------------------

def test_bounded_bird_gives_index_the_list_position():
    """argmax whose right fold uses `>` keeps the later index on a tie: [0, 0] tells."""
    a = analyze("""class State(NamedTuple):
    best: Real = -inf
    idx: Int = -1

def left(acc: State, x: Real, i: Index) -> State:
    if x > acc.best:
        return State(x, i)
    return acc

def right(x: Real, i: Index, acc: State) -> State:
    if x > acc.best:
        return State(x, i)
    return acc
""")
    assert a.proofs["bird"] == "failed", a.bird_detail
    assert "[[0, 0], [0, 1]]" in a.bird_detail.replace(".0", "")


# -- the CLI's comparison ----------------------------------------------------------------

def test_run_difference_counts_nan_against_inf():
    assert _difference(math.nan, math.inf) == math.inf
    assert _difference((1.0, math.nan), (1.0, 2.0)) == math.inf
    assert _difference(math.nan, math.nan) == 0.0
    assert _difference(math.inf, math.inf) == 0.0


# -- samples and witnesses reach the values where the loop switches ------------------------

def test_critical_values_are_the_roots_of_the_loops_comparisons():
    from thm3.semantics.critical import counter_length, element_values
    loop = thm3.parse_source(HEAD + """class State(NamedTuple):
    v: Real = 0

def left(acc: State, x: Real) -> State:
    return State(x + 3)
""")
    assert -3.0 in element_values(loop)["x"]           # left(init, -3) == init
    loop = thm3.parse_source(HEAD + """class State(NamedTuple):
    n: Int = 0
    reached: Bool = False

def left(acc: State, x: Real) -> State:
    return State(acc.n + 1, acc.n + 1 >= 9)
""")
    assert counter_length(loop) >= 9


def test_identity_returning_element_gives_a_witness():
    """x + 3 returns the initial state at x = -3: h([]) == h([-3]), h([1]) != h([1, -3])."""
    a = analyze("""class State(NamedTuple):
    v: Real = 0

def left(acc: State, x: Real) -> State:
    return State(x + 3)
""")
    assert a.verdict == "not-homomorphism", (a.reason, a.proofs)
    assert -3.0 in a.witness[0] + a.witness[1]


@pytest.mark.parametrize("guard", ["not acc.has and x == 7", "x >= 10"])
def test_flag_set_by_a_constant_is_kept_by_the_combine(guard):
    """The sampler drew no 7 (no 10), so a combine dropping the flag passed every sample."""
    a = analyze(f"""class State(NamedTuple):
    has: Bool = False
    v: Real = 0
    n: Int = 0

def left(acc: State, x: Real) -> State:
    if {guard}:
        return State(True, x, acc.n + 1)
    return acc
""")
    assert a.verdict == "homomorphism", (a.reason, a.proofs)
    assert all(s == "proved" for k, s in a.proofs.items() if s != "skipped" and k != "commutativity"), a.proofs
    combine = a.to_json()["combine"]
    assert "a." in combine["has"] and "b." in combine["has"], combine


def test_parameter_on_both_sides_of_zero():
    """max(m, min(x, beta)): `a.m + b.m` is right only where beta <= 0."""
    a = analyze("""beta: Real

class State(NamedTuple):
    m: Real = 0

def left(acc: State, x: Real, b: Bool) -> State:
    return State(max(acc.m, min(x, beta)))
""")
    assert a.verdict == "homomorphism" and a.proofs["homomorphism"] == "proved"
    assert "max" in a.to_json()["combine"]["m"]


def test_run_inside_an_open_interval_has_a_witness():
    """The longest run of 0 < x < 1 needs a value inside (0, 1) in the witness search."""
    a = analyze("""class State(NamedTuple):
    cur: Int = 0
    best: Int = 0

def left(acc: State, x: Real) -> State:
    if 0 < x and x < 1:
        return State(acc.cur + 1, max(acc.best, acc.cur + 1))
    return State(0, acc.best)
""")
    assert a.verdict == "not-homomorphism", a.reason
    assert any(0 < v < 1 for v in a.witness[2] + a.witness[0] + a.witness[1])


def test_compared_constant_is_not_cut_from_the_witness_domain():
    """Three element parameters leave three values a column; 2 (from x >= 2) must stay."""
    a = analyze("""class State(NamedTuple):
    inside: Bool = False
    count: Int = 0

def left(acc: State, x: Real, w: Real, i: Index) -> State:
    if x >= 2:
        return State(True, acc.count + (0 if acc.inside else 1))
    return State(False, acc.count)
""")
    assert a.verdict == "not-homomorphism", a.reason


# -- a verdict no solver stands behind --------------------------------------------------------

LENGTH_REACHED = """class State(NamedTuple):
    n: Int = 0
    reached: Bool = False

def left(acc: State, x: Real) -> State:
    return State(acc.n + 1, acc.n + 1 >= 9)
"""


def test_verdict_of_tested_law_is_unknown_unless_accepted():
    from thm3.prove.combine import verdict_of
    statuses = {"identity": "proved", "associativity": "tested", "homomorphism": "proved"}
    details = {k: "" for k in statuses}
    judged = verdict_of(statuses, details, False)
    assert judged.verdict == "unknown" and judged.keeps_combine and "--accept-tested" in judged.reason
    assert verdict_of(statuses, details, False, accept_tested=True).verdict == "homomorphism"
    assert verdict_of(dict.fromkeys(statuses, "proved"), details, False).verdict == "homomorphism"
    failed = statuses | {"identity": "failed"}
    assert not verdict_of(failed, details, False, accept_tested=True).keeps_combine


def test_counter_reaching_a_constant_needs_long_lists():
    """A flag "the length reached 9": the samples reach it, so the combine keeps it."""
    a = analyze(LENGTH_REACHED)
    combine = a.to_json()["combine"]
    assert "9" in combine["reached"], combine
    if a.verdict == "homomorphism":
        assert all(a.proofs[k] == "proved" for k in ("identity", "associativity", "homomorphism"))
    else:
        assert a.verdict == "unknown" and "tested" in a.reason
        b = analyze(LENGTH_REACHED, accept_tested=True)
        assert b.verdict == "homomorphism" and b.combine is not None
        s = b.combine((3, False), (7, True))
        assert s.n == 10 and s.reached


def _wrong_combine(loop, outputs):
    from thm3.ir import Fn, var
    inputs = tuple((f"{side}.{f.name}", f.type) for side in "ab" for f in loop.fields)
    env = {name: var(name, t) for name, t in inputs}
    return Fn(inputs, tuple(env[o] for o in outputs))


def test_refutation_reaches_the_identity_returning_element():
    """`v = b.v` for State(x + 3) holds on every list without -3: the refutation lists
    come from the critical values and fold to the violation h([1, -3]) != h([1]) ⊙ h([-3])."""
    from thm3.prove.combine import refutation_triples, violation_on_samples
    loop = thm3.parse_source(HEAD + """class State(NamedTuple):
    v: Real = 0

def left(acc: State, x: Real) -> State:
    return State(x + 3)
""")
    combine = _wrong_combine(loop, ["b.v"])
    assert violation_on_samples("identity", loop, combine, refutation_triples(loop, [{}], {}))


def test_refutation_uses_the_counter_models_constants():
    """The flag set by x == 7 only: the unproved identity comes with Z3's counter-model
    (a state the wrong combine breaks), and lists over its constants and 7 realise one."""
    from thm3.prove import laws
    from thm3.prove.combine import refutation_triples, violation_on_samples
    loop = thm3.parse_source(HEAD + """class State(NamedTuple):
    has: Bool = False
    v: Real = 0

def left(acc: State, x: Real) -> State:
    if not acc.has and x == 7:
        return State(True, x)
    return acc
""")
    combine = _wrong_combine(loop, ["b.has", "b.v"])
    out = laws.prove_identity(laws.Setting(loop, []), combine, deadline=float("inf"))
    assert not out.proved and {"a.has", "a.v"} <= set(out.model)
    assert violation_on_samples("identity", loop, combine, refutation_triples(loop, [{}], out.model))


# -- witnesses hold in the reals of the proofs ---------------------------------------------------

NEG_INV = """class State(NamedTuple):
    v: Real = -inf

def left(acc: State, x: Real) -> State:
{guard}    return State(-1 / x)
"""


def test_witness_never_divides_by_zero():
    """h([]) == h([0]) holds only in IEEE arithmetic (-1/0 = -inf); in the reals a list
    that divides by zero has no state.  Without `assert x != 0` thm3 suggests it: the
    combine (proved over the reals, where -1/0 has no value) is a homomorphism on the
    lists that do not divide by zero, and the stability note says so."""
    a = analyze(NEG_INV.format(guard=""))
    assert a.verdict != "not-homomorphism", a.witness
    assert "assert x != 0" in (a.reason if a.verdict == "unknown" else a.stability_notes["division"])
    b = analyze(NEG_INV.format(guard="    assert x != 0\n"))
    assert b.verdict == "homomorphism", b.reason
    assert all(b.proofs[k] == "proved" for k in ("identity", "associativity", "homomorphism"))


def test_result_dividing_by_zero_on_the_empty_list_is_a_note():
    """The mean of the empty list divides by 0 in `result`: stability's "division" is
    about the combine and the left step, so this is a note, not "failed"."""
    a = analyze("""class State(NamedTuple):
    s: Real = 0
    n: Int = 0

def left(acc: State, x: Real) -> State:
    return State(acc.s + x, acc.n + 1)

def result(acc: State) -> Real:
    return acc.s / acc.n
""")
    assert a.verdict == "homomorphism"
    assert a.stability["division"] == "skipped", a.stability_notes
    assert a.stability_notes["result_division"].startswith("failed")


# -- proof power -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["kahan_sum", "capped_count", "length_reached"])
def test_corpus_loops_proved_by_new_invariants(name):
    """Kahan's c == 0 over the reals, n <= cap, reached == (n >= 9)."""
    from corpus import CORPUS_DIR
    a = thm3.analyze(CORPUS_DIR / f"{name}.py", lift=False, timeout=30.0)
    assert a.verdict == "homomorphism", a.reason
    assert all(a.proofs[k] == "proved" for k in ("identity", "associativity", "homomorphism")), a.law_details


# -- a substitution is a proof only where it is valid --------------------------------------------

_PQ = """class State(NamedTuple):
    p: Real = 1
    q: Real = 0

"""


def _combine_of(p_text: str, q_text: str):
    """A combine over (p, q) from text over ap, aq, bp, bq (a.p, a.q, b.p, b.q)."""
    from thm3.ir import Fn, Type, substitute, var
    c = thm3.parse_source(HEAD + "from thm3.lang import where\n\n" + _PQ.replace("p: Real = 1\n    q: Real = 0", "ap: Real = 1\n    aq: Real = 0")
                          + f"def left(acc: State, bp: Real, bq: Real) -> State:\n"
                            f"    ap, aq = acc.ap, acc.aq\n    return State({p_text}, {q_text})\n")
    names = {"acc.ap": "a.p", "acc.aq": "a.q", "bp": "b.p", "bq": "b.q"}
    outs = substitute(list(c.left.outputs), {k: var(v, Type.REAL) for k, v in names.items()})
    return Fn(tuple((f"{s}.{f}", Type.REAL) for s in "ab" for f in "pq"), tuple(outs))


def test_no_law_proved_by_a_substitution_that_divides_by_zero():
    """On the path s.p * x == x, sp.solve gives s.p = 1, dropping the case x == 0 where
    s.p is free.  The wrong combine below agrees with `left` only where s.p == 1: for
    s = (2, .) and x = 0 it gives p = 1, left gives 0.  Its homomorphism law was
    "proved" through that substitution; the split (k != 0: substitute; k == 0: Z3) must
    leave it unproved, while the true combine stays proved."""
    from thm3.prove import laws
    loop = thm3.parse_source(HEAD + _PQ + "def left(acc: State, x: Real) -> State:\n"
                                          "    return State(acc.p * x, acc.q + x)\n")
    setting = laws.Setting(loop, [])
    wrong = _combine_of("where(ap * bq == bq, ap * bp + ap - 1, ap * bp)", "aq + bq")
    assert not laws.prove_homomorphism(setting, wrong, deadline=float("inf")).proved
    right = _combine_of("ap * bp", "aq + bq")
    assert laws.prove_homomorphism(setting, right, deadline=float("inf")).proved


def test_path_substitutions_are_exact():
    """sympy_zero substitutes s = -rest / k only where k != 0 is settled; a path equality
    that divides by zero after a substitution is no contradiction."""
    import sympy as sp
    from thm3.prove import equal, laws
    s, t, u, x = sp.symbols("s t u x", real=True)
    assert laws.sympy_zero(s - 1, [2 * s - 2], tried=True)                 # k = 2: exact
    assert not laws.sympy_zero(s - 1, [s * x - x], tried=True)             # k = x may be 0
    assert laws.sympy_zero(s - 1, [s * x - x], tried=True, case_k_zero=lambda k: True)
    assert not laws.sympy_zero(s - 1, [s ** 3 - 1 + (s - 1) * x ** 2], tried=True)  # not linear in s
    assert equal._on_path((u,), [s - t, u - 1 / (s - t)]) is not None       # zoo: no contradiction
