"""The values of symbolic evaluation (`thm3.semantics.symbolic`): a Python bool or a Z3
boolean, `Inf(sign)`, `NAN`, or `Fin`, a finite real carried both as a SymPy expression
and as a Z3 term; and the symbols and constants they are made of, each made once."""
from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp
import z3

from thm3.ir import Type


@dataclass(frozen=True)
class Inf:
    sign: int

    def __repr__(self) -> str:
        return "inf" if self.sign > 0 else "-inf"


@dataclass(frozen=True)
class NaN:
    """Not a number; `cause` says where it came from ("division" by a possible 0, or
    "arithmetic" such as inf - inf)."""
    cause: str = "arithmetic"

    def __repr__(self) -> str:
        return "nan"


NAN = NaN()


def isnan(v) -> bool:
    return isinstance(v, NaN)


@dataclass(frozen=True, eq=False)
class Fin:
    sp: sp.Expr
    z3: z3.ArithRef

    def __repr__(self) -> str:
        return str(self.sp)


def is_bool(v) -> bool:
    return isinstance(v, bool) or isinstance(v, z3.BoolRef)


@dataclass
class Symbols:
    """Fresh symbols for state operands, elements and parameters, shared by SymPy and Z3."""
    sympy_of: dict = field(default_factory=dict)
    z3_of: dict = field(default_factory=dict)
    hyps: list = field(default_factory=list)

    def real(self, name: str, type_: Type):
        key = name.replace(".", "_")
        made = _SYMBOLS.get((key, type_))
        if made is None:
            if len(_SYMBOLS) >= MAX_SYMBOLS:
                _SYMBOLS.clear()
            made = _SYMBOLS[(key, type_)] = _symbol(key, type_)
        if type_ is Type.BOOL:
            self.z3_of[name] = made
            return made
        s, z = made
        self.sympy_of[name] = s
        self.z3_of[name] = z
        return Fin(s, z)


# (name, type) -> the SymPy and Z3 terms of a symbol: one name is one term in both (SymPy
# and Z3 intern them), so they are made once, not on each of a law's cases (4,096 cases of
# 27 symbols on a 12-field lift's step law: 11 s of making the same terms)
_SYMBOLS: dict = {}
MAX_SYMBOLS = 4096


def _symbol(key: str, type_: Type):
    if type_ is Type.BOOL:
        return z3.Bool(key)
    if type_ is Type.INT:
        # an Int is a Real term over an integer constant: the arithmetic stays in the
        # reals (no integer division), and Z3 reasons on the integer as an Int, where
        # `IsInt(Real)` left it "unknown" after 20 s on laws it decides in 7 ms
        return sp.Symbol(key, integer=True), z3.ToReal(z3.Int(key))
    return sp.Symbol(key, real=True), z3.Real(key)


_CONSTANTS: dict = {}       # (kind, repr) -> Fin: a number's SymPy and Z3 forms, made once
MAX_CONSTANTS = 4096


def constant(value, type_):
    if type_ is Type.BOOL or isinstance(value, bool):
        return bool(value)
    key = (type(value), repr(value))        # 0.0 and -0.0 apart, 1 and 1.0 apart
    got = _CONSTANTS.get(key)
    if got is None:
        got = _constant(value)
        if len(_CONSTANTS) >= MAX_CONSTANTS:
            _CONSTANTS.clear()
        _CONSTANTS[key] = got
    return got


def _constant(value):
    if isinstance(value, float):
        if value != value:
            return NAN
        if value in (float("inf"), float("-inf")):
            return Inf(1 if value > 0 else -1)
        q = sp.Rational(repr(value))
    else:
        q = sp.Integer(value)
    return Fin(q, z3.RealVal(str(q)))
