"""The pipeline as a flat list of named steps producing a frozen `Analysis`; the
`Status`/`Verdict` enums; `verdict_of`, the one place where law statuses become a verdict."""
from __future__ import annotations

import dataclasses
import json

import pytest

import thm3
from thm3.pipeline import STEPS, Analysis
from thm3.prove.combine import LAWS, verdict_of
from thm3.status import Status, Verdict

from catalog import SAMPLES_DIR

P, T, F = Status.PROVED, Status.TESTED, Status.FAILED


def test_enums_are_their_words():
    assert Status.PROVED == "proved" and Verdict.NOT_HOMOMORPHISM == "not-homomorphism"
    assert f"{Status.TESTED:<8}|" == "tested  |" and str(Verdict.UNKNOWN) == "unknown"
    assert json.dumps({"s": Status.SKIPPED, "v": Verdict.HOMOMORPHISM}) == '{"s": "skipped", "v": "homomorphism"}'
    assert Status("bounded") is Status.BOUNDED


def test_the_steps_in_order():
    assert [s.name for s in STEPS] == ["sample", "invariants", "bird", "witness", "lift", "synthesize",
                                       "prove", "witness, more parameter values",
                                       "witness, values at reached states", "lift", "theorem lift",
                                       "commutativity", "transport", "stability"]


def test_analysis_is_frozen_and_steps_are_recorded():
    a = thm3.analyze(SAMPLES_DIR / "mps.py", lift=False)
    assert isinstance(a, Analysis)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.verdict = Verdict.UNKNOWN
    assert a.verdict is Verdict.HOMOMORPHISM
    assert [s.name for s in a.steps] == ["sample", "invariants", "bird", "witness", "synthesize", "prove",
                                         "commutativity", "transport", "stability"]
    assert all(isinstance(s.status, (Status, Verdict)) for s in a.steps)
    assert all(isinstance(a.proofs[k], Status) for k in ("bird", *LAWS))
    assert a.seconds >= sum(s.seconds for s in a.steps) * 0.99


def test_a_witness_skips_synthesis():
    a = thm3.analyze(SAMPLES_DIR / "mts.py", lift=False)
    assert a.verdict is Verdict.NOT_HOMOMORPHISM
    names = [s.name for s in a.steps]
    assert "synthesize" not in names and "prove" not in names and "lift" not in names
    assert all(a.proofs[k] is Status.SKIPPED for k in LAWS)


def test_verdict_all_proved():
    j = verdict_of({"identity": P, "associativity": P, "homomorphism": P}, {}, timed_out=False)
    assert j == (Verdict.HOMOMORPHISM, "", True)


def test_verdict_failed_drops_the_combine_and_names_the_law():
    j = verdict_of({"identity": P, "associativity": F, "homomorphism": T},
                   {"associativity": "field s: 1 != 2"}, timed_out=True)
    assert j.verdict is Verdict.UNKNOWN and not j.keeps_combine
    assert "associativity: field s: 1 != 2" in j.reason and "identity" not in j.reason


def test_verdict_timeout_is_unknown():
    j = verdict_of({"identity": P, "associativity": T, "homomorphism": P}, {}, timed_out=True)
    assert j.verdict is Verdict.UNKNOWN and j.keeps_combine and "time ran out" in j.reason


def test_verdict_tested_only_says_so():
    # issue 15: a law only tested is no homomorphism, unless the caller accepts it
    statuses = {"identity": P, "associativity": T, "homomorphism": T}
    j = verdict_of(statuses, {}, timed_out=False)
    assert j.verdict is Verdict.UNKNOWN and j.keeps_combine
    assert "associativity, homomorphism only tested" in j.reason and "--accept-tested" in j.reason
    j = verdict_of(statuses, {}, timed_out=False, accept_tested=True)
    assert j.verdict is Verdict.HOMOMORPHISM
    assert j.reason == "laws associativity, homomorphism tested on lists, not proved (accepted as tested)"
