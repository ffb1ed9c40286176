"""Exact extended reals on concrete values: the meaning the proofs give a loop
(`thm3.semantics.symbolic`), evaluated on numbers instead of symbols, so that a witness
is confirmed in the semantics the proofs use and not only in IEEE arithmetic.

A value is a bool, an int (an `Int`), a `Fraction` (a rational `Real`), a SymPy number
(an irrational one: sqrt(2), exp(1/2), a root that `sp.solve` gave), ±inf (a float), a
tuple of such values (a `Vec`, one per lane) or a `Hole`: `UNDEFINED` where the reals
give no value (x / 0, inf - inf, log of a negative; as the proofs' NaN, the list has no
state), `UNDECIDED` where SymPy cannot tell the sign of a nonzero-looking difference.
Real constants are the rationals their decimal spelling denotes (`sympy_const`, as in
the proofs).  Orderings are decided exactly: on Fractions by Python, on SymPy numbers by
SymPy's sign tests (numerical evaluation with error bounds, minimal polynomials), and
an ordering SymPy cannot decide is `UNDECIDED`, never a guess."""
from __future__ import annotations

import math
from fractions import Fraction

import sympy as sp

from thm3.ir import Loop, Op, Type
from thm3.semantics.evaluate import Memo


class Hole:
    """A value the exact fold cannot give: `UNDEFINED` (no value in the reals) or
    `UNDECIDED` (an ordering SymPy could not decide)."""

    __slots__ = ("why",)

    def __init__(self, why: str):
        self.why = why

    def __repr__(self) -> str:
        return self.why


UNDEFINED = Hole("undefined")
UNDECIDED = Hole("undecided")

INF, NINF = math.inf, -math.inf
# SymPy expressions beyond this size are not simplified (SymPy has no timeout).
_MAX_OPS = 200


def _is_inf(v) -> bool:
    return isinstance(v, float) and math.isinf(v)


def _norm(v):
    """SymPy results back to the plain kinds: rationals as Fractions, ±oo as ±inf,
    nan and zoo as UNDEFINED."""
    if isinstance(v, sp.Basic):
        if v is sp.nan or v is sp.zoo or v.has(sp.nan, sp.zoo):
            return UNDEFINED
        if v is sp.oo:
            return INF
        if v is -sp.oo or v == -sp.oo:
            return NINF
        if v.is_Rational:
            return Fraction(int(v.p), int(v.q))
        if v.is_real is False:
            return UNDEFINED
    return v


def _sp(v):
    """A finite value as a SymPy number."""
    if isinstance(v, sp.Basic):
        return v
    if isinstance(v, Fraction):
        return sp.Rational(v.numerator, v.denominator)
    return sp.Integer(int(v))


def _q(v):
    return Fraction(v) if isinstance(v, int) and not isinstance(v, bool) else v


def _arith(f, a, b):
    if isinstance(a, sp.Basic) or isinstance(b, sp.Basic):
        return _norm(f(_sp(a), _sp(b)))
    return f(a, b)


def sign(x):
    """-1, 0 or 1 for a finite value, or UNDECIDED."""
    if not isinstance(x, sp.Basic):
        return (x > 0) - (x < 0)
    for y in (x, None):
        if y is None:
            if sp.count_ops(x) > _MAX_OPS:
                return UNDECIDED
            try:
                y = sp.simplify(x)
            except (TypeError, ValueError, NotImplementedError, RecursionError):
                return UNDECIDED
        if y.is_zero:
            return 0
        if y.is_positive:
            return 1
        if y.is_negative:
            return -1
    try:
        if x.is_algebraic and sp.minimal_polynomial(x, sp.Dummy()).is_Symbol:
            return 0
    except (NotImplementedError, ValueError, TypeError, sp.polys.polyerrors.NotAlgebraic):
        pass
    return UNDECIDED


def compare(a, b):
    """-1, 0 or 1 as a <, ==, > b (±inf included), or a Hole."""
    if isinstance(a, Hole) or isinstance(b, Hole):
        return a if isinstance(a, Hole) else b
    if isinstance(a, bool) or isinstance(b, bool):
        return (a > b) - (a < b)
    if _is_inf(a) and _is_inf(b):
        return (a > b) - (a < b)
    if _is_inf(a):
        return 1 if a > 0 else -1
    if _is_inf(b):
        return -1 if b > 0 else 1
    return sign(_arith(lambda u, v: u - v, a, b))


def _holes(f):
    """f with a Hole among its arguments giving that Hole, and lanes mapped."""
    def g(*args):
        for a in args:
            if isinstance(a, Hole):
                return a
        if any(isinstance(a, tuple) for a in args):
            width = max(len(a) for a in args if isinstance(a, tuple))
            return tuple(g(*(a[i] if isinstance(a, tuple) else a for a in args)) for i in range(width))
        return f(*args)
    return g


def _neg(a):
    return -a


def _add(a, b):
    if _is_inf(a) or _is_inf(b):
        if _is_inf(a) and _is_inf(b) and a != b:
            return UNDEFINED
        return a if _is_inf(a) else b
    return _arith(lambda u, v: u + v, a, b)


def _sub(a, b):
    return _add(a, _neg(b))


def _mul(a, b):
    if _is_inf(a) or _is_inf(b):
        s = sign(a) if not _is_inf(a) else (1 if a > 0 else -1)
        t = sign(b) if not _is_inf(b) else (1 if b > 0 else -1)
        if isinstance(s, Hole) or isinstance(t, Hole):
            return UNDECIDED
        return UNDEFINED if s * t == 0 else (INF if s * t > 0 else NINF)
    return _arith(lambda u, v: u * v, a, b)


def _div(a, b):
    if _is_inf(b):
        return UNDEFINED if _is_inf(a) else Fraction(0)
    s = sign(b)
    if isinstance(s, Hole):
        return s
    if s == 0:
        return UNDEFINED            # x / 0: the proofs' NaN("division"), no state
    if _is_inf(a):
        return a if s > 0 else -a
    return _arith(lambda u, v: u / v, _q(a), _q(b))


def _pow(a, n):
    if isinstance(a, Hole):
        return a
    if isinstance(a, tuple):
        return tuple(_pow(v, n) for v in a)
    if n < 0:
        return _div(Fraction(1), _pow(a, -n))
    if _is_inf(a):
        return Fraction(1) if n == 0 else (INF if n % 2 == 0 or a > 0 else NINF)
    return _arith(lambda u, _: u ** n, a, a)


def _pown(a, n):
    # `c ** n`, n an Int: the integer power, as POW with that exponent
    if _is_inf(n) or not isinstance(n, (int, Fraction)) or int(n) != n:
        return UNDEFINED
    return _pow(a, int(n))


def _mod(a, m):
    # the floored remainder, in [0, m); an infinity has none
    if isinstance(a, Hole):
        return a
    if isinstance(a, tuple):
        return tuple(_mod(v, m) for v in a)
    if _is_inf(a):
        return UNDEFINED
    if isinstance(a, (int, Fraction)):
        return a % m
    return _arith(lambda u, _: sp.Mod(u, m), a, a)


def _abs(a):
    if _is_inf(a):
        return INF
    s = sign(a)
    return s if isinstance(s, Hole) else (a if s >= 0 else -a)


def _maxmin(want_max: bool):
    def f(a, b):
        c = compare(a, b)
        if isinstance(c, Hole):
            return c
        if c == 0:
            return a
        return a if (c > 0) == want_max else b
    return f


def _exp(base):
    def f(a):
        if _is_inf(a):
            return INF if a > 0 else Fraction(0)
        if a == 0:
            return Fraction(1)
        if base == 2 and isinstance(a, (int, Fraction)) and Fraction(a).denominator == 1:
            return Fraction(2) ** int(a)
        return _norm(sp.exp(_sp(a)) if base is None else sp.Integer(2) ** _sp(a))
    return f


def _over_nonnegatives(a, at_zero, value):
    """`value(a)` where a > 0 (`at_zero` where a == 0, if given); +inf at +inf; no value
    (UNDEFINED) below 0 or at -inf; a Hole where the sign is not decided."""
    if _is_inf(a):
        return INF if a > 0 else UNDEFINED
    s = sign(a)
    if isinstance(s, Hole):
        return s
    if s < 0:
        return UNDEFINED
    if s == 0 and at_zero is not None:
        return at_zero
    return _norm(value(_sp(a)))


def _log(base):
    return lambda a: _over_nonnegatives(a, NINF, sp.log if base is None else (lambda v: sp.log(v, 2)))


def _sqrt(a):
    return _over_nonnegatives(a, None, sp.sqrt)


def _comparison(test):
    def f(a, b):
        c = compare(a, b)
        return c if isinstance(c, Hole) else test(c)
    return f


def _where(c, a, b):
    if isinstance(c, Hole):
        return c
    return a if c else b


def _dot(u, v):
    if isinstance(u, Hole) or isinstance(v, Hole):
        return u if isinstance(u, Hole) else v
    total = Fraction(0)
    for x, y in zip(u, v, strict=True):
        total = _holes(_add)(total, _holes(_mul)(x, y))
    return total


def const(value, type_):
    """A constant as the proofs read it: a Real as the rational its decimal spelling
    denotes, ±inf as ±inf."""
    if type_ is Type.BOOL or isinstance(value, bool):
        return bool(value)
    v = float(value)
    if math.isinf(v):
        return INF if v > 0 else NINF
    if v != v:
        return UNDEFINED
    if type_ is Type.INT:
        return int(value)
    return Fraction(repr(v))


REALS: dict = {
    Op.CONST: const,
    Op.NEG: _holes(lambda a: -a),
    Op.NOT: _holes(lambda a: not a),
    Op.ABS: _holes(_abs),
    Op.EXP: _holes(_exp(None)),
    Op.EXP2: _holes(_exp(2)),
    Op.LOG: _holes(_log(None)),
    Op.LOG2: _holes(_log(2)),
    Op.SQRT: _holes(_sqrt),
    Op.ADD: _holes(_add),
    Op.SUB: _holes(_sub),
    Op.MUL: _holes(_mul),
    Op.DIV: _holes(_div),
    Op.POW: _pow,
    Op.POWN: _holes(_pown),
    Op.MOD: _mod,
    Op.MAX: _holes(_maxmin(True)),
    Op.MIN: _holes(_maxmin(False)),
    Op.LT: _holes(_comparison(lambda c: c < 0)),
    Op.LE: _holes(_comparison(lambda c: c <= 0)),
    Op.GT: _holes(_comparison(lambda c: c > 0)),
    Op.GE: _holes(_comparison(lambda c: c >= 0)),
    Op.EQ: _holes(_comparison(lambda c: c == 0)),
    Op.NE: _holes(_comparison(lambda c: c != 0)),
    Op.AND: _holes(lambda a, b: a and b),
    Op.OR: _holes(lambda a, b: a or b),
    Op.WHERE: _where,
    Op.DOT: _dot,
}


# -- values in and out ---------------------------------------------------------------

def exact(v, type_: Type):
    """A value given to thm3 (a float, an int, a bool, a Fraction, a SymPy number, a NumPy
    value; a Vec as a sequence) as the exact value it denotes: a float is the binary
    number it is."""
    if type_ is Type.VEC:
        return tuple(exact(x, Type.REAL) for x in list(v))
    if type_ is Type.BOOL:
        return bool(v)
    if isinstance(v, sp.Basic):
        return _norm(v)
    if isinstance(v, Fraction):
        return v
    if type_ is Type.INT and not (isinstance(v, float) and math.isinf(v)):
        return int(v)
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, int):
        return v if type_ is Type.INT else Fraction(v)
    f = float(v)
    if math.isinf(f):
        return f
    return Fraction(f)


def plain(v, type_: Type):
    """An exact value as the Python API shows it: a Real that is a float exactly as that
    float, another rational as a Fraction, an irrational as its SymPy number; an Int as
    an int, a Vec as a list."""
    if type_ is Type.VEC:
        return [plain(x, Type.REAL) for x in v]
    if isinstance(v, bool) or type_ is Type.BOOL:
        return bool(v)
    if type_ is Type.INT and isinstance(v, (int, Fraction)) and Fraction(v).denominator == 1:
        return int(v)
    if isinstance(v, (int, Fraction)):
        f = float(v)
        return f if Fraction(f) == v else Fraction(v)
    return v


def text(v) -> str:
    """An exact value as a string that denotes it: p/q for a rational, SymPy's spelling
    for an irrational."""
    if isinstance(v, list):
        return "[" + ", ".join(text(x) for x in v) + "]"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        v = Fraction(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, Fraction):
        return str(v.numerator) if v.denominator == 1 else f"{v.numerator}/{v.denominator}"
    return sp.sstr(v)


def parse(s: str):
    """The inverse of `text` for one scalar (a Fraction, ±inf, or a SymPy number)."""
    s = s.strip()
    if s in ("inf", "-inf"):
        return float(s)
    try:
        return Fraction(s)
    except ValueError:
        return _norm(sp.sympify(s, rational=True))


# -- folds ---------------------------------------------------------------------------------

def initial(loop: Loop, dim: int) -> tuple:
    from thm3.semantics.samples import initial_state
    out = []
    for f, e in zip(loop.fields, initial_state(loop)):
        if f.type is Type.VEC:
            out.append(tuple(const(e.arg, Type.REAL) for _ in range(dim)))
        else:
            out.append(const(e.arg, e.type))
    return tuple(out)


def fold(loop: Loop, xs: list[tuple], params: dict, dim: int, state: tuple | None = None):
    """h(xs) by `left` in the exact reals (elements as tuples of exact values, one per
    element parameter): a tuple of field values, or the first Hole met (UNDEFINED: the
    list has no state; UNDECIDED: SymPy could not decide an ordering)."""
    s = initial(loop, dim) if state is None else state
    names = [n for n, _ in loop.left.inputs]
    for e in xs:
        env = dict(zip(names, tuple(s) + tuple(e))) | dict(params)
        s = tuple(Memo(env, REALS).values(loop.left.outputs))
        hole = next((h for v in s for h in _holes_in(v)), None)
        if hole is not None:
            return hole
    return s


def admits(loop: Loop, element: tuple, params: dict) -> bool | Hole:
    """Whether the element meets the loop's preconditions, exactly."""
    if not loop.preconditions:
        return True
    env = dict(params) | {d.name: v for d, v in zip(loop.elements, element)}
    for v in Memo(env, REALS).values(list(loop.preconditions)):
        if isinstance(v, Hole):
            return v
        if not v:
            return False
    return True


def _holes_in(v):
    if isinstance(v, Hole):
        yield v
    elif isinstance(v, tuple):
        for x in v:
            yield from _holes_in(x)


def same(u: tuple, v: tuple):
    """True, False, or UNDECIDED: whether two exact states are equal field by field."""
    undecided = False
    for a, b in zip(u, v, strict=True):
        pairs = zip(a, b, strict=True) if isinstance(a, tuple) else [(a, b)]
        for x, y in pairs:
            c = compare(x, y)
            if isinstance(c, Hole):
                undecided = True
            elif c != 0:
                return False
    return UNDECIDED if undecided else True


__all__ = ["REALS", "UNDECIDED", "UNDEFINED", "Hole", "admits", "compare", "const", "exact", "fold",
           "parse", "plain", "same", "sign", "text"]
