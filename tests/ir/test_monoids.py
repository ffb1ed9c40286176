"""`thm3.ir.monoids`: the one table of monoids.  Each entry's claims are checked against
the evaluator's own tables (thm3.semantics.evaluate.NUMPY), which every backend follows."""
from __future__ import annotations

import numpy as np
import pytest

from thm3.ir import Op, Type, const, var
from thm3.ir.monoids import MONOIDS, is_unit, monoid, monoids_over
from thm3.semantics.evaluate import NUMPY

RNG = np.random.default_rng(7)
VALUES = {
    Type.REAL: np.concatenate([RNG.integers(-8, 9, 200).astype(float), [0.0, -0.0, np.inf, -np.inf]]),
    Type.INT: RNG.integers(-50, 51, 200),
    Type.BOOL: RNG.integers(0, 2, 200).astype(bool),
}


def _unit(m, type_):
    return np.array(m.identity, dtype={Type.REAL: float, Type.INT: float, Type.BOOL: bool}[type_])


@pytest.mark.parametrize("m", MONOIDS, ids=lambda m: m.op.name)
def test_each_entry_is_a_monoid_with_its_unit(m):
    f = NUMPY[m.op]
    for t in (t for t in m.types if t in VALUES):
        x, y, z = (RNG.permutation(VALUES[t]) for _ in range(3))
        with np.errstate(all="ignore"):
            assert np.array_equal(f(f(x, y), z), f(x, f(y, z)), equal_nan=True), (m.op, t)
            u = _unit(m, t)
            assert np.array_equal(f(u, x), x) and np.array_equal(f(x, u), x), (m.op, t)
            if m.idempotent:
                assert np.array_equal(f(x, x), x)
            else:
                assert not np.array_equal(f(x, x), x)


@pytest.mark.parametrize("m", MONOIDS, ids=lambda m: m.op.name)
def test_commutative_means_bit_for_bit(m):
    f = NUMPY[m.op]
    t = m.types[0]
    x, y = VALUES[t], RNG.permutation(VALUES[t])
    if t is Type.REAL:                  # the ties that tell max and min apart: signed zeros
        x, y = np.append(x, [0.0, -0.0]), np.append(y, [-0.0, 0.0])
    with np.errstate(all="ignore"):
        u, v = f(x, y), f(y, x)
    same = np.array_equal(np.signbit(u), np.signbit(v)) and np.array_equal(u, v, equal_nan=True)
    assert same is m.commutative


@pytest.mark.parametrize("m", MONOIDS, ids=lambda m: m.op.name)
def test_the_scan_primitive_is_the_sequential_fold(m):
    t = m.types[0]
    x = VALUES[t][:40]
    got = getattr(np, m.ufunc).accumulate(x)
    acc, want = _unit(m, t), []
    for v in x:
        acc = NUMPY[m.op](acc, v)
        want.append(acc)
    assert np.array_equal(got, np.array(want))


def test_lookups():
    assert monoids_over(Type.BOOL) == (Op.OR, Op.AND)
    assert monoids_over(Type.VEC) == (Op.ADD, Op.MAX, Op.MIN)
    assert monoids_over(Type.REAL) == (Op.ADD, Op.MAX, Op.MIN, Op.MUL)
    assert monoid(Op.SUB) is None
    assert is_unit(Op.ADD, const(0, Type.INT)) and is_unit(Op.ADD, const(-0.0))
    assert is_unit(Op.MAX, const(float("-inf"))) and not is_unit(Op.MAX, const(float("inf")))
    assert is_unit(Op.AND, const(True)) and not is_unit(Op.ADD, const(False))
    assert not is_unit(Op.MUL, var("one", Type.REAL))
