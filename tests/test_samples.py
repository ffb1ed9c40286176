"""Sampled lists and folds: the triples A = h(xs), B = h(ys), C = h(xs + ys) agree with
one-at-a-time folds; the initial state; preconditions honoured when drawing."""
from __future__ import annotations

import numpy as np

from stages import loop_of
from thm3.ir import initial_state
from thm3.semantics.equality import states_close
from thm3.semantics.samples import Domain, batch_init, fold_left, init_state, make_triples, random_arrays


def test_initial_state_everywhere():
    loop = loop_of("vec_sum")
    assert [e.arg for e in initial_state(loop)] == [0.0]
    assert init_state(loop, dim=4)[0].shape == (4,)
    assert batch_init(loop, 5, 4)[0].shape == (5, 4)
    loop = loop_of("safe_softmax")
    assert init_state(loop) == (-np.inf, 0.0)
    assert [x.shape for x in batch_init(loop, 3, 2)] == [(3, 1), (3, 1)]


def test_triples_are_folds():
    loop = loop_of("mps")
    t = make_triples(loop, rows=4, max_len=3, param_sets=1)[0]
    rows = t.a[0].shape[0]
    assert all(x.shape[0] == rows for x in t.a + t.b + t.c)
    # C is A continued with the ys that made B: combine-free check of one identity
    assert np.all(t.c[0] == t.a[0] + t.b[0])           # s is a plain sum
    assert np.all(t.c[1] >= t.a[1])                    # the best prefix never shrinks


def test_fold_left_by_hand():
    loop = loop_of("mps")
    xs = [(1.0,), (-3.0,), (2.0,)]
    assert states_close(fold_left(loop, xs, {}), (0.0, 1.0))


def test_preconditions_are_honoured():
    loop = loop_of("weighted_mean")           # assert w > 0
    dom = Domain(loop)
    rng = np.random.default_rng(1)
    params = dom.params(rng)
    for _ in range(20):
        for x, w in dom.random_list(rng, params, 6):
            assert w > 0
    arrays, params = random_arrays(loop, 100, 3, rng)
    assert len(arrays) == 2 and all(len(a) == 100 for a in arrays)
    assert np.all(np.asarray(arrays[1]) > 0)


def test_samples_fold_with_the_proofs_division():
    """A list that divides by zero has no value in the proofs (NaN), not IEEE's ±inf:
    the synthesis samples use that division; `table=NUMPY` keeps IEEE for stability."""
    import numpy as np
    from thm3 import parse_source
    from thm3.semantics.evaluate import NUMPY
    from thm3.semantics.samples import make_triples
    loop = parse_source('''"""1 / x, last"""
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    v: Real = inf


def left(acc: State, x: Real) -> State:
    return State(1 / x)
''')
    reals = make_triples(loop, rows=24, max_len=2, param_sets=1)[0]
    ieee = make_triples(loop, rows=24, max_len=2, param_sets=1, table=NUMPY)[0]
    finite = np.isfinite(ieee.c[0])
    assert np.array_equal(reals.c[0][finite], ieee.c[0][finite])
    assert (np.isinf(ieee.c[0]) & np.isnan(reals.c[0])).any()   # ends in 0: inf in IEEE, NaN in the reals
