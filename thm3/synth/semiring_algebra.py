"""The algebra under the semiring route (`thm3.synth.semiring`): the semirings, a step
affine over one (`Step`), an update read as a form over a semiring (`semiring_form`), and
the semiring's sum and product, built on expressions and computed on sampled arrays."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from thm3.ir import Expr, Op, Type, const, free_vars
from thm3.errors import Thm3Error


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


def state_free(e: Expr) -> bool:
    return not any(n.startswith("acc.") for n in free_vars([e]))


# --- forms ---------------------------------------------------------------------------

def semiring_form(s: Semiring, e: Expr, state: dict, type_: Type) -> dict | None:
    """`e` as (+)_g coefficient_g (x) acc.g (+) constant ("" key), every coefficient free
    of state; None where `e` is not of that form over `s`."""
    if state_free(e):
        return {"": e}
    if e.op is Op.VAR:
        return {state[e.arg]: one_of(s, e.type)} if e.arg in state else None
    if e.op is Op.WHERE and state_free(e.src[0]):
        t, f = (semiring_form(s, x, state, type_) for x in e.src[1:])
        if t is None or f is None:
            return None
        zero = zero_of(s, e.type)
        return {k: where(e.src[0], t.get(k, zero), f.get(k, zero)) for k in dict.fromkeys([*t, *f])}
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
                out[k] = arith(Op.ADD, out[k], v) if k in out else v
            return out
        case Op.NEG:
            a = semiring_form(s, e.src[0], state, type_)
            return None if a is None else {k: _neg(v) for k, v in a.items()}
        case Op.MUL:
            return _scaled(s, e, state, type_, lambda c, v: arith(Op.MUL, c, v))
        case Op.DIV if state_free(e.src[1]) and s.modulus is None:
            a = semiring_form(s, e.src[0], state, type_)
            return None if a is None else {k: arith(Op.DIV, v, e.src[1]) for k, v in a.items()}
    return None


def _tropical_form(s, e, state, type_):
    match e.op:
        case op if op is s.plus:
            return _summed(s, e, state, type_, lambda u, v: Expr(s.plus, _join(u.type, v.type), (u, v)))
        case Op.MUL if s.times is Op.MUL:
            return _scaled(s, e, state, type_, lambda c, v: arith(Op.MUL, c, v))
        case Op.DIV if s.times is Op.MUL and state_free(e.src[1]):
            a = semiring_form(s, e.src[0], state, type_)
            return None if a is None else {k: arith(Op.DIV, v, e.src[1]) for k, v in a.items()}
        case Op.ADD | Op.SUB if s.times is Op.ADD:
            x, y = e.src
            if e.op is Op.ADD and state_free(x):
                x, y = y, x
            if not state_free(y):
                return None
            a = semiring_form(s, x, state, type_)
            if a is None:
                return None
            return {k: arith(e.op, v, y) for k, v in a.items()}
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
    if state_free(y):
        x, y = y, x
    if not state_free(x):
        return None
    a = semiring_form(s, y, state, type_)
    return None if a is None else {k: times(x, v) for k, v in a.items()}


# --- expressions -----------------------------------------------------------------------

def _join(a: Type, b: Type) -> Type:
    return Type.REAL if Type.REAL in (a, b) else a


def arith(op: Op, a: Expr, b: Expr) -> Expr:
    from thm3.ir import as_real, promote
    type_ = promote(a.type, b.type)
    if type_ is not Type.INT:
        a, b = as_real(a), as_real(b)
    return Expr(op, type_, (a, b))


def _neg(v: Expr) -> Expr:
    return Expr(Op.NEG, v.type, (v,))


def where(c: Expr, t: Expr, f: Expr) -> Expr:
    from thm3.ir import as_real
    type_ = _join(t.type, f.type)
    if type_ is Type.REAL:
        t, f = as_real(t), as_real(f)
    return Expr(Op.WHERE, type_, (c, t, f))


def zero_of(s: Semiring, type_: Type) -> Expr:
    return const(s.zero, type_ if s is BOOLEAN or math.isfinite(float(s.zero)) else Type.REAL)


def one_of(s: Semiring, type_: Type) -> Expr:
    return const(s.one, Type.BOOL if s is BOOLEAN else type_)


def is_value(e: Expr, v) -> bool:
    if e.op is not Op.CONST:
        return False
    if isinstance(v, bool) or isinstance(e.arg, bool):
        return isinstance(v, bool) and isinstance(e.arg, bool) and e.arg is v
    return float(e.arg) == float(v)


def oplus(s: Semiring, a: Expr, b: Expr) -> Expr:
    if is_value(a, s.zero):
        return b
    if is_value(b, s.zero):
        return a
    if s is BOOLEAN:
        return Expr(Op.OR, Type.BOOL, (a, b))
    return arith(Op.ADD, a, b) if s.plus is Op.ADD else Expr(s.plus, _join(a.type, b.type), (a, b))


def otimes(s: Semiring, a: Expr, b: Expr) -> Expr:
    if is_value(a, s.one):
        return b
    if is_value(b, s.one):
        return a
    if s is BOOLEAN:
        return Expr(Op.AND, Type.BOOL, (a, b))
    return arith(s.times, a, b)


# --- the products on sampled arrays ------------------------------------------------------


def np_plus(s: Semiring):
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
