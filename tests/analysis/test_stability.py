"""Stability path by path (issue 22): an exp argument or a denominator is judged only on
the path where it is evaluated, so that the if/else, `where` and `max` spellings of one
online softmax get one verdict, and an argument > 0 on the branch taken still fails."""
from __future__ import annotations

import time

import numpy as np
import pytest

import thm3
from thm3.analysis.stability import exp_arguments, paths_to, stability, under
from thm3.ir import Op, walk
from thm3.prove.laws import Setting
from thm3.semantics.evaluate import NUMPY, evaluate

HEAD = "from typing import NamedTuple\nfrom thm3.lang import Real, exp, inf, where\n\n"
STATE = """class State(NamedTuple):
    m: Real = -inf
    d: Real = 0

"""
SPELLINGS = {
    "if": """def left(acc: State, x: Real) -> State:
    if x > acc.m:
        return State(x, acc.d * exp(acc.m - x) + 1)
    return State(acc.m, acc.d + exp(x - acc.m))
""",
    "where": """def left(acc: State, x: Real) -> State:
    return State(where(x > acc.m, x, acc.m),
                 where(x > acc.m, acc.d * exp(acc.m - x) + 1, acc.d + exp(x - acc.m)))
""",
    "max": """def left(acc: State, x: Real) -> State:
    m = max(acc.m, x)
    return State(m, acc.d * exp(acc.m - m) + exp(x - m))
""",
}


def _loop(body: str):
    return thm3.parse_source(HEAD + STATE + body)


@pytest.mark.parametrize("spelling", ["if", "where"])
def test_each_exp_argument_is_judged_under_its_path(spelling):
    """exp(acc.m - x) only where x > acc.m, exp(x - acc.m) only where it is not."""
    fn = _loop(SPELLINGS[spelling]).left
    env = {"acc.m": np.array([[0.0], [5.0]]), "acc.d": np.array([[1.0], [1.0]]), "x": np.array([[5.0], [0.0]])}
    # row 0 takes the then-branch (acc.m - x = -5), row 1 the else-branch (x - acc.m = -5);
    # unguarded, each argument is 5 on the other row
    raw = [e.src[0] for e in walk(fn.outputs) if e.op is Op.EXP]
    assert any(np.max(v) > 0 for v in evaluate(tuple(raw), env, NUMPY))
    for v in evaluate(exp_arguments(fn), env, NUMPY):
        assert np.all(np.asarray(v) <= 0)


def test_paths_name_the_conditions_of_each_branch():
    fn = _loop(SPELLINGS["if"]).left
    found = paths_to(fn.outputs, lambda e: e.op is Op.EXP)
    assert len(found) == 2
    assert sorted(taken for _, path in found for _, taken in path) == [False, True]
    e, path = found[0]
    assert under(path, e.src[0], 0.0).op is Op.WHERE
    assert under((), e.src[0], 0.0) is e.src[0]


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_three_spellings_of_the_left_step_get_one_verdict(spelling):
    loop = _loop(SPELLINGS[spelling])
    verdicts, notes = stability(loop, None, Setting(loop, []), time.monotonic() + 20)
    assert verdicts["exp_overflow"] == "proved", notes


@pytest.mark.slow
@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_three_spellings_of_online_softmax_get_one_verdict(spelling):
    """The combine synthesized for each spelling too (the if/else one selects by `b.m > a.m`)."""
    a = thm3.analyze_source(HEAD + STATE + SPELLINGS[spelling], lift=False, timeout=120)
    assert a.verdict == "homomorphism"
    assert a.stability["exp_overflow"] == "proved", a.stability_notes


def test_a_positive_argument_on_the_branch_taken_still_fails():
    """exp(x - acc.m) where x > acc.m: the path condition makes the argument positive."""
    loop = _loop("""def left(acc: State, x: Real) -> State:
    if x > acc.m:
        return State(x, acc.d + exp(x - acc.m))
    return State(acc.m, acc.d + exp(x - acc.m))
""")
    verdicts, notes = stability(loop, None, Setting(loop, []), time.monotonic() + 20)
    assert verdicts["exp_overflow"] == "failed", notes
    assert "> 0 on a sampled state" in notes["exp_overflow"]
