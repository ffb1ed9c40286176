"""The one table of type rules of the loop language: the type of an operation on operands
of given types.  The frontend (after it has said what is wrong with a term it refuses) and
the enumeration of candidate terms both read it."""
from __future__ import annotations

from thm3.ir.core import promote
from thm3.ir.ops import Op, Type

NUMBERS = (Type.INT, Type.REAL, Type.VEC)
SCALARS = (Type.INT, Type.REAL)


def result_type(op: Op, arg, kids: tuple[Type, ...]) -> Type | None:
    """The type of `op` on children of these types (`arg`: a power's constant exponent),
    or None where the loop language has no such term.  The frontend types what it parses
    with it, and the enumeration what it builds."""
    match op:
        case Op.NOT:
            return Type.BOOL if kids[0] is Type.BOOL else None
        case Op.NEG | Op.ABS:
            return kids[0] if kids[0] in NUMBERS else None
        case Op.EXP | Op.EXP2 | Op.LOG | Op.LOG2 | Op.SQRT:
            return None if kids[0] is Type.BOOL else Type.VEC if kids[0] is Type.VEC else Type.REAL
        case Op.POW:
            if kids[0] in (Type.BOOL, Type.VEC):
                return None if kids[0] is Type.BOOL else Type.VEC
            return Type.INT if kids[0] is Type.INT and arg >= 0 else Type.REAL
        case Op.POWN:
            return Type.REAL if kids == (Type.REAL, Type.INT) else None
        case Op.MOD:
            return kids[0] if kids[0] in SCALARS else None
        case Op.ADD | Op.SUB | Op.MUL | Op.MAX | Op.MIN:
            return promote(*kids) if all(k in NUMBERS for k in kids) else None
        case Op.DIV:
            if Type.BOOL in kids:
                return None
            return Type.REAL if promote(*kids) is Type.INT else promote(*kids)
        case Op.LT | Op.LE | Op.GT | Op.GE:
            return Type.BOOL if all(k in SCALARS for k in kids) else None
        case Op.EQ | Op.NE:
            ok = all(k in SCALARS for k in kids) or kids == (Type.BOOL, Type.BOOL)
            return Type.BOOL if ok else None
        case Op.AND | Op.OR:
            return Type.BOOL if kids == (Type.BOOL, Type.BOOL) else None
        case Op.DOT:
            return Type.REAL if kids == (Type.VEC, Type.VEC) else None
        case Op.WHERE:
            c, t, e = kids
            if c is not Type.BOOL or (t is Type.BOOL) != (e is Type.BOOL):
                return None
            return Type.BOOL if t is Type.BOOL else promote(t, e)
    raise ValueError(f"no typing rule for {op}")
