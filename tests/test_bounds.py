"""Deep or huge loop files are refused with a LoopError (exit 2) at once, never a
RecursionError from a later stage or a run past --timeout; an analysis past --memory
answers "unknown" (exit 1), never a crash."""
from __future__ import annotations

import json
import os
import re
import sys
import time

import numpy as np
import pytest
from click.testing import CliRunner

import thm3
import thm3.pipeline
from thm3.cli.main import main
from thm3.errors import SolverTimeout
from thm3.prove.budget import memory_bound, within

HEAD = '"""chain"""\nfrom typing import NamedTuple\nfrom thm3.lang import Real\n\n\n' \
       'class State(NamedTuple):\n    s: Real = 0\n\n\ndef left(acc: State, x: Real) -> State:\n'


def _chain(n: int) -> str:
    body = ["    t0 = acc.s + x"] + [f"    t{i} = t{i - 1} + x" for i in range(1, n)]
    return HEAD + "\n".join(body) + f"\n    return State(t{n - 1})\n"


def test_600_chained_assignments_refused_with_position():
    with pytest.raises(thm3.LoopError) as err:
        thm3.analyze_source(_chain(600), path="chain.py")
    assert err.value.line == 10 and "chains 601 operations" in err.value.message


def test_chain_within_bound_is_analyzed():
    a = thm3.analyze_source(_chain(10), timeout=60)
    assert a.verdict == "homomorphism"
    assert "HOMOMORPHISM" in a.report()


@pytest.mark.parametrize("text", [
    "# pad\n" * 200_000,                                                      # 1.2 MB
    HEAD + "    return State(acc.s + " + " + ".join(["x"] * 60_000) + ")\n",   # one huge expression
    HEAD + "    return State(" + "(" * 5000 + "x" + ")" * 5000 + ")\n",        # absurd nesting
])
def test_huge_files_exit_2_quickly(tmp_path, text):
    p = tmp_path / "big.py"
    p.write_text(text)
    t0 = time.perf_counter()
    r = CliRunner().invoke(main, ["analyze", str(p), "--timeout", "5"])
    assert r.exit_code == 2, r.output
    assert time.perf_counter() - t0 < 5
    assert "Traceback" not in r.output and "RecursionError" not in r.output


def _wide_state(n: int) -> str:
    fields = "\n".join(f"    f{i}: Real = 0" for i in range(n))
    steps = "\n".join(f"    g{i} = max(acc.f{i} + x * {i + 1}, acc.f{(i + 1) % n} - x)" for i in range(n))
    return (HEAD.split("class State")[0] + "class State(NamedTuple):\n" + fields +
            "\n\n\ndef left(acc: State, x: Real) -> State:\n" + steps +
            "\n    return State(" + ", ".join(f"g{i}" for i in range(n)) + ")\n")


def test_a_step_that_overruns_timeout_is_stopped(tmp_path):
    """150 coupled fields: the sampling step alone takes minutes; the CLI's hard deadline
    stops it soon after --timeout with an honest "unknown"."""
    p = tmp_path / "wide_state.py"
    p.write_text(_wide_state(150))
    t0 = time.perf_counter()
    r = CliRunner().invoke(main, ["analyze", str(p), "--timeout", "2", "--no-lift"])
    assert r.exit_code == 1, r.output
    # the analysis' own deadline names the step; the CLI's looser one bounds the rest
    assert re.search(r"ran past (--)?timeout 2 s", r.output) and "unknown" in r.output
    assert time.perf_counter() - t0 < 30


# --- the memory bound (--memory) ----------------------------------------------------

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS is enforced on Linux")


def _allocate_8_gib(*args, **kwargs):
    return np.ones(2**30)                   # 8 GiB: past the default 4096 MiB bound


def _abort(*args, **kwargs):
    import faulthandler
    faulthandler.disable()                  # pytest's handler would print the abort
    os.abort()                              # what Z3 does when it cannot start a thread


@linux
def test_memory_bound_raises_memory_error_and_is_lifted_after():
    with memory_bound(256):
        with pytest.raises(MemoryError):
            np.ones(2**30)
    assert np.ones(2**27).size == 2**27     # 1 GiB: the bound is gone


@linux
def test_memory_error_in_a_solver_child_is_a_timeout_not_a_crash():
    with memory_bound(256), pytest.raises(SolverTimeout, match="memory"):
        within(time.monotonic() + 30, _allocate_8_gib)


@linux
@pytest.mark.parametrize("fail, words", [(_allocate_8_gib, "needed more than --memory 4096 MiB"),
                                         (_abort, "ended without an answer")])
def test_an_analysis_past_the_memory_bound_is_unknown(monkeypatch, fail, words):
    monkeypatch.setattr(thm3.pipeline, "analyze_loop", fail)
    for args in ([], ["--json"]):
        r = CliRunner().invoke(main, ["analyze", "--sample", "sum", *args])
        assert r.exit_code == 1, r.output
        assert words in r.output and "unknown" in r.output and "Traceback" not in r.output
    assert json.loads(r.output)["verdict"] == "unknown"


def test_the_default_memory_bound_does_not_change_a_verdict():
    r = CliRunner().invoke(main, ["analyze", "--sample", "welford", "--json", "--memory", "512"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["verdict"] == "homomorphism"


@pytest.mark.slow
def test_a_library_analysis_keeps_its_timeout_in_transport():
    """Found by the fuzzer (seed 101948): the transport route's cancel() of psi's inverse
    ran for minutes past `timeout`; it now runs within the deadline like solve()."""
    text = ('"""random expressions"""\nfrom typing import NamedTuple\nfrom thm3.lang import Real\n\n\n'
            'class State(NamedTuple):\n    u: Real = 1\n    w: Real = 0\n\n\n'
            'def left(acc: State, x: Real) -> State:\n'
            '    return State(max((2 if acc.w <= x else acc.u), (-1 - 0)), (3 * (1 * x)))\n')
    t0 = time.monotonic()
    a = thm3.analyze_source(text, timeout=5)
    assert time.monotonic() - t0 < 5 + 10 and a.seconds < 5 + 10


def _z3_runs_out():
    import z3
    raise z3.Z3Exception(b"out of memory")


@linux
def test_z3_out_of_memory_under_the_bound_is_the_bound():
    """Z3 reports a failed allocation as its own exception, not MemoryError: under
    --memory that is the bound (an honest "unknown"), not an internal error (exit 3)."""
    from thm3.prove.budget import within_memory
    assert within_memory(256, time.monotonic() + 30, _z3_runs_out) == ("memory", None)
