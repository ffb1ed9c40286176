"""thm3.prove.budget: a computation with no time limit of its own ends at the deadline."""
import time

import pytest

from thm3.errors import SolverTimeout
from thm3.prove.budget import within


def _slow(seconds):
    time.sleep(seconds)
    return "done"


def _fails():
    raise ValueError("inside")


def test_an_answer_before_the_deadline_comes_back():
    assert within(time.monotonic() + 20, _slow, 0.0) == "done"


def test_a_computation_past_the_deadline_is_a_timeout_not_a_hang():
    t0 = time.monotonic()
    with pytest.raises(SolverTimeout):
        within(t0 + 0.5, _slow, 60.0)
    assert time.monotonic() - t0 < 10


def test_an_exception_inside_is_raised_here():
    with pytest.raises(ValueError, match="inside"):
        within(time.monotonic() + 20, _fails)


def test_no_time_left_is_a_timeout_at_once():
    with pytest.raises(SolverTimeout):
        within(time.monotonic() - 1, _slow, 0.0)


@pytest.mark.slow
def test_the_transport_route_keeps_the_analysis_deadline():
    """The corpus loop whose transport route once ran SymPy's solve for over 20 minutes."""
    import thm3
    from catalog import REPO_ROOT
    t0 = time.monotonic()
    a = thm3.analyze(str(REPO_ROOT / "bench" / "corpus" / "autolifter_lis_lifted.py"), timeout=20)
    assert time.monotonic() - t0 < 20 + 15
    assert a.verdict in ("homomorphism", "unknown")
