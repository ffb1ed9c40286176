"""From a loop file to its analysis on the command line: parse it, analyse it under
--timeout and --memory (on Linux in a forked child, so that a native library that
aborts ends the child, not the command), show the steps on stderr as they run, and
answer a bad file (exit 2) or a stopped analysis ("unknown", exit 1) in one line."""
from __future__ import annotations

import dataclasses
import json
import sys
import time

import click

from thm3.errors import LoopError

MEMORY_DEFAULT = 4096


def fail(message: str, as_json: bool, line: int | None = None, col: int | None = None, path=None,
         hint: str | None = None):
    """A bad file: the error on stderr, or as JSON on stdout with --json (with what is
    allowed instead, where the error says); exit 2."""
    if as_json:
        click.echo(json.dumps({"error": message, "line": line, "col": col, "path": path, "hint": hint}))
    else:
        click.echo(message, err=True)
    sys.exit(2)


def load(path: str, timeout: float, lift: bool = True, as_json: bool = False,
         accept_tested: bool = False, memory: int = MEMORY_DEFAULT, lift_unknown: bool = False):
    """The loop file at `path` analysed within --timeout and --memory; a bad file exits 2,
    an analysis stopped by either bound prints "unknown" and exits 1."""
    from thm3.syntax.frontend import parse_file
    try:
        loop = parse_file(path)
    except LoopError as err:
        fail(err.message if as_json else str(err), as_json, err.line, err.col, err.path, err.hint)
    except OSError as err:
        fail(f"{path}: cannot read the file: {err.strerror or err}", as_json, path=path)
    got = _analyse(loop, timeout, lift, accept_tested, memory, as_json, lift_unknown)
    if not isinstance(got, _Stopped):
        return got
    if got.why == "deep":
        fail(f"{path}: the loop is nested too deeply for thm3's passes", as_json, path=path)
    reason = got.reason(timeout, memory)
    if as_json:
        click.echo(json.dumps({"loop": loop.name, "path": path, "verdict": "unknown", "reason": reason}))
    else:
        click.echo(f"{path}: unknown: {reason}")
    sys.exit(1)


@dataclasses.dataclass(frozen=True)
class _Stopped:
    """An analysis that a bound stopped: `why` is "timeout", "memory", "ended" (its
    process ended without an answer: a native library that could not allocate aborts)
    or "deep"; `step` is the step it was in, where known."""
    why: str
    step: str = ""

    def reason(self, timeout: float, memory: int) -> str:
        where = f" in step '{self.step}'" if self.step else ""
        if self.why == "timeout":
            return (f"the analysis ran past --timeout {timeout:g} s{where} and was stopped; a larger "
                    "--timeout may give an answer")
        if self.why == "memory":
            return (f"the analysis needed more than --memory {memory} MiB{where} and was stopped; a larger "
                    "--memory may give an answer")
        return (f"the analysis' process ended without an answer{where} (a native library out of the "
                f"--memory {memory} MiB bound aborts); a larger --memory may give an answer")


def _analyse(loop, timeout: float, lift: bool, accept_tested: bool, memory: int, quiet: bool,
             lift_unknown: bool = False):
    """The analysis, or `_Stopped`.  On Linux it runs in a forked child under the memory
    bound, so that a native library that aborts when an allocation fails (Z3 starting a
    timer thread, OpenBLAS) ends the child, not the command; elsewhere in this process
    (macOS does not enforce the bound)."""
    from thm3.errors import SolverTimeout
    from thm3.prove.budget import within
    hard = timeout + max(2.0, 0.1 * timeout)
    if not sys.platform.startswith("linux"):
        return _analysis(loop, timeout, hard, lift, accept_tested, None, quiet, lift_unknown)
    try:
        return within(time.monotonic() + hard + 5.0, _analysis_in_child, loop, timeout, hard, lift, accept_tested,
                      memory, quiet, lift_unknown, daemon=False)
    except SolverTimeout as err:
        return _Stopped("ended" if "without an answer" in str(err) else "timeout")


def _analysis_in_child(*args):
    """`_analysis` in the forked child, its native libraries' stderr (file descriptor 2)
    sent to /dev/null: a C++ "terminate called ..." of a library that could not allocate
    under --memory is not the user's to read; the CLI says why the analysis stopped.
    Python's own stderr (the steps, warnings) still goes to the terminal."""
    import os
    try:
        sys.stderr.flush()
        keep = os.dup(2)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 2)
        os.close(null)
        sys.stderr = open(keep, "w", buffering=1, closefd=True)
    except (OSError, ValueError, AttributeError):     # no file descriptor 2 (captured): as it is
        pass
    return _analysis(*args)


def _analysis(loop, timeout: float, hard: float, lift: bool, accept_tested: bool, memory, quiet: bool,
              lift_unknown: bool = False):
    from thm3.pipeline import analyze_loop
    from thm3.prove.budget import PastDeadline, hard_deadline, memory_bound
    steps = _Steps(quiet=quiet)
    try:        # analyze_loop stops a step that overruns by itself; this bounds the rest
        with steps, hard_deadline(time.monotonic() + hard), memory_bound(memory):
            return analyze_loop(loop, timeout=timeout, lift=lift, accept_tested=accept_tested, progress=steps,
                                lift_unknown=lift_unknown)
    except RecursionError:                  # a last resort: the frontend bounds depth
        return _Stopped("deep", steps.current)
    except PastDeadline:
        return _Stopped("timeout", steps.current)
    except MemoryError:
        return _Stopped("memory", steps.current)


class _Steps:
    """Each analysis step on stderr as it runs, on a terminal only (a pipe or a log gets
    the report's own steps line): a spinner naming the running step, one line per
    finished step with its status and time."""

    def __init__(self, console=None, quiet: bool = False):
        from rich.console import Console
        self.console = console or Console(stderr=True, highlight=False, soft_wrap=True)
        self.quiet = quiet or not self.console.is_terminal
        self.status = None
        self.current = "start"

    def __enter__(self):
        if not self.quiet:
            self.status = self.console.status("analysing")
            self.status.start()
        return self

    def __exit__(self, *exc):
        if self.status is not None:
            self.status.stop()
        return False

    def __call__(self, name: str, step) -> None:
        from rich.text import Text
        self.current = name
        if self.quiet:
            return
        if step is None:
            if self.status is not None:
                self.status.update(f"{name} ...")
            return
        line = Text(f"  {name:<11} ", style="bold")
        line.append(f"{str(step.status):<12}", style=_STYLE.get(str(step.status), ""))
        line.append(f" {step.seconds:6.2f} s  ")
        line.append(step.detail[:100], style="dim")
        self.console.print(line)


_STYLE = {"proved": "green", "found": "green", "done": "green", "homomorphism": "green",
          "failed": "red", "timeout": "yellow", "unknown": "yellow", "none": "yellow", "tested": "yellow"}
