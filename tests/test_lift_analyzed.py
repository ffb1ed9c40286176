"""Lifting end to end: `analyze` on a non-homomorphism finds the auxiliary state, the
lifted file (with its derived right fold) analyses as a proved homomorphism, and the
original fields keep their values on every list."""
from __future__ import annotations

import numpy as np
import pytest

import thm3
from analyzed import analysis
from catalog import NOT_HOMOMORPHISMS
from thm3.semantics.equality import states_close
from thm3.semantics.samples import Domain, fold_left

LIFTABLE = [s for s in NOT_HOMOMORPHISMS if s.lift == "expected"]


@pytest.mark.parametrize("sample", LIFTABLE, ids=lambda s: s.name)
def test_lift_is_a_proved_homomorphism(sample):
    a = analysis(str(sample.path), lift=True)
    assert a.verdict == "not-homomorphism"
    assert a.lifted is not None, next(s.detail for s in a.steps if s.name == "lift")
    assert a.lift_added
    b = thm3.analyze_source(a.lifted, path=f"<lifted {sample.name}>", lift=False)
    assert b.verdict == "homomorphism", b.reason
    assert all(b.proofs[k] == "proved" for k in ("identity", "associativity", "homomorphism"))
    assert b.proofs["bird"] == "proved", b.bird_detail     # the derived right fold
    # the original fields, same names, same values after any list
    orig, lifted = thm3.parse_file(sample.path), thm3.parse_source(a.lifted)
    assert lifted.field_names[:len(orig.fields)] == orig.field_names
    rng = np.random.default_rng(3)
    dom = Domain(orig)
    for n in range(0, 9):
        params = dom.params(rng)
        xs = dom.random_list(rng, params, n)
        h = fold_left(orig, xs, params)
        g = fold_left(lifted, xs, params)[:len(orig.fields)]
        assert states_close(h, g), (xs, h, g)


def test_majority_has_no_small_lift():
    s = next(s for s in NOT_HOMOMORPHISMS if s.lift == "none")
    a = analysis(str(s.path), lift=True)
    assert a.lifted is None
    step = next(st for st in a.steps if st.name == "lift")
    assert step.status == "none" and "no lift" in step.detail
