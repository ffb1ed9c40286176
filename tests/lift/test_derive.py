"""`thm3.lift.derive`: the right fold a proved combine gives, right(e, acc) =
combine(left(init, e), acc), checked against the left fold on random lists, and the
finite fields the invariants name."""
from __future__ import annotations

import numpy as np
import pytest

import thm3
from thm3.ir import Expr, Op, Type, const, var
from thm3.lift.derive import DERIVED, derived_right, finite_fields, with_right_fold
from thm3.semantics.evaluate import PYTHON, evaluate


def _params(loop) -> dict:
    return {d.name: 1.5 for d in loop.params}       # every loop parameter 1.5


def _fold_left(loop, xs):
    state = [f.default for f in loop.fields]
    names = [f"acc.{f.name}" for f in loop.fields]
    for x in xs:
        env = dict(zip(names, state)) | {loop.elements[0].name: x} | _params(loop)
        state = evaluate(loop.left.outputs, env, PYTHON)
    return state


def _fold_right(loop, right, xs):
    state = [f.default for f in loop.fields]
    names = [f"acc.{f.name}" for f in loop.fields]
    for x in reversed(xs):
        env = dict(zip(names, state)) | {loop.elements[0].name: x} | _params(loop)
        state = evaluate(right, env, PYTHON)
    return state


@pytest.mark.parametrize("name", ["mps", "mss", "welford", "polynomial", "count_above", "last"])
def test_the_derived_right_fold_folds_to_the_left_folds_state(name):
    a = thm3.analyze(thm3.sample_path(name), timeout=30, lift=False)
    assert a.verdict == "homomorphism"
    right = derived_right(a.loop, a.combine_fn, a.invariant_exprs)
    rng = np.random.default_rng(5)
    for n in (0, 1, 2, 5, 9):
        xs = [float(v) for v in rng.integers(-4, 5, n)]
        assert np.allclose(_fold_right(a.loop, right, xs), _fold_left(a.loop, xs)), (name, xs)


def test_a_wrong_combine_gives_a_right_fold_that_differs():
    """The check above can fail: mps with its combine's max read the other way round."""
    a = thm3.analyze(thm3.sample_path("mps"), timeout=30, lift=False)
    s, m = a.combine_fn.outputs
    wrong = type(a.combine_fn)(a.combine_fn.inputs, (s, Expr(Op.MAX, Type.REAL, (var("b.m", Type.REAL),
                                                                                  var("b.s", Type.REAL)))))
    right = derived_right(a.loop, wrong)
    assert any(not np.allclose(_fold_right(a.loop, right, xs), _fold_left(a.loop, xs))
               for xs in ([1.0, -3.0], [2.0, 2.0, -1.0], [-1.0, 5.0]))


def test_with_right_fold_carries_the_right_fold_and_says_so():
    a = thm3.analyze(thm3.sample_path("mps"), timeout=30, lift=False)
    lifted = with_right_fold(a.loop, a.combine_fn, a.invariant_exprs)
    assert lifted.right is not None and lifted.left is a.loop.left
    assert lifted.right.outputs == tuple(derived_right(a.loop, a.combine_fn, a.invariant_exprs))
    assert lifted.doc.endswith(DERIVED)


def test_finite_fields_need_both_bounds():
    m, d = var("acc.m", Type.REAL), var("acc.d", Type.REAL)
    above = Expr(Op.GT, Type.BOOL, (m, const(float("-inf"))))
    below = Expr(Op.LT, Type.BOOL, (m, const(float("inf"))))
    only_d = Expr(Op.GT, Type.BOOL, (d, const(float("-inf"))))
    assert finite_fields([above, below, only_d]) == {"acc.m"}
    assert finite_fields([above]) == set()
    assert finite_fields([Expr(Op.GT, Type.BOOL, (m, const(0.0))), below]) == set()
