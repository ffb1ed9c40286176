"""A user's first hour (issue 12): help on every option, JSON errors, --sample,
`python -m thm3`, the steps as they run, input checks of `a.run`, float32 runs, and the
accuracy measurement on a known case."""
from __future__ import annotations

import io
import json
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

import thm3
from thm3.cli.main import main


def _commands():
    return sorted(main.commands.items())


@pytest.mark.parametrize("name,command", _commands())
def test_every_option_has_help(name, command):
    import click
    options = [p for p in command.params if isinstance(p, click.Option)]
    assert options or name == "format"
    for param in options:
        assert param.help, f"thm3 {name} {param.opts[0]} has no help text"


def test_subcommand_summaries_are_not_cut():
    out = CliRunner().invoke(main, ["--help"], terminal_width=80).output
    for name, command in _commands():
        assert command.short_help and command.short_help in out, name
    commands = out.split("Commands:")[1]
    assert "..." not in commands


def test_json_error_on_stdout_exit_2(tmp_path):
    p = tmp_path / "bad.py"
    p.write_text("from typing import NamedTuple\nimport os\n")
    r = CliRunner().invoke(main, ["analyze", str(p), "--json"])
    assert r.exit_code == 2
    err = json.loads(r.stdout)
    assert err["line"] == 2 and err["col"] == 1 and "import" in err["error"]
    assert err["hint"] and "import" in err["hint"]         # what is allowed instead, as the text error says


def test_sample_option_and_usage():
    r = CliRunner().invoke(main, ["analyze", "--sample", "mps"])
    assert r.exit_code == 0 and "HOMOMORPHISM" in r.output
    r = CliRunner().invoke(main, ["analyze", "--sample", "no_such_loop"])
    assert r.exit_code == 2 and "mps" in r.output          # lists the samples there are
    assert CliRunner().invoke(main, ["analyze"]).exit_code == 2


def test_format_command_prints_the_format():
    r = CliRunner().invoke(main, ["format"])
    assert r.exit_code == 0 and "class State(NamedTuple)" in r.output


def test_python_dash_m_thm3(tmp_path):
    r = subprocess.run([sys.executable, "-m", "thm3", "analyze", "--sample", "sum", "--json"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["verdict"] == "homomorphism"


def test_steps_shown_as_they_run_on_a_terminal():
    from rich.console import Console
    from thm3.cli.load import _Steps
    buf = io.StringIO()
    steps = _Steps(Console(file=buf, force_terminal=True, width=200, color_system=None))
    seen = []
    with steps:
        thm3.analyze(thm3.sample_path("sum"), progress=lambda n, s: (seen.append((n, s is None)), steps(n, s)))
    names = [n for n, start in seen if start]
    assert names[:3] == ["sample", "invariants", "bird"]
    assert seen.index(("sample", True)) < seen.index(("sample", False)) < seen.index(("invariants", True))
    assert "synthesize" in buf.getvalue() and "found" in buf.getvalue()


@pytest.fixture(scope="module")
def weighted():
    return thm3.analyze(thm3.sample_path("weighted_mean"), timeout=30)


def test_run_rejects_unknown_keywords(weighted):
    x = np.ones(10)
    with pytest.raises(TypeError, match="unknown keyword.*scale"):
        weighted.run(x, x, scale=2.0)


def test_run_checks_preconditions_naming_the_first_bad_element(weighted):
    x = np.ones(10)
    w = np.ones(10)
    w[3] = -1.0
    w[7] = -2.0
    with pytest.raises(ValueError, match=r"element 3 \(.*-1\.0.*\).*assert"):
        weighted.run(x, w)
    assert weighted.run(x, np.ones(10)) == pytest.approx(1.0)


def test_run_computes_in_float32_for_float32_input():
    a = thm3.analyze(thm3.sample_path("sum"))
    x = np.full(10**5, 0.1, dtype=np.float32)
    r32 = a.run(x)
    assert isinstance(r32, np.float32)
    assert r32 == np.float32(np.sum(x.astype(np.float64)))      # the tree's error is below float32's step here
    x64 = x.astype(np.float64)
    r64 = a.run(x64)
    assert isinstance(r64, float) and r64 == pytest.approx(float(np.sum(x64)), rel=1e-12)


def test_accuracy_sum_of_tenths_at_1e5():
    from thm3.accuracy import measure
    a = thm3.analyze(thm3.sample_path("sum"))
    rows = measure(a, dtype="float32", max_n=10**5, arrays=[np.full(10**5, 0.1, dtype=np.float32)])
    assert rows[-1]["sequential"] > 1e-5 > 1e-7 > rows[-1]["tree"]


@pytest.mark.skipif(not __import__("thm3.accuracy").accuracy.extended(), reason="long double is double here")
def test_accuracy_reference_is_exact_for_float64_results():
    """The reference (the proved tree in long double) against exact values: math.fsum for
    a sum, rational arithmetic for Welford's variance; both within one float64 rounding."""
    import math
    from fractions import Fraction
    from thm3.accuracy import reference_states
    from thm3.backends.numpy_tree import apply_result
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(10**5) * 1e3 + 1e4).astype(np.float32)    # cancellation-prone
    a = thm3.analyze(thm3.sample_path("sum"))
    exact = math.fsum(x.astype(np.float64))
    got = float(apply_result(a.loop, reference_states(a, [x], {}, [x.size])[0], {}))
    assert abs(got - exact) <= 2**-53 * abs(exact)
    w = thm3.analyze(thm3.sample_path("welford"))
    y = x[:3000]
    fr = [Fraction(float(v)) for v in y]
    mean = sum(fr) / len(fr)
    var = sum((v - mean) ** 2 for v in fr) / len(fr)
    got = float(apply_result(w.loop, reference_states(w, [y], {}, [y.size])[0], {}))
    assert abs(Fraction(got) - var) <= Fraction(2**-52) * var


@pytest.mark.slow
def test_accuracy_known_case_sum_of_tenths():
    """float32 sum of 10**6 copies of 0.1: the sequential fold drifts (about 1e-2 relative
    error: each addition rounds at the partial sum's scale), the tree stays at float32's
    resolution."""
    from thm3.accuracy import measure
    a = thm3.analyze(thm3.sample_path("sum"))
    rows = measure(a, dtype="float32", max_n=10**6, arrays=[np.full(10**6, 0.1, dtype=np.float32)])
    last = rows[-1]
    assert last["n"] == 10**6
    assert last["sequential"] > 1e-3
    assert last["tree"] < 1e-6
    assert last["sequential"] > 100 * last["tree"]
    assert [r["n"] for r in rows] == [10**2, 10**3, 10**4, 10**5, 10**6]


def test_accuracy_command_and_plot(tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "sum.png"
    r = CliRunner().invoke(main, ["accuracy", "--sample", "sum", "--max-n", "1000", "--plot", str(png)])
    assert r.exit_code == 0, r.output
    assert "sequential / tree" in r.output
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_json_error_for_a_missing_file(tmp_path):
    r = CliRunner().invoke(main, ["analyze", str(tmp_path / "nope.py"), "--json"])
    assert r.exit_code == 2
    assert "cannot read" in json.loads(r.stdout)["error"]


def test_emit_on_a_non_homomorphism_suggests_lift(tmp_path):
    r = CliRunner().invoke(main, ["emit", "--sample", "majority", "-o", str(tmp_path)])
    assert r.exit_code == 1
    assert "nothing to emit" in r.output and "thm3 lift" in r.output


LSE_T = ('"""lse at a temperature"""\nfrom typing import NamedTuple\nfrom thm3.lang import Real, exp, log\n\n'
         'T: Real\n\n\nclass State(NamedTuple):\n    m: Real = float("-inf")\n    s: Real = 0\n\n\n'
         'def left(acc: State, x: Real) -> State:\n    assert T > 0\n    m = max(acc.m, x / T)\n'
         '    return State(m, acc.s * exp(acc.m - m) + exp(x / T - m))\n')


def test_run_takes_loop_parameters(tmp_path):
    p = tmp_path / "lse_t.py"
    p.write_text(LSE_T)
    r = CliRunner().invoke(main, ["run", str(p), "--n", "5000", "--param", "T=0.25"])
    assert r.exit_code == 0, r.output
    assert "T = 0.25" in r.output
    bad = CliRunner().invoke(main, ["run", str(p), "--param", "T=-1"])
    assert bad.exit_code == 2 and "breaks the precondition `assert T > 0`" in bad.output
    unknown = CliRunner().invoke(main, ["run", str(p), "--param", "Q=1"])
    assert unknown.exit_code == 2 and "a loop parameter (T)" in unknown.output
