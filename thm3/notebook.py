"""thm3 in a notebook: the `%%thm3` cell magic and the rich displays of an `Analysis`.

The cell's text is a loop file; it is analysed with `thm3.analyze_source`, read with
`ast` like any loop file and never executed.  Load with `%load_ext thm3`."""
from __future__ import annotations

import argparse
import html as _html
import shlex

from thm3.errors import Thm3Error

_VERDICT_COLOUR = {"homomorphism": "#1a7f37", "not-homomorphism": "#cf222e"}


def markdown(a) -> str:
    """`Analysis._repr_markdown_`: a heading with the verdict, then the report."""
    head = f"**thm3 · {a.loop.title}**: `{a.verdict}`" + (f" ({a.reason})" if a.reason else "")
    return f"{head}\n\n```text\n{a.report()}\n```\n"


def html(a) -> str:
    """`Analysis._repr_html_`: the verdict coloured, the report as preformatted text."""
    colour = _VERDICT_COLOUR.get(a.verdict, "#9a6700")
    reason = f" ({_html.escape(a.reason)})" if a.reason else ""
    return (f"<div class='thm3-analysis'><p><b>thm3 · {_html.escape(a.loop.title)}</b>: "
            f"<span style='color:{colour};font-weight:bold'>{_html.escape(a.verdict)}</span>{reason}</p>"
            f"<pre>{_html.escape(a.report())}</pre></div>")


class _BadLine(Thm3Error):
    """A `%%thm3` line argparse refuses: shown in the cell, never a SystemExit."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _BadLine(f"%%thm3: {message}\n{self.format_usage().strip()}")


def _arguments() -> argparse.ArgumentParser:
    p = _Parser(prog="%%thm3", add_help=False,
                                description="Analyse the cell's text as a loop file (never run it).")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds for the whole analysis")
    p.add_argument("--memory", type=int, default=None, metavar="MIB",
                   help="MiB the analysis may map (Linux: in a child process), as thm3 analyze --memory")
    p.add_argument("--no-lift", action="store_true", help="no search for auxiliary state")
    p.add_argument("--name", default="cell", help="the loop's name (its file stem in emitted code)")
    p.add_argument("--as", dest="var", default="_thm3", help="store the Analysis in this variable")
    return p


def thm3_cell(line: str, cell: str, user_ns: dict | None = None):
    """The body of `%%thm3 [--timeout S] [--memory MIB] [--no-lift] [--name NAME] [--as VAR]`: returns
    the Analysis (displayed by the notebook) and stores it in `VAR` (default `_thm3`).
    A LoopError is shown as the file error, with the cell's line and column."""
    import thm3
    try:
        args = _arguments().parse_args(shlex.split(line))
    except (_BadLine, ValueError) as err:      # ValueError: shlex on an unclosed quote
        print(err if isinstance(err, _BadLine) else f"%%thm3: {err}")
        return None
    try:
        a = thm3.analyze_source(cell, path=f"<{args.name}>", name=args.name, timeout=args.timeout,
                                lift=not args.no_lift, memory=args.memory)
    except thm3.LoopError as err:
        print(err)
        return None
    if user_ns is not None:
        user_ns[args.var] = a
    return a


def load_ipython_extension(ipython) -> None:
    """`%load_ext thm3` (or `%load_ext thm3.notebook`): registers the `%%thm3` cell magic."""
    def thm3(line, cell):
        return thm3_cell(line, cell, ipython.user_ns)
    thm3.__doc__ = thm3_cell.__doc__
    ipython.register_magic_function(thm3, magic_kind="cell", magic_name="thm3")
