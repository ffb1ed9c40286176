"""Errors that point into the user's loop file: `path:line:col`, the line, a caret.

The frontend raises `LoopError` for every file that breaks the loop format; the CLI
prints it with `format_error` and exits with status 2."""
from __future__ import annotations


class LoopError(Exception):
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


class BackendUnavailable(RuntimeError):
    """A backend that cannot run here: CuPy is not installed, or it sees no CUDA device.
    The message names the extra that installs it (`thm3[cuda12]` or `thm3[cuda13]`)."""
