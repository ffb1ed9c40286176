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
is rendered only for the user (`Lift.loop_text`)."""
from __future__ import annotations

import inspect
import itertools
import math
import sys
import textwrap
import time
from dataclasses import dataclass, replace

import numpy as np

from thm3.ir import (COMPARISONS, Expr, FieldDecl, Fn, Loop, Op, Type, as_real, const, free_vars,
                     initial_state, promote, substitute, var, walk)
from thm3.ir.monoids import monoid
from thm3.ir.simplify import simplify
from thm3.syntax.loopfile import expression_text as to_text, loop_text
from thm3.syntax.names import fresh
from thm3.semantics.equality import close, states_close
from thm3.prove.budget import GRACE, PastDeadline, hard_deadline, young_collections_only
from thm3.semantics.samples import Domain
from thm3.lift.growth import growth_family
from thm3.synth.finite import monoid_witnesses as composition_witnesses
from thm3.synth.readback import lift_candidates as composition_lifts
from thm3.analysis.witness import (WIDER_SETTINGS, ShortLists, Witness, check_witness, element_domain, find_witnesses, fold, from_plain,
                          parameter_settings, show, states_far, to_elements, vec_dim)

MAX_ADDED = 3           # candidate units (a field, or a group such as a step matrix) per lift
# The budget on which a lifted loop must show no witness: more lists and parameter
# values than the first search.
_CHECK = dict(max_lists=12000, max_len=7, prefix_len=2, settings=3)
_QUICK = dict(max_lists=1500, max_len=5, prefix_len=2, settings=2)
# The prover's seconds for a lifted loop not made by composition while a composition lift
# waits to be tried (the composition's own proof takes about that long at most).
PENDING_SHARE = 3.0
# Plain sets that have no witness but whose proof fails while a composition lift waits:
# after this many, the composition lifts (their combine given by a theorem) are tried
# before the rest (a gated momentum: six 3-field sets, 3 s each, before its 8 copies).
PENDING_REFUSALS = 2
COMPOSITION_SHARE = 10.0  # seconds at least for a composition lift's proof (the prover's default)
RESERVE = 0.15            # of the time left, kept from a composition lift's proof for the search's own answer
THEOREM_SHARE = 1.0     # seconds for a plain set's proof while a reduced semiring unit waits
# The composition lifts' reading (machine, copies, their combine): at least READING_SECONDS,
# else this share of the search's time (a retry breaker's 8 fields: 0.7 s on the 2-core VM).
READING_SECONDS = 2.0
READING_SHARE = 0.2


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


@dataclass(frozen=True)
class _Aux:
    """A candidate auxiliary field.  Its update reads "acc.<key>" for itself and for
    the candidates it needs, besides the original fields, elements and parameters.
    Candidates with the same `group` are taken together (the entries of a matrix)."""
    key: str
    hint: str           # the name it takes in the lifted file, if free
    type: Type
    default: object
    update: Expr
    comment: str        # the State comment: what the field holds
    why: str            # why a combine may need it
    rank: int           # preference: smaller first
    needs: tuple[str, ...] = ()
    group: str = ""
    route: str = ""     # the composition route it comes from ("finite", "semiring"), or ""


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
    search = so_far["search"] = _LiftSearch(loop, first, deadline, prove)
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


def _by_components(search: "_LiftSearch", deadline: float):
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
    cands: list[_Aux] = []
    todo = sum(bool(ws) for ws in hit)
    for g, sub, ws in zip(groups, subs, hit):
        if not ws:
            continue            # no witness on this group: its fields combine as they are, or the prover says
        left_s = deadline - time.monotonic()
        if left_s <= 0.5:
            return None
        part = _LiftSearch(sub, ws, time.monotonic() + left_s / (todo + 1), search.prove)
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
        mine: list[_Aux] = []
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
            mine.append(_Aux(key, key, f.type, f.default, u, f.comment,
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
    added = [f"{f.name}: {c.type.value} = {_default_text(c)}; left: {f.name}' = {to_text(u)}; {c.why}"
             for c, f, u in zip(cands, lifted.fields[k:], lifted.left.outputs[k:])]
    return lifted, added, f"lifted group by group ({len(groups)} independent groups)", proof


def _self_read(update: Expr, key: str) -> Expr:
    """`update` with the field's read of itself under one name, to compare two fields."""
    return substitute([update], {f"acc.{key}": var("acc.__self__", update.type)})[0]


def _no_lift(search: "_LiftSearch", witness, stopped: bool = False) -> str:
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


def _ruled_out(search: "_LiftSearch") -> str:
    """The lifted loops the search ruled out, each with why (the first eight)."""
    ruled = ("; composition lifts ruled out: " + "; ".join(search.ruled_out)) if search.ruled_out else ""
    if search.outcomes:
        shown = [f"({', '.join(n)}) {why}" for n, why in search.outcomes[:8]]
        more = len(search.outcomes) - len(shown)
        ruled += "; lifted loops ruled out: " + "; ".join(shown) + (f"; and {more} more" if more > 0 else "")
    return ruled or "; no lifted loop was ruled out before the search ended"


class _LiftSearch:
    def __init__(self, loop: Loop, witnesses: list[Witness], deadline: float, prove):
        self.loop = loop
        self.deadline = deadline
        self.prove = prove
        self.rng = np.random.default_rng(0)
        self.tested = 0
        self.refused = 0
        self.refused_sets: list[set[int]] = []   # no witness, but not proved
        self.refused_names: list[list[str]] = []
        # sets whose proof was cut short (a shorter share while a theorem's lift waited):
        # proved again with the full share once nothing else is left (under load, a proof of
        # 0.6 s takes more than 1 s)
        self.deferred: list[list[int]] = []
        self.prover_errors: list[str] = []
        self.ruled_out: list[str] = []          # composition lifts tried and why they failed
        self.unrefuted: list[str] = []          # composition lifts with no witness, their combine not proved
        self.outcomes: list[tuple[list[str], str]] = []     # every lifted loop tried: its fields, why not
        self.timed_out = False
        self.route = ""                         # the found lift's composition route, if any
        self.first_witness = witnesses[0] if witnesses else None
        self.cands = _Candidates(loop, self.rng).build()
        # Composition lifts first where the step is finite-state (thm3.synth.finite): each
        # a whole set, tried before the candidates of the search below and never mixed
        # with them.
        self.composition: list[tuple[tuple[int, ...], str]] = []
        self.pending: list = []           # composition lifts not tried yet (run fills it)
        self._theorem_units: list[set[int]] | None = None   # reduced semiring units not tried yet
        self.hints: dict[tuple[int, ...], Fn] = {}      # a composition lift's combine by construction
        reading = max(READING_SECONDS, READING_SHARE * (deadline - time.monotonic()))
        for n, got in enumerate(composition_lifts(loop, min(deadline, time.monotonic() + reading))):
            start = len(self.cands)
            self.cands += [_Aux(a.key, a.hint, a.type, a.default, a.update, a.comment,
                                a.why or "a part of the transition function on the reachable states, which "
                                "the combine composes", -1, route="finite") for a in got.fields]
            idx = tuple(range(start, len(self.cands)))
            self.composition.append((idx, got.why))
            if got.combine is not None:
                self.hints[idx] = got.combine
        self.apart = {i for idx, _ in self.composition for i in idx}
        self.mega = _with_fields(loop, self.cands)
        self.keys = [c.key for c in self.cands]
        self.index = {k: i for i, k in enumerate(self.keys)}
        # Per witness: pre_close[c], post_far[c] over candidates, and whether the
        # original fields differ after the prefix.  One extra column, past the last
        # candidate, pads candidate sets of fewer fields: equal before, equal after.
        self.pre: list[np.ndarray] = []
        self.post: list[np.ndarray] = []
        self.orig_post: list[bool] = []
        self.records: list[Witness] = []
        for w in witnesses:
            self.add(w)
        # Where the step is finite-state, the lists whose transition functions differ
        # though their states agree are witnesses too (each confirmed by folding): every
        # candidate set must tell them apart before it goes to the lists or the prover.
        for w in _monoid_witnesses(loop, min(deadline, time.monotonic() + 1.0)):
            self.add(w)

    # --- witnesses as constraints on candidate sets

    def add(self, w: Witness) -> None:
        params = {d.name: from_plain(w.params[d.name], d.type) for d in self.loop.params}
        xs1, xs2, ys = (to_elements(self.loop, xs) for xs in (w.xs1, w.xs2, w.ys))
        if w.side != "right":
            return
        dim = vec_dim(self.loop, xs1 + xs2 + ys, params)
        states = [fold(self.mega, xs, params, dim) for xs in (xs1, xs2, ys + xs1, ys + xs2)]
        k = len(self.loop.fields)
        pre = np.array([not states_far((a,), (b,)) and states_close((a,), (b,))
                        for a, b in zip(states[0][k:], states[1][k:])] + [True], dtype=bool)
        post = np.array([states_far((a,), (b,)) for a, b in zip(states[2][k:], states[3][k:])] + [False],
                        dtype=bool)
        orig = states_far(states[2][:k], states[3][:k])
        self.pre.append(pre)
        self.post.append(post)
        self.orig_post.append(orig)
        self.records.append(w)

    def violated(self, sets: np.ndarray, start: int = 0) -> np.ndarray:
        """For each candidate set (rows of indices, padded), whether a known witness
        (from number `start` on) still holds for the loop lifted by it."""
        out = np.zeros(len(sets), dtype=bool)
        if len(sets) == 0:
            return out
        for pre, post, orig in zip(self.pre[start:], self.post[start:], self.orig_post[start:]):
            same_before = np.all(pre[sets], axis=1)
            differ_after = orig | np.any(post[sets], axis=1)
            out |= same_before & differ_after
        return out

    # --- the search

    def units(self) -> list[tuple[int, ...]]:
        """Candidates as the search takes them: one alone, or a whole group."""
        groups: dict[str, list[int]] = {}
        out: list[tuple[int, ...]] = []
        for i, c in enumerate(self.cands):
            if i in self.apart:
                continue
            if c.group:
                groups.setdefault(c.group, []).append(i)
            else:
                out.append((i,))
        return out + [tuple(g) for g in groups.values()]

    def closed_sets(self) -> np.ndarray:
        """Sets of up to MAX_ADDED units closed under `needs`, fewest fields first, then
        by preference; padded with the extra column."""
        pad = len(self.cands)
        needs = [{self.index[d] for d in c.needs} for c in self.cands]
        ranks = [c.rank for c in self.cands]
        units = self.units()
        sets = []
        for k in range(1, MAX_ADDED + 1):
            for combo in itertools.combinations(units, k):
                s = tuple(sorted(i for u in combo for i in u))
                if all(needs[i] <= set(s) for i in s):
                    sets.append(s)
        sets.sort(key=lambda s: (len(s), sum(ranks[i] for i in s), sorted(ranks[i] for i in s), s))
        width = max((len(s) for s in sets), default=1)
        return np.array([s + (pad,) * (width - len(s)) for s in sets], dtype=np.int64).reshape(len(sets), width)

    def run(self):
        """The candidate sets, fewest fields first; among sets of one size the composition
        lifts (a finite-state step's copies) come first, then the search's own."""
        pending = self.pending = sorted(self.composition, key=lambda c: len(c[0]))
        sets = self.closed_sets()
        pad = len(self.cands)
        alive = ~self.violated(sets)
        seen = len(self.records)
        for row in range(len(sets) + 1):
            size = MAX_ADDED + 1 if row == len(sets) else int(np.sum(sets[row] != pad))
            if self.refused >= PENDING_REFUSALS:
                size = math.inf             # every waiting composition lift now
            while pending and len(pending[0][0]) <= size:
                chosen, why = pending.pop(0)
                found = self.try_composition(chosen, why)
                if found is not None or self.timed_out:
                    return found
            if row == len(sets):
                break
            if not alive[row]:
                continue
            if len(self.records) > seen:
                # new witnesses since the mask was computed: re-prune the rest
                alive[row:] &= ~self.violated(sets[row:], seen)
                seen = len(self.records)
                if not alive[row]:
                    continue
            chosen = [int(i) for i in sets[row] if i != pad]
            # A superset of a set that has no witness has none either; when the
            # prover refused the smaller set, a larger one is rarely what it needs.
            if any(r <= set(chosen) for r in self.refused_sets):
                continue
            if time.monotonic() > self.deadline:
                self.timed_out = True
                return None
            found = self.try_set(chosen)
            if found is not None:
                return found
        for chosen, why in pending:
            found = self.try_composition(chosen, why)
            if found is not None or self.timed_out:
                return found
        return self.retry_deferred()

    def retry_deferred(self):
        """The sets refused within a short share, proved again with the full one, in the
        order they were tried, while time is left."""
        deferred, self.deferred = self.deferred, []
        for chosen in deferred:
            if time.monotonic() > self.deadline:
                self.timed_out = True
                return None
            found = self.retry(chosen)
            if found is not None or self.timed_out:
                return found
        return None

    def retry(self, chosen: list[int]):
        cands = [self.cands[i] for i in chosen]
        lifted, names = self.lifted(cands)
        proof = self.proved(lifted)
        if not proof:
            self.outcomes.append((names, "no witness, and no combine was proved with the full share either"
                                  + (" before the deadline" if self.timed_out else "")))
            return None
        k = self.refused_sets.index(set(chosen))
        self.refused -= 1
        del self.refused_sets[k], self.refused_names[k]
        return self.found(cands, lifted, names, proof, "and the prover proved its combine, with the full share")

    def run_theorems(self):
        """Only the lifts a theorem gives, fewest fields first: a finite-state step's
        copies, and the groups of a semiring-affine block's composed map (its reduced
        entries, Cayley-Hamilton's coefficients, the full matrix)."""
        groups: dict[str, list[int]] = {}
        for i, c in enumerate(self.cands):
            if c.route == "semiring" and c.group:
                groups.setdefault(c.group, []).append(i)
        options = list(self.composition) + [(tuple(g), "the composed map over a semiring")
                                              for g in groups.values()]
        for chosen, why in sorted(options, key=lambda o: len(o[0])):
            found = self.try_composition(chosen, why)
            if found is not None or self.timed_out:
                return found
        return None

    def theorem_waits(self, chosen: set[int]) -> bool:
        """Whether a reduced semiring unit (`step_matrix`: the lift the theorem gives where
        `left` is affine over a semiring) is still untried once `chosen` is: a plain set
        then gets a short proof, as while a composition lift waits (semiring_ssm_diag: two
        one-field sets took 3.6 s each before the two powers its diagonal step needs)."""
        if self._theorem_units is None:
            groups: dict[str, set[int]] = {}
            for i, c in enumerate(self.cands):
                if c.route == "semiring" and c.rank == _COMPOSED and c.group:
                    groups.setdefault(c.group, set()).add(i)
            self._theorem_units = list(groups.values())
        if chosen in self._theorem_units:
            return False            # a theorem's lift itself (a Cayley-Hamilton unit before the reduced one)
        self._theorem_units = [g for g in self._theorem_units if not g <= chosen]
        return bool(self._theorem_units)

    def try_composition(self, chosen: tuple[int, ...], why: str):
        """One composition lift: refuted by a known witness, on lists, or by the prover."""
        if time.monotonic() > self.deadline:
            self.timed_out = True
            return None
        if self.violated(np.array([chosen], dtype=np.int64))[0]:
            self.ruled_out.append(f"{len(chosen)} copies ({why.split(':')[0]}): refuted by a known witness")
            return None
        found = self.try_set(list(chosen), composition=True, hint=self.hints.get(tuple(chosen)))
        if found is not None:
            lifted, added, reason, proof = found
            return lifted, added, f"{reason}; {why}", proof
        outcome = self.outcomes[-1][1] if self.outcomes else "not tried"
        self.ruled_out.append(f"{len(chosen)} copies ({why.split(':')[0]}): {outcome}")
        if outcome.startswith("no witness"):
            self.unrefuted.append(f"{len(chosen)} copies ({why.split(':')[0]})")
        return None

    def try_set(self, chosen: list[int], composition: bool = False, hint: Fn | None = None):
        cands = [self.cands[i] for i in chosen]
        lifted, names = self.lifted(cands)
        if hint is not None:
            lifted = replace(lifted, combine_hint=_renamed(hint, {c.key: n for c, n in zip(cands, names)}))
        self.tested += 1
        budget = max(0.05, min(3.0, self.deadline - time.monotonic()))
        # Most sets fail on short lists: a quick search first, the larger budget (with
        # every small value of the loop parameters, 0 and 1 too: a = 1 makes a**len
        # say nothing) only for a set that survives it.
        ws = find_witnesses(lifted, timeout=budget, limit=8, **_QUICK)
        if not ws and not composition:
            # (a composition lift's combine is given by a theorem: the quick search and the
            # monoid's witnesses below are its check before the prover, not seconds more)
            check = _CHECK | ({"settings": 8} if self.loop.params else {})
            ws = find_witnesses(lifted, timeout=budget, limit=8, **check)
        where = "on short lists"
        if not ws:
            # a finite-state lifted loop is refuted exactly on its reachable states: two lists
            # of one lifted state whose transition functions differ (read off its monoid)
            # end the set here, before the prover spends seconds failing on it
            ws = _monoid_witnesses(lifted, min(self.deadline, time.monotonic() + 0.5), limit=4)
            where = "read off the lifted loop's transition functions"
        if ws:
            for w in ws:
                self.add(w)
            self.outcomes.append((names, f"a witness {where} ({ws[0].describe()})"))
            return None
        if time.monotonic() > self.deadline:
            self.outcomes.append((names, "no witness found before the deadline; not proved"))
            return None
        if not self.preserved(lifted):
            self.outcomes.append((names, "the original fields change"))
            return None
        proof = None
        if self.prove is not None:
            # while a composition lift (its combine given by a theorem) waits, a plain set
            # gets a short proof: a prover failing on it for seconds would delay that lift
            # a composition lift's proof may take longer than a plain set's default (a
            # combine mod m over six fields: 16 paths of nonlinear integer arithmetic; a
            # lexer's 17 lifted control states: 289): it gets three quarters of what is left (all of
            # it where no other composition lift waits: a framing scanner's 13 copies take
            # 20 s), at least the default, but never the RESERVE the search needs for its
            # own answer (what it ruled out) before the deadline
            left = self.deadline - time.monotonic()
            part = 0.75 if self.pending else 1.0
            share = (max(0.5, min(max(COMPOSITION_SHARE, part * left), left - max(1.0, RESERVE * left)))
                     if composition else
                     PENDING_SHARE if self.pending else
                     THEOREM_SHARE if self.theorem_waits(set(chosen)) else None)
            proof = self.proved(lifted, share)
            if not proof and share is not None and not composition and not self.timed_out:
                self.deferred.append(list(chosen))
            if not proof:
                self.refused += 1
                self.refused_sets.append(set(chosen))
                self.refused_names.append(names)
                self.outcomes.append((names, "no witness, but no combine was proved"
                                      + (" before the deadline" if self.timed_out else "")))
                return None
        how = "and the prover proved its combine" if self.prove is not None else "no prover given"
        return self.found(cands, lifted, names, proof, how)

    def found(self, cands: list[_Aux], lifted: Loop, names: list[str], proof, how: str):
        """The search's answer for a lifted loop that stands: its route, fields and reason."""
        self.route = next((c.route for c in cands if c.route), "")
        reason = f"added {', '.join(names)}: the lifted loop has no witness on short lists ({how})"
        return lifted, self.describe(cands, lifted), reason, proof

    def proved(self, lifted: Loop, seconds: float | None = None):
        """The prover's answer (within `seconds`, where its callback takes a limit); one that
        ran out of time (`SolverTimeout`) ends the search, an error in it counts as "not
        proved", and is reported."""
        from thm3.errors import SolverTimeout
        try:
            if seconds is not None and "seconds" in inspect.signature(self.prove).parameters:
                return self.prove(lifted, seconds=seconds)
            return self.prove(lifted)
        except SolverTimeout:
            self.timed_out = True
            return None
        except Exception as err:            # the prover is another stage: report, go on
            self.prover_errors.append(f"{type(err).__name__}: {err}")
            return None

    # --- checks

    def random_lists(self, count: int = 40):
        dom = Domain(self.loop, deadline=self.deadline)
        for i in range(count):
            params = dom.params(self.rng, small=i % 2 == 0)
            n = int(self.rng.integers(0, 9))
            yield dom.random_list(self.rng, params, n, small=i % 3 != 0), params

    def preserved(self, lifted: Loop) -> bool:
        """The original fields keep their values after every list (folded both ways)."""
        k = len(self.loop.fields)
        for xs, params in self.random_lists():
            dim = vec_dim(self.loop, xs, params)
            a = fold(self.loop, xs, params, dim)
            b = fold(lifted, xs, params, dim)
            if not states_close(a, b[:k]):
                return False
        return True

    # --- the lifted loop, as IR

    def lifted(self, cands: list[_Aux]) -> tuple[Loop, list[str]]:
        """The loop with `cands` added under fresh names, its docstring saying why."""
        loop = self.loop
        taken = set(loop.field_names) | {p.name for p in loop.params} | {p.name for p in loop.elements}
        names = {}
        for c in cands:
            names[c.key] = fresh(c.hint, taken)
            taken.add(names[c.key])
        mapping = {f"acc.{c.key}": var(f"acc.{names[c.key]}", c.type) for c in cands}
        named = [replace(c, key=names[c.key], update=u)
                 for c, u in zip(cands, substitute([c.update for c in cands], mapping))]
        if self.first_witness is not None:
            lines = [f"Lifted by thm3: no combine over ({', '.join(loop.field_names)}) exists, since",
                     f"  {self.first_witness.describe()}."]
        else:
            lines = [f"Lifted by thm3: no combine over ({', '.join(loop.field_names)}) was found (and none "
                     "was proved impossible); over the added fields one is proved."]
        lines += [textwrap.fill(f"Added {names[c.key]}: {c.comment}; {c.why}.", 88, subsequent_indent="  ")
                  for c in cands]
        doc = (loop.doc + "\n\n" if loop.doc else "") + "\n".join(lines)
        lifted = _with_fields(loop, named)
        return replace(lifted, path=f"<lifted {loop.name}>", doc=doc), [names[c.key] for c in cands]

    def describe(self, cands: list[_Aux], lifted: Loop) -> list[str]:
        k = len(self.loop.fields)
        out = []
        for c, f, u in zip(cands, lifted.fields[k:], lifted.left.outputs[k:]):
            out.append(f"{f.name}: {c.type.value} = {_default_text(c)}; left: {f.name}' = {to_text(u)}; "
                       f"{c.why}{self.evidence(c, f.name)}")
        return out

    def evidence(self, c: _Aux, name: str) -> str:
        """Which known witness the field tells apart, as evidence that it is needed."""
        i = self.index[c.key]
        for w, pre in zip(self.records, self.pre):
            if not pre[i]:
                return f" (tells {show(w.xs1)} from {show(w.xs2)})"
        return ""


# --- candidates ------------------------------------------------------------------

_SUM, _POWER, _FLAG, _FIRST_INF, _HAS, _FIRST, _COUNT, _LEN, _LAST, _PREFIX, _EXTREMUM, _LEAD, _OTHER_SUM = range(13)
_COMPOSED = -1      # the reduced composed map of a semiring-affine step: first among its size


class _Candidates:
    """Candidate fields built from the subterms of `left`, deduplicated by their values
    on short lists (a candidate equal to an original field or to an earlier candidate,
    or constant, adds nothing)."""

    def __init__(self, loop: Loop, rng: np.random.Generator):
        self.loop = loop
        self.rng = rng
        self.elements = {d.name for d in loop.elements}
        self.params = {d.name for d in loop.params}
        self.serial = 0
        self.sums: list[tuple[_Aux, Expr]] = []
        self.alls: list[_Aux] = []
        self.alias: dict[str, str] = {}       # dropped candidate key -> the field it equals
        self.moduli: dict[str, set] = {}      # a factor's text -> the moduli its products are reduced by

    def build(self) -> list[_Aux]:
        terms, predicates, factors = self.subterms()
        xs = [var(d.name, d.type) for d in self.loop.elements if not d.index and d.type is not Type.BOOL]
        base: list[_Aux] = []
        base += [self.sum(x, _SUM) for x in xs]
        base += [self.power(b) for b in factors]
        # "some element has P" first: a predicate the loop tests reads best that way
        base += [self.flag(p, all_=False) for p in predicates]
        base += [self.flag(p, all_=True) for p in predicates]
        firsts = [self.first_inf(x) for x in xs if x.type is Type.REAL]
        base += firsts
        has = self.has()
        base += [has] + [self.first(x, has) for x in xs if x.type is not Type.VEC]
        # a predicate on the element and the state (x == acc.last): the first element has
        # no previous one, so "every element after the first" is the run's flag; the list
        # is empty while the first Real element is inf (the field the run's combine reads
        # anyway), else while `has` is False
        empty = firsts[0] if firsts else has
        base += [self.flag_after_first(p, empty) for p in predicates
                 if any(n.startswith("acc.") for n in free_vars([p]))]
        base += [self.count(p) for p in predicates]
        base.append(self.length())
        base += [self.last(x) for x in xs if x.type is not Type.VEC]
        base += self.restarts()
        base += [self.sum(e, _OTHER_SUM) for e in terms]
        base = self.dedupe(base)
        kept = {c.key for c in base}
        # Built on the survivors: prefix extrema of sums (over a candidate sum, or over
        # an original field that is one), extrema of terms, leading runs.
        more: list[_Aux] = []
        for c, e in self.sums:
            if c.key in kept:
                total, needs = c.key, (c.key,)
            elif c.key in self.alias:
                total = self.alias[c.key]
                needs = () if total in self.loop.field_names else (total,)
            else:
                continue
            more += self.prefix_extrema(c.type, e, f"acc.{total}", needs)
        for e in terms + xs:
            if e.type in (Type.REAL, Type.INT):
                more += self.extrema(e)
        more += [self.lead(c) for c in self.alls if c.key in kept]
        more += [self.lead_sum(c, x) for c in self.alls if c.key in kept
                 for x in xs if x.type in (Type.REAL, Type.INT)]
        return base + self.dedupe(more, base) + self.step_matrix()

    def subterms(self) -> tuple[list[Expr], list[Expr], list[Expr]]:
        """Numeric terms and predicates over the element (and the loop parameters), and
        the factors that multiply the state."""
        loop = self.loop
        terms: list[Expr] = []
        preds: list[Expr] = []
        factors: list[Expr] = []
        initial = {f"acc.{f.name}": e for f, e in zip(loop.fields, initial_state(loop))
                   if f.type is not Type.VEC and math.isfinite(float(e.arg))}

        def over_x(e: Expr) -> bool:
            names = free_vars([e])
            return bool(names & self.elements) and names <= self.elements | self.params

        def reads_state(e: Expr) -> bool:
            return any(n.startswith("acc.") for n in free_vars([e]))

        def add(pool: list[Expr], e: Expr):
            if not any(e is p for p in pool):
                pool.append(e)

        # the modulus each product of Ints is reduced by, where it stands inside a `% m`
        under: dict[int, int] = {}
        for e in walk(loop.left.outputs):
            if e.op is Op.MOD and e.type is Type.INT and isinstance(e.arg, int) and e.arg > 0:
                for m in walk(list(e.src)):
                    if m.op is Op.MUL:
                        under.setdefault(id(m), e.arg)

        for e in walk(loop.left.outputs):
            if e.op in (Op.VAR, Op.CONST):
                continue
            if e.type is Type.BOOL and e.op in COMPARISONS + (Op.AND, Op.OR, Op.NOT):
                if over_x(e):
                    add(preds, e)
                elif free_vars([e]) & self.elements:
                    # the loop's own condition, read at the initial state, and as it
                    # stands: a flag or a run over "x > acc.last" reads the state it had
                    (g,) = substitute([e], initial)
                    g = simplify(g)
                    if over_x(g):
                        add(preds, g)
                    add(preds, e)
            elif e.type in (Type.REAL, Type.INT, Type.VEC) and over_x(e):
                add(terms, e)
            if e.op is Op.MUL:
                for s, t in (e.src, e.src[::-1]):
                    if (reads_state(s) and not reads_state(t) and t.type in (Type.REAL, Type.INT)
                            and not (t.op is Op.CONST and t.arg in (0, 1))):
                        add(factors, t)
                        key = to_text(t)
                        self.moduli.setdefault(key, set()).add(under.get(id(e)) if e.type is Type.INT else None)
        for d in loop.elements:
            if d.type is Type.BOOL:
                add(preds, var(d.name, d.type))
        return terms, preds, factors

    # --- one method a family

    def new(self, hint, type_, default, update_of, comment, why, rank, needs=()) -> _Aux:
        self.serial += 1
        key = f"c{self.serial}_{hint}"
        update = update_of(var(f"acc.{key}", type_))
        return _Aux(key, hint, type_, default, update, comment, why, rank, tuple(needs))

    def sum(self, e: Expr, rank: int) -> _Aux:
        zero = 0.0 if e.type is Type.REAL else 0
        aux = self.new("s", e.type, zero, lambda me: _arith(Op.ADD, me, e),
                       f"sum of {to_text(e)} so far", f"the total of {to_text(e)}", rank)
        if e.type in (Type.REAL, Type.INT):
            self.sums.append((aux, e))
        return aux

    def power(self, b: Expr) -> _Aux:
        type_ = Type.INT if b.type is Type.INT else Type.REAL
        text = to_text(b)
        if free_vars([b]) & self.elements:
            comment = f"product of {text} so far"
        else:
            base = text if b.op in (Op.VAR, Op.CONST) and not text.startswith("-") else f"({text})"
            comment = f"{base} ** (number of elements so far)"
        # where the state's products by b are all reduced by one `% m`, the power is too: the
        # lift stays bounded (an Int in [0, m)), and the combine needs it only mod m
        (m,) = self.moduli.get(text, {None}) if len(self.moduli.get(text, {None})) == 1 else (None,)
        if m is not None:
            comment += f" mod {m}"
            return self.new("pw", type_, 1 % m, lambda me: Expr(Op.MOD, Type.INT, (_arith(Op.MUL, me, b),), m),
                            comment, "the factor by which the later elements scale what came before them",
                            _POWER)
        return self.new("pw", type_, 1 if type_ is Type.INT else 1.0, lambda me: _arith(Op.MUL, me, b),
                        comment, "the factor by which the later elements scale what came before them",
                        _POWER)

    def flag(self, p: Expr, all_: bool) -> _Aux:
        op, word = (Op.AND, "every") if all_ else (Op.OR, "some")
        aux = self.new(("all_" if all_ else "any_") + _pred_name(p), Type.BOOL, all_,
                       lambda me: Expr(op, Type.BOOL, (me, p)),
                       f"{word} element so far has {to_text(p)}", f"whether {word} element has {to_text(p)}",
                       _FLAG)
        if all_:
            self.alls.append(aux)
        return aux

    def flag_after_first(self, p: Expr, empty: _Aux) -> _Aux:
        """Every element after the first has p (the first has no previous element to
        compare with): True while the list is one run in `left`'s sense.  `empty` tells
        the empty list: a first element that is inf while empty, or `has`."""
        marker = var(f"acc.{empty.key}", empty.type)
        none_yet = Expr(Op.EQ, Type.BOOL, (marker, const(math.inf, Type.REAL))) if empty.type is Type.REAL else \
            Expr(Op.NOT, Type.BOOL, (marker,))
        ok = Expr(Op.OR, Type.BOOL, (p, none_yet))
        aux = self.new("all_after_first_" + _pred_name(p), Type.BOOL, True,
                       lambda me: Expr(Op.AND, Type.BOOL, (me, ok)),
                       f"every element after the first has {to_text(p)}",
                       f"whether the list is one run of {to_text(p)}", _FLAG, needs=(empty.key,))
        self.alls.append(aux)
        return aux

    def restarts(self) -> list[_Aux]:
        """A Real field whose update reads no other field and clamps from both sides (max and
        min): the same update started at +inf and at -inf, where the clamp's bounds take it
        on the first element (a sum clipped to [L, U] started at U and at L): with the sum,
        what the list makes of any start (Morita et al., PLDI 2007, clipped sums)."""
        loop = self.loop
        out = []
        for f, e in zip(loop.fields, loop.left.outputs):
            reads = {n for n in free_vars([e]) if n.startswith("acc.")}
            ops = {s.op for s in walk([e])}
            if f.type is not Type.REAL or reads != {f"acc.{f.name}"} or not {Op.MAX, Op.MIN} <= ops:
                continue            # a clamp from both sides (one side: the prefix extrema do it)
            for sign, word in ((1, "inf"), (-1, "neg_inf")):
                out.append(self.new(f"{f.name}_from_{word}", Type.REAL, sign * math.inf,
                                    lambda me, e=e, f=f: substitute([e], {f"acc.{f.name}": me})[0],
                                    f"{f.name} as the list leaves it from {'+' if sign > 0 else '-'}inf",
                                    "what the list makes of a start above (below) every bound", _PREFIX))
        return out

    def first_inf(self, x: Expr) -> _Aux:
        inf = const(math.inf, Type.REAL)
        return self.new("first", Type.REAL, math.inf,
                        lambda me: Expr(Op.WHERE, Type.REAL, (Expr(Op.EQ, Type.BOOL, (me, inf)), x, me)),
                        f"first {to_text(x)} (inf while empty)",
                        "the first element, which meets the left part's last one at the split", _FIRST_INF)

    def has(self) -> _Aux:
        return self.new("has", Type.BOOL, False, lambda me: const(True), "the list is not empty",
                        "whether the list is empty", _HAS)

    def first(self, x: Expr, has: _Aux) -> _Aux:
        zero = False if x.type is Type.BOOL else (0.0 if x.type is Type.REAL else 0)
        flag = var(f"acc.{has.key}", Type.BOOL)
        return self.new("first", x.type, zero, lambda me: Expr(Op.WHERE, x.type, (flag, me, x)),
                        f"first {to_text(x)} (0 while empty)",
                        "the first element, which meets the left part's last one at the split", _FIRST,
                        needs=(has.key,))

    def count(self, p: Expr) -> _Aux:
        return self.new("count", Type.INT, 0,
                        lambda me: Expr(Op.WHERE, Type.INT, (p, _arith(Op.ADD, me, const(1)), me)),
                        f"number of elements with {to_text(p)}", f"how many elements have {to_text(p)}",
                        _COUNT)

    def length(self) -> _Aux:
        return self.new("n", Type.INT, 0, lambda me: _arith(Op.ADD, me, const(1)),
                        "number of elements so far", "the number of elements", _LEN)

    def last(self, x: Expr) -> _Aux:
        return self.new("last", x.type, 0.0 if x.type is Type.REAL else 0, lambda me: x,
                        f"last {to_text(x)} (0 while empty)", "the last element", _LAST)

    def prefix_extrema(self, type_: Type, e: Expr, total: str, needs) -> list[_Aux]:
        s = var(total, type_)
        zero = 0.0 if type_ is Type.REAL else 0
        out = []
        for op, hint, word, why in (
                (Op.MAX, "p", "largest", "the best prefix sum, which meets the left part's best tail"),
                (Op.MIN, "low", "smallest", "the lowest prefix sum, shifted by the left part's total")):
            out.append(self.new(hint, type_, zero,
                                lambda me, op=op: Expr(op, type_, (me, _arith(Op.ADD, s, e))),
                                f"{word} sum of {to_text(e)} over a prefix (the empty prefix counts)",
                                why, _PREFIX, needs=needs))
        return out

    def extrema(self, e: Expr) -> list[_Aux]:
        out = []
        for op, hint, word in ((Op.MIN, "lo", "smallest"), (Op.MAX, "hi", "largest")):
            default = monoid(op).identity
            out.append(self.new(hint, Type.REAL, default,
                                lambda me, op=op: Expr(op, Type.REAL, (me, as_real(e))),
                                f"{word} {to_text(e)} so far", f"the {word} {to_text(e)}", _EXTREMUM))
        return out

    def lead(self, all_p: _Aux) -> _Aux:
        p = all_p.update.src[1]
        flag = var(f"acc.{all_p.key}", Type.BOOL)
        grow = Expr(Op.AND, Type.BOOL, (flag, p))
        return self.new("lead", Type.INT, 0,
                        lambda me: Expr(Op.WHERE, Type.INT, (grow, _arith(Op.ADD, me, const(1)), me)),
                        f"length of the leading run with {to_text(p)}",
                        "the leading run, which joins the left part's trailing run at the split", _LEAD,
                        needs=(all_p.key,) + tuple(all_p.needs))

    def lead_sum(self, all_p: _Aux, x: Expr) -> _Aux:
        p = all_p.update.src[1]
        flag = var(f"acc.{all_p.key}", Type.BOOL)
        grow = Expr(Op.AND, Type.BOOL, (flag, p))
        return self.new("lead_s", x.type, 0.0 if x.type is Type.REAL else 0,
                        lambda me: Expr(Op.WHERE, x.type, (grow, _arith(Op.ADD, me, x), me)),
                        f"sum of {to_text(x)} over the leading run with {to_text(p)}",
                        "the leading run's sum, which joins the left part's trailing run at the split",
                        _LEAD, needs=(all_p.key,) + tuple(all_p.needs))

    def step_matrix(self) -> list[_Aux]:
        """Where `left` maps a block of fields affinely over a semiring, s' = A(x) (x) s
        (+) c(x) over (+, *), (+, *) mod m, (max, +), (min, +) or (or, and): the
        product of the step matrices so far, M' = A(x) (x) M from the identity, the
        factor by which the later elements carry the fields that came before them (a
        power c**n, a length, a companion matrix power).  Its reduced form first (the
        entries that are neither constant nor an original field, equal ones merged:
        `thm3.synth.semiring.lift_units`), ranked ahead of the other candidates of its
        size; then the full matrix.  Each a group, taken whole."""
        from thm3.synth.semiring import lift_units

        def key_of(row: str, column: str, full: bool) -> str:
            self.serial += 1
            return f"c{self.serial}_{'mf' if full else 'm'}_{row}_{column}"

        out = []
        for unit in lift_units(self.loop, key_of):
            self.serial += 1
            group = f"m{self.serial}"
            mine = set(unit.fields.values())
            how = unit.how or ("the full product of the step matrices" if unit.full else
                               "the composed map's entries that its fields do not hold already")
            for k in unit.keys:
                key, update = unit.fields[k], unit.updates[k]
                needs = tuple(sorted(n[4:] for n in free_vars([update])
                                     if n.startswith("acc.") and n[4:] in mine and n[4:] != key))
                out.append(_Aux(key, unit.names[k], update.type, unit.defaults[k], update, unit.comments[k],
                                f"{how} over {unit.semiring.name}, by which the later elements carry the "
                                f"fields that came before them", _POWER if unit.full else _COMPOSED,
                                needs=needs, group=group, route="semiring"))
        return out

    # --- deduplication by values

    def dedupe(self, cands: list[_Aux], before: tuple | list = ()) -> list[_Aux]:
        """`cands` less those equal to an original field, a candidate in `before` or an
        earlier one on short lists, or constant there; one dropped as equal to another
        field is recorded in `alias`.  (A flag opposite to another stays: the leading
        run needs its own "every element" flag.)"""
        loop = self.loop
        columns = self.columns(_with_fields(loop, list(before) + list(cands)))
        k = len(loop.fields)
        kept: list[_Aux] = []
        known = [(f.name, columns[i]) for i, f in enumerate(loop.fields)]
        known += [(c.key, columns[k + i]) for i, c in enumerate(before)]
        dropped: set[str] = set()
        for j, c in enumerate(cands):
            col = columns[k + len(before) + j]
            if any(n in dropped for n in c.needs) or np.all(_eq(col, col[:1])):
                dropped.add(c.key)
                continue
            twin = next((name for name, other in known
                         if other.shape == col.shape and np.all(_eq(col, other))), None)
            if twin is not None:
                self.alias[c.key] = twin
                dropped.add(c.key)
                continue
            kept.append(c)
            known.append((c.key, col))
        return kept

    def columns(self, mega: Loop) -> list[np.ndarray]:
        """Each field's values (rows of floats) on all short lists over the search
        domain, for two settings of the loop parameters."""
        blocks = []
        for params in parameter_settings(self.loop, 2, self.rng):
            elements = element_domain(self.loop, params, self.rng)
            if not elements:
                continue
            search = ShortLists(mega, params, elements, max_lists=3000, max_len=5)
            blocks.append([np.asarray(v, dtype=np.float64).reshape(search.n, -1) for v in search.states])
        return [np.concatenate([b[i] for b in blocks], axis=0) for i in range(len(mega.fields))]


# --- helpers -----------------------------------------------------------------------

def _renamed(fn: Fn, names: dict[str, str]) -> Fn:
    """A combine over "a.<key>" and "b.<key>" with each added field's key in `names` read
    under its name in the lifted loop."""
    def new(n: str) -> str:
        side, _, key = n.partition(".")
        return f"{side}.{names[key]}" if side in ("a", "b") and key in names else n
    mapping = {n: var(new(n), t) for n, t in fn.inputs if new(n) != n}
    return Fn(tuple((new(n), t) for n, t in fn.inputs), tuple(substitute(list(fn.outputs), mapping)))


def _with_fields(loop: Loop, cands: list[_Aux]) -> Loop:
    """`loop` with the candidates as extra fields (named by their keys); `left` updates
    them, `result` reads the original fields as before.  No right fold: the lifted
    loop gets the one its proved combine gives (`thm3.lift.derive`)."""
    fields = tuple(loop.fields) + tuple(FieldDecl(c.key, c.type, c.default, c.comment) for c in cands)
    state = tuple((f"acc.{f.name}", f.type) for f in fields)
    params = tuple((d.name, d.type) for d in loop.params)
    left = Fn(state + tuple((d.name, d.type) for d in loop.elements) + params,
              tuple(loop.left.outputs) + tuple(c.update for c in cands))
    result = None if loop.result is None else Fn(state + params, loop.result.outputs)
    return replace(loop, source="", fields=fields, left=left, right=None, result=result)


def _is_const(e: Expr, v: float) -> bool:
    return e.op is Op.CONST and not isinstance(e.arg, bool) and float(e.arg) == v


def _monoid_witnesses(loop: Loop, deadline: float, limit: int = 12) -> list[Witness]:
    """Witnesses read off a finite-state loop's transition monoid, each confirmed by folding
    (none where the loop has parameters, or is not finite-state)."""
    if loop.params:
        return []

    def plain(xs):
        return [x[0] if len(x) == 1 else list(x) for x in xs]

    out = []
    for xs1, xs2, ys in composition_witnesses(loop, deadline, limit):
        w = Witness(plain(xs1), plain(xs2), plain(ys))
        if check_witness(loop, w):
            out.append(w)
    return out


def _arith(op: Op, a: Expr, b: Expr) -> Expr:
    type_ = promote(a.type, b.type)
    if type_ is not Type.INT:
        a, b = as_real(a), as_real(b)
    return Expr(op, type_, (a, b))


def _eq(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Equal values, to round-off (infinities equal only to themselves, NaN to NaN)."""
    return close(a, b)


def _pred_name(p: Expr) -> str:
    """A short name for a predicate: `x == 1` -> "ones", `x > t` -> "x_gt_t"."""
    words = {Op.EQ: "eq", Op.NE: "ne", Op.LT: "lt", Op.LE: "le", Op.GT: "gt", Op.GE: "ge"}
    if p.op is Op.VAR:
        return p.arg
    if p.op in words and p.src[0].op is Op.VAR:
        a, b = p.src
        if p.op is Op.EQ and b.op is Op.CONST and b.arg in (0, 1):
            return "zeros" if b.arg == 0 else "ones"
        right = _name_part(b)
        if right:
            return f"{a.arg}_{words[p.op]}_{right}"
    return "p"


def _name_part(e: Expr) -> str:
    if e.op is Op.VAR:
        return e.arg.replace("acc.", "")
    if e.op is Op.CONST and not isinstance(e.arg, bool) and math.isfinite(float(e.arg)):
        v = float(e.arg)
        text = str(int(v)) if v == int(v) else str(v)
        return text.replace("-", "m").replace(".", "_")
    return ""


def _default_text(c: _Aux) -> str:
    v = c.default
    if isinstance(v, bool):
        return repr(v)
    if isinstance(v, float):
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return str(int(v)) if v == int(v) else repr(v)
    return repr(v)
