"""States that are products of independent groups of fields (thm3/synth/product.py): the
groups, their loops, the route that synthesizes each group alone, and the proof group by
group."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

import thm3
import thm3.synth as synth
from thm3.analysis.invariants import infer
from thm3.ir import Fn, Op, Type, var, Expr
from thm3.prove.combine import LAWS, prove_combine
from thm3.prove.laws import Setting
from thm3.semantics.samples import make_triples
from thm3.synth import product

CORPUS = Path(__file__).resolve().parents[1] / "bench" / "corpus"


def test_the_groups_are_the_components_of_what_each_update_reads():
    loop = thm3.parse_file(CORPUS / "welford_with_range.py")
    assert product.components(loop) == [("n", "mean", "m2"), ("lo",), ("hi",), ("s",)]
    sub = product.sub_loop(loop, ("n", "mean", "m2"))
    assert sub.field_names == ("n", "mean", "m2") and [n for n, _ in sub.left.inputs] == \
        ["acc.n", "acc.mean", "acc.m2", "x"]
    # a matrix state's rows never read each other (M' = M (x) A), but a row alone is no
    # homomorphism: its combine needs b's other rows
    matrix = thm3.parse_file(CORPUS / "semiring_viterbi3_matrix.py")
    assert product.components(matrix) == [("m00", "m01", "m02"), ("m10", "m11", "m12"), ("m20", "m21", "m22")]
    with pytest.raises(product.Failed, match=r"group \(m00, m01, m02\) is no homomorphism on its own fields"):
        product.synthesize(matrix, time.monotonic() + 10, synth.ROUTES)


def test_only_the_product_route_solves_welford_beside_a_range():
    """Every other route alone ends without a proved combine on the six fields (the
    sketch's space is cut on m2, transport refuses the infinite lo); the product route
    synthesizes each group on its own loop and the whole combine is proved."""
    loop = thm3.parse_file(CORPUS / "welford_with_range.py")
    triples = make_triples(loop)
    inv, _ = infer(loop, triples, time.monotonic() + 10)
    setting = Setting(loop, inv)

    def run(routes, seconds):
        deadline = time.monotonic() + seconds
        return synth.synthesize(loop, triples, deadline=deadline, routes=routes,
                                prove=lambda c: prove_combine(loop, setting, c, triples, deadline))

    got = run((synth.route_named("product"),), 30)
    assert got.route == "product" and all(got.statuses[k] == "proved" for k in LAWS), got.tried()
    others = tuple(r for r in synth.ROUTES if r.name not in ("product", "weak right inverse", "enumeration"))
    alone = run(others, 12)
    assert alone.combine is None or not all(v == "proved" for v in alone.statuses.values()), alone.tried()


def test_a_combine_that_mixes_groups_is_not_split():
    loop = thm3.parse_file(CORPUS / "welford_with_range.py")
    groups = product.components(loop)
    names = tuple((f"{p}.{f.name}", f.type) for p in "ab" for f in loop.fields)
    mixed = Fn(names, tuple(var(f"a.{f}", Type.REAL) for f in loop.field_names[:-1]) +
               (Expr(Op.ADD, Type.REAL, (var("a.s", Type.REAL), var("b.n", Type.REAL))),))
    assert product.split_combine(loop, mixed, groups) is None
    assert product.by_components(loop, mixed, time.monotonic() + 5) is None


# -- lifts of a product state, group by group ---------------------------------------------

def _best_run(xs, keep):
    out = run = 0
    for x in xs:
        run = run + 1 if keep(x) else 0
        out = max(out, run)
    return out


def test_two_independent_runs_lift_group_by_group_past_the_units_of_one_search():
    """Each run needs a flag and its leading run: four fields, more than MAX_ADDED units of
    one search over the whole state; lifted group by group and proved as a whole, the
    combine gives the longest runs of both signs on random splits."""
    import random
    from thm3.lift.search import MAX_ADDED
    from thm3.semantics.samples import fold_left
    # (60 s: each group's search gets a fifth of it; once, in CI, the full tier ran it past
    # the groups' share with 30 s and the whole state's search lifted it by 8 fields instead)
    a = thm3.analyze(CORPUS / "runs_pos_neg.py", timeout=60)
    added = [x.split(":")[0] for x in a.lift_added]
    lift = next((s.detail for s in a.steps if s.name == "lift"), "")
    assert len(added) == 4 > MAX_ADDED and all("lifted on its own" in x for x in a.lift_added), (added, lift)
    lifted = a.lifted_analysis
    assert lifted is not None and str(lifted.verdict) == "homomorphism"
    rng = random.Random(2)
    for _ in range(300):
        xs = [float(rng.choice((-1, 0, 1))) for _ in range(rng.randrange(7))]
        ys = [float(rng.choice((-1, 0, 1))) for _ in range(rng.randrange(7))]
        got = lifted.combine(fold_left(lifted.loop, [(x,) for x in xs], {}),
                             fold_left(lifted.loop, [(y,) for y in ys], {}))
        assert got[1] == _best_run(xs + ys, lambda v: v > 0) and got[3] == _best_run(xs + ys, lambda v: v < 0)


def test_a_field_two_groups_need_is_added_once():
    a = thm3.analyze(CORPUS / "steps_up_down.py", timeout=30)
    assert [x.split(":")[0] for x in a.lift_added] == ["first"], a.lift_added
    assert str(a.lifted_analysis.verdict) == "homomorphism"


RECORDS_AND_RUN = """from typing import NamedTuple
from thm3.lang import Int, Real, inf


class State(NamedTuple):
    m: Real = -inf
    c: Int = 0
    cur: Int = 0
    best: Int = 0


def left(acc: State, x: Real) -> State:
    cur = acc.cur + 1 if x > 0 else 0
    return State(max(acc.m, x), acc.c + 1 if x > acc.m else acc.c, cur, max(acc.best, cur))
"""


def test_a_group_with_no_lift_ends_the_lift_by_components():
    """The records' count (no bounded lift) beside a run (lifted by a flag and a lead):
    the group with no lift ends the product lift, and says so."""
    from thm3.lift.search import _by_components
    from thm3.lift.sets import LiftSearch
    from thm3.analysis.witness import find_witnesses
    loop = thm3.parse_source(RECORDS_AND_RUN)
    assert product.components(loop) == [("m", "c"), ("cur", "best")]
    proved = []
    search = LiftSearch(loop, find_witnesses(loop, timeout=2.0, limit=4), time.monotonic() + 20,
                         lambda lifted: proved.append(lifted.field_names) or None)
    assert _by_components(search, time.monotonic() + 20) is None
    assert any("group (m, c) on its own: no lift" in r for r in search.ruled_out), search.ruled_out
    assert all(names[:4] == ("m", "c") for names in proved)          # only the first group was tried
