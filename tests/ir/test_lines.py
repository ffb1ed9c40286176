"""`thm3.ir.lines`: straight-line array code from the one lowering, in two dialects (the
NumPy module's and JAX's), with a shared subterm computed once and the two styles of Int
overflow check."""
from __future__ import annotations

import numpy as np

from thm3.ir import Expr, Op, Type, const, var
from thm3.ir.lines import straight_lines


def _sum(a, b, t=Type.REAL):
    return Expr(Op.ADD, t, (a, b))


def test_a_shared_subterm_is_one_local_and_the_text_evaluates():
    from thm3.gpu.render.module import NUMPY
    x, y = var("x", Type.REAL), var("y", Type.REAL)
    s = _sum(x, y)
    out = Expr(Op.MUL, Type.REAL, (s, s))
    lines, outs, flags = straight_lines([out, x], {"x": "u", "y": "v"}, NUMPY, indent="")
    assert lines == ["t0 = (u + v)"] and outs == ["(t0 * t0)", "u"] and flags == []
    env = {"u": np.float64(2.0), "v": np.float64(1.5), "np": np}
    exec(lines[0], env)
    assert eval(outs[0], env) == 12.25


def test_call_style_checks_pass_their_context():
    from thm3.gpu.render.module import NUMPY
    a, b = var("a", Type.INT), var("b", Type.INT)
    e = Expr(Op.MUL, Type.INT, (a, b))
    lines, outs, flags = straight_lines([e], {"a": "a", "b": "b"}, NUMPY, checks={e: 1},
                                        context=lambda node: "1, 'left'")
    assert outs == ["_imul(a, b, 1, 'left')"] and flags == []


def test_flag_style_checks_name_the_result_and_flag_a_wrap():
    from thm3.backends.jax_module import JAX
    a, b = var("a", Type.INT), var("b", Type.INT)
    e = Expr(Op.ADD, Type.INT, (a, b))
    p = Expr(Op.POW, Type.INT, (a,), 3)
    lines, outs, flags = straight_lines([e, p], {"a": "a", "b": "b"}, JAX, indent="", checks={e: 1, p: 1})
    assert outs[0] == "t0" and len(flags) == 3              # the sum, and a ** 3 as two products
    big = np.int64(2**62)
    env = {"a": big, "b": big, "jnp": np}
    with np.errstate(over="ignore"):
        for line in lines:
            exec(line, env)
        assert eval(flags[0], env)                          # 2**62 + 2**62 wraps
        env.update(a=np.int64(3), b=np.int64(4))
        for line in lines:
            exec(line, env)
        assert not any(eval(f, env) for f in flags) and eval(outs[1], env) == 27


def test_literals_and_specials_follow_the_dialect():
    from thm3.backends.jax_module import JAX
    from thm3.gpu.render.module import NUMPY
    e = Expr(Op.MAX, Type.REAL, (var("x", Type.REAL), const(float("-inf"))))
    assert straight_lines([e], {"x": "x"}, NUMPY)[1] == ["_max(x, -np.inf)"]
    assert straight_lines([e], {"x": "x"}, JAX)[1] == ["_max(x, -jnp.inf)"]
