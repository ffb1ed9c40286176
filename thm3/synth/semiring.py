"""Synthesis route "semiring": `left` read as an affine map of the state over a semiring,
s' = M(x, p) (x) s (+) c(x, p), and the combine written as the composition of two such maps.

The semirings are (+, *), (+, *) mod m, (max, +), (min, +), (or, and), and (max, *) and
(min, *) over coefficients that are nonnegative from their form; a field's update
is read from its ops (after `thm3.ir.normalize`, so if/else, `where` and max/min spellings
meet in one form), a select on a condition that reads no state giving entries that select.
The map of a list ys is T(s) = E (x) s (+) d, E the product of the step matrices; the state
carries it when every entry of E is a constant or one of h(ys)'s fields (a matrix state, the
map fields of an affine pair), found on sampled lists.  Then combine(a, b) = T_b(a): over a
ring E (a - init) + b (reduced mod m), over the others E (x) a, (+) b where init is the
semiring's zero.  The prover decides, as for any route.  Where the state does not carry the
map, `lift_units` gives the lifting search the product of the step matrices, smallest first
(Blelloch 1990, "Prefix sums and their applications", section 1.4).  Where no one semiring
covers the state, its independent groups are composed each over its own (`blockwise`), and
a step that reads the state through a power of a count is read with the power as a field
(`thm3.synth.powers.with_power_fields`)."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from thm3.ir import Expr, Fn, Loop, Op, Type, const, free_vars, initial_state, var, walk
from thm3.ir.simplify import simplify
from thm3.synth.powers import parameter_bases, read_exponential, read_power, read_power_product
from thm3.errors import Thm3Error

__all__ = ["Asserted", "Failed", "SEMIRINGS", "Semiring", "Step", "Unit", "asserted_nonnegative", "composed_entries",
           "full_matrix_size", "lift_units", "nonnegative", "np_times", "positive", "recognise", "synthesize", "whole_affine", "whole_linear"]


MAX_FULL = 3        # the full matrix is offered as a lift for blocks of at most this many fields


class Failed(Thm3Error):
    """`left` is not affine over a semiring, or the state does not carry its map."""


@dataclass(frozen=True)
class Semiring:
    name: str
    plus: Op
    times: Op
    zero: object
    one: object
    modulus: int | None = None

    def with_modulus(self, m: int) -> "Semiring":
        return Semiring(f"(+, *) mod {m}", self.plus, self.times, self.zero, self.one, m)


RING = Semiring("(+, *)", Op.ADD, Op.MUL, 0, 1)
MAX_PLUS = Semiring("(max, +)", Op.MAX, Op.ADD, -math.inf, 0)
MIN_PLUS = Semiring("(min, +)", Op.MIN, Op.ADD, math.inf, 0)
BOOLEAN = Semiring("(or, and)", Op.OR, Op.AND, False, True)
# (max, *) and (min, *): the coefficients are nonnegative (or the zero, which absorbs), so
# scaling is monotone and distributes over max and min, c * max(u, v) == max(c * u, c * v)
# for every real u, v; the fields themselves may be negative (a peak meter, a decayed best)
MAX_TIMES = Semiring("(max, *)", Op.MAX, Op.MUL, -math.inf, 1)
MIN_TIMES = Semiring("(min, *)", Op.MIN, Op.MUL, math.inf, 1)
# (max, *) where every value is nonnegative (the fields start at 0 or more and the offsets
# are nonnegative): 0 is then the zero, and no entry of the composed map is an infinity
# that IEEE multiplies into NaN (0 * -inf) in a combine or a lift
MAX_TIMES_NONNEGATIVE = Semiring("(max, *) on nonnegatives", Op.MAX, Op.MUL, 0, 1)
SEMIRINGS = (RING, MAX_PLUS, MIN_PLUS, BOOLEAN, MAX_TIMES, MIN_TIMES, MAX_TIMES_NONNEGATIVE)


def scaling(s: "Semiring") -> bool:
    """(max, *) or (min, *): a selection's sum with a product, over nonnegative coefficients."""
    return s.times is Op.MUL and s.plus in (Op.MAX, Op.MIN)


@dataclass(frozen=True)
class Step:
    """s' = M (x) s (+) c over `semiring`, on the fields of `block` (the others' updates
    are not read): `matrix[f][g]` the coefficient of acc.g in f's update (absent: the
    zero), `offset[f]` the part that reads no state.  `reduced` holds the fields whose
    update is taken mod the semiring's modulus."""
    semiring: Semiring
    block: tuple[str, ...]
    types: dict
    matrix: dict
    offset: dict
    reduced: frozenset = frozenset()

    def homogeneous(self) -> bool:
        return all(self.offset.get(f) is None or is_value(self.offset[f], self.semiring.zero)
                   for f in self.block)


# --- recognition ---------------------------------------------------------------------

_RING_OPS = frozenset({Op.ADD, Op.SUB, Op.NEG, Op.MUL, Op.DIV, Op.WHERE, Op.MOD})
_TROPICAL_OPS = frozenset({Op.ADD, Op.SUB, Op.MAX, Op.MIN, Op.WHERE})
_BOOL_OPS = frozenset({Op.AND, Op.OR, Op.WHERE})
_SCALING_OPS = frozenset({Op.MAX, Op.MIN, Op.MUL, Op.DIV, Op.WHERE})


def _state_free(e: Expr) -> bool:
    return not any(n.startswith("acc.") for n in free_vars([e]))


def _ops_on_state(outputs) -> set[Op]:
    """The ops of `left` that have the state below them (the others are coefficients)."""
    reads: dict[int, bool] = {}
    out: set[Op] = set()
    for e in walk(outputs):
        r = (e.op is Op.VAR and e.arg.startswith("acc.")) or any(reads[id(s)] for s in e.src)
        reads[id(e)] = r
        if r and e.op is not Op.VAR:
            out.add(e.op)
    return out


def recognise(loop: Loop, block: tuple[str, ...] | None = None) -> Step | None:
    """`left` (normalised) as an affine map over a semiring on `block` (default: every
    field), or None.  Decided from the ops first: a loop whose state goes through an op
    that no semiring form has fails at once."""
    from thm3.ir.normalize import normalize
    names = tuple(loop.field_names) if block is None else tuple(block)
    types = {f.name: f.type for f in loop.fields}
    if not names or any(types[f] is Type.VEC for f in names) or any(d.type is Type.VEC for d in loop.elements):
        return None
    outputs = dict(zip(loop.field_names, normalize(loop.left.outputs)))
    rows = [outputs[f] for f in names]
    ops = _ops_on_state(rows)
    if all(types[f] is Type.BOOL for f in names):
        return _fit(BOOLEAN, names, types, outputs) if ops <= _BOOL_OPS else None
    if any(types[f] is Type.BOOL for f in names):
        return None
    options = []
    if ops <= _RING_OPS:
        mods = {e.arg for e in walk(rows) if e.op is Op.MOD}
        if not mods:
            options.append(RING)
        elif len(mods) == 1 and all(types[f] is Type.INT for f in names):
            options.append(RING.with_modulus(next(iter(mods))))
    if ops <= _TROPICAL_OPS:
        if Op.MIN not in ops:
            options.append(MAX_PLUS)
        if Op.MAX not in ops:
            options.append(MIN_PLUS)
    if ops <= _SCALING_OPS and ops & {Op.MUL, Op.DIV}:
        if Op.MIN not in ops:
            options.append(MAX_TIMES)
        if Op.MAX not in ops:
            options.append(MIN_TIMES)
    for s in options:
        got = _fit(s, names, types, outputs)
        if got is not None and scaling(s):
            got = _scaling_step(got, loop, outputs)
        if got is not None:
            return got
    return None


def _scaling_step(step: Step, loop: Loop, outputs: dict) -> Step | None:
    """A (max, *) or (min, *) step where every coefficient is nonnegative (else None),
    over (max, *) on nonnegatives where the block's values are too: its initial values are
    0 or more and its offsets nonnegative, so by induction every value it reaches is."""
    known = asserted_nonnegative(loop)
    if not all(nonnegative(c, known) for row in step.matrix.values() for c in row.values()):
        return None
    if step.semiring is not MAX_TIMES:
        return step
    init = dict(zip(loop.field_names, initial_state(loop)))
    if all(init[f].op is Op.CONST and not isinstance(init[f].arg, bool) and float(init[f].arg) >= 0
           for f in step.block) and all(step.offset[f] is None or nonnegative(step.offset[f], known)
                                        for f in step.block):
        return _fit(MAX_TIMES_NONNEGATIVE, step.block, step.types, outputs)
    return step


def _unsigned_coefficients(loop: Loop) -> str:
    """Where a group of fields is a max or a min of scaled fields but a coefficient is not
    shown nonnegative, what would put it in (max, *) or (min, *): "" where none is."""
    from thm3.ir.normalize import normalize
    from thm3.synth.product import components
    from thm3.syntax.loopfile import expression_text
    types = {f.name: f.type for f in loop.fields}
    outputs = dict(zip(loop.field_names, normalize(loop.left.outputs)))
    known = asserted_nonnegative(loop)
    for group in components(loop):
        if any(types[f] not in (Type.REAL, Type.INT) for f in group):
            continue
        ops = _ops_on_state([outputs[f] for f in group])
        if not (ops <= _SCALING_OPS and ops & {Op.MUL, Op.DIV} and ops & {Op.MAX, Op.MIN}):
            continue
        for s in (MAX_TIMES, MIN_TIMES):
            step = _fit(s, tuple(group), types, outputs)
            if step is None:
                continue
            bad = [c for row in step.matrix.values() for c in row.values() if not nonnegative(c, known)]
            if bad:
                names = sorted(free_vars(bad) - {f"acc.{f}" for f in loop.field_names})
                hint = (f"; an `assert {names[0]} >= 0`, where it holds, puts it there" if names else "")
                return (f"; ({', '.join(group)}) is a {'max' if s is MAX_TIMES else 'min'} of scaled fields, but the "
                        f"coefficient {expression_text(simplify(bad[0]))} is not shown nonnegative, so it is not over "
                        f"{s.name}{hint}")
    return ""


class Asserted(set):
    """The names `asserted_nonnegative` gives, with the constant bounds the preconditions
    put on each variable: `lower[name]` and `upper[name]`, (bound, strict)."""

    def __init__(self, names=(), lower: dict | None = None, upper: dict | None = None):
        super().__init__(names)
        self.lower = lower or {}
        self.upper = upper or {}


def asserted_nonnegative(loop: Loop, strict: bool = False) -> Asserted:
    """The elements and parameters that a precondition bounds below by 0 or more
    (`assert x >= 0`, `assert 0.0 < p`); `strict`: those it bounds above 0 (`x > 0`,
    `x >= 0.5`).  With every variable's constant bounds (`Asserted`), so that `1 - p` is
    nonnegative where `p <= 1` is asserted."""
    from thm3.prove.reachable import conjuncts, constant_bounds
    lower, upper = constant_bounds(conjuncts(loop.preconditions))
    names = {n for n, (b, tight) in lower.items() if b >= 0 and (not strict or tight or b > 0)}
    return Asserted(names, lower, upper)


def _apart(a: Expr, b: Expr, known: set[str], strict: bool) -> bool:
    """a - b >= 0 (> 0 where `strict`) from the asserted constant bounds: a's lower bound
    against b's upper one (a constant is its own bound)."""
    def bound(e: Expr, side: str):
        if e.op is Op.CONST and not isinstance(e.arg, bool):
            return float(e.arg), False
        return getattr(known, side, {}).get(e.arg) if e.op is Op.VAR else None
    lo, hi = bound(a, "lower"), bound(b, "upper")
    if lo is None or hi is None:
        return False
    return lo[0] > hi[0] or lo[0] == hi[0] and (not strict or lo[1] or hi[1])


def positive(e: Expr, known: set[str]) -> bool:
    """`e` > 0 (or +inf) on every value its inputs take, from its form alone (`known`: the
    variables a precondition bounds above 0, `asserted_nonnegative(loop, strict=True)`):
    positive constants, exp, and sums, products, quotients, selections of such."""
    match e.op:
        case Op.CONST:
            return not isinstance(e.arg, bool) and float(e.arg) > 0
        case Op.VAR:
            return e.arg in known
        case Op.EXP | Op.EXP2:
            return True
        case Op.POWN | Op.POW:
            return positive(e.src[0], known)
        case Op.MUL | Op.DIV | Op.ADD | Op.MIN:
            return all(positive(x, known) for x in e.src)
        case Op.MAX:
            return any(positive(x, known) for x in e.src)
        case Op.WHERE:
            return all(positive(x, known) for x in e.src[1:])
        case Op.SUB:
            return _apart(e.src[0], e.src[1], known, strict=True)
    return False


def nonnegative(e: Expr, known: set[str]) -> bool:
    """`e` >= 0 (or +inf) on every value its inputs take, from its form alone: constants,
    powers of a nonnegative base, exp, abs, sqrt, squares, and sums, products, quotients,
    selections of such; a variable only where a precondition says so."""
    match e.op:
        case Op.CONST:
            return not isinstance(e.arg, bool) and float(e.arg) >= 0
        case Op.VAR:
            return e.arg in known
        case Op.EXP | Op.EXP2 | Op.ABS | Op.SQRT:
            return True
        case Op.POWN:
            return nonnegative(e.src[0], known)
        case Op.MUL:
            a, b = e.src
            return a is b or (nonnegative(a, known) and nonnegative(b, known))
        case Op.DIV | Op.ADD | Op.MIN:
            return all(nonnegative(x, known) for x in e.src)
        case Op.MAX:
            return any(nonnegative(x, known) for x in e.src)
        case Op.WHERE:
            return all(nonnegative(x, known) for x in e.src[1:])
        case Op.POW:
            return e.arg % 2 == 0 or nonnegative(e.src[0], known)
        case Op.SUB:
            return _apart(e.src[0], e.src[1], known, strict=False)
    return False


def whole_affine(loop: Loop) -> Step | None:
    """`recognise(loop)` where the step is affine on every field, else None."""
    step = recognise(loop)
    if step is None or set(step.block) != set(loop.field_names):
        return None
    return step


def whole_linear(loop: Loop) -> Step | None:
    """`recognise(loop)` where the step is linear (no offset) on every field, else None."""
    step = whole_affine(loop)
    return step if step is not None and step.homogeneous() else None


def constant_ring_step(loop: Loop) -> Step | None:
    """`recognise(loop)` where the step is affine on every field over (+, *) (no modulus)
    with a constant matrix that is not the identity (its entries read no element and no
    field: a linear recurrence with fixed or parameter weights, lifted by Cayley-Hamilton),
    else None."""
    step = whole_affine(loop)
    if step is None or step.semiring is not RING:
        return None
    params = {d.name for d in loop.params}
    block = step.block
    rows = {(f, g): step.matrix[f].get(g, _zero(RING, step.types[f])) for f in block for g in block}
    if any(not free_vars([e]) <= params for e in rows.values()):
        return None
    if all(is_value(e, 1 if f == g else 0) for (f, g), e in rows.items()):
        return None
    return step


def _row(s: Semiring, e: Expr, state: dict, type_: Type) -> dict | None:
    """One field's update as a form over `s` (None where it is none), its `% m` dropped."""
    if s.modulus is not None:
        e = _strip_mod(e, s.modulus)
        if e is None:
            return None
    return semiring_form(s, e, state, type_)


def _fit(s: Semiring, names, types, outputs) -> Step | None:
    state = {f"acc.{g}": g for g in names}
    matrix, offset, reduced = {}, {}, set()
    for f in names:
        e = outputs[f]
        if s.modulus is not None and e.op is Op.MOD and e.arg == s.modulus:
            reduced.add(f)
        form = _row(s, e, state, types[f])
        if form is None:
            return None
        offset[f] = form.pop("", None)
        matrix[f] = form
    if s.modulus is not None:
        # a field whose update is a reduced field's value (q' = p beside p' = (x p + q) % m: a
        # continuant) holds a remainder too, from an initial remainder (`composed._applies`
        # checks the initial values): reduced, as if its update were `p % m`
        grew = True
        while grew:
            grew = False
            for f in names:
                e = outputs[f]
                if f not in reduced and e.op is Op.VAR and e.arg.startswith("acc.") and e.arg[4:] in reduced:
                    reduced.add(f)
                    grew = True
        # an unreduced field must not read a reduced one: the composition is then not linear
        if any(g in reduced for f in names if f not in reduced for g in matrix[f]):
            return None
    return Step(s, tuple(names), dict(types), matrix, offset, frozenset(reduced))


def _strip_mod(e: Expr, m: int) -> Expr | None:
    """`e` with every `% m` dropped (a ring map onto Z/m); None where another modulus is
    taken of the state."""
    from thm3.ir import transform

    bad = []

    def rule(x, go):
        if x.op is Op.MOD:
            if x.arg != m and not _state_free(x):
                bad.append(x)
            return go(x.src[0]) if x.arg == m else None
        return None

    (out,) = transform([e], rule)
    return None if bad else out


def semiring_form(s: Semiring, e: Expr, state: dict, type_: Type) -> dict | None:
    """`e` as (+)_g coefficient_g (x) acc.g (+) constant ("" key), every coefficient free
    of state; None where `e` is not of that form over `s`."""
    if _state_free(e):
        return {"": e}
    if e.op is Op.VAR:
        return {state[e.arg]: _one(s, e.type)} if e.arg in state else None
    if e.op is Op.WHERE and _state_free(e.src[0]):
        t, f = (semiring_form(s, x, state, type_) for x in e.src[1:])
        if t is None or f is None:
            return None
        zero = _zero(s, e.type)
        return {k: _where(e.src[0], t.get(k, zero), f.get(k, zero)) for k in dict.fromkeys([*t, *f])}
    if s.plus is Op.ADD:
        return _ring_form(s, e, state, type_)
    if s is BOOLEAN:
        return _bool_form(s, e, state, type_)
    return _tropical_form(s, e, state, type_)


def _ring_form(s, e, state, type_):
    match e.op:
        case Op.ADD | Op.SUB:
            a, b = (semiring_form(s, x, state, type_) for x in e.src)
            if a is None or b is None:
                return None
            out = dict(a)
            for k, v in b.items():
                v = v if e.op is Op.ADD else _neg(v)
                out[k] = _arith(Op.ADD, out[k], v) if k in out else v
            return out
        case Op.NEG:
            a = semiring_form(s, e.src[0], state, type_)
            return None if a is None else {k: _neg(v) for k, v in a.items()}
        case Op.MUL:
            return _scaled(s, e, state, type_, lambda c, v: _arith(Op.MUL, c, v))
        case Op.DIV if _state_free(e.src[1]) and s.modulus is None:
            a = semiring_form(s, e.src[0], state, type_)
            return None if a is None else {k: _arith(Op.DIV, v, e.src[1]) for k, v in a.items()}
    return None


def _tropical_form(s, e, state, type_):
    match e.op:
        case op if op is s.plus:
            return _summed(s, e, state, type_, lambda u, v: Expr(s.plus, _join(u.type, v.type), (u, v)))
        case Op.MUL if s.times is Op.MUL:
            return _scaled(s, e, state, type_, lambda c, v: _arith(Op.MUL, c, v))
        case Op.DIV if s.times is Op.MUL and _state_free(e.src[1]):
            a = semiring_form(s, e.src[0], state, type_)
            return None if a is None else {k: _arith(Op.DIV, v, e.src[1]) for k, v in a.items()}
        case Op.ADD | Op.SUB if s.times is Op.ADD:
            x, y = e.src
            if e.op is Op.ADD and _state_free(x):
                x, y = y, x
            if not _state_free(y):
                return None
            a = semiring_form(s, x, state, type_)
            if a is None:
                return None
            return {k: _arith(e.op, v, y) for k, v in a.items()}
    return None


def _bool_form(s, e, state, type_):
    match e.op:
        case Op.OR:
            return _summed(s, e, state, type_, lambda u, v: Expr(Op.OR, Type.BOOL, (u, v)))
        case Op.AND:
            return _scaled(s, e, state, type_, lambda c, v: Expr(Op.AND, Type.BOOL, (c, v)))
    return None


def _summed(s, e, state, type_, plus):
    """The semiring's sum of two forms: coefficients of the same state field added."""
    a, b = (semiring_form(s, x, state, type_) for x in e.src)
    if a is None or b is None:
        return None
    out = dict(a)
    for k, v in b.items():
        out[k] = plus(out[k], v) if k in out else v
    return out


def _scaled(s, e, state, type_, times):
    """The semiring's product of a state-free factor (either side) and a form."""
    x, y = e.src
    if _state_free(y):
        x, y = y, x
    if not _state_free(x):
        return None
    a = semiring_form(s, y, state, type_)
    return None if a is None else {k: times(x, v) for k, v in a.items()}


# --- expressions -----------------------------------------------------------------------

def _join(a: Type, b: Type) -> Type:
    return Type.REAL if Type.REAL in (a, b) else a


def _arith(op: Op, a: Expr, b: Expr) -> Expr:
    from thm3.ir import as_real, promote
    type_ = promote(a.type, b.type)
    if type_ is not Type.INT:
        a, b = as_real(a), as_real(b)
    return Expr(op, type_, (a, b))


def _neg(v: Expr) -> Expr:
    return Expr(Op.NEG, v.type, (v,))


def _where(c: Expr, t: Expr, f: Expr) -> Expr:
    from thm3.ir import as_real
    type_ = _join(t.type, f.type)
    if type_ is Type.REAL:
        t, f = as_real(t), as_real(f)
    return Expr(Op.WHERE, type_, (c, t, f))


def _zero(s: Semiring, type_: Type) -> Expr:
    return const(s.zero, type_ if s is BOOLEAN or math.isfinite(float(s.zero)) else Type.REAL)


def _one(s: Semiring, type_: Type) -> Expr:
    return const(s.one, Type.BOOL if s is BOOLEAN else type_)


def is_value(e: Expr, v) -> bool:
    if e.op is not Op.CONST:
        return False
    if isinstance(v, bool) or isinstance(e.arg, bool):
        return isinstance(v, bool) and isinstance(e.arg, bool) and e.arg is v
    return float(e.arg) == float(v)


def _plus(s: Semiring, a: Expr, b: Expr) -> Expr:
    if is_value(a, s.zero):
        return b
    if is_value(b, s.zero):
        return a
    if s is BOOLEAN:
        return Expr(Op.OR, Type.BOOL, (a, b))
    return _arith(Op.ADD, a, b) if s.plus is Op.ADD else Expr(s.plus, _join(a.type, b.type), (a, b))


def _times(s: Semiring, a: Expr, b: Expr) -> Expr:
    if is_value(a, s.one):
        return b
    if is_value(b, s.one):
        return a
    if s is BOOLEAN:
        return Expr(Op.AND, Type.BOOL, (a, b))
    return _arith(s.times, a, b)


# --- numbers: the composed map on sampled lists ------------------------------------------

def _np_plus(s: Semiring):
    return {Op.ADD: np.add, Op.MAX: np.maximum, Op.MIN: np.minimum, Op.OR: np.logical_or}[s.plus]


def np_times(s: Semiring):
    """The semiring's product on arrays (+ over (max, +), * with an absorbing zero over
    (max, *) and (min, *))."""
    if scaling(s):
        return _absorbing(s.zero)
    return {Op.MUL: np.multiply, Op.ADD: np.add, Op.AND: np.logical_and}[s.times]


def _absorbing(zero: float):
    """The product of (max, *) or (min, *) on samples: the zero (an infinity) absorbs, where
    IEEE gives NaN for 0 * inf and +inf for -inf * -inf."""
    def times(a, b):
        with np.errstate(invalid="ignore"):
            return np.where((a == zero) | (b == zero), zero, np.multiply(a, b))
    return times


def composed_entries(loop: Loop, step: Step, *, seed: int = 0, count: int = 24, max_len: int = 6,
                     settings: int = 3, reduce: bool = True):
    """On sampled lists ys (every length up to `max_len`, a few parameter settings): the
    composed map's entries E[f][g] and offsets d[f] (rows of values), and h(ys) field by
    field (with each loop parameter's value under "$<name>"), each as one flat array over
    all samples.  Raises `Failed` where a coefficient
    or a sampled value does not fit the int64 the samples are computed in (an Int literal
    beyond int64: the analysis stays exact, this route does not read it).  With
    `reduce=False` a modulus is not taken of the entries and offsets (the integers they are
    residues of, for a reading fitted over the integers)."""
    try:
        return _composed_entries(loop, step, seed, count, max_len, settings, reduce)
    except OverflowError as err:
        raise Failed(f"affine over {step.semiring.name}, but the composed map overflows int64 on samples "
                     f"({err})") from None


def _composed_entries(loop: Loop, step: Step, seed: int, count: int, max_len: int, settings: int,
                      reduce: bool):
    from thm3.semantics.evaluate import NUMPY, compiled, quiet
    from thm3.semantics.samples import Domain, batch_fold, batch_init, stack_elements
    rng = np.random.default_rng(seed)
    dom = Domain(loop)
    s, block = step.semiring, step.block
    coeffs = [step.matrix[f].get(g, _zero(s, step.types[f])) for f in block for g in block]
    coeffs += [step.offset[f] if step.offset[f] is not None else _zero(s, step.types[f]) for f in block]
    run = compiled(tuple(coeffs), NUMPY)
    add, mul = _np_plus(s), np_times(s)
    k = len(block)
    entries = {(f, g): [] for f in block for g in block}
    offsets = {f: [] for f in block}
    states = {f.name: [] for f in loop.fields}
    with quiet():
        for i in range(settings):
            params = dom.params(rng, small=i < 2)
            for n in range(max_len + 1):
                lists = dom.random_lists(rng, params, count, n, small=(n + i) % 2 == 0)
                steps = stack_elements(loop, lists)
                # Int only over (+, *): the tropical zero is an infinity
                dtype = bool if s is BOOLEAN else (np.int64 if s.plus is Op.ADD and all(
                    step.types[f] is Type.INT for f in block) else np.float64)
                if s.modulus is not None and not reduce:
                    dtype = object          # Python's integers: no int64 wrap-around unreduced
                one, zero = np.asarray(s.one, dtype=dtype), np.asarray(s.zero, dtype=dtype)
                e = [[np.full((count, 1), one if a == b else zero) for b in range(k)] for a in range(k)]
                d = [np.full((count, 1), zero) for _ in range(k)]
                for el in steps:
                    env = dict(params) | {p.name: v for p, v in zip(loop.elements, el)}
                    vals = [np.broadcast_to(np.asarray(v, dtype=dtype), (count, 1)) for v in run(env)]
                    m = [vals[a * k:(a + 1) * k] for a in range(k)]
                    c = vals[k * k:]
                    e2 = [[_dot(add, mul, [mul(m[a][j], e[j][b]) for j in range(k)]) for b in range(k)]
                          for a in range(k)]
                    d2 = [add(_dot(add, mul, [mul(m[a][j], d[j]) for j in range(k)]), c[a]) for a in range(k)]
                    if s.modulus is not None and reduce:
                        e2 = [[x % s.modulus for x in row] for row in e2]
                        d2 = [x % s.modulus for x in d2]
                    e, d = e2, d2
                h = batch_fold(loop, steps, params, batch_init(loop, count, 3), NUMPY)
                for a, f in enumerate(block):
                    offsets[f].append(d[a].ravel())
                    for b, g in enumerate(block):
                        entries[(f, g)].append(e[a][b].ravel())
                for fd, v in zip(loop.fields, h):
                    states[fd.name].append(np.asarray(v, dtype=np.float64).reshape(count, -1)[:, 0])
                for d in loop.params:
                    if d.type is not Type.VEC:
                        states.setdefault("$" + d.name, []).append(np.full(count, float(params[d.name])))
                states.setdefault(LENGTH, []).append(np.full(count, float(n)))
    def flat(parts):
        out = np.concatenate(parts)
        if out.dtype == object and out.size and max(abs(int(v)) for v in out) >= 2 ** 53:
            raise OverflowError("an unreduced entry beyond 2**53")
        return out.astype(np.float64)
    return ({key: flat(v) for key, v in entries.items()}, {f: flat(v) for f, v in offsets.items()},
            {f: flat(v) for f, v in states.items()})


LENGTH = "#length"       # the sampled lists' lengths, among composed_entries' states


def _dot(add, mul, terms):
    out = terms[0]
    for t in terms[1:]:
        out = add(out, t)
    return out


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    from thm3.semantics.equality import close
    return a.shape == b.shape and bool(np.all(close(a, b)))


# --- synthesis -----------------------------------------------------------------------------

def synthesize(loop: Loop, deadline: float | None = None) -> tuple[Fn, str]:
    """The combine T_b(a), with T_b's entries read from b's fields; raises `Failed` with
    the reason (not affine over a semiring; an entry of the composed map that no field of b
    holds)."""
    step = recognise(loop)
    if step is not None:
        s = step.semiring
        if deadline is not None and time.monotonic() > deadline:
            raise Failed(f"affine over {s.name}; no time left to sample the composed map")
        fn, _, _ = composition(loop, step)
        return fn, f"composition of the affine maps over {s.name}"
    steps = blockwise(loop)
    if steps is None:
        from thm3.synth.powers import expand, with_power_fields
        got = with_power_fields(loop)
        if got is not None:
            extended, meaning = got
            try:
                fn, how = synthesize(extended, deadline)
            except Failed as e:
                raise Failed(f"with its powers of a count read as fields ({', '.join(meaning)}): {e}") from None
            outs = expand(fn.outputs[:len(loop.fields)], meaning, loop.field_names)
            return _combine_fn(loop, [simplify(e) for e in outs]), \
                f"{how}, with its powers of a count as fields ({', '.join(meaning)})"
        raise Failed("left is not affine in the state over (+, *), (+, *) mod m, (max, +), (min, +), "
                     "(max, *), (min, *) or (or, and), on the whole state or group by group"
                     + _unsigned_coefficients(loop))
    outputs: dict = {}
    for step in steps:
        if deadline is not None and time.monotonic() > deadline:
            raise Failed(f"affine group by group; no time left to sample the composed map of "
                         f"({', '.join(step.block)})")
        outs, _, _ = _composed_outputs(loop, step)
        outputs.update(outs)
    hows = ", ".join(f"({', '.join(st.block)}) over {st.semiring.name}" for st in steps)
    return _combine_fn(loop, [outputs[f] for f in loop.field_names]), \
        f"composition of the affine maps group by group: {hows}"


def blockwise(loop: Loop) -> list[Step] | None:
    """Where the state is no one semiring's: its groups of fields that never read each other
    (`product.components`), each affine over a semiring of its own (a peak over (max, *)
    beside the count of its decays over (+, *)), else None.  A group's composed map may be
    read from another group's fields of b (0.5 ** b.ticks), which a product of the groups'
    own combines cannot do."""
    from thm3.synth.product import components
    groups = components(loop)
    if len(groups) < 2:
        return None
    steps = [recognise(loop, g) for g in groups]
    if any(st is None or set(st.block) != set(g) for st, g in zip(steps, groups)):
        return None
    return steps


def composition(loop: Loop, step: Step) -> tuple[Fn, dict, dict]:
    """The combine T_b(a) = E(b) (x) a (+) D(b) of `step`, its reading E (entry (f, g) of
    the composed map as a constant or a field of b, `b.<field>`) and its offset D (row f
    of the composed map's offset d as an expression in b's fields, or None where it is
    the zero on every sample), read off sampled lists (seeded, so the same every time);
    raises `Failed` where an entry or an offset is not read.  Over a ring the offset is
    b less E(b) init (h(ys) = M init + d); over the others, a field of b (b's own where the
    row reads only fields that start at the zero, a lifted offset field otherwise) or a
    constant.  `thm3.prove.composed` proves both readings and, with them, the laws."""
    outs, reading, offset = _composed_outputs(loop, step)
    return _combine_fn(loop, [outs[f] for f in step.block]), reading, offset


def _combine_fn(loop: Loop, outputs) -> Fn:
    names = tuple((f"a.{f.name}", f.type) for f in loop.fields) + \
        tuple((f"b.{f.name}", f.type) for f in loop.fields) + tuple((d.name, d.type) for d in loop.params)
    return Fn(names, tuple(outputs))


def _composed_outputs(loop: Loop, step: Step) -> tuple[dict, dict, dict]:
    """`composition`'s outputs on `step.block` (field -> expression), reading and offset."""
    s = step.semiring
    entries, offsets, states = composed_entries(loop, step)
    reading: dict = {}
    wide = None             # more parameter settings (unreduced mod m), for the linear readings
    # the bases of an entry that is a power of a count (over (+, *) only, as `_read` reads them)
    bases = parameter_bases(loop, {p.name: states[f"${p.name}"] for p in loop.params if f"${p.name}" in states},
                            len(next(iter(entries.values())))) if s is RING or scaling(s) else ()
    if scaling(s) and any(np.any((col < 0) & (col != s.zero)) for col in entries.values()):
        raise Failed(f"max/min of scaled fields, but a coefficient of the composed map is negative on samples: "
                     f"scaling by it does not distribute over {s.name}")
    for (f, g), col in entries.items():
        got = _read(col, states, loop, s, step.types[f], bases)
        if got is None and s.plus is Op.ADD and s.times is Op.MUL:
            if wide is None:
                wide = _linear_samples(loop, step, entries, offsets, states)
            if wide:
                got = _read_linear(wide[0][(f, g)], wide[1], step.types[f], s.modulus)
        if got is None:
            raise Failed(f"affine over {s.name}, but entry ({f}, {g}) of the composed map is no field of b "
                         f"and no constant: the state does not carry the map (a lift adds it)")
        reading[(f, g)] = _residues(got, step) if s.modulus is not None else got
    init = dict(zip(loop.field_names, initial_state(loop)))
    offset: dict = {}
    for f in step.block:
        col = offsets[f]
        if bool(np.all(col == float(s.zero))):
            offset[f] = None
        elif s.plus is Op.ADD:
            d = var(f"b.{f}", step.types[f])
            for g in step.block:
                e = reading[(f, g)]
                if not is_value(e, 0) and not is_value(init[g], 0):
                    d = _arith(Op.SUB, d, _times(s, e, init[g]))
            offset[f] = d
        else:
            own = states.get(f)
            got = var(f"b.{f}", step.types[f]) if own is not None and _same(col, own) else \
                _read(col, states, loop, s, step.types[f])
            if got is None and own is not None and _absorbs_init(s, step, f, entries, offsets, states):
                got = var(f"b.{f}", step.types[f])
            if got is None:
                raise Failed(f"affine over {s.name} with an offset, but row {f}'s offset of the composed map "
                             f"is no field of b and no constant: the state does not carry it (a lift adds it)")
            offset[f] = got
    outs: dict = {}
    for f in step.block:
        # over a ring, E (a - init) + b: the offset b - E init spread over the terms
        ring = s.plus is Op.ADD and offset[f] is not None
        out = _zero(s, step.types[f])
        for g in step.block:
            e = reading[(f, g)]
            if is_value(e, s.zero):
                continue
            ag = var(f"a.{g}", step.types[g])
            if ring and not is_value(init[g], 0):
                ag = _arith(Op.SUB, ag, init[g])
            term = _times(s, e, ag)
            if scaling(s) and math.isinf(float(s.zero)) and is_value(init[g], s.zero) and e.op is not Op.CONST:
                # a's field may be the zero (an infinity: the identity, padding), where a coefficient
                # that underflows to 0 (0.9 ** b.n on a long list) would make 0 * -inf a NaN that the
                # loop, scaling -inf one step at a time, never makes
                term = _where(Expr(Op.EQ, Type.BOOL, (ag, init[g])), init[g], term)
            out = _plus(s, out, term)
        if offset[f] is not None:
            out = _plus(s, out, var(f"b.{f}", step.types[f]) if ring else offset[f])
        if f in step.reduced:
            out = Expr(Op.MOD, out.type, (out,), s.modulus)
        outs[f] = simplify(out)
    return outs, reading, offset


def _absorbs_init(s: Semiring, step: Step, f: str, entries: dict, offsets: dict, states: dict) -> bool:
    """Over a semiring without subtraction, whether b's own field f may stand for row f's
    offset d(b) where init is not the zero: b.f is T_b(init)_f = (+)_g E[f][g] (x) init_g
    (+) d_f, so (+)_g E[f][g] (x) a_g (+) b.f is T_b(a)_f wherever the map of a reachable
    a reaches at least its map of init (a peak meter held from 0.0: its peak never falls
    below 0).  Checked on the sampled states paired with the next sample's map; the
    prover decides."""
    plus, times = _np_plus(s), np_times(s)
    n = len(offsets[f])
    if n < 2:
        return False
    after = np.roll(np.arange(n), 1)          # a: the sample before b's
    mapped = None
    for g in step.block:
        term = times(entries[(f, g)], states[g][after])
        mapped = term if mapped is None else plus(mapped, term)
    with np.errstate(invalid="ignore"):
        return _same(plus(mapped, offsets[f]), plus(mapped, states[f]))


LINEAR_DEGREE = 2          # the parameters' degree in a linear reading's coefficients
LINEAR_DENOMINATOR = 64    # and the denominators of their rational constants
COUNT_DEGREE = 3           # a count field's highest power in a reading (A**n for a unipotent A)


def _settings_for(loop: Loop) -> int:
    """Parameter settings enough to tell the monomials of a linear reading apart (each
    setting is one value of every parameter), two per monomial and some to spare."""
    from math import comb
    p = sum(d.type is not Type.VEC for d in loop.params)
    return min(48, 2 * comb(p + LINEAR_DEGREE, LINEAR_DEGREE) + 4)


def _count_fields(step: Step) -> list[str]:
    """The block's fields that count: the update adds a nonzero constant to the field and
    reads nothing else (mod m allowed), so the field is a multiple of the length plus its
    initial value, and every entry of A**n for a constant A that is unipotent is a
    polynomial in it (of degree below the block's size)."""
    out = []
    for f in step.block:
        row, off = step.matrix[f], step.offset.get(f)
        if set(row) == {f} and is_value(row[f], 1) and off is not None and off.op is Op.CONST \
                and not isinstance(off.arg, bool) and off.arg != 0:
            out.append(f)
    return out


def _read_linear(col: np.ndarray, basis: "_LinearBasis", type_: Type, modulus: int | None = None) -> Expr | None:
    """An entry of the composed map over (+, *) as a linear form in b's fields, the powers
    of its count fields and 1, whose coefficients are polynomials in the loop parameters of
    degree <= LINEAR_DEGREE with small rational constants, fitted exactly on the samples,
    lowest degree first: the entries of A**n that a Cayley-Hamilton lift holds as A**n =
    ch0 I + ch1 A (b.ch0 + a * b.ch1 for y' = a y + b z + x), and those of a unipotent A**n
    held by a length (n (n + 1) / 2 for a third running sum).  Modulo m the samples are
    the unreduced entries, and a rational constant p/q is p times q's inverse mod m (None
    where q has none).  None where no such form fits; the composition lemma proves the
    reading it gives."""
    from fractions import Fraction
    if not np.all(np.isfinite(col[basis.ok])):
        return None
    target = col[basis.ok]
    scale = max(1.0, float(np.max(np.abs(target)))) if target.size else 1.0
    for degree in range(basis.degrees):
        labels, columns, pinv = basis.at(degree)
        if pinv is None:
            return None
        coeffs = [Fraction(float(x)).limit_denominator(LINEAR_DENOMINATOR) for x in pinv @ target]
        if not np.allclose(columns @ np.array([float(c) for c in coeffs]), target, rtol=1e-9, atol=1e-9 * scale):
            continue
        if modulus is not None:
            try:
                coeffs = [Fraction(_residue(c, modulus)) for c in coeffs]
            except ValueError:          # a denominator with no inverse mod m
                return None
        out: Expr | None = None
        for (fs, m), c in zip(labels, coeffs):
            if c == 0:
                continue
            term: Expr | None = None
            for name in m:
                term = basis.param(name) if term is None else _arith(Op.MUL, term, basis.param(name))
            for f in fs:
                fv = var(f"b.{f.name}", f.type)
                term = fv if term is None else _arith(Op.MUL, term, fv)
            if c.denominator == 1:
                k = const(int(c), Type.INT) if type_ is Type.INT else const(float(c.numerator), Type.REAL)
            else:
                k = Expr(Op.DIV, Type.REAL, (const(float(c.numerator), Type.REAL), const(float(c.denominator), Type.REAL)))
            if term is None:
                term = k
            elif c != 1:
                term = _arith(Op.MUL, k, term)
            out = term if out is None else _arith(Op.ADD, out, term)
        return out if out is not None else const(0 if type_ is Type.INT else 0.0, type_)
    return None


class _LinearBasis:
    """The columns a linear reading is fitted over, per degree in the parameters: b's
    number fields (and 1, and the powers 2 .. `COUNT_DEGREE` of the count fields) times the
    parameters' monomials, the independent ones only, simplest first (so that the fit is
    the sparse one), with their pseudo-inverse; built once per composition, on the rows
    where every field is finite."""

    def __init__(self, states: dict, loop: Loop, counts: tuple[str, ...] = (), count_degree: int = 0):
        self.loop = loop
        self.fields = [f for f in loop.fields if f.type in (Type.REAL, Type.INT)]
        by_name = {f.name: f for f in self.fields}
        self.monomials = [()] + [(f,) for f in self.fields] + \
            [(by_name[c],) * k for k in range(2, count_degree + 1) for c in counts if c in by_name]
        self.params = [d.name for d in loop.params if "$" + d.name in states]
        self.states = states
        ok = np.ones_like(states[loop.fields[0].name], dtype=bool)
        for f in self.fields:
            ok &= np.isfinite(states[f.name])
        self.ok = ok
        self.degrees = LINEAR_DEGREE + 1 if self.params else 1
        self._at: dict = {}

    def param(self, name: str) -> Expr:
        return var(name, next(d.type for d in self.loop.params if d.name == name))

    def at(self, degree: int):
        import itertools
        got = self._at.get(degree)
        if got is not None:
            return got
        ok = self.ok
        monos = [m for k in range(degree + 1) for m in itertools.combinations_with_replacement(self.params, k)]
        labels, columns = [], []
        for m in monos:
            pv = np.ones(int(ok.sum()))
            for name in m:
                pv = pv * self.states["$" + name][ok]
            for fs in self.monomials:
                col = pv
                for f in fs:
                    col = col * self.states[f.name][ok]
                labels.append((fs, m))
                columns.append(col)
        from thm3.synth.finite import independent_columns
        chosen = independent_columns(np.stack(columns, axis=1)) if columns else []
        kept = [columns[j] for j in chosen]
        kept_labels = [labels[j] for j in chosen]
        if not kept or len(kept) * 2 > int(ok.sum()):
            got = (kept_labels, None, None)
        else:
            mat = np.stack(kept, axis=1)
            got = (kept_labels, mat, np.linalg.pinv(mat))
        self._at[degree] = got
        return got


def _residue(c, m: int) -> int:
    """A rational p/q as p times q's inverse mod m; `ValueError` where q has none."""
    return c.numerator * pow(c.denominator, -1, m) % m


def _residues(e: Expr, step: Step) -> Expr:
    """A reading mod m with each field of b that is not reduced (a count) taken mod m
    first: congruent, and its products stay below m**2 (no int64 overflow for a long
    list's length)."""
    from thm3.ir import transform
    m = step.semiring.modulus

    def rule(x, go):
        if x.op is Op.VAR and x.arg.startswith("b.") and x.arg[2:] in step.block and x.arg[2:] not in step.reduced:
            return Expr(Op.MOD, x.type, (x,), m)
        return None

    (out,) = transform([e], rule)
    return out


def _linear_samples(loop: Loop, step: Step, entries: dict, offsets: dict, states: dict):
    """(entries, basis) for the linear readings: with more parameter settings where the
    loop has parameters, and modulo m the unreduced entries (they are what a polynomial
    in a count fits); () where those samples overflow."""
    s = step.semiring
    wide = (entries, offsets, states)
    if loop.params or s.modulus is not None:
        try:
            wide = composed_entries(loop, step, seed=1, count=8, max_len=6, settings=_settings_for(loop)
                                    if loop.params else 3, reduce=False)
        except Failed:
            return ()
    counts = tuple(_count_fields(step))
    return wide[0], _LinearBasis(wide[2], loop, counts, min(COUNT_DEGREE, len(step.block) - 1) if counts else 0)


def _read(col: np.ndarray, states: dict, loop: Loop, s: Semiring, type_: Type, bases=()) -> Expr | None:
    """An entry of the composed map as a constant or a field of b, or a power of a count
    of b (with a constant base, or one of `bases`), from its samples."""
    if np.all(col == col[0]) or (np.isnan(col).all()):
        v = col[0]
        if s is BOOLEAN:
            return const(bool(v), Type.BOOL)
        if math.isinf(v):
            return const(float(v), Type.REAL)
        return const(int(v), Type.INT) if type_ is Type.INT and float(v).is_integer() else const(float(v), type_)
    # the last field that holds it: a lift's entries come after the fields they carry, and
    # an original field may equal an entry on every reachable state only (an independent
    # set's best weight is the entry from the state that excludes the first vertex), where
    # the composition lemma, over the invariant states, needs the entry itself
    for f in reversed(loop.fields):
        if f.type is not Type.VEC and _same(col, states[f.name]):
            return var(f"b.{f.name}", f.type)
    if type_ is Type.REAL and s.times is Op.MUL and s.modulus is None:
        # a constant's power of a count of b (0.9 ** b.n: a decay applied at each step b counts),
        # or the exponential of a sum b keeps (exp(-b.t): the product of exp(-dt) over b's list)
        counts = {f.name: states[f.name] for f in loop.fields if f.type is Type.INT}
        got = read_power(col, counts, bases=bases)
        if got is None:
            got = read_power_product(col, counts)
        if got is None:
            got = read_exponential(col, {f.name: states[f.name] for f in loop.fields if f.type is Type.REAL})
        return got
    return None


# --- lifting -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Unit:
    """A lift of one block: the entries of the product of the step matrices that are
    neither constant nor equal to an original field or to another entry, each with its
    update (reading "acc.<key>" of the unit's own keys and the original fields), initial
    value and meaning; `full` marks the whole matrix (the fallback)."""
    semiring: Semiring
    block: tuple[str, ...]
    keys: tuple[tuple[str, str], ...]   # (row, column) of each added entry
    updates: dict                       # (row, column) -> update Expr
    defaults: dict                      # (row, column) -> initial value
    names: dict                         # (row, column) -> a name for the field ("pw", "n", "m_u_v")
    comments: dict
    fields: dict                        # (row, column) -> its key (what `key_of` gave)
    full: bool = False
    how: str = ""                       # what the unit holds, where it is not entries of the product


def lift_units(loop: Loop, key_of) -> list[Unit]:
    """The lifts of the largest block of fields whose step is affine over one semiring,
    smallest first: the entries of the step matrices' product that carry information
    (constants dropped, equal entries merged, entries equal to an original field read from
    it, a count read back as a length), then the full matrix.  `key_of(row, column, full)`
    names the added field of an entry.  Empty where no block is affine, or where every
    step matrix is the identity."""
    step = _moving_block(loop)
    if step is None:
        return []
    s, block = step.semiring, step.block
    try:
        entries, offsets, states = composed_entries(loop, step, count=16, max_len=5, settings=2)
    except Failed:
        return []
    types = step.types
    columns = _columns(loop, step)
    if "" in columns:
        entries = entries | {(f, ""): offsets[f] for f in block}
    kinds = {f: types[f] for f in block}
    # Int entries only over (+, *): a tropical entry may be its zero, an infinity
    dtype = Type.BOOL if s is BOOLEAN else (Type.INT if s.plus is Op.ADD and all(kinds[f] is Type.INT for f in block)
                                            else Type.REAL)

    def identity(f, g):
        return _one(s, dtype) if f == g and g else _zero(s, dtype)

    out: list[Unit] = []
    # the reduced lift: constants, twins and original fields read off the samples
    reading: dict = {}
    kept: list[tuple[str, str]] = []
    for key in ((f, g) for f in block for g in columns):
        col = entries[key]
        if np.all(col == col[0]) or np.isnan(col).all():
            reading[key] = identity(*key)          # the same value at [] as everywhere
            continue
        twin = next((f.name for f in loop.fields if f.type is not Type.VEC and _same(col, states[f.name])), None)
        if twin is not None:
            reading[key] = var(f"acc.{twin}", types[twin])
            continue
        other = next((k for k in kept if _same(col, entries[k])), None)
        if other is not None:
            reading[key] = ("alias", other)
            continue
        kept.append(key)
    _demote_false_twins(step, reading, kept, dtype)
    if s.plus is Op.ADD and s.times is Op.MUL and dtype is not Type.BOOL:
        _polynomials_in_a_count(step, entries, states, reading, kept)
    hamilton = _cayley_hamilton(loop, step, key_of, dtype) if s is RING else None
    if hamilton is not None and len(hamilton.keys) < len(kept):
        out.append(hamilton)
    if kept:
        keys = {k: key_of(*k, False) for k in kept}
        out.append(_unit(loop, step, kept, keys, _reader(reading, lambda k: keys[k], dtype), dtype, full=False))
    full_keys = [(f, g) for f in block for g in columns]
    if len(kept) < len(full_keys) and len(block) <= MAX_FULL:
        keys = {k: key_of(*k, True) for k in full_keys}
        out.append(_unit(loop, step, full_keys, keys, lambda k: var(f"acc.{keys[k]}", dtype), dtype, full=True))
    return out


def _cayley_hamilton(loop: Loop, step: Step, key_of, dtype: Type) -> Unit | None:
    """For a block whose step matrix A over (+, *) is constant (its entries read no element
    and no field, parameters allowed), k = len(block) >= 2 fields ch0 .. ch{k-1} with
    A**n = ch0 I + ch1 A + ... + ch{k-1} A**(k-1): by Cayley-Hamilton, A**k = e0 I + ... +
    e{k-1} A**(k-1) with e the characteristic polynomial's coefficients negated, so A**(n+1)
    = A A**n gives ch0' = e0 ch{k-1}, ch{i}' = ch{i-1} + e{i} ch{k-1}, from ch0 = 1 (A**0 =
    I).  k fields in place of the k*k of the matrix product; None where A is not constant."""
    import sympy as sp
    from thm3.semantics.evaluate import evaluate
    from thm3.semantics.sympy_table import SYMPY, to_ir
    block, k = step.block, len(step.block)
    if k < 2 or step.semiring.modulus is not None:
        return None
    params = {d.name for d in loop.params}
    rows = [[step.matrix[f].get(g, _zero(RING, step.types[f])) for g in block] for f in block]
    if any(not free_vars([e]) <= params for row in rows for e in row):
        return None
    symbols = {d.name: sp.Symbol(d.name) for d in loop.params if d.type is not Type.VEC}
    values = evaluate([e for row in rows for e in row], symbols, SYMPY)
    if any(v is None for v in values):
        return None
    lam = sp.Symbol("lam_ch")
    coeffs = sp.Matrix(k, k, values).charpoly(lam).all_coeffs()     # lam**k + p1 lam**(k-1) + ... + pk
    e = [sp.expand(-coeffs[k - j]) for j in range(k)]
    types = {d.name: d.type for d in loop.params}
    try:
        factors = [to_ir(x, types, want=dtype) for x in e]
    except ValueError:
        return None
    keys = [("ch", str(i)) for i in range(k)]
    fields = {key: key_of(*key, False) for key in keys}
    last = var(f"acc.{fields[keys[-1]]}", dtype)
    updates, defaults, names, comments = {}, {}, {}, {}
    for i, key in enumerate(keys):
        out = None if i == 0 else var(f"acc.{fields[keys[i - 1]]}", dtype)
        if not is_value(factors[i], 0):
            term = _times(RING, factors[i], last)
            out = term if out is None else _plus(RING, out, term)
        updates[key] = simplify(out) if out is not None else _zero(RING, dtype)
        defaults[key] = (1 if i == 0 else 0) if dtype is Type.INT else (1.0 if i == 0 else 0.0)
        names[key] = f"ch{i}"
        comments[key] = (f"the coefficient of A**{i} in A**n, A the constant step matrix of "
                         f"({', '.join(block)}) (Cayley-Hamilton: A**n = ch0 I + ... + ch{k - 1} A**{k - 1})")
    return Unit(RING, block, tuple(keys), updates, defaults, names, comments, fields, False,
                "the coefficients of the constant step matrix's power in its first powers (Cayley-Hamilton)")


def _reader(reading: dict, name_of, dtype: Type):
    """An entry's value in a lift's updates: what `reading` reads it as (a constant or an
    original field), the added field of the entry it aliases, a polynomial in the added
    count it is a function of, or its own added field (`name_of(entry)`)."""
    def value(k):
        r = reading.get(k)
        if r is None:
            return var(f"acc.{name_of(k)}", dtype)
        if isinstance(r, tuple) and r[0] == "alias":
            return var(f"acc.{name_of(r[1])}", dtype)
        if isinstance(r, tuple):
            _, count, coeffs, modulus = r
            n = var(f"acc.{name_of(count)}", dtype)
            if modulus is not None:
                n = Expr(Op.MOD, dtype, (n,), modulus)
            out: Expr | None = None
            for i, c in enumerate(coeffs):
                if c == 0:
                    continue
                term: Expr | None = None
                for _ in range(i):
                    term = n if term is None else _arith(Op.MUL, term, n)
                k_ = const(int(c), dtype) if dtype is Type.INT else const(float(c), dtype)
                term = k_ if term is None else (term if c == 1 else _arith(Op.MUL, k_, term))
                out = term if out is None else _arith(Op.ADD, out, term)
            return out if out is not None else _zero(RING, dtype)
        return r
    return value


def _polynomials_in_a_count(step: Step, entries: dict, states: dict, reading: dict, kept: list) -> None:
    """Over (+, *) (mod m too): where a kept entry is a count (c times the list's length on
    every sample) and another kept entry is a polynomial of degree <= `COUNT_DEGREE` in the
    length (the entries of A**n for a unipotent A: n (n + 1) / 2 for a third running sum),
    the second is read from the first and not added (in place in `reading` and `kept`).
    Exact rationals, fitted on the distinct lengths and checked on every sample; mod m a
    rational's denominator must have an inverse mod m, else the entry stays."""
    from fractions import Fraction
    length = states.get(LENGTH)
    if length is None:
        return
    m = step.semiring.modulus
    nz = length > 0
    if not nz.any():
        return
    count, scale = None, None
    for key in kept:
        col = entries[key]
        c = col[nz][0] / length[nz][0]
        if c != 0 and float(c).is_integer() and np.array_equal(col, c * length):
            count, scale = key, int(c)
            break
    if count is None:
        return
    lengths = np.unique(length)
    degree = min(COUNT_DEGREE, len(step.block) - 1, len(lengths) - 1)
    for key in [k for k in kept if k != count]:
        col = entries[key]
        at = {float(v): col[length == v] for v in lengths}
        if any(not np.all(vals == vals[0]) for vals in at.values()):
            continue                    # not a function of the length
        xs = np.array(sorted(at))
        ys = np.array([at[v][0] for v in xs])
        fit = np.polyfit(xs, ys, degree)[::-1]          # lowest power first, in the length
        coeffs = [Fraction(float(v)).limit_denominator(LINEAR_DENOMINATOR) for v in fit]
        if not np.allclose(sum(float(cf) * xs ** i for i, cf in enumerate(coeffs)), ys, rtol=0, atol=1e-9):
            continue
        if m is not None and np.any(ys >= m):
            continue                    # reduced on the samples: the fit is of the residues
        # in the count n = scale * length: length**i = n**i / scale**i
        coeffs = [cf / Fraction(scale) ** i for i, cf in enumerate(coeffs)]
        if m is not None:
            try:
                coeffs = [_residue(cf, m) for cf in coeffs]
            except ValueError:
                continue
        elif any(cf.denominator != 1 for cf in coeffs) and step.types[key[0]] is Type.INT:
            continue
        reading[key] = ("poly", count, tuple(coeffs), m)
        kept.remove(key)


def _entry_update(step: Step, f: str, g: str, value, dtype: Type) -> Expr:
    """The update of entry (f, g) of the product of the step matrices, M' = A(x) (x) M:
    row f of A times column g, read through `value`; the offset too in column ""."""
    s = step.semiring
    out = _zero(s, dtype)
    for k in step.block:
        a = step.matrix[f].get(k)
        if a is None or is_value(a, s.zero):
            continue
        out = _plus(s, out, _times(s, a, value((k, g))))
    if not g and step.offset[f] is not None:
        out = _plus(s, out, step.offset[f])
    return simplify(out)


def _demote_false_twins(step: Step, reading: dict, kept: list, dtype: Type) -> None:
    """An entry read from an original field only where that field's own update is the
    entry's update under the reading (so the field is the entry on every state, not only
    on the reachable ones: from (0, 0) an independent set's best weight with the last
    vertex equals the entry from 'excluded' on reachable states only); the others are
    added as fields of their own (in `kept`), until no reading changes."""
    from thm3.ir import equal_upto_order
    own_cache: dict = {}
    value = _reader(reading, lambda k: f"__entry_{k[0]}_{k[1]}", dtype)

    def own(name):
        got = own_cache.get(name)
        if got is None:
            got = own_cache[name] = _entry_update(step, name, "", lambda k: var(f"acc.{k[0]}", dtype), dtype) \
                if name in step.block else None
        return got

    changed = True
    while changed:
        changed = False
        for key, r in list(reading.items()):
            if not isinstance(r, Expr) or r.op is not Op.VAR or not r.arg.startswith("acc."):
                continue
            mine = own(r.arg[4:])
            if mine is None or not equal_upto_order(_entry_update(step, key[0], key[1], value, dtype), mine):
                del reading[key]
                kept.append(key)
                changed = True


def full_matrix_size(loop: Loop) -> tuple[str, int] | None:
    """The semiring and the number of fields of the full matrix that `lift_units` falls back
    to for `loop`: every entry of the k x k product of the step matrices of its largest
    affine block (and the offsets' column, where the semiring has no subtraction and init is
    not its zero).  None where no block is affine or every step matrix is the identity.  (The
    full matrix is offered as a lift only for blocks of at most `MAX_FULL` fields.)"""
    step = _moving_block(loop)
    if step is None:
        return None
    return step.semiring.name, len(step.block) * len(_columns(loop, step))


def _moving_block(loop: Loop) -> Step | None:
    """The largest affine block (`_largest_block`), None where its step matrices are all the
    identity (the block's fields carry nothing into the later ones)."""
    step = _largest_block(loop)
    if step is None:
        return None
    s, block = step.semiring, step.block
    if all(is_value(step.matrix[f].get(g, _zero(s, step.types[f])), s.one if f == g else s.zero)
           for f in block for g in block):
        return None
    return step


def _columns(loop: Loop, step: Step) -> list[str]:
    """The composed map's columns: the block's fields, and "" for the offsets where they are
    needed (without subtraction, b's offset is b's own fields only where init is the zero:
    else it is added too, the map's value at the zero)."""
    s, block = step.semiring, step.block
    init = dict(zip(loop.field_names, initial_state(loop)))
    columns = list(block)
    if s.plus is not Op.ADD and not step.homogeneous() and not all(is_value(init[f], s.zero) for f in block):
        columns.append("")
    return columns


def _unit(loop: Loop, step: Step, kept, keys, value, dtype: Type, full: bool) -> Unit:
    s, block = step.semiring, step.block
    updates, defaults, names, comments = {}, {}, {}, {}
    for f, g in kept:
        out = _entry_update(step, f, g, value, dtype)
        me = var(f"acc.{keys[(f, g)]}", dtype)
        count = _counts(out, me)
        if s.modulus is not None and not count:
            out = Expr(Op.MOD, out.type, (out,), s.modulus)
        updates[(f, g)] = out
        v = s.one if f == g and g else s.zero
        defaults[(f, g)] = bool(v) if dtype is Type.BOOL else float(v) if dtype is Type.REAL else int(v)
        inner = out.src[0] if out.op is Op.MOD else out         # the power inside its % m
        names[(f, g)], comments[(f, g)] = _named(loop, step, f, g, inner, me, count, full)
    return Unit(s, block, tuple(kept), updates, defaults, names, comments, dict(keys), full)


def _counts(update: Expr, me: Expr) -> bool:
    """The update adds a constant to the field: a length (or a multiple of it)."""
    if update.op is not Op.ADD:
        return False
    x, y = update.src
    return any(u.op is Op.VAR and u.arg == me.arg and v.op is Op.CONST for u, v in ((x, y), (y, x)))


def _named(loop: Loop, step: Step, f: str, g: str, update: Expr, me: Expr, count: bool,
           full: bool) -> tuple[str, str]:
    """A name and a comment for an entry: a length, a power, or a matrix entry."""
    from thm3.syntax.loopfile import expression_text as to_text
    s = step.semiring
    elements = {d.name for d in loop.elements}
    mod = f" mod {s.modulus}" if s.modulus is not None else ""
    if not g:
        return f"c_{f}", (f"{f} as the elements so far would leave it from the semiring's zero: the offset of "
                          f"the composed map over {s.name}")
    if count and not full:
        step_size = next(x for x in update.src if x.op is Op.CONST)
        return "n", f"how {f} depends on the {g} before the list: {to_text(step_size)} per element (a length)"
    if (not full and update.op is s.times and any(x.op is Op.VAR and x.arg == me.arg for x in update.src)
            and all(_state_free(x) for x in update.src if not (x.op is Op.VAR and x.arg == me.arg))):
        factor = next(x for x in update.src if not (x.op is Op.VAR and x.arg == me.arg))
        if s.times is Op.MUL and not free_vars([factor]) & elements:
            base = to_text(factor) if factor.op in (Op.VAR, Op.CONST) else f"({to_text(factor)})"
            return "pw", f"{base} ** (number of elements so far){mod}: the slope of the composed map"
        word = "product" if s.times is Op.MUL else f"{s.name} product"
        return "pw", f"{word} of {to_text(factor)} so far{mod} (the slope of the composed map)"
    return f"m_{f}_{g}", (f"how {f} depends on the {g} before the list: an entry of the {s.name} "
                          f"product of the step matrices so far")


def _largest_block(loop: Loop) -> Step | None:
    """The largest set of fields whose updates are affine over one semiring in that set
    (fields outside it may read it, not the other way): per semiring, the fields whose
    rows do not fit are dropped until the rest fit; of equal sizes, the first semiring."""
    from thm3.ir.normalize import normalize
    if any(d.type is Type.VEC for d in loop.elements):
        return None
    types = {f.name: f.type for f in loop.fields}
    outputs = dict(zip(loop.field_names, normalize(loop.left.outputs)))
    numeric = [f for f in loop.field_names if types[f] in (Type.REAL, Type.INT)]
    ints = [f for f in numeric if types[f] is Type.INT]
    mods = sorted({e.arg for e in walk([outputs[f] for f in ints]) if e.op is Op.MOD})
    options = [(RING, numeric)] + [(RING.with_modulus(m), ints) for m in mods] + \
        [(MAX_PLUS, numeric), (MIN_PLUS, numeric), (BOOLEAN, [f for f in loop.field_names if types[f] is Type.BOOL]),
         (MAX_TIMES, numeric), (MIN_TIMES, numeric)]
    best = None
    for s, group in options:
        block = list(group)
        while block:
            state = {f"acc.{g}": g for g in block}
            keep = [f for f in block if _row(s, outputs[f], state, types[f]) is not None]
            if keep == block:
                break
            block = keep
        step = _fit(s, tuple(block), types, outputs) if block else None
        while step is None and block:       # mod m: an unreduced field that reads a reduced one
            block = block[:-1]
            step = _fit(s, tuple(block), types, outputs) if block else None
        if step is not None and scaling(s):
            step = _scaling_step(step, loop, outputs)
        if step is not None and (best is None or len(step.block) > len(best.block)):
            best = step
    return best
