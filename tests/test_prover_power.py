"""Prover power for bigger states (issue 21, items 2 and 4): the step law, the order-only
embedding of the infinities, range invariants from interval reasoning, Int against
Real, and the growth families: lists of one state that a lift must tell apart, more at every length.

Each law below was only "tested" before these methods (the k smallest's associativity
ran out of time, a clamp's identity needed its range): the tests prove them now."""
from __future__ import annotations

import time

import pytest

import thm3
from corpus import by_name
from thm3.analysis.intervals import field_ranges, range_candidates
from thm3.analysis.invariants import infer
from thm3.analysis.witness import Witness, check_witness
from thm3.ir import Fn, Op, Type, substitute, var
from thm3.ir.printer import to_text
from thm3.lift.growth import check_growth, growth_family
from thm3.lift.search import lift
from thm3.prove import laws
from thm3.prove.combine import STEP_LAW, prove_combine
from thm3.semantics.samples import make_triples
from thm3.status import Status


def loop_of(name: str):
    return thm3.parse_file(by_name(name).path)


def fold_combine(loop, order) -> Fn:
    """combine(a, b) = left(... left(a, b.<order[0]>) ..., b.<order[-1]>): b's fields fed
    to `left` as elements, in `order` (the k smallest: b's values, smallest first)."""
    state = {f"acc.{f.name}": var(f"a.{f.name}", f.type) for f in loop.fields}
    (x,) = [d.name for d in loop.elements]
    types = {f.name: f.type for f in loop.fields}
    for name in order:
        env = dict(state) | {x: var(f"b.{name}", types[name])}
        state = {f"acc.{f.name}": e for f, e in zip(loop.fields, substitute(loop.left.outputs, env))}
    inputs = tuple((f"{p}.{f.name}", f.type) for p in "ab" for f in loop.fields)
    return Fn(inputs, tuple(state[f"acc.{f.name}"] for f in loop.fields))


def proved_laws(loop, combine, budget: float = 60.0):
    triples = list(make_triples(loop))
    deadline = time.monotonic() + budget
    inv, timed_out = infer(loop, triples, deadline)
    assert not timed_out
    t0 = time.monotonic()
    statuses, details, _ = prove_combine(loop, laws.Setting(loop, inv), combine, triples, deadline)
    return statuses, details, inv, time.monotonic() - t0


# --- the step law and the order-only embedding ----------------------------------------------

@pytest.mark.parametrize("name, order", [("four_smallest", "abcd"), ("three_smallest_distinct", "abc"), pytest.param(
    "four_largest_distinct", "abcd", marks=pytest.mark.slow)])
def test_k_smallest_laws_proved(name, order):
    """Before: associativity and the homomorphism law stayed "tested" (four smallest: the
    three-state law ran out of time; the distinct ones: no invariant said the slots are
    strictly ordered once filled, so even the identity was only tested)."""
    loop = loop_of(name)
    statuses, details, inv, seconds = proved_laws(loop, fold_combine(loop, order))
    assert statuses == dict.fromkeys(("identity", "associativity", "homomorphism"), Status.PROVED), details
    assert seconds < 20.0, seconds
    if name != "four_smallest":
        assert any(to_text(i).startswith("not acc.c == ") or " or acc." in to_text(i) for i in inv), inv


def test_four_smallest_step_law():
    """The combine as the weak-right-inverse route writes it (b's largest value inserted
    first): the step law over two states and an element proves it in seconds, where the
    three-state law did not end in two minutes before the order-only embedding."""
    loop = loop_of("four_smallest")
    combine = fold_combine(loop, "dcba")
    triples = list(make_triples(loop))
    inv, _ = infer(loop, triples, time.monotonic() + 30)
    t0 = time.monotonic()
    out = laws.prove_step_law(laws.Setting(loop, inv), combine, time.monotonic() + 30)
    assert out.proved and time.monotonic() - t0 < 15.0, out
    statuses, details, _, _ = proved_laws(loop, combine)
    assert statuses == dict.fromkeys(("identity", "associativity", "homomorphism"), Status.PROVED), details
    if details["associativity"].startswith(STEP_LAW):
        assert "step law" in details["homomorphism"]


def test_step_law_refutes_a_wrong_combine():
    """A combine with the right identity but no step law (a + 2 b for a sum) is not proved."""
    loop = thm3.parse_source(
        "from typing import NamedTuple\nfrom thm3.lang import Real\n\n\nclass State(NamedTuple):\n"
        "    s: Real = 0\n\n\ndef left(acc: State, x: Real) -> State:\n    return State(acc.s + x)\n")
    a, b = var("a.s", Type.REAL), var("b.s", Type.REAL)
    from thm3.ir import Expr, const
    wrong = Fn((("a.s", Type.REAL), ("b.s", Type.REAL)),
               (Expr(Op.ADD, Type.REAL, (a, Expr(Op.MUL, Type.REAL, (const(2.0), b)))),))
    out = laws.prove_step_law(laws.Setting(loop, []), wrong, time.monotonic() + 10)
    assert not out.proved
    statuses, _, _, _ = proved_laws(loop, wrong)
    assert statuses["associativity"] != Status.PROVED and statuses["identity"] != Status.PROVED


def test_order_only_needs_no_split_on_infinities():
    """The k smallest only compare and select values that may be +inf: one case, not one
    per pattern of infinite fields; a law with arithmetic on such a value is split."""
    loop = loop_of("four_smallest")
    setting = laws.Setting(loop, [])
    opts = setting.inf_options()
    assert any(len(o) > 1 for o in opts.values())
    assert laws.order_only(opts, loop.left.outputs)
    lse = thm3.parse_file(by_name("logsumexp_max").path)
    assert not laws.order_only(laws.Setting(lse, []).inf_options(), lse.left.outputs)
    law = laws.Law(setting, ["a", "b"], ["x"], time.monotonic() + 10, loop.left.outputs)
    assert law.mode.ordered and len(list(law._cases(law.mode))) == 1


def test_order_only_embedding_still_refutes():
    """The end symbols do not make a false law true: for the four smallest, keeping the
    left operand's fields (a wrong combine) fails the identity on the case b = init."""
    loop = loop_of("four_smallest")
    keep_a = Fn(tuple((f"{p}.{f.name}", f.type) for p in "ab" for f in loop.fields),
                tuple(var(f"a.{f.name}", f.type) for f in loop.fields))
    out = laws.prove_identity(laws.Setting(loop, []), keep_a, time.monotonic() + 10)
    assert not out.proved


# --- range invariants from interval reasoning ------------------------------------------------

@pytest.mark.parametrize("name, facts", [("clamp_accumulate", ["acc.s >= 0.0", "acc.s <= cap - 1.0"]),
                                         ("clamp_floor_drain", ["acc.s >= lo + 1.0", "acc.s <= 0.0"]),
                                         ("capped_steps_int", ["acc.n >= 0", "acc.n <= cap + 2"])])
def test_interval_ranges(name, facts):
    got = [to_text(a) for a in range_candidates(loop_of(name))]
    assert got == facts


def test_interval_widening_stops_a_growing_end():
    """A sum of nonnegative amounts: the upper end moves every step and is dropped."""
    loop = thm3.parse_source(
        "from typing import NamedTuple\nfrom thm3.lang import Real\n\n\nclass State(NamedTuple):\n"
        "    s: Real = 0\n\n\ndef left(acc: State, x: Real) -> State:\n    assert x >= 1\n"
        "    return State(acc.s + x)\n")
    r = field_ranges(loop)["s"]
    assert not r.hi and len(r.lo) == 1


@pytest.mark.parametrize("name", ["clamp_accumulate", "clamp_floor_drain", "capped_steps_int"])
def test_clamp_identity_proved_with_its_range(name):
    """Before: identity "tested" (min(0 + s, cap - 1) == s needs s <= cap - 1)."""
    a = thm3.analyze(by_name(name).path, timeout=30, lift=False)
    assert a.verdict == "homomorphism", a.reason
    assert all(a.proofs[k] == "proved" for k in ("identity", "associativity", "homomorphism"))


# --- Int against Real -------------------------------------------------------------------------

@pytest.mark.parametrize("stem", ["near_max_count", "half_parity"])
def test_int_against_real(stem):
    """The same text: a proved homomorphism over Int (x > m - 1 is x >= m; (2 n) % 2 is 0),
    and over Real a witness with a value between integers, confirmed by folding."""
    over_int = thm3.analyze(by_name(f"{stem}_int").path, timeout=30, lift=False)
    assert over_int.verdict == "homomorphism", over_int.reason
    assert all(over_int.proofs[k] == "proved" for k in ("identity", "associativity", "homomorphism"))
    over_real = thm3.analyze(by_name(f"{stem}_real").path, timeout=30, lift=False)
    assert over_real.verdict == "not-homomorphism", over_real.reason
    xs1, xs2, ys, side = over_real.witness
    loop = loop_of(f"{stem}_real")
    assert check_witness(loop, Witness(xs1, xs2, ys, side))
    assert any(float(v) != int(float(v)) for v in xs1 + xs2 + ys), over_real.witness
    # one text: the State and the step differ only in the type annotation
    def body(name):
        text = by_name(name).path.read_text()
        return text[text.index("class State"):].replace("Int", "T").replace("Real", "T")
    assert body(f"{stem}_int") == body(f"{stem}_real")


# --- honest limits: the state grows with the list (a lower bound, never a claim of no lift) -------

@pytest.mark.parametrize("name", ["records_count", "below_first", "next_fit"])
def test_growth_family(name):
    """A family of lists of one state with pairwise different futures, growing with the
    length; every pair a witness confirmed by exact folding."""
    loop = loop_of(name)
    g = growth_family(loop)
    assert g is not None and g.grows, g
    assert check_growth(loop, g)
    assert len(g.family) >= 5 and g.counts[-1] >= 4 * g.counts[1], g.counts


def test_growth_family_majority():
    """samples/majority.py has no lift (tests/test_lift.py NO_LIFT): the family says why."""
    from catalog import SAMPLES
    s = next(s for s in SAMPLES if s.name == "majority")
    loop = thm3.parse_file(s.path)
    g = growth_family(loop)
    assert g is not None and g.grows and check_growth(loop, g)


def test_no_growth_where_a_finite_lift_exists():
    """Blocks of ones lift by a flag (first element is a one): the family stays at 2."""
    loop = loop_of("parsynt_count_blocks")
    g = growth_family(loop)
    assert g is None or not g.grows


def test_lift_says_the_state_grows_and_claims_no_more():
    loop = loop_of("records_count")
    res = lift(loop, timeout=10.0)
    assert res.loop is None
    assert res.reason.startswith("no lift found, and the state grows: "), res.reason
    assert "needs " in res.reason and "is unlikely, though lengths past" in res.reason, res.reason
    assert "no finite-state lift" not in res.reason and "no bounded lift" not in res.reason, res.reason
    assert "checked by folding" in res.reason and "records_count" not in res.reason
