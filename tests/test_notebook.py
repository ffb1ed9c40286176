"""The notebook user: `%%thm3` through IPython's API (the cell is analysed, never run),
`thm3.analyze_source`, the rich displays, `a.report()` and `a.emit(dir)`."""
from __future__ import annotations

import pytest

import thm3

IPython = pytest.importorskip("IPython")

MPS = '''"""Maximum prefix sum."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    s: Real = 0
    m: Real = 0


def left(acc: State, x: Real) -> State:
    s = acc.s + x
    return State(s, max(acc.m, s))
'''


@pytest.fixture(scope="module")
def shell():
    from IPython.testing.globalipapp import get_ipython
    ip = get_ipython()
    ip.run_line_magic("load_ext", "thm3")
    return ip


def test_cell_magic_analyses_the_cell(shell):
    a = shell.run_cell_magic("thm3", "--timeout 30 --as found", MPS)
    assert a is shell.user_ns["found"]
    assert a.verdict == "homomorphism"
    assert a.loop.field_names == ("s", "m")
    assert "max(m₁, s₁ + m₂)" in a._repr_markdown_()
    assert "homomorphism" in a._repr_html_() and "<pre>" in a._repr_html_()


def test_cell_magic_never_runs_the_cell(shell, capsys):
    # Run as Python, this cell would set a variable and raise; analysed, it is a bad loop file.
    cell = "RAN = True\nraise SystemExit('executed')\n"
    assert shell.run_cell_magic("thm3", "", cell) is None
    assert "RAN" not in shell.user_ns
    out = capsys.readouterr().out
    assert "<cell>:1:1" in out


def test_analyze_source_repr_report_emit(tmp_path):
    a = thm3.analyze_source(MPS, path="<mps>", timeout=30)
    assert "\n" not in repr(a) and "homomorphism" in repr(a)
    assert a.report().startswith("thm3 · Maximum prefix sum.")
    paths = a.emit(tmp_path)
    assert sorted(p.suffix for p in paths) == [".cu", ".py"]
    assert "combine" in paths[0].read_text() or "combine" in paths[1].read_text()


def test_emit_on_a_non_homomorphism_points_to_lift(tmp_path):
    a = thm3.analyze(thm3.sample_path("majority"), lift=False, timeout=30)
    assert a.verdict == "not-homomorphism"
    with pytest.raises(ValueError, match="lift"):
        a.emit(tmp_path)
