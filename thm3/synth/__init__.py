"""Synthesis of the combine: routes behind one interface, raced under one deadline,
cheapest first; the first candidate the prover proves wins.

Routes: "own list" (a state that is its own list, the k smallest: b's fields folded into
a, `inverse.own_list`), "sketch" (the step with the element replaced by the right operand's fields,
`sketch`), "interpolation" (exact linear algebra on sampled pairs, `interpolation`),
"transport" (a map onto a product of +/max/min monoids found by linear algebra,
`transport`), "weak right inverse" (combine = foldl(left, a, g(b)), `inverse`),
"enumeration" (bottom-up enumeration where no sketch fits, `enumeration`), "semiring" (the
step read as an affine map over a semiring, the combine its composition, `semiring`), "finite"
(a finite-state step: the composition of its transition functions, `finite`).  Where the
sketch completes all fields but a few, "enumeration of the missing fields" (those fields'
small terms, the others' combines fixed: `sketch.Partial`) comes right after it.  Every route's candidates are checked on the batched samples before
they are proved; rational fields are tidied with SymPy (`tidy`).  Branches of `left`
are normalised first (`thm3.ir.normalize`), so if/else, `where` and max/min spellings
of one function take the same routes."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from thm3.ir import Fn, Loop, Op
from thm3.errors import Thm3Error
from thm3.synth.check import Checker

__all__ = ["Attempt", "Route", "ROUTES", "Synthesis", "synthesize", "route_named", "ordered", "agrees"]


class RouteFailed(Thm3Error):
    """A route found no candidate; the message says why.  `partial`: what the sketch
    completed (`sketch.Partial`), for the routes that resume it."""

    def __init__(self, message: str, partial=None):
        super().__init__(message)
        self.partial = partial


@dataclass(frozen=True)
class Route:
    name: str
    find: Callable          # (loop, triples, deadline, methods) -> list[Fn]; raises RouteFailed
    share: float = 1.0      # at most this share of the time left (plus a second) before moving on
    recognises: bool = False  # its methods name the class it read the loop as: shown when not proved
    resumes: bool = False   # its find takes `resume=`, a sketch's Partial, and goes on from there


@dataclass(frozen=True)
class Attempt:
    route: str
    outcome: str            # "proved" | "not proved" | "none" | "timeout"
    detail: str
    seconds: float


@dataclass(frozen=True)
class Synthesis:
    combine: Fn | None
    route: str
    statuses: dict
    details: dict
    timed_out: bool
    methods: dict
    tidied: bool
    attempts: tuple[Attempt, ...] = field(default=())

    def tried(self) -> str:
        """One line: each route tried and what came of it."""
        return "; ".join(f"{a.route}: {a.outcome}" + (f" ({a.detail})" if a.detail else "") for a in self.attempts)


def _sketch(loop, triples, deadline, methods, resume=None):
    from thm3.synth.sketch import Partial, synthesize as sketch
    partial = Partial(loop)
    cands, tried = sketch(loop, triples, deadline=deadline, methods=methods, with_enumeration=False,
                          partial=partial, resume=resume)
    if not cands:
        names = ", ".join(loop.fields[i].name for i in partial.missing)
        raise RouteFailed(f"{tried} sketch completions, none agreed with h(xs + ys) for {names}", partial)
    return cands


def _enumeration(loop, triples, deadline, methods, resume=None, max_size=None, related=False):
    from thm3.synth.sketch import synthesize as sketch
    cands, tried = sketch(loop, triples, deadline=deadline, methods=methods, with_enumeration=True, resume=resume,
                          max_size=max_size, related=related)
    if not cands:
        raise RouteFailed(f"{tried} terms, none agreed with h(xs + ys)"
                          + (f" up to size {max_size}" if max_size is not None else ""))
    return cands


# Where the sketch completed all fields but a few, the enumeration of those few comes next:
# terms up to this size over each one's related fields (`sketch.related_fields`), a bank of
# small terms built in well under a second, beside the seconds interpolation or the inverse
# take to fail on the field the sketch missed.  The route "enumeration" later reads all.
SMALL_TERMS = 5


def _small_terms(loop, triples, deadline, methods, resume=None):
    if resume is None or not resume.nearly_complete():
        raise RouteFailed("no sketch with all fields but a few to go on from")
    return _enumeration(loop, triples, deadline, methods, resume=resume, max_size=SMALL_TERMS, related=True)


def _interpolation(loop, triples, deadline, methods):
    from thm3.synth import interpolation
    try:
        fn = interpolation.synthesize(loop, deadline)
    except interpolation.Failed as e:
        raise RouteFailed(str(e)) from None
    methods.update({f.name: "exact interpolation c * Q = P" for f in loop.fields})
    return [fn]


def _transport(loop, triples, deadline, methods):
    from thm3.synth import transport
    try:
        fn, how = transport.synthesize(loop, deadline)
    except transport.Failed as e:
        raise RouteFailed(str(e)) from None
    methods.update({f.name: how for f in loop.fields})
    return [fn]


def _semiring(loop, triples, deadline, methods):
    from thm3.synth import semiring
    try:
        fn, how = semiring.synthesize(loop, deadline)
    except semiring.Failed as e:
        raise RouteFailed(str(e)) from None
    methods.update({f.name: how for f in loop.fields})
    return [fn]


# Cheapest first.  The sketch is quick where it fits and may be slow on wide states, so it
# gets a slice first; the enumeration route runs the sketch again with the time left.
def _finite(loop, triples, deadline, methods):
    from thm3.synth import finite
    try:
        fn, how = finite.synthesize(loop, deadline)
    except finite.Failed as e:
        raise RouteFailed(str(e)) from None
    methods.update({f.name: how for f in loop.fields})
    return [fn]


def _given(loop, triples, deadline, methods):
    if loop.combine_hint is None:
        raise RouteFailed("no combine came with the loop")
    methods.update({f.name: "the composition of the lift's copies, group by group (given with the lifted loop)"
                    for f in loop.fields})
    return [loop.combine_hint]


# Not in ROUTES: `synthesize` puts it first where a lift gives its combine with the loop.
GIVEN_ROUTE = Route("lift's own combine", _given, 0.6)


def _inverse(loop, triples, deadline, methods):
    from thm3.synth import inverse
    try:
        fn, how = inverse.synthesize(loop, triples, deadline)
    except inverse.Failed as e:
        raise RouteFailed(str(e)) from None
    methods.update({f.name: how for f in loop.fields})
    return [fn]


def _own_list(loop, triples, deadline, methods):
    from thm3.synth import inverse
    try:
        fn, how = inverse.own_list(loop, triples, deadline)
    except inverse.Failed as e:
        try:
            fn, how = inverse.counted_list(loop, triples, deadline)
        except inverse.Failed as e2:
            raise RouteFailed(f"{e}; {e2}") from None
    methods.update({f.name: how for f in loop.fields})
    return [fn]


def _product(loop, triples, deadline, methods):
    from thm3.synth import product
    try:
        fn, how = product.synthesize(loop, deadline, tuple(r for r in ROUTES if r.name != "product"))
    except product.Failed as e:
        raise RouteFailed(str(e)) from None
    methods.update({f.name: how for f in loop.fields})
    return [fn]


# "own list" first: one pass over the samples recognises a state that is its own list (the k
# smallest or largest), where the sketch and the linear-algebra routes spend seconds finding
# nothing; it declines every other state at once.
ROUTES: tuple[Route, ...] = (
    Route("own list", _own_list, 0.5),
    Route("sketch", _sketch, 0.1, resumes=True),
    Route("product", _product, 0.5),
    Route("semiring", _semiring, 0.2, recognises=True),
    Route("finite", _finite, 0.3),
    Route("interpolation", _interpolation, 0.3),
    Route("transport", _transport, 0.4),
    Route("weak right inverse", _inverse, 0.4),
    Route("enumeration", _enumeration, resumes=True),
)

# Not in ROUTES: `synthesize` puts it right after a sketch that missed a few fields.
SMALL_TERMS_ROUTE = Route("enumeration of the missing fields", _small_terms, 0.5, resumes=True)


def route_named(name: str) -> Route:
    return next(r for r in ROUTES if r.name == name)


def synthesize(loop: Loop, triples, *, deadline: float, prove: Callable,
               routes: tuple[Route, ...] = ROUTES) -> Synthesis:
    """Run the routes in order until one gives a candidate that `prove` proves.

    `prove(fn) -> (statuses, details, timed_out)` with statuses per law.  Returns the
    proved combine, or else the best-scoring candidate seen (None if none agreed
    with the samples), and what each route did."""
    from thm3.ir.normalize import normalize_loop
    from thm3.errors import SolverTimeout
    from thm3.synth.tidy import tidy_combine

    work = normalize_loop(loop)
    attempts: list[Attempt] = []
    best = None
    partial = None              # what the sketch completed, where it missed some fields
    todo = list(ordered(loop, work, routes))
    if loop.combine_hint is not None:
        todo.insert(0, GIVEN_ROUTE)
    while todo:
        route = todo.pop(0)
        if time.monotonic() > deadline:
            attempts.append(Attempt(route.name, "timeout", "no time left", 0.0))
            continue
        t0 = time.monotonic()
        until = min(deadline, t0 + 1.0 + route.share * (deadline - t0))
        methods: dict = {}
        try:
            # the sketch reads the step as written first (its spelling is the combine's),
            # then normalised; the other routes read the normalised step
            # (and "own list" unrolls the step as written, which its proof reads)
            first = loop if route.name in ("sketch", "own list") and work is not loop else work
            resume = {"resume": partial} if route.resumes and partial is not None else {}
            try:
                found = route.find(first, triples, until, methods, **resume)
            except RouteFailed as e:
                partial = e.partial or partial
                if first is work:
                    raise
                resume = {"resume": partial} if route.resumes and partial is not None else {}
                found = route.find(work, triples, until, methods, **resume)
            cands = [c for c in found if agrees(loop, c, triples)]
        except RouteFailed as e:
            partial = e.partial or partial
            attempts.append(Attempt(route.name, "none", str(e), time.monotonic() - t0))
            if route.name == "sketch" and partial is not None and partial.nearly_complete() and \
                    any(r.name == "enumeration" for r in todo):
                # the sketch completed all fields but a few: their enumeration in small
                # terms, with the other fields' combines fixed, comes next (cheap beside
                # the routes that fail on the field the sketch missed)
                todo.insert(0, SMALL_TERMS_ROUTE)
            continue
        except SolverTimeout:
            attempts.append(Attempt(route.name, "timeout", "the search ran out of time", time.monotonic() - t0))
            continue
        if not cands:
            attempts.append(Attempt(route.name, "none", "its candidates disagree with h(xs + ys) on samples",
                                    time.monotonic() - t0))
            continue
        tidy = tidy_combine(loop, cands[0], triples)
        if tidy is not None:
            cands.insert(0, tidy)
        for cand in cands:
            statuses, details, timed_out = prove(cand)
            score = (not any(s == "failed" for s in statuses.values()),
                     sum(s == "proved" for s in statuses.values()))
            if best is None or score > best[0]:
                best = (score, Synthesis(cand, route.name, statuses, details, timed_out, dict(methods),
                                         tidy is not None and cand is tidy))
            if all(s == "proved" for s in statuses.values()) or time.monotonic() > deadline:
                break
        proved = all(s == "proved" for s in best[1].statuses.values()) and best[1].route == route.name
        detail = "" if proved else ", ".join(f"{k} {v}" for k, v in best[1].statuses.items())
        if not proved and route.recognises and methods:
            detail += "; " + "; ".join(dict.fromkeys(methods.values()))
        attempts.append(Attempt(route.name, "proved" if proved else "not proved", detail, time.monotonic() - t0))
        if proved:
            break
    if best is None:
        return Synthesis(None, "", {}, {}, False, {}, False, tuple(attempts))
    s = best[1]
    return Synthesis(s.combine, s.route, s.statuses, s.details, s.timed_out, s.methods, s.tidied, tuple(attempts))


# Ops that make `left` piecewise: the linear-algebra routes then fit per case (or not at all).
_PIECEWISE = frozenset({Op.LT, Op.LE, Op.GT, Op.GE, Op.EQ, Op.NE, Op.MAX, Op.MIN, Op.WHERE, Op.ABS,
                        Op.AND, Op.OR, Op.NOT})


def ordered(loop: Loop, work: Loop, routes: tuple[Route, ...]) -> tuple[Route, ...]:
    """The routes in the order they are tried: as given (cheapest first), except where
    `left` is a rational map without branches and the sketch's space is cut (it has
    more completions than the sketch builds, so the sketch is dear and sees only part
    of its space): there the exact linear-algebra routes (interpolation, transport),
    cheap on such a `left`, come just before the sketch; and where the step is finite-state
    with a state that gives its own transition function, and the state is wide (three
    fields or more) or the sketch's space is cut, the composition route comes first; where
    its control does not give its function alone (a lifted finite-state loop), the weak
    right inverse comes before the exact algebra, which fits no table; where the whole state is
    a homogeneous semiring step's map, or a step affine over (+, *) with a constant matrix, and has
    three fields or more, "semiring" comes first.  "own list" comes first
    only where the sketch's space is cut (the sketch is dear there); else just after it,
    whose combine reads better when both apply.  Decided from `left` alone."""
    from thm3.ir import walk
    from thm3.synth import semiring
    from thm3.synth.exact import rational_loop_reason
    from thm3.synth.sketch import Sketch
    names = [r.name for r in routes]
    if "own list" in names and "sketch" in names and names.index("own list") < names.index("sketch") \
            and not (Sketch(loop).cut() or Sketch(work).cut()):
        # the sketch sees its whole space (a top 2): it is cheap, and it writes the combine
        # in the fields' own terms (max(a.a, b.a)) where "own list" unrolls the step
        own = next(r for r in routes if r.name == "own list")
        rest = [r for r in routes if r is not own]
        at = rest.index(next(r for r in rest if r.name == "sketch")) + 1
        routes = tuple(rest[:at] + [own] + rest[at:])
        names = [r.name for r in routes]
    control = _control(work)
    if control == "lifted" and "weak right inverse" in names:
        # finite control that the state does not determine alone (a lift's other fields say
        # which transition function): no polynomial fits a table, the inverse reads it back
        inverse = next(r for r in routes if r.name == "weak right inverse")
        at = min((names.index(n) for n in ("interpolation", "transport") if n in names), default=None)
        if at is not None and at < names.index(inverse.name):
            rest = [r for r in routes if r is not inverse]
            routes = tuple(rest[:at] + [inverse] + rest[at:])
            names = [r.name for r in routes]
    if "finite" in names and "sketch" in names and names.index("sketch") < names.index("finite") \
            and control == "composes" and (len(loop.fields) >= 3 or Sketch(loop).cut() or Sketch(work).cut()):
        # a finite-state step whose state gives its transition function: the composition
        # is exact and cheap, the sketch dear on wide states (a lifted table) or a cut space
        first = next(r for r in routes if r.name == "finite")
        routes = (first,) + tuple(r for r in routes if r is not first)
        names = [r.name for r in routes]
    if "semiring" in names and "sketch" in names and names.index("sketch") < names.index("semiring") \
            and len(work.fields) >= 3 and (semiring.whole_linear(work) is not None
                                           or semiring.constant_ring_step(work) is not None):
        # a wide state that is a semiring step's map (a 3x3 (max, +) matrix), or a linear
        # recurrence with constant weights (its Cayley-Hamilton lift): the composition is
        # exact and proved by its lemma, where the sketch spends seconds finding nothing
        first = next(r for r in routes if r.name == "semiring")
        routes = (first,) + tuple(r for r in routes if r is not first)
        names = [r.name for r in routes]
    algebra = [r for r in routes if r.name in ("interpolation", "transport")]
    if "sketch" not in names or not algebra or names.index("sketch") > min(names.index(r.name) for r in algebra):
        return routes
    if rational_loop_reason(work) or any(e.op in _PIECEWISE for e in walk(work.left.outputs)):
        return routes
    if not (Sketch(loop).cut() or Sketch(work).cut()):
        return routes
    rest = [r for r in routes if r not in algebra]
    at = rest.index(next(r for r in rest if r.name == "sketch"))
    return tuple(rest[:at] + algebra + rest[at:])


def _control(loop: Loop) -> str | None:
    """"composes" where `loop` is finite-state with a state that determines its own
    transition function, "lifted" where its control does not (other fields must say
    which function it is), None outside the class."""
    from thm3.synth import finite
    try:
        # up to the states the finite route reads on its retry (a pretokenizer's runs: 73)
        m = finite.recognise(loop, time.monotonic() + 0.5, most=finite.MAX_HINTED_STATES)
    except finite.Failed:
        return None
    return "composes" if m.determined()[1] is None else "lifted"


def agrees(loop: Loop, fn: Fn, triples) -> bool:
    """The candidate equals h(xs + ys) on every batched sample, field by field."""
    return all(Checker(fn.inputs, triples, i, probe=False).agrees(
        Checker(fn.inputs, triples, i, probe=False).values(e)) for i, e in enumerate(fn.outputs))
