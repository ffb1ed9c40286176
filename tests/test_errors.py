"""The error hierarchy: every error thm3 raises on purpose is a `Thm3Error`; one misuse
raises one type; a budget that runs out is one `SolverTimeout`, whichever stage ran."""
from __future__ import annotations

import time

import pytest

import thm3
from thm3.backends.numpy_tree import run_parallel
from thm3.errors import BackendUnavailable, LoopError, SolverTimeout, Thm3Error, UsageError
from thm3.semantics.samples import make_triples
from thm3.semantics.symbolic import Explorer
from thm3.synth.sketch import synthesize

SUM = '''
from typing import NamedTuple
from thm3.lang import Real

class State(NamedTuple):
    s: Real = 0.0

def left(acc: State, x: Real) -> State:
    return State(acc.s + x)
'''


def test_exported_from_thm3():
    for cls in (Thm3Error, LoopError, SolverTimeout, BackendUnavailable, UsageError):
        assert getattr(thm3, cls.__name__) is cls
        assert issubclass(cls, Thm3Error)
        assert cls.__name__ in thm3.__all__


def test_loop_error_is_a_thm3_error():
    with pytest.raises(Thm3Error) as info:
        thm3.parse_source("import os\n", "bad.py")
    assert isinstance(info.value, LoopError)
    assert str(info.value).startswith("bad.py:1:")


def test_one_timeout_for_the_solver_and_the_search():
    """The symbolic explorer and the synthesis search both raise SolverTimeout past
    their deadline (there used to be two classes)."""
    past = time.monotonic() - 1.0
    with pytest.raises(SolverTimeout):
        Explorer([], past).feasible(True)
    loop = thm3.parse_source(SUM)
    with pytest.raises(SolverTimeout):
        synthesize(loop, make_triples(loop), deadline=past)


def test_usage_errors():
    """Wrong arrays and a run without a combine raise UsageError, which is also a
    ValueError and a TypeError for callers that caught those before."""
    a = thm3.analyze_source(SUM, timeout=30)
    with pytest.raises(UsageError):
        a.run([1.0], [2.0])                          # one element parameter, two arrays
    with pytest.raises(UsageError):
        a.run([1.0], backend="tpu")
    with pytest.raises(UsageError):
        run_parallel(a.loop, a.combine_fn, [], {})   # no arrays and no n
    assert issubclass(UsageError, ValueError) and issubclass(UsageError, TypeError)


def test_cupy_missing_is_backend_unavailable():
    try:
        import cupy  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("CuPy is installed here")
    a = thm3.analyze_source(SUM, timeout=30)
    with pytest.raises(BackendUnavailable, match="CuPy"):
        a.run([1.0, 2.0], backend="cupy")
