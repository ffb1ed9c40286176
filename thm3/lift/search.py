"""The lifting search: auxiliary state that makes a loop a homomorphism.

When the witness search shows that no combine over a loop's State exists, this stage
looks for the fewest extra fields, each with an initial value and a `left` update,
such that the lifted loop has no witness (and, given a prover, a proved combine).  The
original fields keep their names, order, updates and values.  Candidates come from the
loop's own `left`: sums and counts of its element terms, flags for its predicates (also
those that read the state, such as `x > acc.last`), first and last elements, prefix
extrema of sums, leading runs and leading sums, the powers of the factors that scale
the state, and, where `left` is affine in a block of fields over a semiring, the
product of its step matrices (a group of fields taken together: its reduced form first,
`thm3.synth.semiring`, then the full matrix), and where the step is finite-state, the
composition lifts: named fields read back (a capped length, a parity, the first element:
`thm3.synth.readback`), then copies of the state (`thm3.synth.finite`).  A candidate set must tell apart every
pair of lists the witness search has found so far (counterexample-guided: each failed
set adds the witnesses it gets to the pruning).  The lifted loop is built as IR; text
is rendered only for the user (`Lift.loop_text`).  The candidates are built in
`thm3.lift.candidates`, the sets of them tried in `thm3.lift.sets`."""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, replace

from thm3.ir import Expr, Loop, substitute, var
from thm3.syntax.loopfile import expression_text as to_text, loop_text
from thm3.syntax.names import fresh
from thm3.prove.budget import GRACE, PastDeadline, hard_deadline, young_collections_only
from thm3.lift.growth import growth_family
from thm3.lift.candidates import Aux, default_text
from thm3.lift.sets import (COMPOSITION_SHARE, MAX_ADDED, PENDING_REFUSALS, PENDING_SHARE, READING_SECONDS,
                            READING_SHARE, RESERVE, THEOREM_SHARE, LiftSearch)
from thm3.analysis.witness import WIDER_SETTINGS, Witness, check_witness, find_witnesses


@dataclass(frozen=True)
class Lift:
    """The lifted loop (IR; None where no lift was found), one line per added field
    ("name: Type = init; left: update; why"), a one-line reason, the time, the original
    loop's witness, what the prover answered for the lifted loop (its analysis), and the
    composition route whose lift it is: "finite" (named fields or copies of a finite-state
    step's state, `thm3.synth.readback`), "semiring" (the product of the step matrices,
    `thm3.synth.semiring.lift_units`), or "" (the search's other candidates)."""
    loop: Loop | None
    added: tuple[str, ...]
    reason: str
    seconds: float
    witness: Witness | None = None
    proof: object = None
    route: str = ""

    @property
    def loop_text(self) -> str | None:
        """The lifted loop file, rendered for the user."""
        return None if self.loop is None else loop_text(self.loop)


def lift(loop: Loop, *, timeout: float = 10.0, prove=None, without_witness: bool = False,
         memory: int | None = None, theorem_only: bool = False) -> Lift:
    """Search for the smallest lift of `loop`: the fewest added fields, from at most
    `MAX_ADDED` candidate units.

    `prove`, where given, is called on each lifted loop (IR) that has no witness and
    must return a true value (kept as `Lift.proof`) only if a combine was synthesized
    and proved; without it, the absence of a witness on the larger budget is what
    accepts a lift.

    A loop with no witness (its verdict "unknown": no combine found, none proved
    impossible) is searched too when `without_witness` is set and a prover is given:
    nothing prunes the candidates then, and a lift counts only when the prover proves
    the lifted loop, so the search gives the user a loop that is a proved homomorphism
    and computes the same fields (sign changes: the first element carries the sign that
    the parity of the count would otherwise have to give).

    `theorem_only` (with a prover): a loop with no witness tries only the lifts a theorem
    gives (the composed map's entries of a semiring-affine block, a finite-state step's
    copies), each proved: a decay whose state has the length but not the power.

    `memory` (MiB, Linux) bounds the search as `--memory` bounds the analysis: it runs in
    a forked child under that bound, and past it the answer is no lift, naming the bound."""
    t0 = time.monotonic()
    if memory is not None and sys.platform.startswith("linux"):
        from thm3.prove.budget import within_memory
        got, found = within_memory(memory, t0 + timeout * (1 + GRACE), _lift_here, loop, timeout, prove,
                                   without_witness)
        if got == "done":
            return found
        why = {"memory": f"the lifting search needed more than memory={memory} MiB and was stopped",
               "ended": f"the lifting search's process ended without an answer (a native library out of the "
                        f"memory={memory} MiB bound aborts)",
               "timeout": f"the lifting search ran past timeout {timeout:g} s and was stopped"}[got]
        return Lift(None, (), why + "; a larger bound may find a lift", time.monotonic() - t0)

    def done(lifted, added, reason, witness=None, proof=None, route="") -> Lift:
        return Lift(lifted, tuple(added), reason, time.monotonic() - t0, witness, proof, route)

    so_far: dict = {}       # the witnesses and the search, for the answer of a search stopped
    try:            # each stage keeps to the deadline; the alarm bounds a call that does not
        with hard_deadline(t0 + timeout), young_collections_only():
            return _lift(loop, t0, timeout, prove, without_witness, done, so_far, theorem_only)
    except PastDeadline:
        witness = so_far["first"][0] if so_far.get("first") else None
        if "search" in so_far:
            return done(None, [], _no_lift(so_far["search"], witness, stopped=True), witness)
        return done(None, [], f"the lifting search ran past timeout {timeout:g} s and was stopped; "
                              "a larger timeout may find a lift", witness)


def _lift_here(loop: Loop, timeout: float, prove, without_witness: bool) -> Lift:
    return lift(loop, timeout=timeout, prove=prove, without_witness=without_witness)


def _lift(loop: Loop, t0: float, timeout: float, prove, without_witness: bool, done, so_far: dict,
          theorem_only: bool = False) -> Lift:
    deadline = t0 + timeout * 0.95
    # theorem_only: the analysis found no witness already (its own search ran)
    first = so_far["first"] = [] if theorem_only else find_witnesses(loop, timeout=min(5.0, timeout / 2), limit=8)
    if not first and not theorem_only and loop.params:
        # as the analysis's second search: more parameter values, a negative one among them
        first = so_far["first"] = find_witnesses(loop, timeout=min(5.0, timeout / 4), limit=8,
                                                 settings=WIDER_SETTINGS)
    if not first and (prove is None or not (without_witness or theorem_only)):
        return done(None, [], "no witness: no two lists with equal state were told apart, "
                              "so there is nothing to lift")
    search = so_far["search"] = LiftSearch(loop, first, deadline, prove)
    if theorem_only:
        found = search.run_theorems()
        if found is None:
            return done(None, [], "no lift a theorem gives was proved" + _ruled_out(search))
        lifted, added, reason, proof = found
        return done(lifted, added, reason, None, proof, search.route)
    # a product state first group by group (each group's search is smaller than the
    # whole's, and lifts add up past MAX_ADDED), then the whole state's search
    found = _by_components(search, t0 + timeout * 0.6) if prove is not None else None
    if found is None:
        found = search.run()
    witness = first[0] if first else None
    if found is None:
        reason = _no_lift(search, witness)
        if witness is not None and not search.unrefuted:
            # (a growth family counts values, not fields: it says nothing against the
            # copies a theorem gives that no list refuted)
            growth = growth_family(loop, timeout=max(0.0, min(3.0, deadline - time.monotonic())))
            if growth is not None and growth.grows:
                reason = f"{growth.describe(loop)}; {reason}"
        return done(None, [], reason, witness)
    lifted, added, reason, proof = found
    return done(lifted, added, reason, witness, proof, search.route)


def _by_components(search: "LiftSearch", deadline: float):
    """A lift of a product state, group by group: where `left`'s fields fall into groups
    that never read each other (`thm3.synth.product.components`), each group with a
    witness of its own is lifted as a loop of its own (the same elements, parameters and
    preconditions; each sub-lift proved), and the whole state with every group's added
    fields is proved once more, so that lifts of up to MAX_ADDED units per group add up
    (two independent runs, each needing a flag and a leading run).  None where the state
    is one group, a group finds no lift, or the whole is not proved."""
    from thm3.synth.product import MAX_GROUPS, components, sub_loop
    loop = search.loop
    groups = components(loop)
    if not 2 <= len(groups) <= MAX_GROUPS:
        return None
    # the groups the whole state's witnesses tell apart on their own fields need a lift;
    # with one such group the whole search does the same work (and more): not here
    subs = [sub_loop(loop, g) for g in groups]
    hit = [[w for w in search.records if check_witness(sub, w)] for sub in subs]
    if sum(bool(ws) for ws in hit) < 2:
        return None
    taken = set(loop.field_names) | {d.name for d in loop.params} | {d.name for d in loop.elements}
    cands: list[Aux] = []
    todo = sum(bool(ws) for ws in hit)
    for g, sub, ws in zip(groups, subs, hit):
        if not ws:
            continue            # no witness on this group: its fields combine as they are, or the prover says
        left_s = deadline - time.monotonic()
        if left_s <= 0.5:
            return None
        part = LiftSearch(sub, ws, time.monotonic() + left_s / (todo + 1), search.prove)
        todo -= 1
        got = part.run()
        if got is None:
            search.ruled_out.append(f"group ({', '.join(g)}) on its own: no lift "
                                    f"({'; '.join(why for _, why in part.outcomes[:2]) or 'none tried'})")
            return None
        lifted_sub = got[0]
        k = len(sub.fields)
        renamed = {}
        for f in lifted_sub.fields[k:]:
            renamed[f.name] = fresh(f.name, taken)
            taken.add(renamed[f.name])
        mapping = {f"acc.{f.name}": var(f"acc.{renamed[f.name]}", f.type) for f in lifted_sub.fields[k:]}
        updates = substitute(list(lifted_sub.left.outputs[k:]), mapping)
        alias: dict = {}
        mine: list[Aux] = []
        for f, u in zip(lifted_sub.fields[k:], updates):
            # a field another group added already (the same update, reading itself, the
            # same initial value: a length, a first element) is shared, not added twice
            key = renamed[f.name]
            u = substitute([u], alias)[0] if alias else u
            twin = next((c for c in cands if c.type is f.type and c.default == f.default and
                         _self_read(u, key) is _self_read(c.update, c.key)), None)
            if twin is not None:
                alias[f"acc.{key}"] = var(f"acc.{twin.key}", f.type)
                continue
            mine.append(Aux(key, key, f.type, f.default, u, f.comment,
                             f"for the group ({', '.join(g)}), lifted on its own", 0))
        if alias:
            mine = [replace(c, update=substitute([c.update], alias)[0]) for c in mine]
        cands += mine
    if not cands:
        return None
    lifted, names = search.lifted(cands)
    if not search.preserved(lifted):
        return None
    proof = search.proved(lifted)
    if not proof:
        search.outcomes.append((names, "each group lifted on its own, but no combine was proved for the whole"))
        return None
    search.route = "product"
    k = len(loop.fields)
    added = [f"{f.name}: {c.type.value} = {default_text(c)}; left: {f.name}' = {to_text(u)}; {c.why}"
             for c, f, u in zip(cands, lifted.fields[k:], lifted.left.outputs[k:])]
    return lifted, added, f"lifted group by group ({len(groups)} independent groups)", proof


def _self_read(update: Expr, key: str) -> Expr:
    """`update` with the field's read of itself under one name, to compare two fields."""
    return substitute([update], {f"acc.{key}": var("acc.__self__", update.type)})[0]


def _no_lift(search: "LiftSearch", witness, stopped: bool = False) -> str:
    """Why the search found no lift: what it tried, and the witness that stands; first,
    a lift a theorem gives that no list refuted but the prover did not prove (its time or
    its means ran out: that is an honest "not proved", never "no lift exists")."""
    unproved = (f"the lift a theorem gives ({search.unrefuted[0]}) has no witness, but its combine was "
                f"not proved (a larger --timeout may prove it, or it is past the prover's limits); "
                if search.unrefuted else "")
    reason = unproved + (f"no lift with up to {MAX_ADDED} added units among {len(search.cands)} candidates "
              f"({search.tested} lifted loops checked"
              + (", stopped at the timeout" if stopped else ", time ran out" if search.timed_out else "") + ")")
    if witness is None:
        return reason + ", and no witness that no combine over the state exists" + _ruled_out(search)
    return (reason
            + (f"; {search.refused} had no witness but no combine was proved for them "
               f"({'; '.join(', '.join(n) for n in search.refused_names[:3])})" if search.refused else "")
            + (f" (the prover failed: {search.prover_errors[0]})" if search.prover_errors else "")
            + f"; the witness {witness.describe()} stands" + _ruled_out(search))


def _ruled_out(search: "LiftSearch") -> str:
    """The lifted loops the search ruled out, each with why (the first eight)."""
    ruled = ("; composition lifts ruled out: " + "; ".join(search.ruled_out)) if search.ruled_out else ""
    if search.outcomes:
        shown = [f"({', '.join(n)}) {why}" for n, why in search.outcomes[:8]]
        more = len(search.outcomes) - len(shown)
        ruled += "; lifted loops ruled out: " + "; ".join(shown) + (f"; and {more} more" if more > 0 else "")
    return ruled or "; no lifted loop was ruled out before the search ended"


# the search's budgets live with the candidate sets (`thm3.lift.sets`), and read here too
__all__ = ["COMPOSITION_SHARE", "MAX_ADDED", "PENDING_REFUSALS", "PENDING_SHARE", "READING_SECONDS",
           "READING_SHARE", "RESERVE", "THEOREM_SHARE", "Lift", "lift"]
