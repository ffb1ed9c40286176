"""`thm3.ir.program`: the one lowering the straight-line printers read."""
from __future__ import annotations

import thm3
from thm3.ir import Expr, Op, Type, const, var
from thm3.ir.program import lower
from thm3.semantics.evaluate import PYTHON
from thm3.semantics.fold import Fold
from thm3.syntax.frontend import parse_source


def _add(a, b):
    return Expr(Op.ADD, Type.REAL, (a, b))


def test_operands_come_first_and_a_shared_subterm_is_one_step():
    x, y = var("x", Type.REAL), var("y", Type.REAL)
    s = _add(x, y)
    cond = Expr(Op.GT, Type.BOOL, (s, const(0.0)))
    pick = Expr(Op.WHERE, Type.REAL, (cond, s, _add(x, y)))      # the same sum, built again
    p = lower([pick, s])
    nodes = [st.node for st in p.steps]
    assert len(nodes) == len(set(nodes)) == 6                  # x, y, x + y, 0.0, >, where
    for k, st in enumerate(p.steps):
        assert all(a < k for a in st.args)                     # operands first
        assert tuple(p.steps[a].node for a in st.args) == st.node.src
    assert p.steps[p.outputs[0]].node is pick and p.steps[p.outputs[1]].node is s
    assert p.uses[p.at(s)] == 4                                # the comparison, both branches, an output
    assert p.uses[p.at(x)] == 1 and p.uses[p.at(pick)] == 1
    assert p.steps[p.at(pick)].node.op is Op.WHERE             # a select stays a select
    assert lower((pick, s)) is p                               # lowered once


def test_the_fold_names_each_step_by_its_position():
    loop = parse_source('''"""x."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    s: Real = 0.0
    m: Real = 0.0


def left(acc: State, x: Real) -> State:
    s = acc.s + x
    return State(s, max(acc.m, s))
''')
    p = lower(loop.left.outputs)
    text = Fold(loop, PYTHON).source
    for k, st in enumerate(p.steps):
        if st.node.op not in (Op.VAR, Op.CONST):
            assert f"        t{k} = " in text
    assert text.count(" = s0 + e0") == 1                       # the shared sum computed once
    assert thm3.analyze_source(loop.source, timeout=30, lift=False).verdict == "homomorphism"
