"""Every backend is a table keyed by the one closed set of operations: each table must
cover every operation (the leaves are handled by the evaluator itself)."""
from __future__ import annotations

import pytest

from thm3.interpret import NUMPY
from thm3.ir import Op
from thm3.printer import _SYNTAX
from thm3.symbolic import Explorer, SymbolicTable

EVALUATED = set(Op) - {Op.VAR}


def test_numpy_table_covers_every_op():
    assert set(NUMPY) == EVALUATED


def test_symbolic_table_covers_every_op():
    table = SymbolicTable(Explorer([], deadline=float("inf")), lazy=False)
    assert set(table) == EVALUATED
    assert all(callable(f) for f in table.values())


def test_printer_covers_every_op():
    assert set(_SYNTAX) == set(Op)


def test_cuda_table_covers_every_op():
    render = pytest.importorskip("thm3.gpu.render")
    assert set(render.CUDA) >= EVALUATED
