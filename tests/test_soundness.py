"""Issue 15's findings, one test each: never a "homomorphism" no solver stands behind,
witnesses that hold in the semantics of the proofs, no internal errors, no false
"bounded", no false pass.  Each loop is the smallest one that showed the defect."""
from __future__ import annotations

import math

import pytest

import thm3
from thm3.cli.main import _difference

HEAD = "from typing import NamedTuple\nfrom thm3.lang import Bool, Index, Int, Real, inf\n\n"


def analyze(body: str, **kw):
    kw.setdefault("lift", False)
    kw.setdefault("timeout", 30.0)
    return thm3.analyze_source(HEAD + body, **kw)


# -- internal errors ------------------------------------------------------------------

@pytest.mark.parametrize("step", ["max(acc.a * 2, x)", "max((acc.a + x) / 2, x)",
                                  "max(acc.a / temperature, x)"])
def test_infinite_default_times_constant_is_no_internal_error(step):
    """-inf * 2 asked `_sign` of a SymPy number, whose comparison gives sympy.true."""
    a = analyze(f"""temperature: Real

class State(NamedTuple):
    a: Real = -inf

def left(acc: State, x: Real) -> State:
    return State({step})
""")
    assert a.verdict in ("homomorphism", "not-homomorphism", "unknown")
    if a.verdict == "not-homomorphism":
        assert a.witness is not None


# -- bounded Bird ----------------------------------------------------------------------

def test_bounded_bird_gives_index_the_list_position():
    """argmax whose right fold uses `>` keeps the later index on a tie: [0, 0] tells."""
    a = analyze("""class State(NamedTuple):
    best: Real = -inf
    idx: Int = -1

def left(acc: State, x: Real, i: Index) -> State:
    if x > acc.best:
        return State(x, i)
    return acc

def right(x: Real, i: Index, acc: State) -> State:
    if x > acc.best:
        return State(x, i)
    return acc
""")
    assert a.proofs["bird"] == "failed", a.bird_detail
    assert "[[0, 0], [0, 1]]" in a.bird_detail.replace(".0", "")


# -- the CLI's comparison ----------------------------------------------------------------

def test_run_difference_counts_nan_against_inf():
    assert _difference(math.nan, math.inf) == math.inf
    assert _difference((1.0, math.nan), (1.0, 2.0)) == math.inf
    assert _difference(math.nan, math.nan) == 0.0
    assert _difference(math.inf, math.inf) == 0.0
