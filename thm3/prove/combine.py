"""The laws of a candidate combine: identity, associativity and the homomorphism law,
each proved by `thm3.prove.laws`, or where no proof is reached, refuted on concrete
lists: the sampled reachable states, then lists over the values where the loop's
comparisons switch and the constants of Z3's counter-model ("failed" with the lists
that fold to a violation), else "tested".  `verdict_of` turns the statuses into the
verdict: a law only "tested" is no homomorphism unless the caller accepts it."""
from __future__ import annotations

import itertools
import time
from typing import NamedTuple

import numpy as np

from thm3.ir import Fn, Loop, Type
from thm3.prove import laws as prove
from thm3.semantics import critical
from thm3.semantics.equality import LAW, rows_close
from thm3.semantics.evaluate import NUMPY_REALS
from thm3.semantics.samples import (Domain, Triples, batch_combine, batch_fold, batch_init, plain,
                                    stack_elements)
from thm3.status import Status, Verdict

LAWS = ("identity", "associativity", "homomorphism")


def prove_combine(loop, setting, combine, triples, deadline, cases: bool = True):
    """The laws' statuses and details, and whether a proof ran out of time.  Where a law
    is only "tested" and none failed, a state of independent groups of fields has the laws
    proved group by group (`thm3.synth.product`), and a loop with parameters by cases on
    one (`thm3.prove.cases`; `cases=False` inside a case)."""
    statuses, details = {}, {}
    timed_out = False
    steps = None            # the step law's outcome, where associativity was proved by it
    own = _own_list(loop, setting, combine, deadline)
    if own is None:
        own = _composed(loop, setting, combine, deadline)
    if own is None and (early := _refuted_on_lists(loop, combine, triples)):
        law, bad = early
        statuses = {k: Status.FAILED if k == law else Status.SKIPPED for k in LAWS}
        details = {k: bad if k == law else "not tried: the candidate failed a law on folded lists" for k in LAWS}
        return statuses, details, False
    for law, fn in (("identity", prove.prove_identity), ("associativity", prove.prove_associativity),
                    ("homomorphism", prove.prove_homomorphism)):
        if own is not None:
            # the state is its own list ((C) and (G)), or the combine composes the step's
            # maps over a semiring ((I) and (L)): all three laws on reachable states
            statuses[law] = Status.PROVED
            details[law] = f"{own.detail}: {own.paths} path(s), {own.seconds:.2f} s"
            continue
        if law == "homomorphism" and steps is not None:
            # the step law with b = init and the right identity: combine(s, left(init, x))
            # == left(combine(s, init), x) == left(s, x)
            statuses[law] = Status.PROVED
            details[law] = "from the step law with b = init and the right identity"
            continue
        if law == "associativity" and steps is not None:
            statuses[law] = Status.PROVED
            details[law] = STEP_LAW
            continue
        if law == "associativity" and statuses["identity"] == Status.PROVED:
            out, steps = _associativity(loop, setting, combine, triples, deadline)
        else:
            out = fn(setting, combine, deadline)
        if law == "identity" and not out.proved and time.monotonic() < deadline \
                and not violation_on_samples(law, loop, combine, triples):
            by_steps = _identity_by_steps(setting, combine, deadline)
            if by_steps is not None:
                out, steps = by_steps, by_steps
        if out.proved:
            statuses[law] = Status.PROVED
            details[law] = (f"{out.detail}: " if out.detail else "") + f"{out.paths} path(s), {out.seconds:.2f} s"
            continue
        timed_out |= out.status == Status.TIMEOUT
        bad = violation_on_samples(law, loop, combine, triples) or violation_on_samples(
            law, loop, combine, refutation_triples(loop, [t.params for t in triples], out.model))
        statuses[law] = Status.FAILED if bad else Status.TESTED
        details[law] = bad or f"not proved ({out.detail}); holds on {sum(t.a[0].shape[0] for t in triples)} random cases"
    if Status.FAILED not in statuses.values() and any(v == Status.TESTED for v in statuses.values()):
        from thm3.prove.cases import by_parameter_cases
        from thm3.synth.product import by_components
        got = by_components(loop, combine, deadline) if time.monotonic() < deadline else None
        if got is None and cases and loop.params and time.monotonic() < deadline:
            got = by_parameter_cases(loop, combine, deadline)
        if got is not None:
            return got[0], got[1], False
    return statuses, details, timed_out


def _refuted_on_lists(loop, combine, triples):
    """(law, violation) where a law fails on the sampled reachable states or on the short
    lists over the loop's switching values (`refutation_triples`, without a model): a
    wrong candidate costs milliseconds there, where the prover spends seconds on each of
    its paths before the same lists refute it.  None where every law holds on them."""
    lists = refutation_triples(loop, [t.params for t in triples], {})
    for law in LAWS:
        bad = violation_on_samples(law, loop, combine, triples) or violation_on_samples(law, loop, combine, lists)
        if bad:
            return law, bad
    return None


def _own_list(loop, setting, combine, deadline):
    """The outcome of `commuting.prove_own_list` where `combine` folds b's own fields into a
    and both lemmas are proved, else None (the laws are then proved one by one)."""
    from thm3.prove import commuting
    order = commuting.own_list_order(loop, combine)
    if order is None:
        return None
    now = time.monotonic()
    out = commuting.prove_own_list(setting, order, min(deadline, now + max(2.0, OWN_LIST_SHARE * (deadline - now))))
    return out if out.proved else None


def _composed(loop, setting, combine, deadline):
    """The outcome of `composed.prove_composed` where `combine` composes a homogeneous
    semiring step's maps and both lemmas are proved, else None."""
    from thm3.prove import composed
    now = time.monotonic()
    out = composed.prove_composed(loop, setting, combine,
                                  min(deadline, now + max(2.0, OWN_LIST_SHARE * (deadline - now))))
    return out if out is not None and out.proved else None


FIELDWISE_SHARE = 0.6      # of the time left: the step law field by field, before the whole split
OWN_LIST_SHARE = 0.5        # of the time left: the lemmas are small, the direct laws get the rest
# The share of the time left that associativity over three states gets before the step
# law (two states and an element) is tried; where neither proves it, the direct proof
# gets the rest.
DIRECT_SHARE = 0.25
# The share of the time left that the step law gets first where the combine selects on a
# finite control that no invariant lists (`prove.composes_on_finite`).
FINITE_STEP_SHARE = 0.5
STEP_LAW = "by induction on the right operand from combine(a, left(b, x)) == left(combine(a, b), x)"


LEFT_IDENTITY_BY_STEPS = ("the right identity, and the left one on reachable states by induction from "
                          "combine(a, left(b, x)) == left(combine(a, b), x)")


def _identity_by_steps(setting, combine, deadline):
    """Where combine(init, a) == a is not shown for every state the invariants admit (a
    lift's fields are related on reachable states in ways no invariant says: a clamped
    walk's position, its sum and its largest prefix sum), the right identity and the
    step law give combine(a, h(ys)) == foldl(left, a, ys) for every such a, by induction
    on ys, so with a = init the left identity on every reachable state, which is what a
    reduction combines (and associativity and the homomorphism law with it).  The step
    law's outcome, its detail naming that argument, where both are proved; None else."""
    right = prove.prove_identity(setting, combine, deadline, sides="right")
    if not right.proved or time.monotonic() > deadline:
        return None
    steps = prove.prove_step_law(setting, combine, deadline)
    if not steps.proved:
        return None
    steps.detail = LEFT_IDENTITY_BY_STEPS
    steps.paths += right.paths
    steps.seconds += right.seconds
    return steps


def _associativity(loop, setting, combine, triples, deadline):
    """Associativity, directly or (once the identity is proved) by the step law: the
    outcome, and the step law's outcome where it is what proved the law (None else).

    The step law and the right identity give combine(a, h(ys)) == foldl(left, a, ys)
    by induction on ys (`prove.prove_step_law`), so on reachable a, b, c both sides of
    associativity are h(xs + ys + zs): the law holds on every state a list reaches,
    which is what a reduction combines."""
    now = time.monotonic()
    by_forms = _by_forms(setting, combine, deadline)
    if by_forms is not None:
        return by_forms
    steps = None
    if prove.composes_on_control(setting, combine):
        # a combine that selects on its first operand's reachable control (the composition
        # of a finite-state step's maps): the step law is the composition lemma
        # E(left(b, x)) == step_x o E(b), over the control tuples of one operand, where
        # associativity splits two (64 tuples: 64 cases against 4096)
        steps = _step_law(setting, combine, deadline)
        if steps.proved:
            return steps, steps
        if steps.status == "timeout" or time.monotonic() >= deadline:
            return steps, None          # over three states it would split two operands: no sooner
        now = time.monotonic()
    elif prove.composes_on_finite(setting, combine):
        # a table over a control whose box is reached whole (no disjunction to split on):
        # the step law still quantifies over two states where associativity takes three
        # (a 6-field (max, *) lift under a `% 2` phase: 6 s against 42 s unfinished), so it
        # goes first, on a share of the time
        steps = _step_law(setting, combine, min(deadline, now + max(2.0, FINITE_STEP_SHARE * (deadline - now))))
        if steps.proved:
            return steps, steps
        now = time.monotonic()
    first = prove.prove_associativity(setting, combine, min(deadline, now + max(2.0, DIRECT_SHARE * (deadline - now))))
    if first.proved or time.monotonic() > deadline:
        return first, None
    if first.model and violation_on_samples("associativity", loop, combine, refutation_triples(
            loop, [t.params for t in triples], first.model)):
        return first, None              # refuted on lists: nothing to prove
    if steps is None or steps.status == Status.TIMEOUT:     # (not tried first, or cut at its share)
        steps = _step_law(setting, combine, deadline)
    if steps.proved:
        return steps, steps
    if first.status == Status.TIMEOUT and time.monotonic() < deadline:
        again = prove.prove_associativity(setting, combine, deadline)
        if again.proved or again.status != Status.TIMEOUT:
            return again, None
    return first, None


def _by_forms(setting, combine, deadline):
    """Associativity, else the step law, by normal forms over a tropical semiring
    (`thm3.prove.forms`: (max, *) or (min, *) on nonnegatives, (max, +) or (min, +)):
    `_associativity`'s answer where one is proved, None else (each on at most a quarter of
    the time left; milliseconds where the terms are outside the class)."""
    from thm3.prove import forms
    out = forms.law_by_forms(setting, combine, "associativity", deadline)
    if out is not None:
        return out, None
    steps = forms.law_by_forms(setting, combine, "step", deadline)
    if steps is not None:
        steps.detail = f"{STEP_LAW}, {steps.detail}"
        return steps, steps
    return None


def _step_law(setting, combine, deadline):
    """The step law's outcome, its detail naming the induction where proved; where it fails
    (not for want of time), once more with the facts of the data at reachable control
    states."""
    from thm3.prove import fieldwise
    if fieldwise.applies(setting, combine):
        # many reachable control tuples: each field's equation on the few values of the
        # control its selections read first (`thm3.prove.fieldwise`), the whole split after
        now = time.monotonic()
        by_fields = fieldwise.prove_step_law_by_fields(setting, combine, now + FIELDWISE_SHARE * (deadline - now))
        if by_fields is not None and by_fields.proved:
            by_fields.detail = f"{STEP_LAW}, {by_fields.detail}"
            return by_fields
    steps = prove.prove_step_law(setting, combine, deadline)
    if steps.proved:
        steps.detail = STEP_LAW
        return steps
    if steps.status == "unproved" and time.monotonic() < deadline:
        with_facts = _step_law_with_control_data(setting, combine, deadline)
        if with_facts is not None:
            return with_facts
    return steps


def _step_law_with_control_data(setting, combine, deadline):
    """The step law again with the inductive facts "at reachable control state s, data field
    f is k" added to the invariants (`invariants.control_data_invariants`): a composed
    combine reads the copy that equals a slope on every reachable state (a warm-up phase
    zeroes both), which arbitrary states at s do not.  The outcome, its detail naming the
    facts, where proved; None else.  The facts are inductive, so every reachable state
    satisfies them and the induction on ys stands."""
    from thm3.analysis.invariants import control_data_invariants
    from thm3.syntax.loopfile import expression_text
    extra = control_data_invariants(setting.loop, list(setting.invariants), deadline)
    if not extra or time.monotonic() > deadline:
        return None
    steps = prove.prove_step_law(prove.Setting(setting.loop, list(setting.invariants) + extra), combine, deadline)
    if not steps.proved:
        return None
    shown = "; ".join(expression_text(e) for e in extra[:4]) + ("; ..." if len(extra) > 4 else "")
    steps.detail = f"{STEP_LAW}, on states that satisfy {len(extra)} inductive facts of the data at reachable " \
                   f"control states ({shown})"
    return steps


# Commutativity gets at most this many seconds: it is no part of the verdict, only of
# which reductions may reorder the partial states.
COMMUTATIVITY_SECONDS = 5.0


def commutativity(loop, setting, combine, triples, deadline) -> tuple[Status, str]:
    """Whether combine(a, b) == combine(b, a): "failed" with the two states where sampled
    reachable states (or lists at the loop's switching values) tell the two orders apart,
    "proved" by the prover over every state the invariants admit, else "unknown".  A
    non-commutative combine is a homomorphism all the same; it allows only reductions
    that keep list order (a tree over halves, a scan), not ones that reorder."""
    bad = violation_on_samples("commutativity", loop, combine, triples)
    if bad:
        return Status.FAILED, "combine(a, b) != combine(b, a): " + bad
    out = prove.prove_commutativity(setting, combine, min(deadline, time.monotonic() + COMMUTATIVITY_SECONDS))
    if out.proved:
        return Status.PROVED, (f"{out.detail}: " if out.detail else "") + f"{out.paths} path(s), {out.seconds:.2f} s"
    bad = violation_on_samples("commutativity", loop, combine,
                               refutation_triples(loop, [t.params for t in triples], out.model))
    if bad:
        return Status.FAILED, "combine(a, b) != combine(b, a): " + bad
    why = "solver time ran out" if out.status == Status.TIMEOUT else f"not proved ({out.detail or out.status})"
    return Status.UNKNOWN, f"{why}; the two orders agree on {sum(t.a[0].shape[0] for t in triples)} random cases"


class Judgement(NamedTuple):
    """The verdict on one candidate combine, why (empty for a proved homomorphism), and
    whether the combine stays in the analysis."""
    verdict: Verdict
    reason: str
    keeps_combine: bool


def verdict_of(statuses: dict, details: dict, timed_out: bool, accept_tested: bool = False) -> Judgement:
    """The verdict for a candidate whose laws got `statuses` (law -> Status), with
    `details` per law and `timed_out` when a prover ran out of time.

    A failed law drops the candidate; every law proved makes a homomorphism; a timeout
    leaves it unknown; a law only tested leaves it unknown too, with the candidate kept
    (shown, and callable), unless `accept_tested`."""
    failed = [law for law, s in statuses.items() if s == Status.FAILED]
    if failed:
        return Judgement(Verdict.UNKNOWN, "the candidate combine failed a law: " +
                         "; ".join(f"{law}: {details[law]}" for law in failed), False)
    if all(s == Status.PROVED for s in statuses.values()):
        return Judgement(Verdict.HOMOMORPHISM, "", True)
    if timed_out:
        return Judgement(Verdict.UNKNOWN,
                         "solver time ran out before the laws were proved (they pass on random lists)", True)
    laws = ", ".join(law for law, s in statuses.items() if s != Status.PROVED)
    if accept_tested:
        return Judgement(Verdict.HOMOMORPHISM, f"laws {laws} tested on lists, not proved (accepted as tested)",
                         True)
    return Judgement(Verdict.UNKNOWN, f"laws {laws} only tested on lists, not proved: the candidate combine "
                                      "is shown (accept it with --accept-tested)", True)


def violation_on_samples(law: str, loop: Loop, combine: Fn, triples) -> str:
    """A concrete violation of `law` on sampled reachable states, or ''."""
    for t in triples:
        rows = t.a[0].shape[0]
        init = batch_init(loop, rows, t.a[-1].shape[-1] if loop.fields[-1].type is Type.VEC else 3)
        init = tuple(np.broadcast_to(i, x.shape).copy() for i, x in zip(init, t.a))
        match law:
            case "identity":
                checks = [(batch_combine(combine, init, t.a, t.params), t.a),
                          (batch_combine(combine, t.a, init, t.params), t.a)]
            case "commutativity":
                checks = [(batch_combine(combine, t.a, t.b, t.params), batch_combine(combine, t.b, t.a, t.params))]
            case "associativity":
                c = tuple(np.roll(x, 1, axis=0) for x in t.c)
                ab = tuple(batch_combine(combine, t.a, t.b, t.params))
                bc = tuple(batch_combine(combine, t.b, c, t.params))
                checks = [(batch_combine(combine, ab, c, t.params), batch_combine(combine, t.a, bc, t.params))]
            case _:
                checks = [(batch_combine(combine, t.a, t.b, t.params), t.c)]
        for got, want in checks:
            for i, (g, w) in enumerate(zip(got, want)):
                ok = rows_close(np.broadcast_to(g, np.shape(w)) if np.ndim(g) else g, w, LAW)
                if not bool(np.all(ok)):
                    r = int(np.argmin(ok))
                    f = loop.fields[i]
                    return (f"field {f.name}: {_cell(f, np.asarray(g)[r] if np.ndim(g) else g)} != "
                            f"{_cell(f, np.asarray(w)[r])} on a={_state_text(loop, t.a, r)}, "
                            f"b={_state_text(loop, t.b, r)}")
    return ""


def _cell(f, v):
    """One field of one sampled row as a plain value: a number, a Vec as its list."""
    v = np.asarray(v)
    return plain(v.reshape(()) if f.type is not Type.VEC and v.size == 1 else v)


def _state_text(loop: Loop, fields, r: int) -> str:
    return "(" + ", ".join(f"{f.name}={_cell(f, x[r])}" for f, x in zip(loop.fields, fields)) + ")"


# -- lists that reach where the loop switches ------------------------------------------

_PER_COLUMN = 8
_ELEMENTS = 12
_SHORT = 2


def refutation_triples(loop: Loop, settings: list[dict], model: dict) -> list[Triples]:
    """All pairs of lists of length <= 2 (and lists long enough for the loop's counters)
    over a few elements: the loop's critical values (`thm3.semantics.critical`), the
    values of Z3's counter-model, 0, 1 and -1; one batch per parameter setting, the
    model's setting included where it satisfies the preconditions."""
    if any(d.type is Type.VEC for d in loop.elements):
        return []
    settings = list(settings)
    from_model = {d.name: model[d.name] for d in loop.params if d.name in model}
    if loop.params and len(from_model) == len(loop.params) and not any(
            isinstance(v, float) and not np.isfinite(v) for v in from_model.values()):
        p = {d.name: (bool(v) if d.type is Type.BOOL else int(round(v)) if d.type is Type.INT else float(v))
             for d, v in zip(loop.params, (from_model[d.name] for d in loop.params))}
        if Domain(loop).precondition_holds(None, p, params_only=True):
            settings.append(p)
    # the model's element values first, then its state values (often an element's, too)
    finite = {k: v for k, v in model.items() if isinstance(v, float) and np.isfinite(v)}
    hinted = [v for k, v in finite.items() if k.startswith(("x.", "y."))] + list(finite.values())
    out = []
    for params in settings:
        elements = _elements(loop, params, hinted)
        if elements:
            out.append(_pairs(loop, params, elements))
    return out


def _elements(loop: Loop, params: dict, hinted: list[float]) -> list[tuple]:
    values = critical.element_values(loop, params)
    columns = []
    for d in loop.elements:
        match d.type:
            case Type.BOOL:
                col = [False, True]
            case Type.INT if d.index:
                col = [None]
            case Type.INT:
                col = list(dict.fromkeys(int(round(v)) for v in values.get(d.name, []) + hinted + [0, 1, -1]))
            case _:
                col = list(dict.fromkeys(float(v) + 0.0 for v in values.get(d.name, []) + hinted + [0, 1, -1]))
        columns.append(col[:_PER_COLUMN])
    dom = Domain(loop)
    tuples = [t for t in itertools.product(*columns)
              if dom.precondition_holds(tuple(0 if v is None else v for v in t), params)]
    return tuples[:_ELEMENTS]


def _positions(xs: list[tuple], start: int) -> list[tuple]:
    return [tuple(start + i if v is None else v for v in e) for i, e in enumerate(xs)]


def _pairs(loop: Loop, params: dict, elements: list[tuple]) -> Triples:
    lists = {n: [list(c) for c in itertools.product(elements, repeat=n)] for n in range(_SHORT + 1)}
    long = critical.counter_length(loop)
    if long > _SHORT:
        lists[long] = [[e] * long for e in elements]
    parts = []
    for la, lb in itertools.product(lists, repeat=2):
        pairs = list(itertools.product(lists[la], lists[lb]))
        xs = [_positions(a, 0) for a, _ in pairs]
        ys = [_positions(b, la) for _, b in pairs]
        rows = len(pairs)
        # the proofs' division: a law fails only on lists that have states in the reals
        a = batch_fold(loop, stack_elements(loop, xs), params, batch_init(loop, rows, 3), NUMPY_REALS)
        c = batch_fold(loop, stack_elements(loop, ys), params, a, NUMPY_REALS)
        b = batch_fold(loop, stack_elements(loop, ys), params, batch_init(loop, rows, 3), NUMPY_REALS)
        parts.append((a, b, c))
    a, b, c = (tuple(np.concatenate(cols, axis=0) for cols in zip(*(p[i] for p in parts))) for i in range(3))
    return Triples(params, a, b, c)
