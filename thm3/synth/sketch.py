"""Combine synthesis: a sketch taken from `left`, completed by enumeration.

The combine of two summaries looks like `left` with the element replaced by the
right operand's summary (softmax: exp(x - m') becomes d2 * exp(m2 - m')).  For each
field, in the order the fields depend on each other, the sketch is `left`'s term
with acc.f read as a.f and holes where the element shows: each hole is filled by a
field of b (or keeps a constant), a summand that involves the element may be
weighted by a field of b, the whole term may be folded with b's field by its own
monoid operation, and an empty side may be passed through.  Where no completion
agrees, a condition on the element may also be read off b's summary as the condition on
b's first element: the condition on a field of b that holds an element, or that flipped
by the parity of a count of b (the sign changes of a list fix its first sign from its
last one).  Every completion is
checked at once on batched reachable states (h(xs), h(ys)) against h(xs + ys); the
survivors are ranked by size and handed to the prover.  No table of known loops."""
from __future__ import annotations

import functools
import itertools
import math
import time
from dataclasses import dataclass, field as dc_field


import numpy as np

from thm3.errors import SolverTimeout
from thm3.ir.simplify import simplify
from thm3.ir import Expr, Fn, Loop, Op, Type, const, initial_state, same, substitute, transform, var, walk
from thm3.semantics.evaluate import NUMPY, Memo, evaluate, quiet, rows
from thm3.semantics.equality import SAMPLED, close, rows_close
from thm3.semantics.samples import Triples, batch_combine

MAX_ALTERNATIVES = 4000
FOLD_CHUNK = 256         # sketch terms whose folds are checked together
ONE = const(1.0)
ZERO = const(0.0)


def _deps(exprs) -> dict[int, tuple[bool, bool]]:
    """For each node: (depends on the state, depends on an element or is a leaf)."""
    info: dict[int, tuple[bool, bool]] = {}
    for e in walk(exprs):
        if e.op is Op.VAR:
            info[id(e)] = (e.arg.startswith("acc."), not e.arg.startswith("acc."))
        elif e.op is Op.CONST:
            info[id(e)] = (False, False)
        else:
            st = any(info[id(s)][0] for s in e.src)
            el = any(info[id(s)][1] for s in e.src)
            info[id(e)] = (st, el)
    return info


def _size(e: Expr) -> int:
    """The number of distinct nodes of e (what `walk` lists), counted without the order."""
    seen: set[int] = set()
    stack = [e]
    while stack:
        x = stack.pop()
        if id(x) not in seen:
            seen.add(id(x))
            stack.extend(x.src)
    return len(seen)


def _compatible(node_type: Type, field_type: Type) -> bool:
    if node_type is Type.VEC:
        return field_type is Type.VEC
    if node_type is Type.BOOL:
        return field_type is Type.BOOL
    if node_type is Type.INT:
        return field_type is Type.INT
    return field_type in (Type.REAL, Type.INT)


def _b(f) -> Expr:
    return var(f"b.{f.name}", f.type)


def _a(f) -> Expr:
    return var(f"a.{f.name}", f.type)


def _mk(op: Op, type_: Type, *src: Expr) -> Expr:
    return Expr(op, type_, tuple(src))


# A fold of a sketch term V with b's field: op(V, b.g) for an Op, or for (Op.ADD, m) the
# sum taken modulo m, (V + b.g) % m: the monoid of a field that `left` keeps as a remainder.
@functools.lru_cache(maxsize=None)
def _fold_fn(op):
    if isinstance(op, tuple):
        m = op[1]
        return lambda a, b: np.mod(np.add(a, b), m)
    return NUMPY[op]


def _fold(op, type_: Type, v: Expr, bg: Expr) -> Expr:
    if isinstance(op, tuple):
        if v.op is Op.MOD and v.arg == op[1]:
            v = v.src[0]            # (v % m + b.g) % m is (v + b.g) % m
        return Expr(Op.MOD, type_, (_mk(Op.ADD, type_, v, bg),), op[1])
    return _mk(op, type_, v, bg)


def _mirrors(loop: Loop, pi: dict, terms: list[Expr], check) -> list[tuple[int, Expr]]:
    """The mirror field's terms read for this one (`mirror.mirrored`) that agree."""
    from thm3.synth import mirror
    out = []
    for alt in terms:
        g = mirror.mirrored(loop, pi, alt)
        if g is not None and check.agrees(check.values(g)):
            out.append((_size(g), g))
    return out


def _share(kids: list[list], budget: int) -> list[list]:
    """A prefix of each child's alternatives, their product within `budget`: the smallest
    lists whole, the budget they leave to the larger ones (a uniform share leaves the
    budget a hole with few options does not use unspent, and cuts a wide branch short)."""
    keep = [1] * len(kids)
    left = budget
    order = sorted(range(len(kids)), key=lambda k: len(kids[k]))
    for n, k in enumerate(order):
        keep[k] = max(1, min(len(kids[k]), int(round(left ** (1 / (len(kids) - n)), 6))))
        left = max(1, left // keep[k])
    return [kid[:m] for kid, m in zip(kids, keep)]


class Sketch:
    def __init__(self, loop: Loop):
        self.loop = loop
        self.params = {d.name for d in loop.params}
        self.info = _deps(loop.left.outputs)
        self.outputs = loop.left.outputs
        self.field_of_output = {id(e): i for i, e in enumerate(self.outputs)}
        self.elements = {d.name for d in loop.elements}
        self.first = False          # also read conditions on b's first element off b's fields
        self._holders: set[str] | None = None

    def first_reads(self, node: Expr) -> list[Expr]:
        """Conditions on b's fields that may stand for the condition `node` on b's first
        element: `node` on a field of b that holds an element or a term of one (a field
        whose new value is that term: last = x - y; for a condition on one element
        parameter, any number field: first, a running max), and each of these flipped
        once for each count a number field of b has made (`(b.last > 0) == (b.c % 2 ==
        0)`: a count of sign changes fixes the first sign from the last)."""
        elements = {e.arg for e in walk([node]) if e.op is Op.VAR and e.arg in self.elements}
        if not elements:
            return []
        numeric = (Type.REAL, Type.INT)
        reads: list[Expr] = []
        for f, out in zip(self.loop.fields, self.outputs):
            if f.type is Type.VEC or self.info[id(out)][0] or out.op is Op.CONST:
                continue            # a field whose new value is a term of the element alone
            got = transform([node], lambda e, go, out=out, f=f: _b(f) if same(e, out) else None)[0]
            if got is not node and not elements & {e.arg for e in walk([got]) if e.op is Op.VAR}:
                reads.append(got)
        if len(elements) == 1:
            (x,) = elements
            x_type = next(d.type for d in self.loop.elements if d.name == x)
            reads += [substitute([node], {x: _b(f)})[0] for f in self.loop.fields
                      if (f.type in numeric if x_type in numeric else f.type is x_type)]
        unique = list({repr(r): r for r in reads}.values())
        evens = [_mk(Op.EQ, Type.BOOL, Expr(Op.MOD, g.type, (_b(g),), 2), const(0, g.type))
                 for g in self.loop.fields if g.type in numeric]
        return unique + [_mk(Op.EQ, Type.BOOL, r, even) for r in unique for even in evens]

    def holders(self) -> set[str]:
        """The fields whose new value may be an element itself: one of the values `left`
        selects for the field (a branch, an argument of max or min) is an element."""
        if self._holders is None:
            def leaves(e: Expr):
                if e.op is Op.WHERE:
                    return leaves(e.src[1]) | leaves(e.src[2])
                if e.op in (Op.MAX, Op.MIN):
                    return leaves(e.src[0]) | leaves(e.src[1])
                return {e.arg} if e.op is Op.VAR else set()
            self._holders = {f.name for f, out in zip(self.loop.fields, self.outputs) if leaves(out) & self.elements}
        return self._holders

    def holes_for(self, node: Expr) -> list[Expr]:
        """What may stand where `node`, free of the state, sits in `left`."""
        _, el = self.info[id(node)]
        # an Int element may stand for a Real summary (the softmax max over Int elements)
        fits = [f for f in self.loop.fields if _compatible(node.type, f.type)
                or (el and node.type is Type.INT and f.type is Type.REAL)]
        if el:
            # the fields that may hold the element itself (last = x, first), then those of
            # its type, first: where a wide state's space is cut, these are the ones kept
            holds = self.holders()
            fits.sort(key=lambda f: (f.name not in holds, f.type is not node.type))
        alts = [_b(f) for f in fits]
        if not el or (node.op is Op.VAR and node.arg in self.params):
            alts.insert(0, node)         # constants and loop parameters may stay
        if node.type is Type.BOOL:
            # a condition on the element may hold for the whole right part, or never
            alts += [const(True), const(False)]
            if self.first and el:
                alts += self.first_reads(node)
        return alts

    def alternatives(self, node: Expr, field: int, chosen: dict[int, Expr], summand: bool) -> list[Expr]:
        st, el = self.info[id(node)]
        if node.op is Op.VAR and st:
            return [var("a." + node.arg[4:], node.type)]
        if not st:
            return self.holes_for(node)
        out: list[Expr] = []
        j = self.field_of_output.get(id(node))
        if j is not None and j != field and j in chosen:
            out.append(chosen[j])
        # Only the terms of the top-level sum may take a weight (d1 * exp(...)).
        # A select's branches are terms of the same sum (an if/else spelling of the step).
        child_summand = summand and node.op in (Op.ADD, Op.SUB)
        kids = [self.alternatives(s, field, chosen, child_summand or (summand and node.op is Op.WHERE and k > 0))
                for k, s in enumerate(node.src)]
        count = math.prod(len(k) for k in kids)
        if count > MAX_ALTERNATIVES:
            kids = _share(kids, MAX_ALTERNATIVES)
        for combo in itertools.product(*kids):
            out.append(Expr(node.op, node.type, tuple(combo), node.arg))
        if summand and el and node.type in (Type.REAL, Type.VEC):
            weights = [_b(f) for f in self.loop.fields if f.type in (Type.REAL, Type.INT)]
            out += [_mk(Op.MUL, node.type, w, alt) for alt in list(out) for w in weights]
        return out[:MAX_ALTERNATIVES]

    def cut(self) -> bool:
        """Whether some field's sketch has more completions than MAX_ALTERNATIVES, so that
        `alternatives` builds only part of them (counted, not built: the recursion of
        `alternatives` before any cut, with no field chosen yet)."""
        memo: dict = {}
        weights = 1 + sum(f.type in (Type.REAL, Type.INT) for f in self.loop.fields)

        def count(node: Expr, summand: bool) -> int:
            key = (id(node), summand)
            got = memo.get(key)
            if got is not None:
                return got
            st, el = self.info[id(node)]
            if node.op is Op.VAR and st:
                n = 1
            elif not st:
                n = len(self.holes_for(node))
            else:
                child_summand = summand and node.op in (Op.ADD, Op.SUB)
                n = math.prod(count(s, child_summand or (summand and node.op is Op.WHERE and k > 0))
                              for k, s in enumerate(node.src))
                if summand and el and node.type in (Type.REAL, Type.VEC):
                    n *= weights
            memo[key] = n
            return n

        return any(count(e, f.type in (Type.REAL, Type.VEC)) > MAX_ALTERNATIVES
                   for e, f in zip(self.outputs, self.loop.fields))

    def wrappers(self, i: int) -> tuple[list[Expr], list[tuple], list[tuple]]:
        """The shapes around a sketch term V for field i: plain terms that need no
        sketch, monoid folds `op(V, b.g)` (top two: the second largest is also bounded
        by b's second largest; line of sight: "and b's flag"), and pass-throughs of an
        empty side `a.f if b.g == init else V` (first/last element with a flag)."""
        f = self.loop.fields[i]
        af, bf = _a(f), _b(f)
        monoid = {Type.BOOL: (Op.OR, Op.AND), Type.INT: (Op.ADD, Op.MAX, Op.MIN, Op.MUL),
                  Type.REAL: (Op.ADD, Op.MAX, Op.MIN, Op.MUL), Type.VEC: (Op.ADD, Op.MAX, Op.MIN)}[f.type]
        if self.outputs[i].op is Op.MOD:
            # a remainder: its sums are taken modulo m too ((k1 + k2) % 3)
            monoid = ((Op.ADD, self.outputs[i].arg),) + monoid
        plain = [bf, af] + [_fold(op, f.type, af, bf) for op in monoid]
        folds = [(op, _b(g)) for op in monoid for g in self.loop.fields
                 if _compatible(f.type, g.type) or f.type is g.type]
        guards = []
        for g, d in zip(self.loop.fields, initial_state(self.loop)):
            if g.type is Type.VEC:
                continue
            guards.append((_mk(Op.EQ, Type.BOOL, _b(g), d), af))
            guards.append((_mk(Op.EQ, Type.BOOL, _a(g), d), bf))
        return plain, folds, guards


def guard_for_stability(e: Expr, loop: Loop, memo: dict | None = None) -> Expr:
    """Spell the combine so the identity makes no NaN: exp(x - M) with M a max over x
    becomes `1 if x == M else exp(x - M)` (the side that holds the max takes the factor
    1 exactly, so -inf - -inf is never taken), and a division by a sum of counts that
    can be 0 is selected away when it is 0.  `memo` may be shared between calls so
    that equal inputs give the same output objects."""
    memo = {} if memo is None else memo

    def max_args(m: Expr) -> list[Expr]:
        if m.op is Op.MAX:
            return max_args(m.src[0]) + max_args(m.src[1])
        return [m]

    def guarded_already(x: Expr) -> bool:
        if x.op is not Op.WHERE or x.src[0].op is not Op.EQ:
            return False
        inner = x.src[2]
        return (inner.op is Op.DIV and inner.src[1] is x.src[0].src[0]) or \
            (inner.op in (Op.EXP, Op.EXP2) and inner.src[0].op is Op.SUB and inner.src[0].src[1] is x.src[0].src[1])

    def go(x: Expr) -> Expr:
        got = memo.get(id(x))
        if got is not None and got[0] is x:
            return got[1]
        if guarded_already(x):
            memo[id(x)] = (x, x)
            return x
        src = tuple(go(s) for s in x.src)
        out = x if all(a is b for a, b in zip(src, x.src)) else Expr(x.op, x.type, src, x.arg)
        if out.op in (Op.EXP, Op.EXP2) and out.src[0].op is Op.SUB:
            lhs, mx = out.src[0].src
            if mx.op is Op.MAX and any(repr(lhs) == repr(t) for t in max_args(mx)):
                one = const(1.0)
                out = Expr(Op.WHERE, out.type, (Expr(Op.EQ, Type.BOOL, (lhs, mx)), one, out))
        if out.op is Op.DIV and any(v.op is Op.VAR and v.arg[:2] in ("a.", "b.") for v in walk([out.src[1]])):
            den = out.src[1]
            zero = const(0.0) if den.type is not Type.INT else const(0)
            out = Expr(Op.WHERE, out.type, (Expr(Op.EQ, Type.BOOL, (den, zero)), const(0.0), out))
        memo[id(x)] = (x, out)
        return out

    return go(e)


def field_order(loop: Loop) -> list[int]:
    """Fields whose new value another field's update reads come first."""
    outs = loop.left.outputs
    ids = {id(e): i for i, e in enumerate(outs)}
    needs = {i: {ids[id(n)] for n in walk([e]) if id(n) in ids and ids[id(n)] != i}
             for i, e in enumerate(outs)}
    order, done = [], set()
    while len(order) < len(outs):
        ready = [i for i in range(len(outs)) if i not in done and needs[i] <= done]
        if not ready:
            ready = [min(i for i in range(len(outs)) if i not in done)]
        for i in ready[:1]:
            order.append(i)
            done.add(i)
    return order


@dataclass
class Partial:
    """What a sketch run completed: each completed field's terms (`options`, the first
    chosen) and stage (`methods`), the order they were done in, and the fields with no
    completion (`missing`), for a later run to resume (`synthesize(resume=...)`): the
    normalised step's sketch, or the enumeration of the missing fields alone."""
    loop: Loop
    options: dict[int, list[Expr]] = dc_field(default_factory=dict)
    methods: dict[str, str] = dc_field(default_factory=dict)
    done: list[int] = dc_field(default_factory=list)
    missing: list[int] = dc_field(default_factory=list)
    before: dict[int, int] = dc_field(default_factory=dict)   # fields done when a missing one was tried

    def nearly_complete(self) -> bool:
        """All fields but a few completed (at least three for each one missing): the
        enumeration of those few, with the others fixed, is the cheap next step."""
        return bool(self.missing) and 3 * len(self.missing) <= len(self.done)


def related_fields(loop: Loop, i: int, pi: dict[int, int]) -> set[int]:
    """Field i and the fields its combine most likely reads: those its update reads,
    closed under the fields their updates read and under the state's reversal `pi` (a
    count of blocks reads the trailing run; its combine also the leading one, the trail's
    mirror, and the length the lead's update reads)."""
    names = {f"acc.{f.name}": j for j, f in enumerate(loop.fields)}
    reads = [{names[e.arg] for e in walk([out]) if e.op is Op.VAR and e.arg in names}
             for out in loop.left.outputs]
    out, todo = set(), [i]
    while todo:
        j = todo.pop()
        if j in out:
            continue
        out.add(j)
        todo += list(reads[j]) + ([pi[j]] if j in pi else [])
    return out


def synthesize(loop: Loop, triples: list[Triples], *, limit: int = 3,
               deadline: float | None = None, methods: dict | None = None,
               with_enumeration: bool = True, partial: Partial | None = None,
               resume: Partial | None = None, max_size: int | None = None,
               related: bool = False) -> tuple[list[Fn], int]:
    """Combines that agree with h(xs + ys) on every sampled pair, smallest first (at
    most `limit` per field), and the number of candidate terms checked.  `methods`, if
    given, receives for each field the stage that found its term.

    Each sketch term is evaluated once on the batched samples; its folds and
    pass-throughs are checked on those values, so the wider shapes cost little.

    With `partial` (a `Partial` of this loop, filled in), a field with no completion does
    not end the run: the others are completed, and `partial` says which are missing.
    With `resume` (an earlier run's `Partial`), its completed fields are kept and only its
    missing ones are tried: by every stage where it was a run on another spelling of the
    step, by the enumeration alone where it was on this one (the sketch failed there).
    `max_size` bounds the enumerated terms' size (`enumerate_field`'s default: none given);
    with `related`, a field's enumeration reads only its related fields (`related_fields`)."""
    sk = Sketch(loop)
    names = tuple((f"a.{f.name}", f.type) for f in loop.fields) + \
        tuple((f"b.{f.name}", f.type) for f in loop.fields) + \
        tuple((d.name, d.type) for d in loop.params)
    tried = 0
    chosen: dict[int, Expr] = {}
    options: dict[int, list[Expr]] = {}
    order = list(field_order(loop))
    done: list[int] = []
    missing: list[int] = []
    before: dict[int, int] = {}
    stages: dict[str, str] = {}
    sketched: set[int] = set()          # fields whose sketch stages already failed on this step
    if resume is not None:
        options = {i: list(alts) for i, alts in resume.options.items()}
        chosen = {i: alts[0] for i, alts in options.items()}
        done = list(resume.done)
        before = dict(resume.before)
        order = [i for i in order if i in resume.missing]
        stages.update(resume.methods)
        if resume.loop is loop:
            sketched = set(resume.missing)
    pi = None                   # the state's reversal (`mirror`), once a field is done
    deferred: set[int] = set()
    while order:
        i = order.pop(0)
        f = loop.fields[i]
        plain, folds, guards = sk.wrappers(i)
        base = sorted(sk.alternatives(sk.outputs[i], i, chosen, f.type in (Type.REAL, Type.VEC)), key=_size)
        check = Checker(names, triples, i)
        g_memo: dict = {}
        f_memo: dict = {}
        spelled: dict = {}

        def spell(e: Expr) -> Expr:
            got = spelled.get(id(e))
            if got is None or got[0] is not e:
                got = spelled[id(e)] = (e, simplify(guard_for_stability(e, loop, g_memo), arithmetic=False, memo=f_memo))
            return got[1]

        seen: set[str] = set()

        def tick():
            if deadline is not None and time.monotonic() > deadline:
                raise SolverTimeout()

        def complete(plain: list[Expr], base: list[Expr], reading: str) -> tuple[list, str]:
            """Stages 1-3 over the sketch terms `base`: the first stage that agrees."""
            nonlocal tried
            found: list[tuple[int, Expr]] = []
            # stage 1: plain terms and the sketch itself
            # the terms in chunks, each chunk compared on the probe rows at once
            todo = plain + base
            for start in range(0, len(todo), FOLD_CHUNK):
                fresh = []
                for e in todo[start:start + FOLD_CHUNK]:
                    tick()
                    g = spell(e)
                    key = repr(g)
                    if key in seen:
                        continue
                    seen.add(key)
                    tried += 1
                    fresh.append(g)
                for g, ok in zip(fresh, check.small.agrees_many([check.small.values(g) for g in fresh])):
                    if ok and check.agrees(check.values(g)):
                        found.append((_size(g), g))
            stage = "sketch from left" + reading
            # stage 2: folds; stage 3: pass-throughs of an empty side
            if not found:
                stage = "sketch from left, folded with a field of b" + reading
                # the terms in chunks, each chunk's folds checked on the probe rows at once
                for start in range(0, len(base), FOLD_CHUNK):
                    terms = []
                    for e in base[start:start + FOLD_CHUNK]:
                        tick()
                        g = spell(e)
                        vals = check.small.values(g)
                        if vals is not None:
                            terms.append((g, vals))
                    hits_of = check.small.fold_hits_many([v for _, v in terms], folds)
                    for (g, _), hits in zip(terms, hits_of):
                        tried += len(folds)
                        for j in hits:
                            op, bg = folds[j]
                            if check.agrees(check.apply(op, check.values(g), bg)):
                                found.append((_size(g) + 2, _fold(op, f.type, g, bg)))
                        if len(found) >= limit:
                            break
                    if len(found) >= limit:
                        break
            if not found:
                stage = "sketch from left, with an empty side passed through" + reading
                small = check.small
                passing = small.guard_hits(guards)      # None: compare each selection whole
                for e in plain + base[:400]:
                    tick()
                    g = spell(e)
                    vals = small.values(g)
                    if vals is None:
                        continue
                    terms = [g] + [_fold(op, f.type, g, bg) for op, bg in folds]
                    if passing is not None:
                        hits_of = passing([small.row_ok(vals)] + small.fold_rows(vals, folds))
                    else:
                        shapes = [vals] + [small.apply(op, vals, bg) for op, bg in folds]
                        hits_of = [[k for k, (cond, other) in enumerate(guards)
                                    if small.agrees(small.select(cond, other, tv))] for tv in shapes]
                    for term, hits in zip(terms, hits_of):
                        tried += len(guards)
                        for k in hits:
                            cond, other = guards[k]
                            whole = _mk(Op.WHERE, f.type, cond, other, term)
                            if check.agrees(check.values(whole)):
                                found.append((_size(term) + 4, whole))
                    if len(found) >= limit:
                        break
            return found, stage

        from thm3.synth import mirror
        if pi is None and any(loop.fields[j].type is f.type for j in chosen):
            pi = mirror.reversal(loop)
        # the mirror's completion first where its mirror is done: a few terms to check,
        # where the sketch of a trail checks thousands and finds none
        j = pi.get(i) if pi else None
        found, stage = [], ""
        if j is not None and j != i and j in chosen and i not in sketched:
            found = _mirrors(loop, pi, options[j], check)
            stage = f"the completion of {loop.fields[j].name} mirrored (h of the reversed list)"
        if not found and i not in sketched:
            found, stage = complete(plain, base, "")
        if not found and i not in sketched and any(sk.info[id(e)] == (False, True) and e.type is Type.BOOL
                             for e in walk([sk.outputs[i]])):
            # again, with conditions on the element read as conditions on b's first element
            sk.first = True
            known = {repr(e) for e in base}
            more = [e for e in sorted(sk.alternatives(sk.outputs[i], i, chosen, f.type in (Type.REAL, Type.VEC)),
                                      key=_size) if repr(e) not in known]
            sk.first = False
            found, stage = complete([], more, ", reading b's first element off its fields")
        if not found and i not in sketched:
            # the mirror field's completion, the operands swapped (`mirror`): a trail from
            # its lead; a field whose mirror comes later waits for it (the mirror first,
            # then this field, before the fields that read its new value)
            pi = mirror.reversal(loop) if pi is None else pi
            j = pi.get(i)
            if j is not None and j != i and j not in chosen and j in order and i not in deferred:
                deferred.add(i)
                order.remove(j)
                order[:0] = [j, i]
                continue
        if not found and with_enumeration:
            # stage 4: a combine of another shape, by bottom-up enumeration (enumerate.py),
            # over the combined fields done before this one
            from thm3.synth.enumeration import FIELD_SECONDS, enumerate_field
            stage = "bottom-up enumeration with observational equivalence"
            end = time.monotonic() + FIELD_SECONDS
            prior = done[:before.get(i, len(done))]
            near = None
            if related:
                pi = mirror.reversal(loop) if pi is None else pi
                near = related_fields(loop, i, pi)
                prior = [j for j in prior if j in near]
            found = [(_size(e), e) for e in enumerate_field(
                loop, i, triples, names, chosen={j: chosen[j] for j in prior},
                fields=None if near is None else frozenset(loop.fields[j].name for j in near),
                limit=limit, **({} if max_size is None else {"max_size": max_size}),
                deadline=end if deadline is None else min(deadline, end))]
        if not found:
            if partial is None:
                return [], tried
            missing.append(i)
            before.setdefault(i, len(done))
            continue
        found.sort(key=lambda t: t[0])
        stages[f.name] = stage
        options[i] = [e for _, e in found[:limit]]
        if stage.startswith("sketch from left") and not stage.startswith("sketch from left,"):
            # the first term folded with b's fields where that agrees too: the samples may
            # not tell a longest run that forgets b's own (short lists rarely join), and the
            # prover refuting the first candidate then proves the next
            g = options[i][0]
            vals = check.values(g)
            for op, bg in sk.wrappers(i)[1]:
                folded = _fold(op, f.type, g, bg)
                if len(options[i]) < 2 * limit and not same(folded, g) and \
                        check.agrees(check.apply(op, vals, bg)):
                    options[i].append(folded)
        chosen[i] = options[i][0]
        done.append(i)
    if methods is not None:
        methods.update(stages)
    if partial is not None:
        partial.loop = loop
        partial.options = {i: options[i] for i in done}
        partial.methods = {loop.fields[i].name: stages[loop.fields[i].name] for i in done}
        partial.done, partial.missing = list(done), list(missing)
        partial.before = {i: before[i] for i in missing}
    if missing:
        return [], tried
    first = Fn(names, tuple(chosen[i] for i in range(len(loop.fields))))
    out = [first]
    # Alternatives for single fields, in case the first choice is not provable.
    for i, alts in options.items():
        for alt in alts[1:]:
            outs = list(first.outputs)
            outs[i] = alt
            out.append(Fn(names, tuple(outs)))
    return out, tried


class Checker:
    """Evaluates terms on the batched samples and compares with h(xs + ys)."""

    def __init__(self, names, triples: list[Triples], field: int, probe: bool = True):
        self.names, self.triples, self.field = names, triples, field
        # A few rows of every block of list lengths: most candidates fail there, cheaply.
        self.small = Checker(names, [_rows(t, slice(None, None, 12)) for t in triples], field,
                              probe=False) if probe else None

    def passes(self, e: Expr) -> bool:
        return self.small.agrees(self.small.values(e)) and self.agrees(self.values(e))

    def leaf(self, e: Expr) -> list:
        """Values of a small term (a field of b, a condition), computed once."""
        leaves = self.__dict__.setdefault("_leaves", {})
        got = leaves.get(id(e))
        if got is None or got[0] is not e:
            with quiet():
                got = leaves[id(e)] = (e, [evaluate([e], self._env(t), NUMPY)[0] for t in self.triples])
        return got[1]

    def _operands(self, folds, op, js, t_i: int, shape):
        """The operands b.g of the folds `js` (all of one op) on triple t_i, stacked on
        axis 1: the same for every candidate, so stacked once."""
        cache = self.__dict__.setdefault("_stacked", {})
        key = (id(folds), op, t_i)
        got = cache.get(key)
        if got is None or got[0] is not folds:
            got = cache[key] = (folds, np.stack([np.broadcast_to(self.leaf(folds[j][1])[t_i], shape)
                                                 for j in js], axis=1))
        return got[1]

    def fold_hits(self, vals, folds) -> list[int]:
        """Indices of the folds op(V, b.g) that agree, all operands of one op at once."""
        hits = []
        by_op: dict = {}
        for j, (op, bg) in enumerate(folds):
            by_op.setdefault(op, []).append(j)
        with quiet():
            for op, js in by_op.items():
                ok = np.ones(len(js), dtype=bool)
                for t_i, t in enumerate(self.triples):
                    v = np.asarray(vals[t_i])
                    want = t.c[self.field]
                    try:
                        ops = self._operands(folds, op, js, t_i, want.shape)
                        got = _fold_fn(op)(np.broadcast_to(v, want.shape)[:, None], ops)
                        same = close(got, np.broadcast_to(want[:, None], got.shape), SAMPLED)
                    except (ValueError, TypeError):
                        ok[:] = False
                        break
                    ok &= same.reshape(same.shape[0], same.shape[1], -1).all(axis=(0, 2))
                    if not ok.any():
                        break
                hits += [j for j, good in zip(js, ok) if good]
        return sorted(hits)

    def _env(self, t: Triples) -> dict:
        k = len(t.a)
        return dict(zip((n for n, _ in self.names[:k]), t.a)) | \
            dict(zip((n for n, _ in self.names[k:2 * k]), t.b)) | t.params

    def values(self, e: Expr):
        if self.small is None:
            return self._values_memo(e)
        out = []
        with quiet():
            for t in self.triples:
                try:
                    out.append(evaluate([e], self._env(t), NUMPY)[0])
                except (ValueError, TypeError, OverflowError):
                    return None
        return out

    def _values_memo(self, e: Expr):
        """Values on every triple, remembering each node: candidates share most of their
        subterms, so a new candidate costs only its new nodes (the probe rows are few)."""
        if not hasattr(self, "_memo"):
            envs = [self._env(t) for t in self.triples]
            names = envs[0].keys() if envs else (n for n, _ in self.names)
            self._memo = Memo({n: [env[n] for env in envs] for n in names}, rows(NUMPY, len(envs)))
        with quiet():
            try:
                return self._memo.value(e)
            except (ValueError, TypeError, OverflowError):
                return None

    def apply(self, op: Op, vals, operand: Expr):
        if vals is None:
            return None
        with quiet():
            return [_fold_fn(op)(v, w) for v, w in zip(vals, self.leaf(operand))]

    def select(self, cond: Expr, other: Expr, vals):
        if vals is None:
            return None
        with quiet():
            return [np.where(c, o, v) for v, c, o in zip(vals, self.leaf(cond), self.leaf(other))]

    def row_ok(self, vals) -> list | None:
        """Per triple, the rows on which `vals` equal h(xs + ys) (None: not comparable)."""
        if vals is None:
            return None
        out = []
        with quiet():
            for v, t in zip(vals, self.triples):
                want = t.c[self.field]
                try:
                    out.append(rows_close(np.broadcast_to(v, want.shape), want))
                except ValueError:
                    return None
        return out

    def guard_hits(self, guards):
        """A test of many pass-throughs `other if cond else V` at once, for one V: a
        function of V's values giving the indices k of the guards with which the
        selection agrees, the same answer as `agrees(select(cond, other, V))` for each.
        The selection agrees exactly when `other` agrees on the rows where cond holds
        and V on the others, so each guard's rows and its `other` are checked once;
        a guard whose `other` disagrees where its cond holds passes with no V.  None
        where the field is a vector (the selection then broadcasts otherwise)."""
        if any(t.c[self.field].shape[1:] not in ((), (1,)) for t in self.triples):
            return None
        live, conds = [], [[] for _ in self.triples]
        for k, (cond, other) in enumerate(guards):
            other_ok = self.row_ok(self.leaf(other))
            if other_ok is None:
                continue
            cs = []
            for t, c, o, ok in zip(self.triples, self.leaf(cond), self.leaf(other), other_ok):
                want = t.c[self.field]
                try:
                    if np.broadcast_shapes(np.shape(c), np.shape(o), want.shape) != want.shape:
                        break
                    cs.append(np.broadcast_to(np.asarray(c, dtype=bool), want.shape).reshape(want.shape[0]))
                except ValueError:
                    break
                if not bool(np.all(~cs[-1] | ok)):
                    break
            else:
                live.append(k)
                for j, c in enumerate(cs):
                    conds[j].append(c)
        if not live:
            return lambda row_oks: [[] for _ in row_oks]
        live_ = np.array(live)
        stacked = [np.stack(c) for c in conds]         # (live guards, rows) per triple

        def hits(row_oks: list) -> list[list[int]]:
            """For each V, given by its `row_ok` (None: no guard), the guards that pass."""
            out: list[list[int]] = [[] for _ in row_oks]
            ks = [i for i, r in enumerate(row_oks) if r is not None]
            if not ks:
                return out
            keep = np.ones((len(ks), len(live)), dtype=bool)
            for t_i, c in enumerate(stacked):
                rs = np.stack([row_oks[i][t_i] for i in ks])         # (Vs, rows)
                keep &= np.all(c[None, :, :] | rs[:, None, :], axis=2)
            for i, row in zip(ks, keep):
                out[i] = [int(k) for k in live_[row]]
            return out

        return hits

    def fold_rows(self, vals, folds) -> list:
        """For each fold op(V, b.g): the `row_ok` of `apply(op, vals, b.g)`, all
        operands of one op at once (None where they cannot be compared)."""
        out: list = [None] * len(folds)
        by_op: dict = {}
        for j, (op, bg) in enumerate(folds):
            by_op.setdefault(op, []).append(j)
        with quiet():
            for op, js in by_op.items():
                per: list = []
                for t_i, t in enumerate(self.triples):
                    want = t.c[self.field]
                    try:
                        ops = self._operands(folds, op, js, t_i, want.shape)
                        got = _fold_fn(op)(np.broadcast_to(np.asarray(vals[t_i]), want.shape)[:, None], ops)
                        same = close(got, np.broadcast_to(want[:, None], got.shape), SAMPLED)
                    except (ValueError, TypeError):
                        break
                    per.append(same.reshape(same.shape[0], same.shape[1], -1).all(axis=2))   # (rows, folds)
                else:
                    for k, j in enumerate(js):
                        out[j] = [p[:, k] for p in per]
        return out

    def fold_hits_many(self, vals_list: list, folds) -> list[list[int]]:
        """`fold_hits` for many terms at once: the terms whose values have one dtype and
        shape on every triple are stacked and checked together (the same elementwise
        operations, so the same answers); the others one by one."""
        out: list = [None] * len(vals_list)
        groups: dict = {}
        for i, vals in enumerate(vals_list):
            try:
                key = tuple((np.asarray(v).dtype, _shaped(v, t.c[self.field].shape).shape)
                            for v, t in zip(vals, self.triples))
            except ValueError:
                out[i] = []                 # no fold of it has the field's shape
                continue
            groups.setdefault(key, []).append(i)
        by_op: dict = {}
        for j, (op, bg) in enumerate(folds):
            by_op.setdefault(op, []).append(j)
        for idx in groups.values():
            if len(idx) == 1:
                out[idx[0]] = self.fold_hits(vals_list[idx[0]], folds)
                continue
            hits: list[list[int]] = [[] for _ in idx]
            with quiet():
                for op, js in by_op.items():
                    ok = np.ones((len(idx), len(js)), dtype=bool)
                    for t_i, t in enumerate(self.triples):
                        want = t.c[self.field]
                        try:
                            vs = np.stack([_shaped(vals_list[i][t_i], want.shape) for i in idx])
                            ops = self._operands(folds, op, js, t_i, want.shape)
                            got = _fold_fn(op)(vs[:, :, None], ops[None])
                            same = close(got, np.broadcast_to(want[None, :, None], got.shape), SAMPLED)
                        except (ValueError, TypeError):
                            ok[:] = False
                            break
                        ok &= same.reshape(len(idx), same.shape[1], same.shape[2], -1).all(axis=(1, 3))
                        if not ok.any():
                            break
                    for r, row in enumerate(ok):
                        hits[r] += [j for j, good in zip(js, row) if good]
            for r, i in enumerate(idx):
                out[i] = sorted(hits[r])
        return out

    def agrees_many(self, vals_list: list) -> list[bool]:
        """`agrees` for many terms at once: those whose values have one dtype and shape
        on every triple are stacked and compared together (the same elementwise
        comparison, so the same answers); the others one by one."""
        out = [False] * len(vals_list)
        groups: dict = {}
        for i, vals in enumerate(vals_list):
            if vals is None:
                continue
            groups.setdefault(tuple((np.asarray(v).dtype, np.shape(v)) for v in vals), []).append(i)
        for idx in groups.values():
            if len(idx) == 1:
                out[idx[0]] = self.agrees(vals_list[idx[0]])
                continue
            ok = np.ones(len(idx), dtype=bool)
            for t_i, t in enumerate(self.triples):
                want = t.c[self.field]
                try:
                    vs = np.stack([_shaped(vals_list[i][t_i], want.shape) for i in idx])
                except ValueError:
                    ok[:] = False
                    break
                same = close(vs, np.broadcast_to(want[None], vs.shape), SAMPLED)
                ok &= same.reshape(len(idx), -1).all(axis=1)
                if not ok.any():
                    break
            for i, good in zip(idx, ok):
                out[i] = bool(good)
        return out

    def agrees(self, vals) -> bool:
        if vals is None:
            return False
        for v, t in zip(vals, self.triples):
            want = t.c[self.field]
            try:
                if not bool(np.all(rows_close(np.broadcast_to(v, want.shape), want))):
                    return False
            except ValueError:
                return False
        return True


def _shaped(v, shape) -> np.ndarray:
    """v broadcast to `shape` (itself when it has that shape); ValueError if it cannot be."""
    a = np.asarray(v)
    return a if a.shape == shape else np.broadcast_to(a, shape)


def _rows(t: Triples, rows) -> Triples:
    return Triples(t.params, tuple(x[rows] for x in t.a), tuple(x[rows] for x in t.b),
                   tuple(x[rows] for x in t.c))


def _agrees(e: Expr, i: int, names, triples: list[Triples]) -> bool:
    fn = Fn(names, (e,))
    for t in triples:
        try:
            got = batch_combine(fn, t.a, t.b, t.params)[0]
        except (ValueError, TypeError, FloatingPointError, OverflowError):
            return False
        if not bool(np.all(rows_close(got, t.c[i]))):
            return False
    return True
