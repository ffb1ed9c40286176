"""Every backend is a table keyed by the one closed set of operations: each table must
cover every operation (the leaves are handled by the evaluator itself)."""
from __future__ import annotations

import pytest

from thm3.semantics.evaluate import NUMPY
from thm3.ir import Op, Type
from thm3.ir.printer import SYNTAX
from thm3.semantics.symbolic import Explorer, SymbolicTable

EVALUATED = set(Op) - {Op.VAR}


def test_numpy_table_covers_every_op():
    assert set(NUMPY) == EVALUATED


def test_symbolic_table_covers_every_op():
    table = SymbolicTable(Explorer([], deadline=float("inf")), lazy=False)
    assert set(table) == EVALUATED
    assert all(callable(f) for f in table.values())


def test_printer_covers_every_op():
    assert set(SYNTAX) == set(Op)


def test_cuda_table_covers_every_op():
    render = pytest.importorskip("thm3.gpu.render.cuda")
    assert set(render.CUDA) >= EVALUATED


def test_python_table_covers_every_op():
    from thm3.semantics.evaluate import PYTHON
    assert set(PYTHON) == EVALUATED


VALUES = [0.0, -0.0, 1.0, -2.5, 3.0, 1e308, -1e308, float("inf"), float("-inf"), float("nan"), 700.0, -800.0]


@pytest.mark.parametrize("op", sorted(set(Op) - {Op.VAR, Op.CONST, Op.DOT, Op.POW, Op.POWN, Op.MOD, Op.WHERE, Op.AND, Op.OR,
                                                 Op.NOT}, key=lambda o: o.name))
def test_python_table_means_what_numpy_table_means(op):
    """The sequential reference (Python floats) and the NumPy table agree on every
    operation, including infinities, NaN, overflow and division by zero."""
    import numpy as np
    from thm3.semantics.evaluate import NUMPY, PYTHON, quiet
    arity = 1 if op in (Op.NEG, Op.ABS, Op.EXP, Op.EXP2, Op.LOG, Op.LOG2, Op.SQRT) else 2
    import itertools
    for args in itertools.product(VALUES, repeat=arity):
        with quiet():
            want = np.asarray(NUMPY[op](*(np.float64(a) for a in args)), dtype=np.float64)
            got = np.asarray(PYTHON[op](*args), dtype=np.float64)
        assert (got == want) or (np.isnan(got) and np.isnan(want)), (op, args, got, want)


def test_python_table_pow():
    import numpy as np
    from thm3.semantics.evaluate import NUMPY, PYTHON, quiet
    for a in VALUES:
        for n in (-2, -1, 0, 1, 2, 3):
            with quiet():
                want = np.float64(NUMPY[Op.POW](np.float64(a), n))
                got = np.float64(PYTHON[Op.POW](a, n))
            assert got == want or (np.isnan(got) and np.isnan(want)), (a, n, got, want)


def test_python_table_power_of_an_int():
    """`c ** n` with an Int n: the sequential reference, NumPy and the proofs' reals
    agree, overflow, underflow, 0 ** -k and odd powers of negatives included."""
    import numpy as np
    from fractions import Fraction
    from thm3.semantics.evaluate import NUMPY, NUMPY_REALS, PYTHON, quiet
    from thm3.semantics.reals import REALS, UNDEFINED
    for a in VALUES + [0.75, -0.5]:
        for n in (-3, -1, 0, 1, 2, 5, 2000, -2000, 1 << 40):
            with quiet():
                want = np.float64(NUMPY[Op.POWN](np.float64(a), np.int64(n)))
                got = np.float64(PYTHON[Op.POWN](a, n))
            assert got == want or (np.isnan(got) and np.isnan(want)), (a, n, got, want)
    assert PYTHON[Op.POWN](0.75, 3) == 0.421875 and PYTHON[Op.POWN](-2.0, -3) == -0.125
    assert np.isnan(NUMPY_REALS[Op.POWN](np.float64(0.0), np.int64(-1)))
    assert REALS[Op.POWN](Fraction(3, 4), 3) == Fraction(27, 64)
    assert REALS[Op.POWN](Fraction(0), -2) is UNDEFINED


def test_exact_reals_table_covers_every_op():
    from thm3.semantics.reals import REALS
    assert set(REALS) == EVALUATED


def test_exact_reals_follow_the_proofs():
    """x / 0, inf - inf and log of a negative have no value (the proofs' NaN); log(0) is
    -inf; sqrt(2) stays exact; an ordering SymPy cannot decide is never guessed."""
    from fractions import Fraction
    from thm3.semantics.reals import INF, NINF, REALS, UNDEFINED, compare
    assert REALS[Op.DIV](Fraction(1), 0) is UNDEFINED
    assert REALS[Op.SUB](INF, INF) is UNDEFINED
    assert REALS[Op.LOG](Fraction(-1)) is UNDEFINED
    assert REALS[Op.LOG](Fraction(0)) == NINF
    assert REALS[Op.MUL](INF, Fraction(0)) is UNDEFINED
    r = REALS[Op.SQRT](Fraction(2))
    assert REALS[Op.MUL](r, r) == 2
    assert compare((1 + r) ** 2, 3 + 2 * r) == 0
    assert compare(r, Fraction(14142135623730951, 10 ** 16)) == -1
    assert REALS[Op.ADD](Fraction(1, 3), Fraction(2, 3)) == 1
    assert REALS[Op.WHERE](True, Fraction(1), UNDEFINED) == 1
    assert REALS[Op.CONST](0.1, Type.REAL) == Fraction(1, 10)
