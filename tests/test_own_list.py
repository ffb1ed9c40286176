"""The route "own list" (issue 21, item 2: bigger states): a state that is its own list
(the k smallest or largest, duplicates counted or not, as an if-chain or a min/max
insertion network) gets combine(a, b) = foldl(left, a, b's fields), proved by the
commuting-steps theorem of `thm3.prove.commuting` for k = 3 .. 8."""
from __future__ import annotations

import time

import pytest

import thm3
import thm3.synth as synth
from thm3.analysis.invariants import infer
from thm3.prove import commuting
from thm3.prove.combine import prove_combine
from thm3.prove.laws import Setting
from thm3.semantics.samples import make_triples
from thm3.synth import inverse

from test_synth_routes import CORPUS, _alone, _proved

HEAD = "from typing import NamedTuple\nfrom thm3.lang import Real, inf\n\nclass State(NamedTuple):\n"


def network(k: int, largest: bool = False) -> str:
    """The k smallest (largest) as an insertion network: m_i = min(m_i, max(m_{i-1}, x))."""
    lo, hi, init = ("max", "min", "-inf") if largest else ("min", "max", "inf")
    text = HEAD + "".join(f"    m{i}: Real = {init}\n" for i in range(1, k + 1))
    text += f"\ndef left(acc: State, x: Real) -> State:\n    m1 = {lo}(acc.m1, x)\n"
    text += "".join(f"    m{i} = {lo}(acc.m{i}, {hi}(acc.m{i - 1}, x))\n" for i in range(2, k + 1))
    return text + "    return State(" + ", ".join(f"m{i}" for i in range(1, k + 1)) + ")\n"


def chain(k: int, distinct: bool = False, largest: bool = False) -> str:
    """The k smallest (largest) as an if-chain of insertions; `distinct` keeps a value once."""
    lt, init = (">", "-inf") if largest else ("<", "inf")
    names = [f"m{i}" for i in range(1, k + 1)]
    text = HEAD + "".join(f"    {n}: Real = {init}\n" for n in names)
    text += "\ndef left(acc: State, x: Real) -> State:\n"
    for i in range(k):
        new = [f"acc.{n}" for n in names]
        new = new[:i] + ["x"] + new[i:-1]
        cond = f"x {lt} acc.{names[i]}"
        if distinct and i:
            cond = f"acc.{names[i - 1]} {lt} x and {cond}"
        text += f"    {'if' if i == 0 else 'elif'} {cond}:\n        return State({', '.join(new)})\n"
    return text + "    else:\n        return acc\n"


WINDOW = HEAD.replace("Real, inf", "Real") + '''    a: Real = 0
    b: Real = 0
    c: Real = 0

def left(acc: State, x: Real) -> State:
    return State(acc.b, acc.c, x)
'''


def _setting(loop):
    triples = list(make_triples(loop))
    inv, _ = infer(loop, triples, time.monotonic() + 10)
    return Setting(loop, inv), triples


FAMILIES = [("network", 8, False), ("network", 5, True), ("chain", 8, False), ("chain", 3, False),
            ("distinct", 8, False), ("distinct", 6, True)]


@pytest.mark.parametrize("kind, k, largest", FAMILIES, ids=lambda v: str(v))
def test_own_list_alone_proves_k_smallest(tmp_path, kind, k, largest):
    """Before the route: k = 5 as a network had no route at all, and k = 8 in every
    spelling left associativity "tested" (the three-state law over an 8-fold unrolled
    step runs out of time)."""
    text = network(k, largest) if kind == "network" else chain(k, kind == "distinct", largest)
    path = tmp_path / f"{kind}{k}.py"
    path.write_text(text)
    t0 = time.monotonic()
    got = _alone("own list", path, 30)
    assert _proved(got), got.tried()
    assert "own list" in got.methods["m1"]
    assert all("h is a function of the multiset" in d for d in got.details.values()), got.details
    assert time.monotonic() - t0 < 20.0


def test_the_lemmas_hold_for_the_network_and_fail_for_a_window():
    # the last three elements: own list gives the state back, but the steps do not commute
    for text, holds in ((network(4), True), (WINDOW, False)):
        loop = thm3.parse_source(text)
        setting, _ = _setting(loop)
        out = commuting.prove_own_list(setting, ["m1", "m2", "m3", "m4"] if holds else ["a", "b", "c"],
                                       time.monotonic() + 30)
        assert out.proved is holds, out.detail
    assert "left(left(s, x), y) == left(left(s, y), x) not shown" in out.detail


def test_a_window_gets_no_own_list_combine():
    loop = thm3.parse_source(WINDOW)
    _, triples = _setting(loop)
    # it gives the states back, but folding b's fields pads a short b's list with zeros
    fn, _ = inverse.own_list(loop, triples, time.monotonic() + 10)
    assert not synth.agrees(loop, fn, triples)


def test_a_precondition_on_the_element_declines_the_theorem():
    loop = thm3.parse_source(chain(3).replace("-> State:\n", "-> State:\n    assert x >= 0\n", 1))
    setting, triples = _setting(loop)
    assert "precondition" in commuting.prove_own_list(setting, ["m1", "m2", "m3"], time.monotonic() + 10).detail
    fn, _ = inverse.own_list(loop, triples, time.monotonic() + 10)
    statuses, details, _ = prove_combine(loop, setting, fn, triples, time.monotonic() + 30)
    assert not any("multiset" in d for d in details.values()), details      # proved the direct way, if at all


def test_other_states_are_declined_at_once():
    for name in ("mps", "sum"):
        loop = thm3.parse_file(CORPUS.parent.parent / "samples" / f"{name}.py")
        t0 = time.monotonic()
        with pytest.raises(inverse.Failed):
            inverse.own_list(loop, list(make_triples(loop)), time.monotonic() + 10)
        assert time.monotonic() - t0 < 1.0


def test_eight_largest_network_alone():
    got = _alone("own list", CORPUS / "eight_largest_network.py", 30)
    assert _proved(got), got.tried()


@pytest.mark.slow
def test_no_other_route_proves_eight_largest_network():
    loop = thm3.parse_file(CORPUS / "eight_largest_network.py")
    setting, triples = _setting(loop)
    deadline = time.monotonic() + 30
    others = tuple(r for r in synth.ROUTES if r.name != "own list")
    rest = synth.synthesize(loop, triples, deadline=deadline, routes=others,
                            prove=lambda c: prove_combine(loop, setting, c, triples, deadline))
    assert not _proved(rest), rest.tried()


def test_route_comes_first():
    assert synth.ROUTES[0].name == "own list"


# -- runs: the sketch with the state's reversal (thm3.synth.mirror) ----------------------

def test_reversal_of_a_plateau_state_swaps_lead_and_trail():
    from thm3.synth import mirror
    loop = thm3.parse_file(CORPUS / "longest_plateau_lifted.py")
    names = [f.name for f in loop.fields]
    pi = {names[i]: names[j] for i, j in mirror.reversal(loop).items()}
    assert pi == {"best": "best", "lead": "trail", "trail": "lead", "n": "n", "first": "last", "last": "first"}


def test_share_gives_small_holes_their_whole_lists():
    from thm3.synth.sketch import _share
    kept = _share([list(range(10)), list(range(10)), list(range(1000))], 4000)
    assert [len(k) for k in kept] == [10, 10, 40]


@pytest.mark.parametrize("name", ["longest_plateau_lifted", "updown_runs_lifted"])
def test_sketch_alone_proves_runs(name):
    """Before: no sketch completion agreed (a trail's step never reads "the whole right
    part is one run"; on nine fields the cut kept no hole reading b.first)."""
    got = _alone("sketch", CORPUS / f"{name}.py", 30)
    assert _proved(got), got.tried()
    assert any("mirrored" in m for m in got.methods.values()), got.methods


# -- the state as its own list with multiplicities -------------------------------------------

def test_a_list_with_multiplicities_folds_b_values_with_their_counts():
    """The two largest distinct values with their counts: no bounded g(b) (a count is
    unbounded), but folding each of b's values once with `left` and raising its slot's
    count by the rest is the combine, proved."""
    path = CORPUS / "top2_with_counts.py"
    got = _alone("own list", path, 30)
    assert _proved(got), got.tried()
    assert "with their counts (m1, c1), (m2, c2)" in got.methods["m1"]


def test_a_state_of_values_and_counts_that_is_no_multiset_is_declined():
    # a max beside a length and a min beside a count of positives: the fold with counts
    # disagrees with h(xs + ys), so the route says so rather than hand the prover a guess
    loop = thm3.parse_source(HEAD.replace("Real, inf", "Int, Real, inf") + '''    hi: Real = -inf
    n: Int = 0
    lo: Real = inf
    k: Int = 0

def left(acc: State, x: Real) -> State:
    return State(max(acc.hi, x), acc.n + 1, min(acc.lo, x), acc.k + 1 if x > 0 else acc.k)
''')
    _, triples = _setting(loop)
    with pytest.raises(inverse.Failed, match="disagrees"):
        inverse.counted_list(loop, triples, time.monotonic() + 10)
    with pytest.raises(inverse.Failed, match="k >= 2 Real value fields"):
        inverse.counted_list(thm3.parse_source(network(3)), [], time.monotonic() + 10)
