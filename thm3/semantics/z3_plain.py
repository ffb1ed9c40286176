"""A term of the IR as a plain Z3 term: exact integers and reals, `where` as `If`, the
floored `%` by a literal on Ints.  One reading for the passes that ask Z3 about a few
comparisons (the interval analysis' parameter facts, the finite route's cells and
element values); the prover's full reading, with ±inf, exp and log, is
`semantics.symbolic`."""
from __future__ import annotations

import math
from fractions import Fraction

from thm3.ir import Expr, Op, Type

_BINARY = {
    Op.ADD: lambda a, b: a + b,
    Op.SUB: lambda a, b: a - b,
    Op.MUL: lambda a, b: a * b,
    Op.LT: lambda a, b: a < b,
    Op.LE: lambda a, b: a <= b,
    Op.GT: lambda a, b: a > b,
    Op.GE: lambda a, b: a >= b,
    Op.EQ: lambda a, b: a == b,
    Op.NE: lambda a, b: a != b,
}


def to_z3(e: Expr, syms: dict, create: bool = True):
    """`e` as a Z3 term, or None where some operation has no exact Z3 reading here (exp,
    division, ±inf, a Real `%`, a Vec).  Variables come from `syms` by name; with `create`
    a missing Bool, Int or Real one is made there as a free constant, otherwise the term is
    None."""
    import z3
    match e.op:
        case Op.CONST:
            if isinstance(e.arg, bool):
                return z3.BoolVal(e.arg)
            if not math.isfinite(float(e.arg)):
                return None
            if e.type is Type.INT:
                return z3.IntVal(int(e.arg))
            return z3.RealVal(Fraction(e.arg) if isinstance(e.arg, int) else Fraction(float(e.arg)))
        case Op.VAR:
            if e.arg not in syms:
                make = {Type.BOOL: z3.Bool, Type.INT: z3.Int, Type.REAL: z3.Real}.get(e.type)
                if not create or make is None:
                    return None
                syms[e.arg] = make(e.arg)
            return syms[e.arg]
    args = [to_z3(s, syms, create) for s in e.src]
    if any(a is None for a in args):
        return None
    if e.op in _BINARY:
        return _BINARY[e.op](*args)
    match e.op:
        case Op.NEG:
            return -args[0]
        case Op.AND:
            return z3.And(*args)
        case Op.OR:
            return z3.Or(*args)
        case Op.NOT:
            return z3.Not(args[0])
        case Op.MOD if e.type is Type.INT:
            return args[0] % e.arg
        case Op.WHERE:
            return z3.If(*args)
        case Op.MAX:
            return z3.If(args[0] >= args[1], args[0], args[1])
        case Op.MIN:
            return z3.If(args[0] <= args[1], args[0], args[1])
        case Op.ABS:
            return z3.If(args[0] >= 0, args[0], -args[0])
    return None
