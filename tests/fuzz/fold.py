"""The meaning of a loop as the tests see it: the left fold of its parsed `left`, element
by element, over thm3's reference table (`thm3.semantics.evaluate.PYTHON`).  With
`Fraction` elements the arithmetic of + - * / max min and the comparisons is exact, which
is what the oracle uses to decide equality of states; floats give IEEE semantics."""
from __future__ import annotations

import math
from fractions import Fraction

from thm3.ir import Loop, Op, Type
from thm3.semantics.evaluate import PYTHON, Compiled, evaluate, quiet


class Folder:
    """h(xs) for one loop and fixed loop parameters.  An element of xs is a value for a
    loop with one non-Index element parameter, else a tuple with one value per non-Index
    parameter; an Index parameter is the element's position plus `start`."""

    def __init__(self, loop: Loop, params: dict | None = None, table: dict = PYTHON):
        self.loop = loop
        self.params = dict(params or {})
        self.step = Compiled(loop.left.outputs, table)
        self.names = [f"acc.{f.name}" for f in loop.fields]
        self.data = [p for p in loop.elements if not p.index]
        self.index = [p for p in loop.elements if p.index]
        self.init = tuple(table[Op.CONST](_init_value(f.default, f.type), f.type)
                          for f in loop.fields)

    def env(self, state, x, i: int) -> dict:
        env = dict(self.params)
        env.update(zip(self.names, state))
        values = (x,) if len(self.data) == 1 else tuple(x)
        env.update((p.name, v) for p, v in zip(self.data, values, strict=True))
        env.update((p.name, i) for p in self.index)
        return env

    def fold(self, xs, start: int = 0, state=None) -> tuple:
        state = self.init if state is None else tuple(state)
        with quiet():
            for k, x in enumerate(xs):
                state = tuple(self.step(self.env(state, x, start + k)))
        return state

    def admits(self, x) -> bool:
        """Whether element x meets the loop's preconditions (`assert` in `left`)."""
        if not self.loop.preconditions:
            return True
        env = self.env(self.init, x, 0)
        with quiet():
            return all(bool(v) for v in evaluate(list(self.loop.preconditions), env, PYTHON))


def _init_value(default, type_: Type):
    match type_:
        case Type.BOOL:
            return bool(default)
        case Type.INT:
            return default if isinstance(default, float) and math.isinf(default) else int(default)
        case _:
            return float(default)


def exact(x):
    """An element (or tuple of them) as Fractions, for exact folds: a float is the binary
    number it is; a value no Fraction holds (an irrational witness value such as sqrt(2),
    a SymPy number) becomes a SymPy number, and the folds carry it symbolically."""
    if isinstance(x, (tuple, list)):
        return tuple(exact(v) for v in x)
    if isinstance(x, bool) or isinstance(x, int):
        return x
    try:
        return Fraction(x)
    except (TypeError, ValueError):
        import sympy
        v = sympy.sympify(x, rational=True)
        if not (v.is_number and v.is_real):
            raise ValueError(f"{x!r} is not a real number") from None
        return Fraction(int(v.p), int(v.q)) if v.is_Rational else v


def same_state(u, v) -> bool:
    """Exact equality of two states (NaN never equals anything)."""
    return len(u) == len(v) and all(_same(a, b) for a, b in zip(u, v))


def _same(a, b) -> bool:
    if isinstance(a, float) and math.isnan(a) or isinstance(b, float) and math.isnan(b):
        return False
    if _symbolic(a) or _symbolic(b):
        import sympy
        try:
            d = a - b
            return d == 0 if isinstance(d, float) else sympy.simplify(d) == 0
        except TypeError:
            return False
    return a == b


def _symbolic(v) -> bool:
    return type(v).__module__.startswith("sympy")


def close_state(u, v, rel: float = 1e-6, abs_tol: float = 1e-6) -> bool:
    """Equality up to rounding for Real fields; Bools and Ints exactly (as numbers)."""
    if len(u) != len(v):
        return False
    for a, b in zip(u, v):
        if isinstance(a, bool) or isinstance(b, bool):
            if bool(a) != bool(b):
                return False
            continue
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b):
            return False
        if math.isinf(a) or math.isinf(b):
            if a != b:
                return False
            continue
        if not math.isclose(a, b, rel_tol=rel, abs_tol=abs_tol):
            return False
    return True


def _strict_div(a, b):
    # the reals of the proofs: a list that divides by zero has no state
    if b == 0:
        raise ZeroDivisionError("division by zero: outside the semantics")
    return a / b


def _strict_pown(a, n):
    # 0 ** -k divides by zero: outside the semantics, as x / 0
    if a == 0 and n < 0:
        raise ZeroDivisionError("0 ** -k: outside the semantics")
    return PYTHON[Op.POWN](a, n)


def _exact_const(value, type_):
    # Real constants as the Fractions their decimal spelling denotes, as the proofs read
    # them (0.1 is 1/10), so that exact elements stay exact (inf stays a float)
    if type_ is Type.REAL and not math.isinf(value):
        return Fraction(repr(float(value)))
    return PYTHON[Op.CONST](value, type_)


def _strict_eq(a, b):
    # an irrational witness value (a SymPy number) equals a number by value, not by its
    # spelling: x*x + x == 1 at x = (sqrt(5) - 1)/2 (fuzz seed 802033)
    if _symbolic(a) or _symbolic(b):
        return _same(a, b)
    return a == b


def _strict_ne(a, b):
    if _symbolic(a) or _symbolic(b):
        return not _same(a, b)
    return a != b


# The reference table over exact numbers, with division by zero outside the semantics
# (raises), for exact folds of witnesses and of the oracle's lists.
STRICT: dict = {**PYTHON, Op.CONST: _exact_const, Op.DIV: _strict_div, Op.POWN: _strict_pown, Op.EQ: _strict_eq,
                Op.NE: _strict_ne}


def has_nan(state) -> bool:
    return any(isinstance(v, float) and math.isnan(v) for v in state)
