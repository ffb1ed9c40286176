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

import itertools
import math
import time
from dataclasses import dataclass, field as dc_field


from thm3.ir import Expr, Fn, Loop, Op, Type, const, initial_state, substitute, transform, var, walk
from thm3.ir.monoids import monoids_over
from thm3.semantics.samples import Triples
from thm3.synth.check import Checker
from thm3.synth.completion import Completion, fold_with as _fold, node as _mk, term_size as _size

MAX_ALTERNATIVES = 4000
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
        # a subterm that is another field's new value (a constant is no field's value:
        # every equal literal is one node)
        self.field_of_output = {e: i for i, e in enumerate(self.outputs) if e.op is not Op.CONST}
        self.elements = {d.name for d in loop.elements}
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
            got = transform([node], lambda e, go, out=out, f=f: _b(f) if e is out else None)[0]
            if got is not node and not elements & {e.arg for e in walk([got]) if e.op is Op.VAR}:
                reads.append(got)
        if len(elements) == 1:
            (x,) = elements
            x_type = next(d.type for d in self.loop.elements if d.name == x)
            reads += [substitute([node], {x: _b(f)})[0] for f in self.loop.fields
                      if (f.type in numeric if x_type in numeric else f.type is x_type)]
        unique = list(dict.fromkeys(reads))             # interned: equal reads are one node
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

    def holes_for(self, node: Expr, first: bool = False) -> list[Expr]:
        """What may stand where `node`, free of the state, sits in `left` (with `first`, also
        conditions on b's first element read off b's fields)."""
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
            if first and el:
                alts += self.first_reads(node)
        return alts

    def alternatives(self, node: Expr, field: int, chosen: dict[int, Expr], summand: bool,
                     first: bool = False) -> list[Expr]:
        st, el = self.info[id(node)]
        if node.op is Op.VAR and st:
            return [var("a." + node.arg[4:], node.type)]
        if not st:
            return self.holes_for(node, first)
        out: list[Expr] = []
        j = self.field_of_output.get(node)
        if j is not None and j != field and j in chosen:
            out.append(chosen[j])
        # Only the terms of the top-level sum may take a weight (d1 * exp(...)).
        # A select's branches are terms of the same sum (an if/else spelling of the step).
        child_summand = summand and node.op in (Op.ADD, Op.SUB)
        kids = [self.alternatives(s, field, chosen, child_summand or (summand and node.op is Op.WHERE and k > 0),
                                  first) for k, s in enumerate(node.src)]
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
        monoid = monoids_over(f.type)
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


def field_order(loop: Loop) -> list[int]:
    """Fields whose new value another field's update reads come first."""
    outs = loop.left.outputs
    ids = {e: i for i, e in enumerate(outs) if e.op is not Op.CONST}    # (a literal is no field's value)
    needs = {i: {ids[n] for n in walk([e]) if n in ids and ids[n] != i} for i, e in enumerate(outs)}
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


@dataclass
class _Progress:
    """A sketch run's progress over the fields, handed to each step explicitly: each done
    field's terms (`options`, the first `chosen`) and stage, the fields with no completion
    and how many were done when each was tried (`before`), the fields whose sketch stages
    already failed on this step (`sketched`), the state's reversal once needed (`pi`), and
    the candidate terms checked."""
    loop: Loop
    chosen: dict[int, Expr] = dc_field(default_factory=dict)
    options: dict[int, list[Expr]] = dc_field(default_factory=dict)
    done: list[int] = dc_field(default_factory=list)
    missing: list[int] = dc_field(default_factory=list)
    before: dict[int, int] = dc_field(default_factory=dict)
    stages: dict[str, str] = dc_field(default_factory=dict)
    sketched: set[int] = dc_field(default_factory=set)
    pi: dict[int, int] | None = None
    tried: int = 0

    @classmethod
    def resumed(cls, loop: Loop, resume: Partial | None) -> _Progress:
        if resume is None:
            return cls(loop)
        options = {i: list(alts) for i, alts in resume.options.items()}
        return cls(loop, {i: alts[0] for i, alts in options.items()}, options, list(resume.done),
                   before=dict(resume.before), stages=dict(resume.methods),
                   sketched=set(resume.missing) if resume.loop is loop else set())

    def reversal(self) -> dict[int, int]:
        from thm3.synth import mirror
        if self.pi is None:
            self.pi = mirror.reversal(self.loop)
        return self.pi

    def mirror_first(self, i: int, order: list[int], deferred: set[int]) -> bool:
        """Where field i's mirror (the operands swapped: a trail from its lead) is not done
        and comes later, it goes first and i right after it, before the fields that read
        i's new value; True where it moved."""
        j = self.reversal().get(i)
        if j is None or j == i or j in self.chosen or j not in order or i in deferred:
            return False
        deferred.add(i)
        order.remove(j)
        order[:0] = [j, i]
        return True

    def accept(self, sk: Sketch, i: int, found: list, stage: str, check: Checker, limit: int) -> None:
        f = self.loop.fields[i]
        found.sort(key=lambda t: t[0])
        self.stages[f.name] = stage
        self.options[i] = [e for _, e in found[:limit]]
        if stage.startswith("sketch from left") and not stage.startswith("sketch from left,"):
            # the first term folded with b's fields where that agrees too: the samples may
            # not tell a longest run that forgets b's own (short lists rarely join), and the
            # prover refuting the first candidate then proves the next
            g = self.options[i][0]
            vals = check.values(g)
            for op, bg in sk.wrappers(i)[1]:
                folded = _fold(op, f.type, g, bg)
                if len(self.options[i]) < 2 * limit and folded is not g and \
                        check.agrees(check.apply(op, vals, bg)):
                    self.options[i].append(folded)
        self.chosen[i] = self.options[i][0]
        self.done.append(i)

    def give_up(self, i: int) -> None:
        self.missing.append(i)
        self.before.setdefault(i, len(self.done))

    def fill(self, partial: Partial) -> None:
        partial.loop = self.loop
        partial.options = {i: self.options[i] for i in self.done}
        partial.methods = {self.loop.fields[i].name: self.stages[self.loop.fields[i].name] for i in self.done}
        partial.done, partial.missing = list(self.done), list(self.missing)
        partial.before = {i: self.before[i] for i in self.missing}

    def combines(self, names) -> list[Fn]:
        """The chosen combine first, then each field's alternatives in its place, in case
        the first choice is not provable."""
        first = Fn(names, tuple(self.chosen[i] for i in range(len(self.loop.fields))))
        out = [first]
        for i, alts in self.options.items():
            for alt in alts[1:]:
                outs = list(first.outputs)
                outs[i] = alt
                out.append(Fn(names, tuple(outs)))
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
    progress = _Progress.resumed(loop, resume)
    order = [i for i in field_order(loop) if resume is None or i in resume.missing]
    deferred: set[int] = set()
    while order:
        i = order.pop(0)
        check = Checker(names, triples, i)
        found, stage = _sketched(sk, progress, i, check, limit, deadline)
        if not found and i not in progress.sketched and progress.mirror_first(i, order, deferred):
            continue
        if not found and with_enumeration:
            found = _enumerated(progress, i, triples, names, limit, deadline, max_size, related)
            stage = "bottom-up enumeration with observational equivalence"
        if not found:
            if partial is None:
                return [], progress.tried
            progress.give_up(i)
            continue
        progress.accept(sk, i, found, stage, check, limit)
    if methods is not None:
        methods.update(progress.stages)
    if partial is not None:
        progress.fill(partial)
    if progress.missing:
        return [], progress.tried
    return progress.combines(names), progress.tried


def _sketched(sk: Sketch, progress: _Progress, i: int, check: Checker, limit: int,
              deadline: float | None) -> tuple[list, str]:
    """Field i's (size, term)s by the sketch's stages, and the stage's name: the mirror
    field's completion first where the mirror is done (a few terms to check, where the
    sketch of a trail checks thousands and finds none), then the sketch itself, then with
    conditions on the element read as conditions on b's first element.  None for a field
    whose sketch already failed on this step."""
    loop, f = progress.loop, progress.loop.fields[i]
    plain, folds, guards = sk.wrappers(i)
    base = sorted(sk.alternatives(sk.outputs[i], i, progress.chosen, f.type in (Type.REAL, Type.VEC)), key=_size)
    comp = Completion(loop, f.type, check, folds, guards, limit, deadline)
    if progress.pi is None and any(loop.fields[j].type is f.type for j in progress.chosen):
        progress.reversal()
    if i in progress.sketched:
        return [], ""
    pi = progress.pi
    j = pi.get(i) if pi else None
    found, stage = [], ""
    if j is not None and j != i and j in progress.chosen:
        found = _mirrors(loop, pi, progress.options[j], check)
        stage = f"the completion of {loop.fields[j].name} mirrored (h of the reversed list)"
    if not found:
        found, stage = comp.run(plain, base, "")
    if not found and any(sk.info[id(e)] == (False, True) and e.type is Type.BOOL for e in walk([sk.outputs[i]])):
        known = set(base)
        more = [e for e in sorted(sk.alternatives(sk.outputs[i], i, progress.chosen, f.type in (Type.REAL, Type.VEC),
                                                  first=True), key=_size) if e not in known]
        found, stage = comp.run([], more, ", reading b's first element off its fields")
    progress.tried += comp.tried
    return found, stage


def _enumerated(progress: _Progress, i: int, triples, names, limit: int, deadline: float | None,
                max_size: int | None, related: bool) -> list:
    """Stage 4: field i's (size, term)s of another shape, by bottom-up enumeration
    (enumeration.py) over the combined fields done before it (its related ones only,
    with `related`)."""
    from thm3.synth.enumeration import FIELD_SECONDS, enumerate_field
    loop = progress.loop
    end = time.monotonic() + FIELD_SECONDS
    prior = progress.done[:progress.before.get(i, len(progress.done))]
    near = None
    if related:
        near = related_fields(loop, i, progress.reversal())
        prior = [j for j in prior if j in near]
    return [(_size(e), e) for e in enumerate_field(
        loop, i, triples, names, chosen={j: progress.chosen[j] for j in prior},
        fields=None if near is None else frozenset(loop.fields[j].name for j in near),
        limit=limit, **({} if max_size is None else {"max_size": max_size}),
        deadline=end if deadline is None else min(deadline, end))]
