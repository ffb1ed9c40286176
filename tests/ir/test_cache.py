"""`thm3.ir.cache.Bounded`: the module-level caches' memo keeps its newest entries only."""
from __future__ import annotations

from thm3.ir import Op, Type, Expr, const, var
from thm3.ir.cache import Bounded


def test_the_oldest_entries_go_first():
    c = Bounded(3)
    for k in range(5):
        assert c.put(k, str(k)) == str(k)
    assert len(c) == 3 and [k in c for k in range(5)] == [False, False, True, True, True]
    assert c.get(0) is None and c.get(4) == "4"
    c.put(2, "two")                      # a new value for a kept key
    assert c.get(2) == "two" and len(c) == 3
    assert c.pop(3) == "3" and 3 not in c
    c.clear()
    assert len(c) == 0


def test_nodes_built_apart_find_one_entry():
    c = Bounded(10)
    c.put(Expr(Op.ADD, Type.REAL, (var("x", Type.REAL), const(1.0))), "x + 1")
    assert c.get(Expr(Op.ADD, Type.REAL, (var("x", Type.REAL), const(1.0)))) == "x + 1"
    assert c.get(Expr(Op.ADD, Type.REAL, (var("x", Type.REAL), const(-1.0)))) is None
