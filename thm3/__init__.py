"""thm3: find and exploit hidden associativity in loops.

`analyze(path)` reads a loop file (never running it), checks Bird's precondition,
synthesizes the combine with its identity, proves the laws, analyses numerical
stability, and runs the parallel form.  See README.md and the loop-file spec."""
from thm3.errors import BackendUnavailable, LoopError, SolverTimeout, Thm3Error, UsageError
from thm3.syntax.frontend import parse_file, parse_source

__all__ = ["analyze", "analyze_source", "parse_file", "parse_source",
           "Thm3Error", "LoopError", "SolverTimeout", "BackendUnavailable", "UsageError"]
__version__ = "0.1.0"


def analyze(path, *, timeout: float = 60.0, lift: bool = True, accept_tested: bool = False):
    """Analyze the loop file at `path`; returns a `thm3.pipeline.Analysis`.  A combine
    whose laws are only tested on lists is "unknown" unless `accept_tested`."""
    from thm3.pipeline import analyze_loop
    return analyze_loop(parse_file(path), timeout=timeout, lift=lift, accept_tested=accept_tested)


def analyze_source(text: str, *, path: str = "<string>", timeout: float = 60.0, lift: bool = True,
                   accept_tested: bool = False):
    """Analyze a loop given as text."""
    from thm3.pipeline import analyze_loop
    return analyze_loop(parse_source(text, path), timeout=timeout, lift=lift, accept_tested=accept_tested)
