"""The sketch's completion of one field (synth/sketch.py): its three stages over the
sketch's terms, each term spelled for stability once and checked on batched reachable
states, with the small term builders the sketch shares."""
from __future__ import annotations

import time

from thm3.errors import SolverTimeout
from thm3.ir import Expr, Loop, Op, Type
from thm3.ir.simplify import simplify
from thm3.synth.check import Checker, guard_for_stability

FOLD_CHUNK = 256         # sketch terms whose folds are checked together


def term_size(e: Expr) -> int:
    """The number of distinct nodes of e (what `walk` lists), counted without the order."""
    seen: set[int] = set()
    stack = [e]
    while stack:
        x = stack.pop()
        if id(x) not in seen:
            seen.add(id(x))
            stack.extend(x.src)
    return len(seen)


def node(op: Op, type_: Type, *src: Expr) -> Expr:
    return Expr(op, type_, tuple(src))


# A fold of a sketch term V with b's field: op(V, b.g) for an Op, or for (Op.ADD, m) the
# sum taken modulo m, (V + b.g) % m: the monoid of a field that `left` keeps as a remainder.
def fold_with(op, type_: Type, v: Expr, bg: Expr) -> Expr:
    if isinstance(op, tuple):
        if v.op is Op.MOD and v.arg == op[1]:
            v = v.src[0]            # (v % m + b.g) % m is (v + b.g) % m
        return Expr(Op.MOD, type_, (node(Op.ADD, type_, v, bg),), op[1])
    return node(op, type_, v, bg)


class Completion:
    """The sketch's three stages for one field, over its terms spelled for stability once
    (`guard_for_stability`, then simplified): the plain terms and the sketch itself; the
    sketch folded with a field of b by a monoid; an empty side passed through.  `tried`
    counts the candidate terms checked."""

    def __init__(self, loop: Loop, type_: Type, check: Checker, folds: list, guards: list, limit: int,
                 deadline: float | None):
        self.loop, self.type, self.check = loop, type_, check
        self.folds, self.guards, self.limit, self.deadline = folds, guards, limit, deadline
        self.tried = 0
        self.seen: set[Expr] = set()
        self.spelled: dict[Expr, Expr] = {}
        self.g_memo: dict = {}
        self.f_memo: dict = {}

    def spell(self, e: Expr) -> Expr:
        got = self.spelled.get(e)
        if got is None:
            got = self.spelled[e] = simplify(guard_for_stability(e, self.loop, self.g_memo), arithmetic=False,
                                             memo=self.f_memo)
        return got

    def tick(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise SolverTimeout()

    def run(self, plain: list[Expr], base: list[Expr], reading: str) -> tuple[list, str]:
        """The first stage that agrees over the sketch terms `base`: its (size, term)s
        and its name (the last stage's where none does)."""
        stages = (("sketch from left", self.as_sketched),
                  ("sketch from left, folded with a field of b", self.folded),
                  ("sketch from left, with an empty side passed through", self.passed_through))
        for name, stage in stages:
            found = stage(plain, base)
            if found:
                break
        return found, name + reading

    def as_sketched(self, plain: list[Expr], base: list[Expr]) -> list:
        """Stage 1: the plain terms and the sketch itself, in chunks, each chunk compared
        on the probe rows at once."""
        check, found = self.check, []
        todo = plain + base
        for start in range(0, len(todo), FOLD_CHUNK):
            fresh = []
            for e in todo[start:start + FOLD_CHUNK]:
                self.tick()
                g = self.spell(e)
                if g in self.seen:
                    continue
                self.seen.add(g)
                self.tried += 1
                fresh.append(g)
            for g, ok in zip(fresh, check.small.agrees_many([check.small.values(g) for g in fresh])):
                if ok and check.agrees(check.values(g)):
                    found.append((term_size(g), g))
        return found

    def folded(self, plain: list[Expr], base: list[Expr]) -> list:
        """Stage 2: each sketch term folded with a field of b, the folds of a chunk checked
        on the probe rows at once."""
        check, folds, found = self.check, self.folds, []
        for start in range(0, len(base), FOLD_CHUNK):
            terms = []
            for e in base[start:start + FOLD_CHUNK]:
                self.tick()
                g = self.spell(e)
                vals = check.small.values(g)
                if vals is not None:
                    terms.append((g, vals))
            hits_of = check.small.fold_hits_many([v for _, v in terms], folds)
            for (g, _), hits in zip(terms, hits_of):
                self.tried += len(folds)
                for j in hits:
                    op, bg = folds[j]
                    if check.agrees(check.apply(op, check.values(g), bg)):
                        found.append((term_size(g) + 2, fold_with(op, self.type, g, bg)))
                if len(found) >= self.limit:
                    break
            if len(found) >= self.limit:
                break
        return found

    def passed_through(self, plain: list[Expr], base: list[Expr]) -> list:
        """Stage 3: a term, or its fold, where the other side is not empty, and that
        side's field where it is (`a.f if b.g == init else V`)."""
        check, folds, guards, found = self.check, self.folds, self.guards, []
        small = check.small
        passing = small.guard_hits(guards)      # None: compare each selection whole
        for e in plain + base[:400]:
            self.tick()
            g = self.spell(e)
            vals = small.values(g)
            if vals is None:
                continue
            terms = [g] + [fold_with(op, self.type, g, bg) for op, bg in folds]
            if passing is not None:
                hits_of = passing([small.row_ok(vals)] + small.fold_rows(vals, folds))
            else:
                shapes = [vals] + [small.apply(op, vals, bg) for op, bg in folds]
                hits_of = [[k for k, (cond, other) in enumerate(guards)
                            if small.agrees(small.select(cond, other, tv))] for tv in shapes]
            for term, hits in zip(terms, hits_of):
                self.tried += len(guards)
                for k in hits:
                    cond, other = guards[k]
                    whole = node(Op.WHERE, self.type, cond, other, term)
                    if check.agrees(check.values(whole)):
                        found.append((term_size(term) + 4, whole))
            if len(found) >= self.limit:
                break
        return found
