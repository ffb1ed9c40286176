"""Preconditions that rejection sampling cannot meet (issue 22): a parameter pinned by an
equality, a conjunction of element and parameter asserts in one statement, an element
whose only values are irrational.  Values come from Z3's models of the asserts; asserts
that no value meets answer "unknown" with that reason, never a traceback."""
from __future__ import annotations

import math

import numpy as np
import pytest

import thm3
from thm3.semantics.samples import Domain, PreconditionsUnmet, random_arrays, solver_models

HEAD = '''"""{title}"""
from typing import NamedTuple
from thm3.lang import Real

{params}

class State(NamedTuple):
    s: Real = 0


def left(acc: State, x: Real) -> State:
    assert {assertion}
    return State({step})
'''


def _source(assertion: str, step: str, params: str = "") -> str:
    return HEAD.format(title=assertion, params=params, assertion=assertion, step=step)


PINNED = _source("c == 1", "acc.s + c * x", "c: Real")
CONJUNCTION = _source("x >= 0 and cap > 0", "min(acc.s + x, cap)", "cap: Real")
IRRATIONAL = _source("x * x == 2", "acc.s + x")
NONE_MEETS = _source("x > 1 and x < 0", "acc.s + x")


@pytest.mark.parametrize("text, verdict", [(PINNED, "homomorphism"), (CONJUNCTION, "homomorphism"),
                                           (IRRATIONAL, "homomorphism")], ids=["pinned", "conjunction", "irrational"])
def test_asserts_sampling_cannot_meet_are_met_by_models(text, verdict):
    a = thm3.analyze_source(text, timeout=30, lift=False)
    assert a.verdict == verdict, a.reason


def test_drawn_values_meet_the_asserts():
    rng = np.random.default_rng(0)
    pinned = Domain(thm3.parse_source(PINNED))
    assert all(pinned.params(rng, small=False)["c"] == 1 for _ in range(5))
    conj = Domain(thm3.parse_source(CONJUNCTION))
    for _ in range(5):
        p = conj.params(rng, small=False)
        assert p["cap"] > 0
        assert all(e[0] >= 0 for e in conj.random_list(rng, p, 20, small=False))
    root = Domain(thm3.parse_source(IRRATIONAL))
    xs = [e[0] for e in root.random_list(rng, {}, 40)]
    assert all(math.isclose(abs(x), math.sqrt(2)) for x in xs)
    assert {math.copysign(1, x) for x in xs} == {1.0, -1.0}       # blocking clauses: both roots
    arrays, _ = random_arrays(thm3.parse_source(IRRATIONAL), 100, 3, rng)
    assert np.allclose(np.abs(arrays[0]), math.sqrt(2))


def test_models_are_distinct_and_exact_where_rational():
    loop = thm3.parse_source(_source("x * 3 == 1 or x == 2", "acc.s + x"))
    models = solver_models(loop, {}, 4, np.random.default_rng(1))
    assert sorted(e[0] for _, e in models) == [1 / 3, 2.0]


def test_asserts_no_value_meets_answer_unknown():
    with pytest.raises(PreconditionsUnmet):
        Domain(thm3.parse_source(NONE_MEETS)).random_list(np.random.default_rng(0), {}, 3)
    a = thm3.analyze_source(NONE_MEETS, timeout=10)
    assert a.verdict == "unknown"
    assert "could not draw elements satisfying the preconditions" in a.reason
    assert a.combine is None


def test_a_domain_asks_z3_for_parameters_once(monkeypatch):
    """A parameter pinned to a value sampling never draws: one model search per domain,
    not one per setting the witness search asks for (that cost 16 s a loop)."""
    import thm3.semantics.samples as samples
    from thm3.analysis.witness import parameter_settings
    calls = []
    real = samples.solver_models
    monkeypatch.setattr(samples, "solver_models", lambda *a, **k: calls.append(1) or real(*a, **k))
    loop = thm3.parse_source(_source("c == -3.25", "acc.s + c * x", "c: Real"))
    settings = parameter_settings(loop, 3, np.random.default_rng(0))
    assert settings and all(float(p["c"]) == -3.25 for p in settings)
    assert len(calls) <= 1


def _with_right(text: str, right_step: str) -> str:
    return text + f'''

def right(x: Real, acc: State) -> State:
    return State({right_step})
'''


def test_irrational_models_are_exact_where_the_check_is():
    """Z3's model of `x * x == 2` is sqrt(2) itself for the exact checks, the nearest
    float for the float ones."""
    import sympy as sp
    loop = thm3.parse_source(IRRATIONAL)
    got = solver_models(loop, {}, 4, np.random.default_rng(0), exact=True)
    exact = {ex[0] for _, _, ex in got}
    assert exact == {sp.sqrt(2), -sp.sqrt(2)}, got
    assert all(math.isclose(e[0], float(ex[0]), rel_tol=1e-15) for _, e, ex in got)


def test_a_right_fold_that_differs_only_at_an_irrational_model_fails_bird():
    """s + x * x against s + x: on the only elements that meet the assert (±sqrt(2)) the
    folds differ; before, no element met it in floats and 0 lists made "bounded"."""
    a = thm3.analyze_source(_with_right(IRRATIONAL, "acc.s + x * x"), timeout=30, lift=False)
    assert a.proofs["bird"] == "failed", a.bird_detail
    assert "sqrt(2)" in a.bird_detail and "right gives (2)" in a.bird_detail, a.bird_detail


def test_a_right_fold_that_agrees_on_an_irrational_model_is_not_failed():
    a = thm3.analyze_source(_with_right(IRRATIONAL, "x + acc.s"), timeout=30, lift=False)
    assert a.proofs["bird"] in ("proved", "bounded"), a.bird_detail


def test_a_search_that_compares_no_list_is_never_bounded(monkeypatch):
    """Without the models (as before), no element meets `x * x == 2` in floats: the
    search compares nothing, and says so rather than "bounded"."""
    import thm3.analysis.bird as bird
    monkeypatch.setattr(bird, "model_elements", lambda *args: [])
    a = thm3.analyze_source(_with_right(IRRATIONAL, "acc.s + x * x"), timeout=30, lift=False)
    assert a.proofs["bird"] == "unproved", a.bird_detail
    assert "no list was compared" in a.bird_detail
