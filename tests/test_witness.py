"""The witness search: every loop of the catalog without a combine over its state gets a
witness, fast, that folding the lists again confirms; every homomorphism gets none.

The re-check folds with `thm3.semantics.samples.fold_left`, not with the search's own batched
folds, so a witness stands on the reference interpreter's word."""
from __future__ import annotations

import time

import numpy as np
import pytest
from catalog import HOMOMORPHISMS, NOT_HOMOMORPHISMS, SAMPLES_DIR

import thm3
from thm3 import parse_file, parse_source
from thm3.ir import Type
from thm3.semantics.equality import states_close
from thm3.semantics.samples import fold_left
from thm3.analysis.witness import Witness, check_witness, find_witness, states_far, to_elements

# y' = a * y + b over (a, b) pairs: no combine over y alone (the composed map needs the
# product of the a's); two element parameters, so elements are lists.
LINEAR_RECURRENCE = '''"""Linear recurrence y' = a * y + b, keeping y only."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    y: Real = 0     # the value so far


def left(acc: State, a: Real, b: Real) -> State:
    return State(a * acc.y + b)
'''

# A Bool element: whether the list ends with a run of at least two True.
TWO_AT_END = '''"""Two at the end: whether the last two elements are both True."""
from typing import NamedTuple
from thm3.lang import Bool


class State(NamedTuple):
    prev: Bool = False  # the last element was True
    both: Bool = False  # the last two were True


def left(acc: State, x: Bool) -> State:
    return State(x, acc.prev and x)
'''


def _params(loop, w: Witness) -> dict:
    out = {}
    for d in loop.params:
        v = w.params[d.name]
        out[d.name] = np.asarray(v, dtype=np.float64) if d.type is Type.VEC else v
    return out


def _recheck(loop, w: Witness) -> None:
    """h(xs1) == h(xs2) and h(ys + xs1) != h(ys + xs2), folded by the reference fold."""
    assert w.side == "right"
    params = _params(loop, w)
    xs1, xs2, ys = (to_elements(loop, xs) for xs in (w.xs1, w.xs2, w.ys))
    assert ys, "a witness needs a non-empty prefix"
    assert states_close(fold_left(loop, xs1, params, dim=2), fold_left(loop, xs2, params, dim=2))
    assert states_far(fold_left(loop, ys + xs1, params, dim=2), fold_left(loop, ys + xs2, params, dim=2))


@pytest.mark.parametrize("sample", NOT_HOMOMORPHISMS, ids=lambda s: s.name)
def test_not_homomorphism_has_witness(sample):
    loop = parse_file(sample.path)
    t0 = time.monotonic()
    w = find_witness(loop, timeout=10)      # what is found, not how fast: a loaded machine takes seconds
    elapsed = time.monotonic() - t0
    assert w is not None, sample.name
    assert elapsed < 1.0, f"{sample.name}: {elapsed:.2f} s"
    _recheck(loop, w)
    assert check_witness(loop, w)
    # one element parameter: elements are plain numbers
    assert all(isinstance(x, (int, float, bool)) for x in w.xs1 + w.xs2 + w.ys)


@pytest.mark.parametrize("sample", HOMOMORPHISMS, ids=lambda s: s.name)
def test_homomorphism_has_none(sample):
    loop = parse_file(sample.path)
    t0 = time.monotonic()
    assert find_witness(loop, timeout=1.0) is None, sample.name
    assert time.monotonic() - t0 < 1.5


def test_witness_is_shortest_on_mts():
    # [] and [-1] both have best tail 0; the prefix [1] tells them apart.
    w = find_witness(parse_file(SAMPLES_DIR / "mts.py"))
    assert (w.xs1, w.xs2, w.ys) == ([], [-1.0], [1.0])
    assert "h([]) == h([-1])" in w.describe()


def test_several_element_parameters_give_lists():
    loop = parse_source(LINEAR_RECURRENCE)
    w = find_witness(loop, timeout=10)      # what is found, not how fast: a loaded machine takes seconds
    assert w is not None
    assert all(isinstance(e, list) and len(e) == 2 for e in w.xs1 + w.xs2 + w.ys)
    _recheck(loop, w)


def test_bool_elements():
    loop = parse_source(TWO_AT_END)
    w = find_witness(loop, timeout=10)      # what is found, not how fast: a loaded machine takes seconds
    assert w is not None
    _recheck(loop, w)


def test_parameters_are_recorded():
    # Horner's rule is a sum for t = 1: the witness must use another t, and say which.
    w = find_witness(parse_file(SAMPLES_DIR / "horner.py"))
    assert w is not None and w.params["t"] != 1


def test_check_witness_refuses_a_non_witness():
    loop = parse_file(SAMPLES_DIR / "mts.py")
    assert not check_witness(loop, Witness([], [1.0], [1.0]))      # h differs already
    assert not check_witness(loop, Witness([], [-1.0], [-1.0]))     # the prefix does not tell


# -- witnesses are exact: the values that make the loop's equations hold, folded exactly ----

def _affine(c: str, m: str, init: str) -> str:
    return f'''"""Affine: v' = {c} + {m} x, forgetting v."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    u: Real = {init}


def left(acc: State, x: Real) -> State:
    return State({c} + x * {m})
'''


SQUARE = '''"""v' = x * x - 1 from v = 1: h([]) == h([x]) only where x * x == 2."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    u: Real = 1


def left(acc: State, x: Real) -> State:
    return State(x * x - 1)
'''


def _oracle_check(loop, w: Witness) -> str:
    from fuzz.oracle import check_witness as oracle_check
    return oracle_check(loop, [w.xs1, w.xs2, w.ys, w.side], dict(w.params))


@pytest.mark.parametrize("seed", [102653, 102846])
def test_fuzz_seeds_get_an_exact_witness(seed):
    """v' = 3 + 3x (from v = 1) and v' = 3x + 2 (from v = 0): h([]) == h([-2/3]).  The
    float -0.6666666666666666 folds to 1 + 2**-53 exactly, so the witness must carry -2/3
    (the fuzzer's exact oracle rejected the float one)."""
    from fractions import Fraction
    from fuzz.generate import from_seed
    case = from_seed(seed)
    a = thm3.analyze_source(case.source, lift=False)
    assert a.verdict == "not-homomorphism"
    xs1, xs2, ys, side = a.witness
    assert Fraction(-2, 3) in xs1 + xs2
    assert _oracle_check(a.loop, Witness(xs1, xs2, ys, side, a.witness_params)) == ""
    assert check_witness(a.loop, Witness(xs1, xs2, ys, side, a.witness_params))
    # the float witness is no witness in the reals
    rounded = Witness([float(v) for v in xs1], [float(v) for v in xs2], [float(v) for v in ys])
    assert not check_witness(a.loop, rounded)
    assert "-2/3" in a.reason


@pytest.mark.parametrize("c, m, init, root", [("3", "7", "0", (-3, 7)), ("3", "7", "1", (-2, 7)),
                                               ("1", "10", "0", (-1, 10))])
def test_non_dyadic_root_gives_an_exact_witness(c, m, init, root):
    from fractions import Fraction
    loop = parse_source(_affine(c, m, init))
    w = find_witness(loop, timeout=10)      # what is found, not how fast: a loaded machine takes seconds
    assert w is not None
    assert Fraction(*root) in w.xs1 + w.xs2
    assert check_witness(loop, w) and _oracle_check(loop, w) == ""
    assert not check_witness(loop, Witness([float(v) for v in w.xs1], [float(v) for v in w.xs2],
                                           [float(v) for v in w.ys]))


def test_irrational_root_gives_an_exact_algebraic_witness():
    """Every witness of v' = x * x - 1 pairs [] with a list ending in ±sqrt(2): no
    rational witness exists, so the witness carries sqrt(2) itself, folded exactly."""
    import sympy as sp
    loop = parse_source(SQUARE)
    w = find_witness(loop, timeout=10)      # what is found, not how fast: a loaded machine takes seconds
    assert w is not None
    assert any(isinstance(v, sp.Basic) and abs(v) == sp.sqrt(2) for v in w.xs1 + w.xs2)
    assert check_witness(loop, w) and _oracle_check(loop, w) == ""
    assert all(isinstance(float(v), float) for v in w.xs1 + w.xs2 + w.ys)     # usable as numbers
    near = Witness([float(v) for v in w.xs1], [float(v) for v in w.xs2], [float(v) for v in w.ys])
    assert not check_witness(loop, near)
    assert _oracle_check(loop, near) != ""


def test_exact_witness_in_json_and_report():
    import json
    from thm3.semantics.reals import parse
    a = thm3.analyze_source(SQUARE, lift=False)
    out = json.loads(json.dumps(a.to_json()))
    xs1, xs2, ys, side = out["witness"]
    assert all(isinstance(v, float) for v in xs1 + xs2 + ys)           # the spec: numbers
    exact = out["witness_exact"]
    assert exact[3] == side and "sqrt(2)" in " ".join(exact[0] + exact[1])
    back = [[parse(v) for v in xs] for xs in exact[:3]]
    assert check_witness(a.loop, Witness(*back, exact[3]))
    assert "sqrt(2)" in a.report()


def test_check_witness_uses_the_reals():
    """h(xs1) == h(xs2) must hold exactly, and a list that divides by zero has no state."""
    from fractions import Fraction
    loop = parse_source(_affine("3", "3", "1"))
    assert check_witness(loop, Witness([], [Fraction(-2, 3)], [Fraction(-7, 6)]))
    assert not check_witness(loop, Witness([], [-0.6666666666666666], [Fraction(-7, 6)]))
    inv = parse_source(_affine("3", "3", "1").replace("3 + x * 3", "-1 / x"))
    assert not check_witness(inv, Witness([], [0.0], [1.0]))


EMA_WITH_LENGTH = '''"""an EMA whose rate comes with each element, and the length"""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    y: Real = 0
    n: Int = 0


def left(acc: State, x: Real, alpha: Real) -> State:
    assert 0 < alpha < 1
    return State(alpha * acc.y + (1 - alpha) * x, acc.n + 1)
'''


def test_two_values_inside_an_open_interval_tell_a_product_from_a_length():
    """With one value of alpha in (0, 1), alpha**n is a function of the length n and
    (y, n) would look like a homomorphism; a second value in the interval gives the
    witness (and the lifting search, which proves each candidate, skips this one)."""
    import sympy as sp
    from thm3.semantics.critical import around_exact
    inside = [v for v in around_exact([sp.Integer(0), sp.Integer(1)], integer=False) if 0 < v < 1]
    assert len(inside) >= 2
    loop = parse_source(EMA_WITH_LENGTH)
    w = find_witness(loop, timeout=5.0)
    assert w is not None and check_witness(loop, w)
    alphas = {e[1] for xs in (w.xs1, w.xs2, w.ys) for e in to_elements(loop, xs)}
    assert len(alphas) >= 2, w.describe()


MIN_PLUS_THREE = '''"""u' = min(x, 0) + 3: the state is back at its initial 0 for x = -3 only"""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    u: Real = 0


def left(acc: State, x: Real) -> State:
    return State((min(x, 0) + 3))
'''


def test_a_selection_inside_a_term_gives_its_arms_roots():
    """Fuzzer seed 400266: min(x, 0) + 3 equals the initial 0 at x = -3, which only the
    arm x + 3 of the selection inside the sum shows; the witness search needs that value
    (h([]) == h([-3]) but h([0]) != h([0, -3]))."""
    from thm3.semantics.critical import element_values
    loop = parse_source(MIN_PLUS_THREE)
    assert -3.0 in element_values(loop)["x"]
    w = find_witness(loop, timeout=5.0)
    assert w is not None and check_witness(loop, w), w


def test_two_values_past_the_last_comparison_find_a_witness_that_one_cannot():
    """A bucket that charges two tokens for a frame over 64 bytes: the witness needs two
    different large frames ([65, 67] against [67, 65], after [65] only the first is sent).
    The critical domain has a second value past each end of its comparisons; with 65
    alone above 64 the search found nothing and the finite route's fit on such lists read
    the bytes b sends from a short bucket as b's sum less 65."""
    from pathlib import Path

    from thm3.analysis.witness import critical_domain
    from thm3.semantics import critical
    path = Path(__file__).resolve().parents[1] / "bench" / "corpus" / "finite_frame_bucket_bytes.py"
    loop = parse_file(str(path))
    values = critical.as_floats(critical.exact_element_values(loop, {}, time.monotonic() + 10))
    dom = [int(t[0]) for t in critical_domain(loop, {}, values)]
    assert len([v for v in dom if v > 64]) >= 2
    w = find_witness(loop, timeout=5)
    assert w is not None and check_witness(loop, w)
    assert thm3.analyze(str(path), timeout=30).verdict == "not-homomorphism"


def test_a_witness_that_needs_a_negative_parameter_is_found_by_the_second_search():
    """max(k * v, x) with k of any sign: the first search tries k = 2 and k = 0.5, for which
    the step is a homomorphism; after no combine is found, the second tries more values and
    finds k = -1's witness, which the folds confirm; the lift's search then starts from it."""
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "bench" / "corpus" / "semiring_signed_feedback.py"
    a = thm3.analyze(path, timeout=30)
    assert str(a.verdict) == "not-homomorphism", a.reason
    assert float(a.witness_params["k"]) < 0
    names = [s.name for s in a.steps]
    assert names.index("witness, more parameter values") > names.index("synthesize")
    (lifting,) = [s for s in a.steps if s.name == "lift"]
    assert "nothing to lift" not in lifting.detail and "witness" in lifting.detail, lifting.detail
    assert [s.status for s in a.steps if s.name == "witness"][0] == "none"


def test_the_second_witness_search_does_not_run_where_a_combine_was_found():
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "bench" / "corpus" / "semiring_peak_decay_param.py"
    a = thm3.analyze(path, timeout=30)
    assert str(a.verdict) == "homomorphism"
    assert "witness, more parameter values" not in [s.name for s in a.steps]


PHASED_DECAY = '''"""A floor that decays by 0.5 and 0.9 on alternate elements."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    q: Int = 0
    v: Real = 1


def left(acc: State, x: Real) -> State:
    c = 0.5 if acc.q == 0 else 0.9
    return State((acc.q + 1) % 2, min(acc.v * c, abs(x)))
'''


def test_the_switching_values_at_a_reached_state_decide_the_control():
    """At q = 1, v = 1/2 the control picks 0.9: min(acc.v * c, abs(x)) switches at
    |x| = 9/20, which no value at the initial state (|x| = 1/2) gives."""
    import sympy as sp
    from fractions import Fraction
    from thm3.semantics import critical
    loop = parse_source(PHASED_DECAY)
    at_start = critical.exact_roots(loop, {})["x"]
    reached = critical.exact_roots(loop, {}, state=(1, Fraction(1, 2)))["x"]
    assert sp.Rational(9, 20) in reached and sp.Rational(-9, 20) in reached
    assert sp.Rational(9, 20) not in at_start


def test_a_witness_between_two_decayed_values_is_found_after_no_combine():
    """The witness needs an x between two decayed values of the floor (h([x]) equals a
    three-element list's state, and one more element at the other phase tells them apart):
    the first two domains hold none, the third (values at reached states) does, the exact
    folds confirm it, and the analysis says so only after the synthesis found no combine."""
    from thm3.analysis.witness import reachable_values
    from thm3.semantics import critical
    loop = parse_source(PHASED_DECAY)
    assert find_witness(loop, timeout=5) is None
    values = reachable_values(loop, {}, critical.exact_element_values(loop, {}), time.monotonic() + 10)
    assert values and len(values["x"]) > len(critical.exact_element_values(loop, {})["x"])
    w = find_witness(loop, timeout=5, reached=True)
    assert w is not None and check_witness(loop, w), w
    a = thm3.analyze_source(PHASED_DECAY, timeout=30, lift=False)
    assert str(a.verdict) == "not-homomorphism", a.reason
    names = [s.name for s in a.steps]
    assert names.index("witness, values at reached states") > names.index("synthesize")
    assert [s.status for s in a.steps if s.name == "witness"][0] == "none"


def test_the_reached_states_search_does_not_run_where_an_answer_was_found():
    for name in ("mps", "bad_right"):
        a = thm3.analyze(SAMPLES_DIR / f"{name}.py", timeout=30, lift=False)
        assert "witness, values at reached states" not in [s.name for s in a.steps], name


_MOVED = '''"""{doc}"""
from typing import NamedTuple
from thm3.lang import Bool, Int, Real, inf


class State(NamedTuple):
    {control}
    v: Real = {v0}


def left(acc: State, x: Real) -> State:
    c = {c}
    return State({next_control}, {value})
'''


@pytest.mark.parametrize("doc, control, v0, c, next_control, value", [
    ("affine growth under max, three phases", "q: Int = 0", "0", "1.5 if acc.q == 0 else 2.0",
     "(acc.q + 1) % 3", "max(acc.v * c + 1, x)"),
    ("decay under min, the factor by a count mod 3", "n: Int = 0", "1", "0.5 if acc.n % 3 == 0 else 0.8",
     "acc.n + 1", "min(acc.v * c, abs(x))"),
    ("decay under min from inf, the element offset", "q: Int = 0", "inf", "0.25 if acc.q == 0 else 0.6",
     "(acc.q + 1) % 2", "min(acc.v * c, abs(x) + 2)"),
])
def test_the_reached_states_are_followed_three_elements_deep(doc, control, v0, c, next_control, value):
    """Each witness needs a threshold two or three decays deep (16/125 for the count mod
    3), or a state far from the start (a floor at abs(x) + 2 decayed by 0.6 switches only
    above 10/3): the values at the states of one- and two-element lists over the critical
    values alone hold none.  Each is confirmed in the exact reals."""
    loop = parse_source(_MOVED.format(doc=doc, control=control, v0=v0, c=c, next_control=next_control,
                                      value=value))
    w = find_witness(loop, timeout=10, reached=True)
    assert w is not None and check_witness(loop, w), doc
