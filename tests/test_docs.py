"""docs/loop-format.md is tested: every ```python block is a loop file that parses (and,
where it is valid Python, compiles), every ```python rejected block is refused with a
position, and the CLI points to the document."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import thm3
from thm3.cli.main import main

DOC = Path(__file__).resolve().parents[1] / "docs" / "loop-format.md"
BLOCK = re.compile(r"^```(python(?: rejected)?)\n(.*?)^```", re.S | re.M)


def _blocks(kind: str) -> list[str]:
    return [text for k, text in BLOCK.findall(DOC.read_text()) if k == kind]


def test_doc_has_examples():
    assert len(_blocks("python")) >= 6 and len(_blocks("python rejected")) >= 2


@pytest.mark.parametrize("text", _blocks("python"))
def test_each_example_parses(text):
    loop = thm3.parse_source(text, "<doc>")
    assert loop.left.outputs
    compile(text, "<doc>", "exec")           # still valid Python, never run


@pytest.mark.parametrize("text", _blocks("python rejected"))
def test_each_rejected_example_is_refused(text):
    with pytest.raises(thm3.LoopError) as err:
        thm3.parse_source(text, "<doc>")
    assert err.value.line > 1


def test_analyze_help_points_to_the_format():
    out = CliRunner().invoke(main, ["analyze", "--help"]).output
    assert "docs/loop-format.md" in out
