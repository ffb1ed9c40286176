"""`thm3.backends.states`: `Analysis.combine` on the user's values, single States and
batches of lanes, against the loop's own fold."""
from __future__ import annotations

import numpy as np
import pytest

import thm3
from thm3.backends.numpy_tree import run_sequential
from thm3.errors import UsageError


@pytest.fixture(scope="module")
def welford():
    return thm3.analyze(thm3.sample_path("welford"), timeout=30, lift=False)


def _state(a, xs):
    """The state of the sequential fold over `xs`, as the loop's State."""
    return a.State(*run_sequential(a.loop, [np.asarray(xs, dtype=np.float64)], {}))


def test_two_single_states_combine_to_the_state_of_both_lists(welford):
    a = welford
    xs, ys = [1.0, 4.0, -2.0], [3.0, 0.5]
    sx, sy, sxy = (_state(a, v) for v in (xs, ys, xs + ys))
    got = a.combine(sx, sy)
    assert type(got) is a.State is type(sxy) and got._fields == a.loop.field_names
    assert isinstance(got.n, int) and got.n == 5
    assert np.allclose(tuple(got), tuple(sxy))
    assert a.combine(a.identity, sx) == sx


def test_a_batch_combines_lane_by_lane(welford):
    a = welford
    rng = np.random.default_rng(11)
    lists = [list(rng.normal(size=k)) for k in (1, 2, 3, 4, 5, 6)]
    left = [_state(a, v) for v in lists[:3]]
    right = [_state(a, v) for v in lists[3:]]
    batch = lambda states: a.State(*(np.array(col) for col in zip(*states)))  # noqa: E731
    got = a.combine(batch(left), batch(right))
    assert got.n.dtype == np.int64 and got.n.shape == (3,)
    for k in range(3):
        want = _state(a, lists[k] + lists[k + 3])
        assert np.allclose([f[k] for f in got], tuple(want))
    # a plain number stands for every lane: the identity combines with a batch
    ident = a.combine(a.State(0, 0.0, 0.0), batch(right))
    assert np.allclose(np.array(tuple(ident)), np.array(tuple(batch(right))))


def test_misuse_is_refused_with_the_shapes(welford):
    a = welford
    with pytest.raises(UsageError, match="fields"):
        a.combine((1, 2.0), (1, 2.0, 3.0))
    with pytest.raises(UsageError, match="different sizes"):
        a.combine(a.State(np.ones(2, int), np.ones(2), np.ones(2)), a.State(np.ones(3, int), np.ones(3), np.ones(3)))
    with pytest.raises(UsageError, match="shape"):
        a.combine(a.State(np.ones((2, 2), int), np.ones(2), np.ones(2)), a.State(1, 1.0, 1.0))


def test_a_state_pickles_to_the_same_class(welford):
    import pickle
    a = welford
    s = a.combine(_state(a, [1.0, 2.0]), _state(a, [5.0]))
    back = pickle.loads(pickle.dumps(s))
    assert type(back) is a.State and back == s and back._fields == ("n", "mean", "M2")
    assert repr(back).startswith("State(n=3")
