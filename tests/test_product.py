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
