"""Every README snippet runs: ```python blocks are executed (a loop file among them is
parsed, never run), ```ipython blocks go through IPython in order, ```bash lines run
through the CLI (thm3 ...) or are the commands `.ci/run` runs (pip, pytest)."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

import thm3
from thm3.cli.main import main

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def _blocks(kind: str) -> list[str]:
    return [text for k, text in BLOCK.findall(README.read_text()) if k == kind]


def _commands() -> list[str]:
    return [part.strip() for block in _blocks("bash") for line in block.splitlines()
            if line.strip() and not line.startswith("#") for part in line.split("&&")]


@pytest.mark.parametrize("text", _blocks("python"), ids=lambda t: t.splitlines()[0][:40])
def test_python_snippet(text, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    if "def left" in text and "import thm3" not in text:      # a loop file: parsed, never run
        assert thm3.parse_source(text, "<readme>").left.outputs
        return
    exec(compile(text, "<README>", "exec"), {"__name__": "readme"})  # the README's own code
    out = capsys.readouterr().out
    for comment in re.findall(r"print\(.*?\)\s+# (.+)", text):    # printed values as the comments say
        want = comment.split("...")[0].strip()
        assert want in out, f"README says {comment!r}; printed:\n{out}"


def test_ipython_snippets_in_order():
    from IPython.testing.globalipapp import get_ipython
    ip = get_ipython()
    for text in _blocks("ipython"):
        lines = text.splitlines()
        if lines[0].startswith("%%"):
            name, _, line = lines[0][2:].partition(" ")
            ip.run_cell_magic(name, line, "\n".join(lines[1:]))
        else:
            result = ip.run_cell(text)
            assert result.success, result.error_in_exec or result.error_before_exec


def test_install_commands_are_what_ci_runs():
    ci = (REPO / ".ci" / "run").read_text()
    for cmd in _commands():
        match cmd.split()[:2]:
            case ["pip", "install"]:
                target = cmd.split()[-1]
                assert ("pip wheel" in ci) if target == "." else (f"-e {target}" in ci), cmd
            case ["python", "-m"]:
                assert "-m pytest" in ci, cmd
            case ["thm3", _]:
                pass
            case _:
                raise AssertionError(f"README command not covered by a test: {cmd}")


@pytest.mark.slow
@pytest.mark.parametrize("cmd", [c for c in _commands() if c.startswith("thm3 ")])
def test_thm3_commands(cmd, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, shlex.split(cmd)[1:])
    assert r.exit_code == 0, r.output
