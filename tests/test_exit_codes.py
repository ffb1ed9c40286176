"""Exit codes (issue 22): 0 homomorphism, 1 not-homomorphism or unknown, 2 bad input or
usage, 3 an internal error, on every command that reads a loop.  An internal error is a
short message naming the loop and the line to quote in a bug report; the traceback only
with --debug; with --json, {"error": "internal", ...}."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import thm3.pipeline
from thm3.cli.main import main


def _broken_step(ctx, a, w):
    raise ZeroDivisionError("a bug planted by the test")


@pytest.fixture
def broken(monkeypatch):
    """The analysis' first step raises (inherited by the forked analysis child)."""
    steps = (thm3.pipeline.PipelineStep("sample", _broken_step),) + thm3.pipeline.STEPS[1:]
    monkeypatch.setattr(thm3.pipeline, "STEPS", steps)


@pytest.mark.parametrize("command", [["analyze"], ["lift"], ["emit", "-o", "OUT"], ["run", "--n", "10"],
                                     ["accuracy", "--max-n", "100"]])
def test_an_internal_error_exits_3_with_the_line_to_quote(broken, command, tmp_path):
    args = [a.replace("OUT", str(tmp_path / "out")) for a in command]
    r = CliRunner().invoke(main, args[:1] + ["--sample", "sum"] + args[1:])
    assert r.exit_code == 3, r.output
    assert "internal error" in r.output and "sum.py" in r.output
    # the line to quote names the innermost frame of thm3 that the error passed through
    assert "ZeroDivisionError: a bug planted by the test at thm3/pipeline.py:" in r.output
    assert "Traceback" not in r.output


def test_debug_adds_the_traceback(broken):
    for args in (["--debug", "analyze", "--sample", "sum"], ["analyze", "--sample", "sum", "--debug"]):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 3, r.output
        assert "Traceback" in r.output and "_broken_step" in r.output


def test_json_internal_error(broken):
    r = CliRunner().invoke(main, ["analyze", "--sample", "sum", "--json"])
    assert r.exit_code == 3, r.output
    j = json.loads(r.output.strip().splitlines()[-1])
    assert j["error"] == "internal" and j["exception"] == "ZeroDivisionError"
    assert j["path"].endswith("sum.py") and "a bug planted" in j["quote"]


def test_help_names_every_exit_code():
    r = CliRunner().invoke(main, ["analyze", "-h"])
    assert r.exit_code == 0
    text = " ".join(r.output.split())
    for words in ("0 homomorphism", "1 not-homomorphism or unknown", "2 bad file or usage", "3 internal error"):
        assert words in text, text


PRODUCT = '''"""A product of Ints."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    p: Int = 1


def left(acc: State, x: Int) -> State:
    assert x != 0
    return State(acc.p * x)
'''


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_run_on_an_overflowing_int_exits_2_in_one_line(backend, tmp_path, monkeypatch):
    """The Int product of 1000 random nonzero Ints leaves int64: the data's fault, not a bug in thm3
    (exit 2, one line naming the field and what to do, no traceback); --json gives
    {"error": "int_overflow", "field": ...}."""
    if backend == "numba":
        pytest.importorskip("numba")
        monkeypatch.setenv("THM3_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "product.py"
    path.write_text(PRODUCT)
    args = ["run", str(path), "--n", "1000", "--backend", backend, "--seed", "1"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.output, r.output
    assert "the Int field p overflows int64" in lines[0] and "declare the field Real" in lines[0]
    assert lines[0].startswith(str(path))
    r = CliRunner().invoke(main, args + ["--json"])
    assert r.exit_code == 2, r.output
    j = json.loads(r.output.strip().splitlines()[-1])
    assert j["error"] == "int_overflow" and j["field"] == "p" and "declare the field Real" in j["message"]


def test_run_json_on_a_normal_input(tmp_path):
    path = tmp_path / "product.py"
    path.write_text(PRODUCT)
    r = CliRunner().invoke(main, ["run", str(path), "--n", "10", "--json"])
    assert r.exit_code == 0, r.output
    j = json.loads(r.output)
    assert j["parallel"] == j["sequential"] and j["max_relative_difference"] == 0.0 and j["n"] == 10
