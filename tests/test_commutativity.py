"""The commutativity law (issue 25): combine(a, b) == combine(b, a), "proved" by the
prover, "failed" with two reachable states, or "unknown"; it says which reductions may
reorder partial states and never enters the verdict."""
from __future__ import annotations

import time

import pytest

import thm3
from thm3.ir import Fn, var
from thm3.ir.core import substitute
from thm3.prove.combine import commutativity, prove_combine
from thm3.status import Status


def _analysis(name):
    return thm3.analyze(thm3.sample_path(name), lift=False)


@pytest.mark.parametrize("name", ["mps", "affine", "last"])
def test_a_combine_that_keeps_list_order_fails_with_two_states(name):
    a = _analysis(name)
    assert a.verdict == "homomorphism"                  # not part of the verdict
    assert a.proofs["commutativity"] == "failed", a.law_details["commutativity"]
    detail = a.law_details["commutativity"]
    assert "on a=(" in detail and ", b=(" in detail, detail
    assert "order-preserving only" in str(a.report())


@pytest.mark.parametrize("name", ["sum", "max", "welford", "online_softmax_values"])
def test_a_commutative_combine_is_proved(name):
    a = _analysis(name)
    assert a.verdict == "homomorphism"
    assert a.proofs["commutativity"] == "proved", a.law_details["commutativity"]
    assert "any order" in str(a.report())
    assert a.to_json()["proofs"]["commutativity"] == "proved"


def _work(a):
    """The proof setting (the loop and its proved invariants) and the sampled lists, as
    the analysis had them."""
    from thm3.prove.laws import Setting
    from thm3.semantics.samples import make_triples
    return Setting(a.loop, a.invariant_exprs), make_triples(a.loop)


def _swapped(loop, combine: Fn) -> Fn:
    """The combine with its operands exchanged: combine'(a, b) = combine(b, a)."""
    names = [f.name for f in loop.fields]
    types = dict(combine.inputs)
    swap = {f"a.{n}": var(f"b.{n}", types[f"b.{n}"]) for n in names} | {
        f"b.{n}": var(f"a.{n}", types[f"a.{n}"]) for n in names}
    return Fn(combine.inputs, tuple(substitute(list(combine.outputs), swap)))


@pytest.mark.parametrize("name", ["mps", "affine", "last"])
def test_the_swapped_operands_of_a_non_commutative_combine_are_refuted(name):
    a = _analysis(name)
    mutant = _swapped(a.loop, a.combine_fn)
    setting, samples = _work(a)
    statuses, details, _ = prove_combine(a.loop, setting, mutant, samples, time.monotonic() + 20)
    assert statuses["homomorphism"] == Status.FAILED, details


@pytest.mark.parametrize("name", ["sum", "welford"])
def test_the_swapped_operands_of_a_commutative_combine_are_the_same_combine(name):
    a = _analysis(name)
    mutant = _swapped(a.loop, a.combine_fn)
    setting, samples = _work(a)
    status, detail = commutativity(a.loop, setting, mutant, samples, time.monotonic() + 20)
    assert status == Status.PROVED, detail
    statuses, details, _ = prove_combine(a.loop, setting, mutant, samples, time.monotonic() + 20)
    assert all(s == Status.PROVED for s in statuses.values()), details


def test_a_non_homomorphism_has_no_commutativity_law():
    a = _analysis("kadane")
    assert a.verdict == "not-homomorphism" and "commutativity" not in a.proofs


def test_a_candidate_that_lists_refute_never_reaches_the_prover(monkeypatch):
    """mps with its operands swapped fails the homomorphism law on folded lists: that
    costs milliseconds, where each law's prover would spend seconds first."""
    import thm3.prove.laws as laws
    a = _analysis("mps")
    mutant = _swapped(a.loop, a.combine_fn)

    def no_prover(*args, **kwargs):
        raise AssertionError("the prover was called on a candidate that lists refute")

    for name in ("prove_identity", "prove_associativity", "prove_homomorphism", "prove_step_law"):
        monkeypatch.setattr(laws, name, no_prover)
    setting, samples = _work(a)
    statuses, details, _ = prove_combine(a.loop, setting, mutant, samples, time.monotonic() + 20)
    assert Status.FAILED in statuses.values() and "on a=(" in " ".join(details.values()), details
