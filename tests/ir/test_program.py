"""`thm3.ir.program`: the one lowering the straight-line printers read."""
from __future__ import annotations

import thm3
from thm3.ir import Expr, Op, Type, const, var
from thm3.ir.printer import to_text
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


# --- the one driver: every printer runs its table over the program's steps ----------------

def test_the_driver_runs_steps_in_order_binds_what_keep_binds_and_skips_known_nodes():
    x, y = var("x", Type.REAL), var("y", Type.REAL)
    s = _add(x, y)
    out = Expr(Op.MUL, Type.REAL, (s, s))
    p = lower([out])
    seen, bound = [], []

    def entry(k, step, args):
        seen.append(k)
        assert len(args) == len(step.node.src)
        return step.node.arg if step.node.op is Op.VAR else f"({args[0]} {step.node.op.name} {args[1]})"

    def keep(k, step, value):
        if p.uses[k] > 1 and step.node.op is not Op.VAR:
            bound.append(value)
            return f"t{k}"
        return value

    values = p.run(entry, keep)
    assert seen == list(range(len(p.steps)))
    assert bound == ["(x ADD y)"] and values[p.outputs[0]] == "(t2 MUL t2)"
    # a known node takes the given value; the driver asks the table for nothing below it
    seen.clear()
    q = lower([out], known={s: "S"})
    assert [st.node for st in q.steps] == [s, out] and q.steps[0].args == ()
    assert q.run(entry, known={s: "S"})[-1] == "(S MUL S)" and seen == [1]
    assert lower([out], known={s: "S"}) is not q                # never remembered


def test_every_printer_is_a_driver_of_the_one_lowering(monkeypatch):
    from thm3.backends.numba_module import render as numba_text
    from thm3.gpu.render import cuda
    from thm3.gpu.render.module import NUMPY
    from thm3.ir import printer
    from thm3.ir.lines import straight_lines
    from thm3.ir.program import Program
    from thm3.syntax.loopfile import loop_text
    loop = parse_source('''"""y."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    s: Real = 0.0
    m: Real = 0.0


def left(acc: State, x: Real) -> State:
    d = acc.s + x * 3.5
    return State(d, max(acc.m, d))
''')
    combine = thm3.analyze_source(loop.source, timeout=30, lift=False).combine_fn
    runs = []
    real_run = Program.run
    monkeypatch.setattr(Program, "run", lambda self, *a, **k: runs.append(self) or real_run(self, *a, **k))
    printer._RENDERED.clear()
    printers = {
        "loop file": lambda: loop_text(loop),
        "report": lambda: to_text(combine.outputs[1], printer.MATH),
        "fold": lambda: Fold(loop, PYTHON).source,
        "numpy": lambda: straight_lines(loop.left.outputs, {"acc.s": "s", "acc.m": "m", "x": "x"}, NUMPY),
        "numba": lambda: numba_text(loop, combine),
        "cuda": lambda: cuda.render(loop, combine),
    }
    for name, run in printers.items():
        runs.clear()
        assert run(), name
        assert runs, f"the {name} printer does not run the one lowering's driver"
        # the driver printed left's shared step (d, read twice) or the combine's
        assert any(len(p.steps) > 3 for p in runs), name


def test_a_standalone_conditional_has_no_parentheses_and_reads_back():
    x, y = var("x", Type.REAL), var("y", Type.REAL)
    cond = Expr(Op.GT, Type.BOOL, (x, y))
    inner = Expr(Op.WHERE, Type.REAL, (cond, x, y))
    outer = Expr(Op.WHERE, Type.REAL, (cond, inner, _add(inner, y)))
    assert to_text(inner) == "(x if x > y else y)"
    assert to_text(inner, standalone=True) == "x if x > y else y"
    text = to_text(outer, standalone=True)
    assert text == "(x if x > y else y) if x > y else (x if x > y else y) + y"
    import ast
    tree = ast.parse(text, mode="eval").body
    assert isinstance(tree, ast.IfExp) and isinstance(tree.body, ast.IfExp)
    assert to_text(_add(x, y), standalone=True) == to_text(_add(x, y))
