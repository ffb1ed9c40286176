"""The command line through click's CliRunner: reports, JSON, exit codes, errors."""
from __future__ import annotations

import json

from click.testing import CliRunner

from catalog import SAMPLES
from thm3.cli.main import main


def _path(name):
    return str(next(s for s in SAMPLES if s.name == name).path)


def test_analyze_homomorphism_exit_0():
    r = CliRunner().invoke(main, ["analyze", _path("mps")])
    assert r.exit_code == 0, r.output
    assert "HOMOMORPHISM" in r.output
    assert "max(m₁, s₁ + m₂)" in r.output
    assert "associativity  proved" in r.output


def test_analyze_json():
    r = CliRunner().invoke(main, ["analyze", _path("safe_softmax"), "--json"])
    assert r.exit_code == 0
    j = json.loads(r.output)
    assert j["verdict"] == "homomorphism"
    assert j["stability"]["exp_overflow"] == "proved"


def test_analyze_not_homomorphism_exit_1():
    r = CliRunner().invoke(main, ["analyze", _path("majority"), "--no-lift"])
    assert r.exit_code == 1
    assert "NOT-HOMOMORPHISM" in r.output
    assert "Witness" in r.output


def test_bad_file_exit_2(tmp_path):
    p = tmp_path / "bad.py"
    p.write_text("import os\n")
    r = CliRunner().invoke(main, ["analyze", str(p)])
    assert r.exit_code == 2
    assert f"{p}:1:1" in r.output
    assert "Traceback" not in r.output


def test_missing_file_exit_2(tmp_path):
    r = CliRunner().invoke(main, ["analyze", str(tmp_path / "nope.py")])
    assert r.exit_code == 2


def test_bad_usage_exit_2():
    r = CliRunner().invoke(main, ["analyze"])
    assert r.exit_code == 2
    r = CliRunner().invoke(main, ["analyze", _path("sum"), "--timeout", "-1"])
    assert r.exit_code == 2


def test_run_numpy_backend():
    r = CliRunner().invoke(main, ["run", _path("welford"), "--n", "5000"])
    assert r.exit_code == 0, r.output
    assert "max relative difference" in r.output
