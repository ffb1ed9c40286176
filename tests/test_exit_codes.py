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


def _broken_step(ctx, a):
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
