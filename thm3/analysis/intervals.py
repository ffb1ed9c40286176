"""Range candidates for the invariants: interval reasoning over the step.

An abstract interpretation of `left` on intervals whose ends are linear forms in the loop
parameters (0, cap - 1, lo + 1), from the initial state and the elements' ranges that
the preconditions assert (`assert x >= 0`), joined step after step and widened (an end
that keeps moving is dropped) until nothing changes.  Each end may be a set of
candidates where the order of two is not decided (min(n + 3, cap + 2) is below both).
Ends are compared by Z3 under the preconditions on the parameters alone.  The ranges
are only candidates: `thm3.analysis.invariants` keeps those Houdini proves inductive, so
an imprecise or even wrong range here costs a proof attempt, never soundness."""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import z3

from thm3.ir import Expr, Loop, Op, Type, const, free_vars, var, walk
from thm3.semantics.z3_plain import to_z3

_MAX_ENDS = 4           # candidate ends per side of an interval
_PLAIN = 2              # iterations joined before the widening starts
_ROUNDS = 12


@dataclass(frozen=True)
class Bound:
    """c + sum(k * p) over loop parameters p; c may be +-inf (then no parameter terms)."""
    c: object                                   # Fraction, or float +-inf
    terms: tuple[tuple[str, Fraction], ...] = ()

    def __add__(self, other: "Bound") -> "Bound":
        if not (_finite(self.c) and _finite(other.c)):
            return Bound(self.c if not _finite(self.c) else other.c)
        terms = dict(self.terms)
        for p, k in other.terms:
            terms[p] = terms.get(p, Fraction(0)) + k
        return Bound(self.c + other.c, tuple(sorted((p, k) for p, k in terms.items() if k != 0)))

    def scaled(self, k: Fraction) -> "Bound":
        if not _finite(self.c):
            return Bound(self.c * (1 if k > 0 else -1)) if k != 0 else Bound(Fraction(0))
        return Bound(self.c * k, tuple((p, v * k) for p, v in self.terms if v * k != 0))


def _finite(c) -> bool:
    return not (isinstance(c, float) and math.isinf(c))


@dataclass(frozen=True)
class Interval:
    lo: frozenset       # lower ends (each a Bound): the value is >= every one; empty: unbounded
    hi: frozenset


_NONE = Interval(frozenset(), frozenset())


def _point(b: Bound) -> Interval:
    return Interval(frozenset([b]), frozenset([b]))


class _Order:
    """Decides b1 <= b2 under the preconditions on the parameters (None: undecided)."""

    def __init__(self, loop: Loop):
        self.z3 = {d.name: (z3.Int(d.name) if d.type is Type.INT else z3.Real(d.name))
                   for d in loop.params if d.type in (Type.INT, Type.REAL)}
        self.solver = z3.Solver()
        self.solver.set("timeout", 200)
        names = set(self.z3)
        elements = {d.name for d in loop.elements}
        for c in loop.preconditions:
            if free_vars([c]) <= names and not free_vars([c]) & elements:
                t = to_z3(c, self.z3, create=False)
                if t is not None:
                    self.solver.add(t)
        self.cache: dict = {}

    def le(self, a: Bound, b: Bound) -> bool | None:
        if not (_finite(a.c) and _finite(b.c)):
            return True if a.c == -math.inf or b.c == math.inf else False if a.c == math.inf or b.c == -math.inf \
                else None
        key = (a, b)
        if key not in self.cache:
            d = b + a.scaled(Fraction(-1))
            if not d.terms:
                self.cache[key] = d.c >= 0
            else:
                t = z3.RealVal(str(d.c)) + z3.Sum([_real(self.z3[p]) * z3.RealVal(str(k)) if p in self.z3
                                                    else z3.RealVal(0) for p, k in d.terms])
                self.cache[key] = self._valid(t >= 0)
        return self.cache[key]

    def _valid(self, claim) -> bool | None:
        self.solver.push()
        self.solver.add(z3.Not(claim))
        r = self.solver.check()
        self.solver.pop()
        return True if r == z3.unsat else None


def _real(t):
    return z3.ToReal(t) if z3.is_int(t) else t


class _Abstract:
    """`left` evaluated on intervals."""

    def __init__(self, loop: Loop, order: _Order):
        self.loop = loop
        self.order = order

    # -- lattice ------------------------------------------------------------------
    def _below(self, ends, others) -> frozenset:
        """The ends of `ends` below some end of `others` (lower ends of a union, of a min)."""
        return frozenset(list(b for b in ends if any(self.order.le(b, o) for o in others))[:_MAX_ENDS])

    def _above(self, ends, others) -> frozenset:
        return frozenset(list(b for b in ends if any(self.order.le(o, b) for o in others))[:_MAX_ENDS])

    def join(self, a: Interval, b: Interval) -> Interval:
        return Interval(self._below(a.lo, b.lo) | self._below(b.lo, a.lo),
                        self._above(a.hi, b.hi) | self._above(b.hi, a.hi))

    def widen(self, old: Interval, new: Interval) -> Interval:
        """The ends of `old` that still bound `new`: an end that moves is dropped."""
        return Interval(self._below(old.lo, new.lo), self._above(old.hi, new.hi))

    # -- operations ------------------------------------------------------------------
    def value(self, e: Expr, env: dict):
        memo: dict[int, object] = {}
        for n in walk([e]):
            memo[id(n)] = self._op(n, [memo[id(s)] for s in n.src], env)
        return memo[id(e)]

    def _op(self, e: Expr, args: list, env: dict):
        if e.type in (Type.BOOL, Type.VEC) and e.op is not Op.WHERE:
            return None
        match e.op:
            case Op.CONST:
                c = float(e.arg)
                return _point(Bound(c if math.isinf(c) else Fraction(e.arg)))
            case Op.VAR:
                return env.get(e.arg, _NONE)
        if any(a is None for a in args[1:] if e.op is Op.WHERE) or (e.op is not Op.WHERE and any(
                a is None for a in args)):
            return _NONE if e.type in (Type.INT, Type.REAL) else None
        match e.op:
            case Op.ADD:
                return self._add(*args)
            case Op.SUB:
                return self._add(args[0], self._neg(args[1]))
            case Op.NEG:
                return self._neg(args[0])
            case Op.MUL:
                return self._mul(*args)
            case Op.MIN:
                a, b = args
                return Interval(self._below(a.lo, b.lo) | self._below(b.lo, a.lo), frozenset(list(a.hi | b.hi)[:_MAX_ENDS]))
            case Op.MAX:
                a, b = args
                return Interval(frozenset(list(a.lo | b.lo)[:_MAX_ENDS]), self._above(a.hi, b.hi) | self._above(b.hi, a.hi))
            case Op.WHERE:
                if args[1] is None or args[2] is None:
                    return None
                return self.join(args[1], args[2])
            case Op.MOD:
                top = Fraction(e.arg - 1) if e.type is Type.INT else Fraction(e.arg)
                return Interval(frozenset([Bound(Fraction(0))]), frozenset([Bound(top)]))
            case Op.ABS:
                return Interval(frozenset([Bound(Fraction(0))]), frozenset())
            case Op.EXP | Op.EXP2 | Op.SQRT:
                return Interval(frozenset([Bound(Fraction(0))]), frozenset())
        return _NONE

    def _add(self, a: Interval, b: Interval) -> Interval:
        return Interval(frozenset(list({x + y for x in a.lo for y in b.lo})[:_MAX_ENDS]),
                        frozenset(list({x + y for x in a.hi for y in b.hi})[:_MAX_ENDS]))

    @staticmethod
    def _neg(a: Interval) -> Interval:
        return Interval(frozenset(b.scaled(Fraction(-1)) for b in a.hi),
                        frozenset(b.scaled(Fraction(-1)) for b in a.lo))

    def _mul(self, a: Interval, b: Interval) -> Interval:
        for x, y in ((a, b), (b, a)):
            k = _constant(y)
            if k is not None and _finite(k):
                if k >= 0:
                    return Interval(frozenset(e.scaled(k) for e in x.lo), frozenset(e.scaled(k) for e in x.hi))
                return self._neg(Interval(frozenset(e.scaled(-k) for e in x.lo), frozenset(e.scaled(-k) for e in x.hi)))
        return _NONE


def _constant(i: Interval):
    """The number an interval is a point at, if it is one with a constant end."""
    if len(i.lo) == 1 and i.lo == i.hi:
        (b,) = i.lo
        if not b.terms:
            return b.c
    return None


def element_ranges(loop: Loop, ab: _Abstract) -> dict[str, Interval]:
    """Each element's interval from the preconditions' comparisons of it with a constant
    or a linear form in the parameters (`assert 1 <= x and x <= 3`)."""
    params = {d.name: _point(Bound(Fraction(0), ((d.name, Fraction(1)),))) for d in loop.params
              if d.type in (Type.INT, Type.REAL)}
    out: dict[str, Interval] = {d.name: _NONE for d in loop.elements if d.type in (Type.INT, Type.REAL)}
    atoms: list[Expr] = []
    todo = list(loop.preconditions)
    while todo:
        c = todo.pop()
        if c.op is Op.AND:
            todo += list(c.src)
        else:
            atoms.append(c)
    flip = {Op.LT: Op.GT, Op.LE: Op.GE, Op.GT: Op.LT, Op.GE: Op.LE, Op.EQ: Op.EQ}
    for c in atoms:
        if c.op not in flip:
            continue
        for x, other, op in ((c.src[0], c.src[1], c.op), (c.src[1], c.src[0], flip[c.op])):
            if x.op is not Op.VAR or x.arg not in out or free_vars([other]) - set(params):
                continue
            i = ab.value(other, params)
            if i is None:
                continue
            lo, hi = out[x.arg].lo, out[x.arg].hi
            if op in (Op.GT, Op.GE, Op.EQ):
                lo = frozenset(list(lo | i.lo)[:_MAX_ENDS])
            if op in (Op.LT, Op.LE, Op.EQ):
                hi = frozenset(list(hi | i.hi)[:_MAX_ENDS])
            out[x.arg] = Interval(lo, hi)
    return out | params


def field_ranges(loop: Loop) -> dict[str, Interval]:
    """The interval of each numeric field over every reachable state (as candidates)."""
    ab = _Abstract(loop, _Order(loop))
    fixed = element_ranges(loop, ab)
    numeric = [f for f in loop.fields if f.type in (Type.INT, Type.REAL)]
    state = {f"acc.{f.name}": _point(Bound(float(f.default) if math.isinf(float(f.default)) else Fraction(f.default)))
             for f in numeric}
    for k in range(_ROUNDS):
        env = dict(state) | fixed
        new = {}
        for f, out in zip(loop.fields, loop.left.outputs):
            if f.type not in (Type.INT, Type.REAL):
                continue
            name = f"acc.{f.name}"
            got = ab.value(out, env) or _NONE
            joined = ab.join(state[name], got)
            new[name] = joined if k < _PLAIN else ab.widen(state[name], joined)
        if new == state:
            break
        state = new
    # the tightest ends only: an end another one is decided to improve on adds nothing
    return {name[4:]: Interval(frozenset(b for b in i.lo if not any(o != b and ab.order.le(b, o) for o in i.lo)),
                               frozenset(b for b in i.hi if not any(o != b and ab.order.le(o, b) for o in i.hi)))
            for name, i in state.items()}


def bound_expr(b: Bound, type_: Type) -> Expr:
    """The bound as an IR term over the loop parameters."""
    def num(v: Fraction) -> Expr:
        if type_ is Type.INT and v.denominator == 1:
            return const(int(v), Type.INT)
        return const(float(v), Type.REAL)

    out: Expr | None = None
    for p, k in b.terms:
        t = var(p, type_)
        if k != 1:
            t = Expr(Op.MUL, type_ if k.denominator == 1 else Type.REAL, (num(k), t))
        out = t if out is None else Expr(Op.ADD, t.type, (out, t))
    if b.c != 0 or out is None:
        c = num(b.c)
        out = c if out is None else Expr(Op.ADD, out.type, (out, c)) if b.c > 0 else \
            Expr(Op.SUB, out.type, (out, num(-b.c)))
    return out


def range_candidates(loop: Loop) -> list[Expr]:
    """`acc.f >= lo` and `acc.f <= hi` for the finite ends the interval reasoning gives."""
    out: list[Expr] = []
    types = {d.name: d.type for d in loop.params}
    ranges = field_ranges(loop)
    for f in loop.fields:
        if f.type not in (Type.INT, Type.REAL):
            continue
        i = ranges[f.name]
        x = var(f"acc.{f.name}", f.type)
        for op, ends in ((Op.GE, i.lo), (Op.LE, i.hi)):
            for b in sorted(ends, key=repr):
                if not _finite(b.c):
                    continue
                t = Type.REAL if f.type is Type.REAL or any(types.get(p) is Type.REAL for p, _ in b.terms) \
                    or any(k.denominator != 1 for _, k in b.terms) or Fraction(b.c).denominator != 1 else Type.INT
                out.append(Expr(op, Type.BOOL, (x, bound_expr(b, t))))
    return out
