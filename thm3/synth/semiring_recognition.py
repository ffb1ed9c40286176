"""Recognition for the semiring route (`thm3.synth.semiring`): `left` read as a `Step`,
affine over one semiring on the whole state or on a block of it, decided from its ops
first; and the signs a (max, *) or (min, *) step needs, read off the forms of its
coefficients and the loop's preconditions (`nonnegative`, `positive`)."""
from __future__ import annotations

from thm3.ir import Expr, Loop, Op, Type, free_vars, initial_state, walk
from thm3.ir.simplify import simplify
from thm3.synth.semiring_algebra import (BOOLEAN, MAX_PLUS, MAX_TIMES, MAX_TIMES_NONNEGATIVE, MIN_PLUS, MIN_TIMES,
                                         RING, Semiring, Step, is_value, scaling, semiring_form, state_free,
                                         zero_of)

_RING_OPS = frozenset({Op.ADD, Op.SUB, Op.NEG, Op.MUL, Op.DIV, Op.WHERE, Op.MOD})
_TROPICAL_OPS = frozenset({Op.ADD, Op.SUB, Op.MAX, Op.MIN, Op.WHERE})
_BOOL_OPS = frozenset({Op.AND, Op.OR, Op.WHERE})
_SCALING_OPS = frozenset({Op.MAX, Op.MIN, Op.MUL, Op.DIV, Op.WHERE})


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
        return fit_step(BOOLEAN, names, types, outputs) if ops <= _BOOL_OPS else None
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
        got = fit_step(s, names, types, outputs)
        if got is not None and scaling(s):
            got = scaling_step(got, loop, outputs)
        if got is not None:
            return got
    return None


def scaling_step(step: Step, loop: Loop, outputs: dict) -> Step | None:
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
        return fit_step(MAX_TIMES_NONNEGATIVE, step.block, step.types, outputs)
    return step


def unsigned_coefficients(loop: Loop) -> str:
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
            step = fit_step(s, tuple(group), types, outputs)
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
    rows = {(f, g): step.matrix[f].get(g, zero_of(RING, step.types[f])) for f in block for g in block}
    if any(not free_vars([e]) <= params for e in rows.values()):
        return None
    if all(is_value(e, 1 if f == g else 0) for (f, g), e in rows.items()):
        return None
    return step


def row_form(s: Semiring, e: Expr, state: dict, type_: Type) -> dict | None:
    """One field's update as a form over `s` (None where it is none), its `% m` dropped."""
    if s.modulus is not None:
        e = _strip_mod(e, s.modulus)
        if e is None:
            return None
    return semiring_form(s, e, state, type_)


def fit_step(s: Semiring, names, types, outputs) -> Step | None:
    state = {f"acc.{g}": g for g in names}
    matrix, offset, reduced = {}, {}, set()
    for f in names:
        e = outputs[f]
        if s.modulus is not None and e.op is Op.MOD and e.arg == s.modulus:
            reduced.add(f)
        form = row_form(s, e, state, types[f])
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
            if x.arg != m and not state_free(x):
                bad.append(x)
            return go(x.src[0]) if x.arg == m else None
        return None

    (out,) = transform([e], rule)
    return None if bad else out
