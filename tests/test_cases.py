"""Laws by cases on a loop parameter (thm3/prove/cases.py), and the base case of the
invariants over every parameter value (thm3.analysis.invariants.initially)."""
from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pytest

import thm3
from thm3.analysis.invariants import infer, initially
from thm3.ir import Expr, Op, Type, const, var
from thm3.prove.cases import split_atoms
from thm3.prove.combine import LAWS, prove_combine
from thm3.prove.laws import Setting
from thm3.semantics.evaluate import PYTHON, evaluate
from thm3.semantics.samples import fold_left, make_triples

CORPUS = Path(__file__).resolve().parents[1] / "bench" / "corpus"


def _prove(loop, combine, cases):
    triples = make_triples(loop)
    inv, _ = infer(loop, triples, time.monotonic() + 10)
    return prove_combine(loop, Setting(loop, inv), combine, triples, time.monotonic() + 30, cases=cases)


@pytest.mark.parametrize("name, param", [("clamp_any_cap", "cap"), ("count_until_k", "K"),
                                         ("capped_hits_flag", "C")])
def test_a_clamp_of_either_sign_is_proved_by_cases_only(name, param):
    """No one set of invariants holds for every value of the cap; on each side of a split
    one does.  Without the split the laws stay "tested"; with it every law is proved, and
    the detail names the case and its invariants."""
    a = thm3.analyze(CORPUS / f"{name}.py", timeout=30)
    assert a.verdict == "homomorphism", a.reason
    assert all(a.proofs[k] == "proved" for k in LAWS)
    assert all(a.law_details[k].startswith("by cases on the loop parameter: where ") for k in LAWS), a.law_details
    assert param in a.law_details["associativity"]
    statuses, _, _ = _prove(a.loop, a.combine_fn, cases=False)
    assert not all(statuses[k] == "proved" for k in LAWS), statuses
    statuses, _, _ = _prove(a.loop, a.combine_fn, cases=True)
    assert all(statuses[k] == "proved" for k in LAWS)


def test_the_combine_proved_by_cases_is_the_folds_at_the_boundary():
    """C = 0, where the flag means "an element came" and no hit count reaches a cap, is a
    case of its own; the combine proved by cases agrees with the fold there and on both
    sides, every split of every list over a few small Ints."""
    import itertools
    a = thm3.analyze(CORPUS / "capped_hits_flag.py", timeout=30)
    assert a.verdict == "homomorphism"
    loop = a.loop
    for c in (-2, 0, 1, 3):
        for n in range(4):
            for xs in itertools.product((-1, 0, 1, 2), repeat=n):
                xs = [(x,) for x in xs]
                whole = fold_left(loop, xs, {"C": c})
                for k in range(n + 1):
                    l, r = fold_left(loop, xs[:k], {"C": c}), fold_left(loop, xs[k:], {"C": c})
                    env = {f"a.{f.name}": v for f, v in zip(loop.fields, l)} | \
                        {f"b.{f.name}": v for f, v in zip(loop.fields, r)} | {"C": c}
                    got = evaluate(list(a.combine_fn.outputs), env, PYTHON)
                    assert [int(v) for v in got] == [int(v) for v in whole], (c, xs, k, got, whole)


def test_a_parameter_fact_holds_at_init_for_every_parameter_or_is_dropped():
    """hit == (s >= C) holds at init (s = 0, hit = False) only where C > 0: the samples
    need not meet C <= 0, so Houdini's base case is asked of Z3 over the parameters.  With
    an assert C >= 1 it is kept; a fact over the fields alone is kept as before."""
    loop = thm3.parse_file(CORPUS / "capped_hits_flag.py")
    fact = Expr(Op.EQ, Type.BOOL, (var("acc.hit", Type.BOOL),
                                   Expr(Op.GE, Type.BOOL, (var("acc.s", Type.INT), var("C", Type.INT)))))
    plain = Expr(Op.GE, Type.BOOL, (var("acc.s", Type.INT), const(0)))
    assert initially(loop, [fact, plain]) == [plain]
    assumed = replace(loop, preconditions=(Expr(Op.GE, Type.BOOL, (var("C", Type.INT), const(1))),))
    assert initially(assumed, [fact, plain]) == [fact, plain]


def test_split_atoms_compare_each_parameter_with_the_values_it_switches_at():
    loop = thm3.parse_file(CORPUS / "clamp_any_cap.py")
    atoms = [repr(a) for a in split_atoms(loop)]
    assert atoms[:2] == ["cap >= 0.0", "cap > 0.0"], atoms
    assert split_atoms(thm3.parse_file(CORPUS / "semiring_viterbi3_matrix.py")) == []
