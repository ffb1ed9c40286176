"""`thm3.ir.core`: hash-consed expressions (issue 24, item 1).  A node is the one live node
of its structure, so structural equality is `is`, and hashing is O(1)."""
from __future__ import annotations

import copy
import gc
import pickle
import threading

import numpy as np
import pytest

from thm3.ir import Expr, Op, Type, const, substitute, var, walk
from thm3.ir.core import interned_count
from thm3.syntax.frontend import parse_source

LOOP = '''"""x."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    s: Real = 0.0
    m: Real = 0.0


def left(acc: State, x: Real) -> State:
    s = acc.s + x * 2.0
    return State(s, max(acc.m, s))
'''


def _add(a, b):
    return Expr(Op.ADD, Type.REAL, (a, b))


def test_equal_structures_built_two_ways_are_one_node():
    parsed = parse_source(LOOP).left.outputs
    s = var("acc.s", Type.REAL)
    by_hand = _add(s, Expr(Op.MUL, Type.REAL, [var("x", Type.REAL), const(2.0)]))      # src as a list
    assert parsed[0] is by_hand
    assert parsed[1] is Expr(Op.MAX, Type.REAL, (var("acc.m", Type.REAL), by_hand))
    # rebuilt by a substitution that renames and renames back
    there = substitute(parsed, {"acc.s": var("a.s", Type.REAL)})
    back = substitute(there, {"a.s": s})
    assert back[0] is parsed[0] and back[1] is parsed[1]
    assert there[0] is not parsed[0]


def test_values_python_calls_equal_stay_apart():
    assert const(0.0) is not const(-0.0)
    assert const(1, Type.INT) is not const(1.0) is not const(True)
    assert const(float("nan")) is const(float("nan"))          # one nan node, by its repr
    assert const(float("inf")) is not const(float("-inf"))
    assert const(0.1 + 0.2) is not const(0.3)
    assert var("x", Type.REAL) is not var("x", Type.INT)


def test_a_numpy_scalar_argument_is_the_python_scalar():
    e = Expr(Op.CONST, Type.REAL, (), np.float64(2.5))
    assert e is const(2.5) and type(e.arg) is float
    assert Expr(Op.CONST, Type.INT, (), np.int64(3)) is const(3)


def test_equality_and_hash_are_identity_even_on_deep_dags():
    def chain(n):
        e = var("x", Type.REAL)
        for k in range(n):
            e = _add(e, const(float(k % 7)))
        return e
    a, b = chain(20_000), chain(20_000)        # deeper than any recursive comparison could go
    assert a is b and a == b and hash(a) == hash(b)
    assert {a: 1}[b] == 1
    assert chain(19_999) is not a


def test_copies_and_pickles_are_the_same_node():
    e = Expr(Op.WHERE, Type.REAL, (Expr(Op.GT, Type.BOOL, (var("x", Type.REAL), const(0.0))),
                                   var("x", Type.REAL), const(-0.0)))
    assert copy.copy(e) is e and copy.deepcopy(e) is e
    assert pickle.loads(pickle.dumps(e)) is e
    assert pickle.loads(pickle.dumps(const(-0.0))).arg.hex() == (-0.0).hex()


def test_nodes_are_immutable():
    e = var("x", Type.REAL)
    with pytest.raises(AttributeError):
        e.arg = "y"
    with pytest.raises(AttributeError):
        del e.op
    assert e.arg == "x"


def test_a_node_no_one_uses_is_freed():
    gc.collect()
    before = interned_count()
    e = var("a_name_used_only_here", Type.REAL)
    for k in range(100):
        e = _add(e, const(1000.0 + k))
    assert interned_count() >= before + 201
    del e
    gc.collect()
    assert interned_count() <= before
    # and built again, it is a fresh node that is interned as before
    assert _add(var("a_name_used_only_here", Type.REAL), const(1.0)) is \
        _add(var("a_name_used_only_here", Type.REAL), const(1.0))


def test_threads_building_the_same_terms_get_one_node():
    got: list = []

    def build():
        e = var("t", Type.REAL)
        for k in range(300):
            e = Expr(Op.MUL, Type.REAL, (e, const(float(k))))
        got.append(e)

    threads = [threading.Thread(target=build) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and all(g is got[0] for g in got)


def test_walk_visits_a_repeated_subterm_once():
    x = var("x", Type.REAL)
    left = _add(_add(x, const(1.0)), _add(x, const(1.0)))       # built twice, one node
    assert len(walk([left])) == 4
