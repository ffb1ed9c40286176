"""The closed set of operations (`Op`) and value types (`Type`) of the IR.  Every
evaluator, printer and backend is a table keyed by `Op`; this module depends on nothing,
so the expression printer can use it without importing the node classes."""
from __future__ import annotations

from enum import Enum, auto


class Type(Enum):
    REAL = "Real"
    INT = "Int"
    BOOL = "Bool"
    VEC = "Vec"


class Op(Enum):
    # leaves
    CONST = auto()      # arg: the value (float, int or bool; +-inf as float)
    VAR = auto()        # arg: the input's name
    # unary
    NEG = auto()
    NOT = auto()
    ABS = auto()
    EXP = auto()
    EXP2 = auto()
    LOG = auto()
    LOG2 = auto()
    SQRT = auto()
    # binary
    ADD = auto()
    SUB = auto()
    MUL = auto()
    DIV = auto()
    POW = auto()        # src: (base,), arg: the constant integer exponent
    POWN = auto()       # src: (base, exponent): a Real to the power of an Int expression (c ** n)
    MOD = auto()        # src: (an Int or Real,), arg: the constant modulus m > 0; floored: in [0, m)
    MAX = auto()
    MIN = auto()
    LT = auto()
    LE = auto()
    GT = auto()
    GE = auto()
    EQ = auto()
    NE = auto()
    AND = auto()
    OR = auto()
    # other
    WHERE = auto()      # src: (condition, if_true, if_false)
    DOT = auto()        # src: (u, v), two VECs to a REAL


UNARY = (Op.NEG, Op.NOT, Op.ABS, Op.EXP, Op.EXP2, Op.LOG, Op.LOG2, Op.SQRT)
BINARY = (Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.POWN, Op.MAX, Op.MIN, Op.LT, Op.LE, Op.GT, Op.GE,
          Op.EQ, Op.NE, Op.AND, Op.OR, Op.DOT)
COMPARISONS = (Op.LT, Op.LE, Op.GT, Op.GE, Op.EQ, Op.NE)
# Ops with one operand and a constant integer in `arg` (the exponent, the modulus).
WITH_ARG = (Op.POW, Op.MOD)
TRANSCENDENTAL = (Op.EXP, Op.EXP2, Op.LOG, Op.LOG2, Op.SQRT)
