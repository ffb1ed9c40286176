"""Honest limits of lifting: a family of lists that shows the added state must grow.

A lift keeps the loop's fields and adds some; lists with one state but different futures
(a prefix ys with h(ys + xs1) != h(ys + xs2)) must differ in the added fields.  Among all
short lists over the witness search's domain, this stage groups the lists by their state
and counts, for each length L, the most lists of one state whose futures are pairwise
different (each prefix of length <= 1 folded in front of each list).  Where that count
grows with every length tried (records: the later maxima that a prefix can hide; the
elements below the first: the multiset of the others), a lift whose added fields take
finitely many values (flags, capped counts, a finite table) is unlikely; what is proved
is the lower bound: every pair in the family of the longest length is a witness,
confirmed by folding it again in the exact reals (`thm3.analysis.witness.confirm_exact`),
so a lift needs as many added states as the family has lists.  Growth over the lengths
tried is no proof of growth beyond them (a count modulo a large m grows up to m), so the
report never says that no finite-state lift exists.  It says nothing
about lifts by unbounded fields: a power t**len (Horner) or a running sum grows the same
way, so `thm3.lift.search` reports it only where its search found no lift."""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass

import numpy as np

from thm3.analysis.witness import (ShortLists, batch_matrix, confirm_exact, element_domain, exact_hints,
                                   exact_plain, parameter_settings, show)
from thm3.ir import Loop, Type
from thm3.semantics import critical

_DIGITS = 9
_FAMILY = 10            # the most lists a confirmed family keeps (45 pairs to fold)


@dataclass(frozen=True)
class Growth:
    """For each length L = 1 .. len(counts), the most lists of length <= L with one state
    and pairwise different futures (`counts`); the confirmed family at the longest length
    (`family`: exact plain lists, all with the state `state`), and for each pair of it the
    prefix that tells them apart (`prefixes`, keyed by the pair's positions)."""
    counts: tuple[int, ...]
    family: tuple
    prefixes: dict
    state: tuple
    params: dict

    @property
    def grows(self) -> bool:
        """The count rises at every length tried from the second on, and the family has
        at least three lists."""
        c = self.counts
        return len(c) >= 4 and all(b > a for a, b in zip(c[1:], c[2:])) and len(self.family) >= 3

    def describe(self, loop: Loop) -> str:
        fields = ", ".join(loop.field_names)
        longest = max(len(xs) for xs in self.family)
        counts = ", ".join(f"{n} for L = {i + 1}" for i, n in enumerate(self.counts))
        lists = ", ".join(show(xs) for xs in self.family[:4]) + (", ..." if len(self.family) > 4 else "")
        return (f"no lift found, and the state grows: ({fields}) must be told apart on {len(self.family)} "
                f"lists of length <= {longest} ({lists}: one state, pairwise different futures, each pair a "
                f"witness checked by folding), so a lift needs {len(self.family)} or more added states for "
                f"them; the most such lists of length <= L rose at every length tried ({counts}): a lift "
                f"with finitely many added values (flags, capped counts, a table) is unlikely, though "
                f"lengths past {len(self.counts)} are not checked (a count modulo m stops growing at m)")


def growth_family(loop: Loop, *, timeout: float = 3.0, max_len: int = 5) -> Growth | None:
    """The growth family of `loop` (see the module), or None where the loop has other
    than one scalar element parameter or no two lists of one state have different
    futures.  Lists of length <= L are drawn from L + 3 element values, so that a
    family that needs fresh values (the records of a list) can grow with L."""
    if len(loop.elements) != 1 or loop.elements[0].type not in (Type.INT, Type.REAL) or loop.elements[0].index:
        return None
    deadline = time.monotonic() + timeout
    rng = np.random.default_rng(0)
    params = parameter_settings(loop, 1, rng)[0]
    try:
        hints = exact_hints(critical.exact_element_values(loop, params, deadline))
    except (TypeError, ValueError, NotImplementedError, RecursionError):
        hints = {}
    counts: list[int] = []
    best = None
    for length in range(1, max_len + 1):
        if time.monotonic() > deadline:
            break
        elements = _values(loop, params, rng, length + 3)
        if len(elements) < 2:
            return None
        search = ShortLists(loop, params, elements, sum(len(elements) ** k for k in range(length + 1)), length,
                            hints)
        top, members, post = _largest_group(search)
        counts.append(top)
        if members is not None and (best is None or top >= best[0]):
            best = (top, members, search, post)
    if best is None or best[0] < 2:
        return None
    _, members, search, post = best
    family, pairs = _confirmed(loop, search, members, post, deadline + timeout)
    own = batch_matrix(search.states)
    return Growth(tuple(counts), tuple(exact_plain(loop, search.exact_list(i)) for i in family), pairs,
                  tuple(float(v) for v in own[family[0]]) if family else (), dict(params))


def _values(loop: Loop, params: dict, rng, count: int) -> list[tuple]:
    """`count` element values the preconditions admit: the witness search's domain, then
    small integers, halves and quarters (fresh values for longer lists)."""
    seen = list(element_domain(loop, params, rng))
    have = {float(e[0]) for e in seen}
    d = loop.elements[0]
    extra = [v / q for q in (1, 2, 4, 8) for v in range(-4 * q, 4 * q + 1)]
    for v in extra:
        if len(seen) >= count * 2:
            break
        if v in have or (d.type is Type.INT and v != int(v)):
            continue
        value = np.int64(int(v)) if d.type is Type.INT else np.float64(v)
        if _admits(loop, value, params):
            seen.append((value,))
            have.add(v)
    return seen[:count]


def _admits(loop: Loop, value, params: dict) -> bool:
    from thm3.semantics.evaluate import NUMPY, evaluate, quiet
    env = dict(params) | {loop.elements[0].name: value}
    with quiet():
        return all(bool(np.all(evaluate([c], env, NUMPY)[0])) for c in loop.preconditions)


def _largest_group(search: ShortLists):
    """The most lists of one state with pairwise different futures (a one-element prefix
    each), the group's list numbers, and the states after each prefix."""
    n = search.n
    own = np.round(batch_matrix(search.states), _DIGITS) + 0.0
    prefixes = [[j] for j in range(search.d)]
    post = batch_matrix(search._fold_all(search._start_states(prefixes), np.arange(n), len(prefixes)))
    post = np.round(post.reshape(len(prefixes), n, -1), _DIGITS) + 0.0
    future = np.ascontiguousarray(post.transpose(1, 0, 2).reshape(n, -1))
    ok = ~np.any(np.isnan(own), axis=1) & ~np.any(np.isnan(future), axis=1)
    groups: dict = {}
    for i in np.nonzero(ok)[0]:
        groups.setdefault(own[i].tobytes(), {}).setdefault(future[i].tobytes(), int(i))
    if not groups:
        return 0, None, post
    key = max(groups, key=lambda k: len(groups[k]))
    return len(groups[key]), list(groups[key].values()), post


def _confirmed(loop: Loop, search: ShortLists, members: list, post: np.ndarray, deadline: float):
    """A subset of `members` (shortest lists first) whose every pair is a witness
    confirmed by exact folding, with the prefix for each pair."""
    family: list[int] = []
    pairs: dict = {}
    for i in sorted(members, key=lambda m: (search.length[m], m)):
        if len(family) >= _FAMILY or time.monotonic() > deadline:
            break
        found = {}
        for k, j in enumerate(family):
            differ = np.nonzero(np.any(post[:, i] != post[:, j], axis=1))[0]
            w = next((p for p in differ if confirm_exact(loop, search.exact_list(j), search.exact_list(i),
                                                         [search.exact[p]], "right", search.exact_params,
                                                         search.dim)), None)
            if w is None:
                break
            found[(k, len(family))] = exact_plain(loop, [search.exact[w]])
        else:
            pairs |= found
            family.append(i)
    return family, pairs


def check_growth(loop: Loop, g: Growth) -> bool:
    """Whether every pair of the family is a witness (exact folding): one state, and the
    recorded prefix tells them apart."""
    from thm3.analysis.witness import exact_elements
    from thm3.semantics import reals
    params = {d.name: reals.exact(g.params[d.name], d.type) for d in loop.params}
    for (a, b), ys in g.prefixes.items():
        xs1, xs2 = exact_elements(loop, g.family[a]), exact_elements(loop, g.family[b])
        if not confirm_exact(loop, xs1, xs2, exact_elements(loop, ys), "right", params, 2):
            return False
    return all((a, b) in g.prefixes for a, b in itertools.combinations(range(len(g.family)), 2))
