"""The lifting search's candidate sets (`thm3.lift.search`): sets of up to `MAX_ADDED`
candidate units (`thm3.lift.candidates`), fewest fields first, each pruned by every
witness found so far (counterexample-guided), then checked on lists and by the prover;
the composition lifts a theorem gives (a finite-state step's copies, a semiring-affine
block's composed map) are tried among them."""
from __future__ import annotations

import inspect
import itertools
import math
import textwrap
import time
from dataclasses import replace

import numpy as np

from thm3.ir import Fn, Loop, substitute, var
from thm3.syntax.loopfile import expression_text as to_text
from thm3.syntax.names import fresh
from thm3.semantics.equality import states_close
from thm3.semantics.samples import Domain
from thm3.lift.candidates import COMPOSED, Aux, Candidates, default_text, with_fields
from thm3.synth.finite import monoid_witnesses as composition_witnesses
from thm3.synth.readback import lift_candidates as composition_lifts
from thm3.analysis.witness import (Witness, check_witness, find_witnesses, fold, from_plain, show, states_far,
                                   to_elements, vec_dim)

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


class LiftSearch:
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
        self.cands = Candidates(loop, self.rng).build()
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
            self.cands += [Aux(a.key, a.hint, a.type, a.default, a.update, a.comment,
                                a.why or "a part of the transition function on the reachable states, which "
                                "the combine composes", -1, route="finite") for a in got.fields]
            idx = tuple(range(start, len(self.cands)))
            self.composition.append((idx, got.why))
            if got.combine is not None:
                self.hints[idx] = got.combine
        self.apart = {i for idx, _ in self.composition for i in idx}
        self.mega = with_fields(loop, self.cands)
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
                if c.route == "semiring" and c.rank == COMPOSED and c.group:
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

    def found(self, cands: list[Aux], lifted: Loop, names: list[str], proof, how: str):
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

    def lifted(self, cands: list[Aux]) -> tuple[Loop, list[str]]:
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
        lifted = with_fields(loop, named)
        return replace(lifted, path=f"<lifted {loop.name}>", doc=doc), [names[c.key] for c in cands]

    def describe(self, cands: list[Aux], lifted: Loop) -> list[str]:
        k = len(self.loop.fields)
        out = []
        for c, f, u in zip(cands, lifted.fields[k:], lifted.left.outputs[k:]):
            out.append(f"{f.name}: {c.type.value} = {default_text(c)}; left: {f.name}' = {to_text(u)}; "
                       f"{c.why}{self.evidence(c, f.name)}")
        return out

    def evidence(self, c: Aux, name: str) -> str:
        """Which known witness the field tells apart, as evidence that it is needed."""
        i = self.index[c.key]
        for w, pre in zip(self.records, self.pre):
            if not pre[i]:
                return f" (tells {show(w.xs1)} from {show(w.xs2)})"
        return ""


# --- helpers -----------------------------------------------------------------------

def _renamed(fn: Fn, names: dict[str, str]) -> Fn:
    """A combine over "a.<key>" and "b.<key>" with each added field's key in `names` read
    under its name in the lifted loop."""
    def new(n: str) -> str:
        side, _, key = n.partition(".")
        return f"{side}.{names[key]}" if side in ("a", "b") and key in names else n
    mapping = {n: var(new(n), t) for n, t in fn.inputs if new(n) != n}
    return Fn(tuple((new(n), t) for n, t in fn.inputs), tuple(substitute(list(fn.outputs), mapping)))


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
