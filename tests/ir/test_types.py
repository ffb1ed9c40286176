"""`thm3.ir.types`: the one table of type rules.  The frontend types every term it parses
with it, and the enumeration every term it builds: both are checked against it here."""
from __future__ import annotations

import pytest

import thm3
from catalog import SAMPLES
from corpus import CORPUS
from thm3.ir import Op, Type, walk
from thm3.ir.types import result_type

PATHS = [s.path for s in SAMPLES] + [e.path for e in CORPUS]


def _terms(loop):
    fns = [loop.left] + [f for f in (loop.right, loop.result) if f is not None]
    return walk([e for fn in fns for e in fn.outputs] + list(loop.preconditions))


def test_every_parsed_term_has_the_tables_type():
    """Every operation in the left, right and result of the 306 sample and corpus loops."""
    checked = 0
    for path in PATHS:
        loop = thm3.parse_file(path)
        for e in _terms(loop):
            if e.op in (Op.VAR, Op.CONST):
                continue
            assert result_type(e.op, e.arg, tuple(s.type for s in e.src)) is e.type, (path.name, repr(e))
            checked += 1
    assert checked > 2000            # distinct operations (equal terms are one node)


@pytest.mark.parametrize("op,kids,want", [
    (Op.ADD, (Type.INT, Type.INT), Type.INT), (Op.ADD, (Type.INT, Type.REAL), Type.REAL),
    (Op.ADD, (Type.REAL, Type.VEC), Type.VEC), (Op.ADD, (Type.BOOL, Type.INT), None),
    (Op.DIV, (Type.INT, Type.INT), Type.REAL), (Op.LT, (Type.VEC, Type.REAL), None),
    (Op.EQ, (Type.BOOL, Type.BOOL), Type.BOOL), (Op.WHERE, (Type.BOOL, Type.INT, Type.REAL), Type.REAL),
    (Op.WHERE, (Type.BOOL, Type.BOOL, Type.INT), None), (Op.POWN, (Type.REAL, Type.INT), Type.REAL),
    (Op.POWN, (Type.INT, Type.INT), None), (Op.DOT, (Type.VEC, Type.VEC), Type.REAL),
])
def test_rules(op, kids, want):
    assert result_type(op, None, kids) is want


def test_a_power_is_int_only_for_a_nonnegative_exponent_of_an_int():
    assert result_type(Op.POW, 2, (Type.INT,)) is Type.INT
    assert result_type(Op.POW, -1, (Type.INT,)) is Type.REAL
    assert result_type(Op.POW, 3, (Type.VEC,)) is Type.VEC
    assert result_type(Op.POW, 2, (Type.BOOL,)) is None
