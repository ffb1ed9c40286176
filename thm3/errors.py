"""The errors thm3 raises, all under `Thm3Error`: a loop file that breaks the format
(`LoopError`, pointing into the file: `path:line:col`, the line, a caret), a solver or
search budget that ran out (`SolverTimeout`), a backend that is not installed
(`BackendUnavailable`), and an API called the wrong way (`UsageError`).  The signals
caught inside thm3 derive from `Thm3Error` too: a route's `Failed`, `NotRational`, a
normal form's `NotForm` (tests/test_layout.py checks every module; the deadline's alarm,
`PastDeadline`, is a BaseException on purpose).

The CLI prints a `LoopError` with `format_error` and exits with status 2."""
from __future__ import annotations


class Thm3Error(Exception):
    """The base of every error thm3 raises on purpose."""


class SolverTimeout(Thm3Error):
    """The time budget of a solver or a search ran out: the answer is "unknown", never
    "proved".  Stages catch it and record a timeout; it reaches the caller only from
    a stage called on its own."""


class BackendUnavailable(Thm3Error, RuntimeError):
    """A backend that cannot run here: its package (CuPy, NVRTC, Numba, Dask) is not
    installed, or CuPy sees no CUDA device.  The message names the extra that installs it
    (`thm3[cuda12]` or `thm3[cuda13]` for CuPy)."""


class UsageError(Thm3Error, ValueError, TypeError):
    """The API was called the wrong way: a bad argument value, the wrong number or
    shape of arrays, a missing loop parameter, a run without a combine.

    One misuse, one type: it is also a `ValueError` and a `TypeError`, so code that
    caught either before keeps working."""


class NotRational(Thm3Error):
    """A value or a term leaves the rationals (the message says where): an exact-rows
    route, or the rational-function test, gives up.  Caught inside thm3."""


class LoopError(Thm3Error):
    """A loop file that breaks the format.

    `line` and `col` are 1-based; `col` counts characters (not bytes) of `source_line`,
    so the caret lands under the offending construct.  `source_line` is that line of the
    file without its newline (empty where there is none), and `hint` says what is
    allowed instead, or is None."""

    def __init__(self, message: str, path: str = "<string>", line: int = 1, col: int = 1,
                 source_line: str = "", hint: str | None = None):
        # All fields go to Exception.args so that the error survives pickling
        # (process pools in the prover and the tests).
        super().__init__(message, path, line, col, source_line, hint)
        self.message = message
        self.path = path
        self.line = line
        self.col = col
        self.source_line = source_line
        self.hint = hint

    def __str__(self) -> str:
        return format_error(self)


def format_error(err: LoopError) -> str:
    """`path:line:col: message`, the source line with a caret under the column, and
    `allowed instead: ...` where the error has a hint."""
    lines = [f"{err.path}:{err.line}:{err.col}: {err.message}"]
    if err.source_line:
        lines.append(err.source_line)
        # Keep tabs so that the caret lines up however the terminal expands them.
        prefix = "".join(c if c == "\t" else " " for c in err.source_line[: max(err.col - 1, 0)])
        lines.append(prefix + "^")
    if err.hint:
        lines.append(f"allowed instead: {err.hint}")
    return "\n".join(lines)
