"""thm3: find and exploit hidden associativity in loops.

`analyze(path)` reads a loop file (never running it), checks Bird's precondition,
synthesizes the combine with its identity, proves the laws, analyses numerical
stability, and runs the parallel form.  See README.md and the loop-file spec."""
from thm3.errors import BackendUnavailable, LoopError, SolverTimeout, Thm3Error, UsageError
from thm3.status import Status, Verdict
from thm3.syntax.frontend import parse_file, parse_source

__all__ = ["analyze", "analyze_source", "parse_file", "parse_source", "sample_names", "sample_path",
           "Thm3Error", "LoopError", "SolverTimeout", "BackendUnavailable", "UsageError", "Status", "Verdict"]
__version__ = "0.1.0"


def analyze(path, *, timeout: float = 60.0, lift: bool = True, accept_tested: bool = False, progress=None,
            memory: int | None = None):
    """Analyze the loop file at `path` (never running it); returns a `thm3.pipeline.Analysis`.
    `progress(name, step)`, where given, is called as each step starts (None) and ends.
    A combine whose laws are only tested on lists is "unknown" unless `accept_tested`.
    The answer comes within `timeout` seconds and a tenth ("unknown", naming the step, if
    the analysis was stopped); `memory` (MiB, Linux) bounds it as `--memory` does, in a
    forked child (then `progress` is not called)."""
    import time
    started = time.monotonic()          # the timeout counts from the call: parsing and imports too
    return _analyze(parse_file(path), started, timeout=timeout, lift=lift, accept_tested=accept_tested,
                    progress=progress, memory=memory)


def analyze_source(text: str, *, path: str = "<string>", name: str | None = None, timeout: float = 60.0,
                   lift: bool = True, accept_tested: bool = False, progress=None, memory: int | None = None):
    """Analyze a loop given as text (a notebook cell, a string), never running it; `name`
    names the loop (emitted files are NAME.cu, NAME.py), by default `path`'s stem.  The
    other arguments are `analyze`'s."""
    import time
    started = time.monotonic()
    return _analyze(parse_source(text, path, name), started, timeout=timeout, lift=lift,
                    accept_tested=accept_tested, progress=progress, memory=memory)


def _analyze(loop, started: float, *, memory: int | None, **options):
    from thm3.pipeline import analyze_loop, analyze_within_memory
    if memory is not None:
        return analyze_within_memory(loop, memory, started=started, **options)
    return analyze_loop(loop, started=started, **options)


def sample_path(name: str):
    """The path of the sample loop `name` (e.g. "mps") shipped with thm3: the wheel installs
    the samples as `thm3/samples/`, a checkout keeps them in `samples/` beside `thm3/`."""
    from pathlib import Path
    here = Path(__file__).resolve().parent
    for folder in (here / "samples", here.parent / "samples"):
        if (folder / f"{name}.py").is_file():
            return folder / f"{name}.py"
    known = ", ".join(sample_names()) or "none found"
    raise LookupError(f"no sample named {name!r}; the samples are: {known}")


def sample_names() -> list[str]:
    """The names of the sample loops shipped with thm3."""
    from pathlib import Path
    here = Path(__file__).resolve().parent
    for folder in (here / "samples", here.parent / "samples"):
        names = sorted(p.stem for p in folder.glob("*.py") if not p.stem.startswith("_"))
        if names:
            return names
    return []


def load_ipython_extension(ipython) -> None:
    """`%load_ext thm3` registers the `%%thm3` cell magic (see thm3.notebook)."""
    from thm3.notebook import load_ipython_extension as load
    load(ipython)
