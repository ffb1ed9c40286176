"""The fuzz families of issue 22 (tests/fuzz/issue22.py): every seed draws a valid loop,
and one member of each family is judged as bench/fuzz22.py judges them."""
from __future__ import annotations

import random

import pytest

import thm3
from fuzz.issue22 import FAMILIES22, from_seed22, judge22


def test_every_seed_draws_a_valid_loop():
    families = set()
    for seed in range(80):
        case = from_seed22(seed)
        thm3.parse_source(case.source)
        families.add(case.family)
    assert families == {f.__name__ for f in FAMILIES22}


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES22, ids=lambda f: f.__name__)
def test_a_member_of_each_family_is_judged_ok(family):
    for seed in range(3):
        outcome, detail = judge22(family(random.Random(seed)), timeout=30)
        assert outcome in ("ok", "unknown"), detail
