"""The Bird check's claims are true (issue 22): "bounded" only after a search for a list
on which `left` and `right` differ failed, and "failed" with that list, the parameters
and the two states, compared exactly.  Each loop below differs from its right fold in a
way the earlier bounded check (small lists, one parameter draw, a tolerance) missed."""
from __future__ import annotations

import time

import pytest

import thm3
from catalog import SAMPLES_DIR
from thm3.analysis.bird import search_difference

HEAD = "from typing import NamedTuple\nfrom thm3.lang import Bool, Int, Real\n\n"


def analyze(body: str):
    return thm3.analyze_source(HEAD + body, lift=False, timeout=30.0)


def test_a_difference_at_one_value_named_by_the_failed_induction():
    a = analyze("""class State(NamedTuple):
    s: Real = 0

def left(acc: State, x: Real) -> State:
    return State(acc.s + x)

def right(x: Real, acc: State) -> State:
    if x == 7.25:
        return State(x + acc.s + 1)
    return State(x + acc.s)
""")
    assert a.proofs["bird"] == "failed", a.bird_detail
    assert "differ on [7.25]" in a.bird_detail and "left gives (7.25), right gives (8.25)" in a.bird_detail


def test_a_flag_that_switches_past_the_short_lists():
    a = analyze("""class State(NamedTuple):
    n: Int = 0
    big: Bool = False

def left(acc: State, x: Real) -> State:
    return State(acc.n + 1, acc.n + 1 >= 12)

def right(x: Real, acc: State) -> State:
    return State(acc.n + 1, acc.n + 1 >= 13)
""")
    assert a.proofs["bird"] == "failed", a.bird_detail
    assert "left gives (12, True), right gives (12, False)" in a.bird_detail


def test_a_difference_below_any_tolerance_is_a_difference():
    a = analyze("""class State(NamedTuple):
    s: Real = 0

def left(acc: State, x: Real) -> State:
    return State(acc.s + x)

def right(x: Real, acc: State) -> State:
    return State(x * 1.00000001 + acc.s)
""")
    assert a.proofs["bird"] == "failed", a.bird_detail
    assert "100000001/100000000" in a.bird_detail      # the exact state, not a rounded float


def test_a_difference_for_large_parameters_only():
    a = analyze("""cap: Real

class State(NamedTuple):
    s: Real = 0

def left(acc: State, x: Real) -> State:
    return State(acc.s + x)

def right(x: Real, acc: State) -> State:
    if cap >= 100:
        return State(x + acc.s + 1)
    return State(x + acc.s)
""")
    assert a.proofs["bird"] == "failed", a.bird_detail
    assert "with cap = " in a.bird_detail
    cap = float(a.bird_detail.split("with cap = ")[1].split(":")[0])
    assert cap >= 100


def test_a_large_parameter_is_reached_without_a_counter_model():
    """The parameter values at and beyond the compared constant, with no model to go on."""
    loop = thm3.parse_source(HEAD + """cap: Int

class State(NamedTuple):
    s: Real = 0

def left(acc: State, x: Real) -> State:
    assert cap > 0
    return State(acc.s + x)

def right(x: Real, acc: State) -> State:
    return State(x + acc.s + (1 if cap > 1000 else 0))
""")
    found = search_difference(loop, {}, time.monotonic() + 10)
    assert found.difference is not None
    assert found.difference.params["cap"] > 1000


@pytest.mark.parametrize("name", ["mps", "argmax"])
def test_right_folds_that_agree_are_not_refuted_by_round_off(name):
    """Sums in the other order differ in floats, never in the exact reals."""
    loop = thm3.parse_file(SAMPLES_DIR / f"{name}.py")
    found = search_difference(loop, {}, time.monotonic() + 1.5)
    assert found.difference is None, found.difference.describe()
    assert found.exact > 100


@pytest.mark.slow
@pytest.mark.parametrize("name", ["logsumexp", "online_softmax_values", "flash_attention", "polynomial",
                                  "ema_lifted", "mean", "top2"])
def test_sample_right_folds_have_no_difference(name):
    loop = thm3.parse_file(SAMPLES_DIR / f"{name}.py")
    found = search_difference(loop, {}, time.monotonic() + 20)
    assert found.difference is None, found.difference.describe()


def test_past_the_exact_budget_a_difference_is_shown_in_floats(monkeypatch):
    """Past the exact comparison's budget the floats decide where they are far apart, and
    the difference names the list (this path raised NameError before 2026-12-02)."""
    import thm3.analysis.bird as bird
    monkeypatch.setattr(bird, "_EXACT_SECONDS", -1.0)
    a = analyze("""class State(NamedTuple):
    s: Real = 0

def left(acc: State, x: Real) -> State:
    return State(acc.s + x)

def right(x: Real, acc: State) -> State:
    return State(2 * x + acc.s)
""")
    assert a.proofs["bird"] == "failed", a.bird_detail
    assert "differ on [" in a.bird_detail and "right gives" in a.bird_detail, a.bird_detail
