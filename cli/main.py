"""The command line: `thm3 analyze | lift | emit | run | accuracy | demo | format`.

Exit status follows click: 0 success (a homomorphism, a file written), 1 the
analysis answered no or could not tell, 2 a bad loop file or bad usage, 3 an internal
error (a bug in thm3: a short message and the line to quote in a report; the traceback
with --debug).  Reports go to stdout; the steps, as they run, to stderr (never with
--json)."""
from __future__ import annotations

import contextlib
import json
import re
import sys
import time
from pathlib import Path

import click

from thm3.errors import BackendUnavailable, LoopError, UsageError
from thm3.cli.load import MEMORY_DEFAULT, fail, load

FORMAT_DOC = "docs/loop-format.md"
TIMEOUT_HELP = "Seconds for the whole analysis; a timeout answers 'unknown', never 'proved'."
MEMORY_HELP = ("MiB of memory the analysis may map beyond what thm3 holds when it starts (address space, "
               "solver children each get as much); past it the answer is 'unknown', never 'proved'.")
SAMPLE_HELP = "Analyse the sample loop NAME shipped with thm3 (e.g. mps, welford) instead of FILE."


TIMEOUT = click.option("--timeout", default=60.0, show_default=True, type=click.FloatRange(0.1, None),
                       help=TIMEOUT_HELP)
MEMORY = click.option("--memory", default=MEMORY_DEFAULT, show_default=True, type=click.IntRange(64, None),
                      metavar="MIB", help=MEMORY_HELP)


PARAM = click.option("--param", "param_values", multiple=True, metavar="NAME=VALUE",
                     help="A loop parameter's value (repeatable); the others are drawn at random "
                          "honouring the preconditions.")


def _params(loop, given: tuple[str, ...]) -> dict:
    """--param NAME=VALUE options as loop parameter values (a number fills a Vec)."""
    from thm3.ir import Type
    types = {p.name: p.type for p in loop.params}
    out = {}
    for item in given:
        name, eq, text = item.partition("=")
        name = name.strip()
        if not eq or name not in types:
            known = ", ".join(types) or "none"
            raise click.BadParameter(f"{item!r}: NAME=VALUE with NAME a loop parameter ({known})",
                                     param_hint="--param")
        try:
            match types[name]:
                case Type.BOOL:
                    value = {"true": True, "false": False, "1": True, "0": False}[text.strip().lower()]
                case Type.INT:
                    value = int(text)
                case _:
                    value = float(text)
        except (KeyError, ValueError):
            raise click.BadParameter(f"{item!r}: {text!r} is not a {types[name].value}",
                                     param_hint="--param") from None
        out[name] = value
    from thm3.ir import free_vars
    from thm3.report import invariant_text
    from thm3.semantics.evaluate import NUMPY, evaluate
    for cond in loop.preconditions:                 # the ones over the given parameters alone
        if free_vars([cond]) <= set(out) and not bool(evaluate([cond], out, NUMPY)[0]):
            raise click.BadParameter(f"{', '.join(f'{k}={v}' for k, v in out.items())} breaks the precondition "
                                     f"`assert {invariant_text(cond)}`", param_hint="--param")
    return out


def _random_inputs(loop, n: int, dim: int, rng, fixed: dict):
    """Random arrays and parameters for `run`, or exit 2 when the preconditions admit none."""
    from thm3.semantics.samples import random_arrays
    try:
        return random_arrays(loop, n, dim, rng, fixed)
    except ValueError as err:
        click.echo(f"{err}" + (f" with --param {', '.join(f'{k}={v}' for k, v in fixed.items())}" if fixed else ""),
                   err=True)
        sys.exit(2)


def _path(file: str | None, sample: str | None) -> str:
    """The loop file named by FILE or --sample NAME (exactly one of them); an internal
    error names it."""
    import thm3
    if (file is None) == (sample is None):
        raise click.UsageError("give a loop FILE or --sample NAME (one of them)")
    if file is not None:
        path = file
    else:
        try:
            path = str(thm3.sample_path(sample))
        except LookupError as err:
            raise click.BadParameter(str(err), param_hint="--sample") from None
    click.get_current_context().meta["thm3.path"] = path
    return path


@contextlib.contextmanager
def _writing(target: str):
    """An output path that cannot be written: one line on stderr naming it, exit 2 (bad
    usage), never a traceback."""
    try:
        yield
    except OSError as err:
        click.echo(f"cannot write {err.filename or target}: {err.strerror or err}", err=True)
        sys.exit(2)


def _print_report(a) -> None:
    """The text report through rich: the verdict line coloured, nothing re-wrapped."""
    from rich.console import Console
    from rich.text import Text
    from thm3.report import render_report
    console = Console(highlight=False, soft_wrap=True)
    colour = {"homomorphism": "bold green", "not-homomorphism": "bold red"}.get(a.verdict, "bold yellow")
    for line in render_report(a).splitlines():
        console.print(Text(line, style=colour if line.startswith("verdict:") else ""))


DEBUG_HELP = "On an internal error (exit 3), print the traceback too (also accepted after the command)."
EXIT_HELP = ("Exit 0 homomorphism, 1 not-homomorphism or unknown, 2 bad file or usage, 3 internal error "
             "(a bug in thm3: the message names the loop and the line to quote; --debug adds the traceback).")


class _Application(click.Group):
    """The command group, which turns an exception no command expected into exit 3: a
    short message naming the loop file and the line to quote in a bug report (the
    traceback only with --debug; `{"error": "internal", ...}` with --json).  `--debug` is
    read wherever it stands on the line, so that every command takes it."""

    def parse_args(self, ctx, args):
        if "--debug" in args[:args.index("--") if "--" in args else len(args)]:
            ctx.meta["thm3.debug"] = True
            args = [a for a in args if a != "--debug"]
        ctx.meta["thm3.json"] = "--json" in args
        return super().parse_args(ctx, args)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit, KeyboardInterrupt):
            raise
        except (LoopError, UsageError, BackendUnavailable) as err:    # raised past the command: still bad input
            click.echo(str(err), err=True)
            sys.exit(2)
        except OverflowError as err:
            if _INT_OVERFLOW.search(str(err)) is None:
                _internal_error(ctx, err)
            _int_overflow(ctx, err)
        except Exception as err:                                     # noqa: BLE001 - a bug: exit 3, never 1
            _internal_error(ctx, err)


_INT_OVERFLOW = re.compile(r"the Int field (\S+) overflows int64 in (left|the combine)")


def _int_overflow(ctx, err: OverflowError):
    """An Int field that left int64 on the data a command ran (`run`, `accuracy`): the
    backends compute Ints in int64 and stop rather than wrap.  Not a bug in thm3 and not an
    answer about the loop: one line saying what to do, exit 2 (`{"error": "int_overflow",
    ...}` with --json)."""
    field, where = _INT_OVERFLOW.search(str(err)).groups()
    path = ctx.meta.get("thm3.path")
    message = (f"{path + ': ' if path else ''}the Int field {field} overflows int64 in {where} on this data "
               "(the backends compute Ints in int64 and stop rather than wrap): use fewer or smaller "
               "elements (run's --n, --param), or declare the field Real")
    if ctx.meta.get("thm3.json"):
        click.echo(json.dumps({"error": "int_overflow", "field": field, "where": where, "path": path,
                               "message": message}))
    else:
        click.echo(message, err=True)
    sys.exit(2)


def _internal_error(ctx, err: BaseException):
    import traceback
    import thm3
    path = ctx.meta.get("thm3.path")
    frames = getattr(err, "thm3_frames", None) or [
        (f.filename, f.lineno, f.name) for f in traceback.extract_tb(err.__traceback__)]
    ours = [f for f in frames if "thm3" in f[0] or "/gpu/" in f[0] or "/cli/" in f[0]] or frames
    where = ""
    if ours:
        filename, line, name = ours[-1]
        parts = Path(filename).parts
        short = "/".join(parts[parts.index("thm3"):] if "thm3" in parts else parts[-2:])
        where = f" at {short}:{line} in {name}"
    quote = f"thm3 {thm3.__version__} (Python {sys.version.split()[0]}): {type(err).__name__}: {err}{where}"
    if ctx.meta.get("thm3.json"):
        click.echo(json.dumps({"error": "internal", "path": path, "exception": type(err).__name__,
                               "message": str(err), "where": where.removeprefix(" at ") or None, "quote": quote}))
    else:
        click.echo(f"thm3: internal error{f' on {path}' if path else ''}: this is a bug in thm3, not in the "
                   "loop file; please report it with the line below and the loop file"
                   + ("" if ctx.meta.get("thm3.debug") else " (--debug prints the traceback)"), err=True)
        click.echo(f"  {quote}", err=True)
    if ctx.meta.get("thm3.debug"):
        child = getattr(err, "thm3_traceback", None)
        click.echo(child or "".join(traceback.format_exception(err)), err=True)
    sys.exit(3)


@click.group(cls=_Application, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
             epilog=EXIT_HELP)
@click.version_option(package_name="thm3")
@click.option("--debug", is_flag=True, help=DEBUG_HELP)
def main(debug):
    """thm3: is your loop secretly associative? Find the combine, prove it, run it in parallel.

    A loop file is a small subset of Python, read and never run; its format is in
    docs/loop-format.md (`thm3 format` prints it)."""


@main.command(short_help="Decide whether a loop is a list homomorphism; the report.", epilog=EXIT_HELP)
@click.argument("file", type=click.Path(dir_okay=False), required=False)
@click.option("--sample", metavar="NAME", help=SAMPLE_HELP)
@click.option("--json", "as_json", is_flag=True,
              help="Print the analysis as JSON (`to_json()`); a bad file as JSON {error, line, col, path, hint} "
                   "on stdout.")
@TIMEOUT
@MEMORY
@click.option("--no-lift", is_flag=True, help="Do not search for auxiliary state on a non-homomorphism.")
@click.option("--accept-tested", is_flag=True,
              help="Call a combine whose laws are only tested on lists (not proved) a homomorphism.")
def analyze(file, sample, as_json, timeout, no_lift, accept_tested, memory):
    """Decide whether FILE's loop is a list homomorphism, with its combine and proofs.

    FILE is a loop file: see docs/loop-format.md (or `thm3 format`) for what it may hold."""
    path = _path(file, sample)
    a = load(path, timeout, lift=not no_lift, as_json=as_json, accept_tested=accept_tested, memory=memory)
    if as_json:
        click.echo(json.dumps(a.to_json(), indent=2, default=str))
    else:
        _print_report(a)
    sys.exit(0 if a.verdict == "homomorphism" else 1)


@main.command(short_help="Add auxiliary state so that a combine exists.")
@click.argument("file", type=click.Path(dir_okay=False), required=False)
@click.option("--sample", metavar="NAME", help=SAMPLE_HELP)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the lifted loop file here.")
@TIMEOUT
@MEMORY
def lift(file, sample, output, timeout, memory):
    """Add auxiliary state to FILE's loop so that a combine exists, and print the lifted loop.
    A loop whose verdict is "unknown" is searched too: each candidate goes to the prover,
    so that takes up to --timeout."""
    path = _path(file, sample)
    a = load(path, timeout, lift=True, memory=memory, lift_unknown=True)
    if a.verdict == "homomorphism":
        click.echo(f"{path}: already a homomorphism; nothing to add.")
        sys.exit(0)
    if a.lifted is None:
        click.echo(f"{path}: {a.verdict}: {a.reason}")
        note = next((s.detail for s in a.steps if s.name == "lift"), "")
        click.echo(note if note.startswith("no bounded lift") else f"no lift found: {note}" if note else
                   "no lift found")
        sys.exit(1)
    if output:                              # written first: an unwritable path is one line, exit 2
        with _writing(output):
            Path(output).write_text(a.lifted)
    click.echo(f"{path}: {a.reason}")
    click.echo("added:")
    for line in a.lift_added:
        click.echo(f"  {line}")
    if output:
        click.echo(f"wrote {output}")
    else:
        click.echo("")
        click.echo(a.lifted)
    sys.exit(0)


@main.command(short_help="Write CUDA and a CuPy module for the combine tree.")
@click.argument("file", type=click.Path(dir_okay=False), required=False)
@click.option("--sample", metavar="NAME", help=SAMPLE_HELP)
@click.option("-o", "--output", "outdir", required=True, type=click.Path(file_okay=False),
              help="Directory for NAME.cu and NAME.py.")
@click.option("--dtype", type=click.Choice(["float32", "float64"]), default="float32", show_default=True,
              help="The kernel's type for Real values.")
@click.option("--dim", type=click.IntRange(1, 4096), default=None,
              help="Length of Vec values (required when the loop has Vec values; 64 or 128 for attention).")
@TIMEOUT
@MEMORY
@click.option("--accept-tested", is_flag=True, help="Emit a combine whose laws are only tested (not proved).")
@click.option("--target", type=click.Choice(["cuda", "jax", "triton"]), default="cuda", show_default=True,
              help="cuda: NAME.cu and its CuPy module NAME.py; jax: NAME_jax.py, the combine for "
                   "jax.numpy with scan and reduce (and jax.lax.associative_scan); triton: NAME_triton.py, @triton.jit "
                   "kernels (tl.reduce only where commutativity is proved).")
def emit(file, sample, outdir, dtype, dim, timeout, accept_tested, memory, target):
    """Write FILE's combine tree as code: CUDA (NAME.cu) and a CuPy module (NAME.py), or
    with --target jax a JAX module (NAME_jax.py), with --target triton a Triton module
    (NAME_triton.py)."""
    path = _path(file, sample)
    a = load(path, timeout, lift=False, accept_tested=accept_tested, memory=memory)
    if a.combine_fn is None or a.verdict != "homomorphism":
        click.echo(f"{path}: {a.verdict}: {a.reason}; nothing to emit", err=True)
        if a.witness is not None:
            click.echo(f"no combine over this state exists: `thm3 lift {path} -o LIFTED.py` adds the state "
                       "that makes one, then `thm3 emit LIFTED.py -o DIR`", err=True)
        sys.exit(1)
    if target in ("jax", "triton"):
        with _writing(outdir):
            written = a.emit(outdir, target=target)
        for p in written:
            click.echo(f"wrote {p} (commutativity: {a.proofs.get('commutativity', 'unknown')})")
        sys.exit(0)
    if any(f.type.value == "Vec" for f in a.loop.fields) or any(
            d.type.value == "Vec" for d in a.loop.elements + a.loop.params):
        if dim is None:
            raise click.UsageError("this loop has Vec values: give their length with --dim")
    from thm3.analysis.attention import recognize
    shape = recognize(a.loop, a.transport_map)
    if shape is not None:
        if dim not in (64, 128):
            raise click.UsageError("the attention kernel takes --dim 64 or 128")
        click.echo(f"{a.loop.name}: {shape.describe()}")
    with _writing(outdir):
        written = a.emit(outdir, dtype=dtype, dim=dim)
    for p in written:
        click.echo(f"wrote {p}")
    sys.exit(0)


@main.command(short_help="Run the parallel form on random data against the sequential fold.")
@click.argument("file", type=click.Path(dir_okay=False), required=False)
@click.option("--sample", metavar="NAME", help=SAMPLE_HELP)
@click.option("--n", "n", default=100_000, show_default=True, type=click.IntRange(0, None),
              help="Number of list elements.")
@click.option("--backend", type=click.Choice(["numpy", "numba", "cupy", "jax"]), default="numpy", show_default=True,
              help="numpy: the combine tree on the CPU; numba: compiled, in threads (thm3[cpu]); "
                   "cupy: the emitted CUDA kernel; jax: the JAX module (thm3[jax]).")
@click.option("--scan", "scan", is_flag=True,
              help="Run the inclusive scan instead and compare every prefix with the sequential prefixes.")
@click.option("--dtype", type=click.Choice(["float64", "float32"]), default="float64", show_default=True,
              help="Type of the Real input arrays; the parallel form computes in it.")
@click.option("--dim", type=click.IntRange(1, 4096), default=4, show_default=True,
              help="Length of Vec values in the random data.")
@click.option("--seed", default=0, show_default=True, help="Seed of the random data.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the comparison as JSON {loop, n, backend, dtype, scan, params, parallel, "
                   "sequential, max_relative_difference, parallel_s, sequential_s}; an error as "
                   "JSON {error, ...}.")
@TIMEOUT
@MEMORY
@PARAM
def run(file, sample, n, backend, scan, dtype, dim, seed, as_json, timeout, memory, param_values):
    """Run the parallel reduction on random data and compare it with the sequential fold
    (float64, element by element)."""
    import numpy as np
    path = _path(file, sample)
    a = load(path, timeout, lift=False, memory=memory, as_json=as_json)
    if a.combine_fn is None:
        if as_json:
            click.echo(json.dumps({"loop": a.loop.name, "path": path, "verdict": str(a.verdict), "reason": a.reason}))
        else:
            click.echo(f"{path}: {a.verdict}: {a.reason}; no parallel form", err=True)
        sys.exit(1)
    rng = np.random.default_rng(seed)
    arrays, params = _random_inputs(a.loop, n, dim, rng, _params(a.loop, param_values))
    arrays = [x.astype(dtype) if x.dtype.kind == "f" else x for x in arrays]
    t0 = time.perf_counter()
    try:
        if scan:                            # every prefix, against the sequential prefixes
            par = _on_host(a.scan(*arrays, backend=backend, result=True, **params))
        else:
            par = a.run(*arrays, backend=backend, **params)
    except BackendUnavailable as err:
        fail(f"{path}: backend {backend}: {err}", as_json, path=path)
    except UsageError as err:                # a --param that breaks a precondition
        fail(f"{path}: {err}", as_json, path=path)
    t1 = time.perf_counter()
    if scan:
        from thm3.backends.scan import prefix_results, run_sequential_prefixes
        seq = prefix_results(a.loop, run_sequential_prefixes(a.loop, arrays, params), params)
    else:
        seq = _sequential_with_progress(a.loop, arrays, params, n)
    t2 = time.perf_counter()
    diff = _difference(par, seq)
    tol = 1e-6 if dtype == "float64" else 1e-3
    code = 0 if diff <= tol or diff != diff and _short(par) == _short(seq) else 1
    if as_json:
        click.echo(json.dumps({"loop": a.loop.name, "path": path, "n": n, "backend": backend, "dtype": dtype,
                               "scan": scan, "params": {k: _short(v) for k, v in params.items()},
                               "parallel": _short(par), "sequential": _short(seq),
                               "max_relative_difference": diff if diff == diff else None,
                               "parallel_s": t1 - t0, "sequential_s": t2 - t1}))
        sys.exit(code)
    click.echo(f"{a.loop.title}  n = {n}  backend = {backend}  dtype = {dtype}" + ("  (scan)" if scan else "")
               + "".join(f"  {k} = {_short(v)}" for k, v in params.items()))
    click.echo(f"  parallel   {_short(par)}   {t1 - t0:.4f} s")
    click.echo(f"  sequential {_short(seq)}   {t2 - t1:.4f} s  (float64)")
    click.echo(f"  max relative difference {diff:.3g}")
    sys.exit(code)


def _on_host(v):
    """CuPy results as NumPy arrays (a tuple stays a tuple)."""
    if isinstance(v, tuple):
        return tuple(_on_host(x) for x in v)
    return v.get() if hasattr(v, "get") and type(v).__module__.split(".")[0] == "cupy" else v


def _sequential_with_progress(loop, arrays, params, n: int):
    """The float64 sequential fold, with a progress bar on a terminal for long lists."""
    from thm3.accuracy import sequential_prefixes
    from thm3.backends.numpy_tree import apply_result
    with _Bar("sequential fold", n) as bar:
        state = sequential_prefixes(loop, arrays, params, [n], progress=bar.advance)[-1]
    return apply_result(loop, state, params)


class _Bar:
    """A rich progress bar on stderr, shown only on a terminal."""

    def __init__(self, what: str, total: int):
        from rich.console import Console
        from rich.progress import Progress
        console = Console(stderr=True)
        self.progress = Progress(console=console, transient=True, disable=not console.is_terminal)
        self.task = self.progress.add_task(what, total=total)

    def __enter__(self):
        self.progress.start()
        return self

    def __exit__(self, *exc):
        self.progress.stop()
        return False

    def advance(self, k: int) -> None:
        self.progress.advance(self.task, k)


def _short(v) -> str:
    """A value as the CLI prints it: plain numbers (no `np.float32(...)`), each at the
    precision of its dtype (a float32 by its shortest float32 spelling), arrays cut short;
    several values in parentheses."""
    import numpy as np
    if hasattr(v, "_fields"):               # a NamedTuple of named results
        return f"{type(v).__name__}(" + ", ".join(f"{k}={_short(x)}" for k, x in zip(v._fields, v)) + ")"
    if isinstance(v, tuple):
        return "(" + ", ".join(_short(x) for x in v) + ")"
    arr = np.asarray(v)
    if arr.ndim:
        with np.printoptions(precision=6, threshold=6):
            return str(arr)
    if arr.dtype.kind == "f":
        return str(arr[()]) if arr.dtype != np.float64 else repr(float(arr))
    return str(arr.item())


def _difference(x, y) -> float:
    import numpy as np
    xs = x if isinstance(x, tuple) else (x,)
    ys = y if isinstance(y, tuple) else (y,)
    worst = 0.0
    for u, v in zip(xs, ys):
        u = np.asarray(u, dtype=np.float64)
        v = np.asarray(v, dtype=np.float64)
        with np.errstate(all="ignore"):
            same = (u == v) | (np.isnan(u) & np.isnan(v))
            rel = np.where(same, 0.0, np.abs(u - v) / np.maximum(1.0, np.abs(v)))
            rel = np.where(np.isnan(rel), np.inf, rel)     # NaN against a number, inf against inf
        worst = max(worst, float(np.max(rel)) if rel.size else 0.0)
    return worst


@main.command(short_help="Relative error of the sequential fold and the tree as n grows.")
@click.argument("file", type=click.Path(dir_okay=False), required=False)
@click.option("--sample", metavar="NAME", help=SAMPLE_HELP)
@click.option("--dtype", type=click.Choice(["float32", "float64"]), default="float32", show_default=True,
              help="Type both forms compute in; the reference is computed in extended precision "
                   "(long double) through the proved combine tree.")
@click.option("--max-n", "max_n", default=10**7, show_default=True, type=click.IntRange(100, 10**8),
              help="Largest list length (n = 10^2, 10^3, ... up to it).")
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="Draw the errors against n into this PNG (needs matplotlib: pip install 'thm3[plot]').")
@click.option("--seed", default=0, show_default=True, help="Seed of the random data.")
@TIMEOUT
@MEMORY
@PARAM
def accuracy(file, sample, dtype, max_n, plot, seed, timeout, memory, param_values):
    """Measure the relative error of the sequential fold and of the blocked combine tree,
    both in --dtype, against an extended-precision reference, for n = 10^2 up to --max-n."""
    from thm3.accuracy import measure, plot_errors, reference_name, table
    path = _path(file, sample)
    a = load(path, timeout, lift=False, memory=memory)
    if a.combine_fn is None:
        click.echo(f"{path}: {a.verdict}: {a.reason}; no tree to measure", err=True)
        sys.exit(1)
    if plot:                                # before the measurement, which takes a while
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise click.UsageError("--plot needs matplotlib: pip install 'thm3[plot]'") from None
    with _Bar("accuracy", 2 * max_n) as bar:
        rows = measure(a, dtype=dtype, max_n=max_n, seed=seed, params=_params(a.loop, param_values),
                       progress=bar.advance)
    click.echo(f"{a.loop.title}\nrelative error of the {dtype} results against {reference_name()} (random data):")
    click.echo(table(rows))
    if plot:
        with _writing(plot):
            plot_errors(rows, plot, title=f"{a.loop.title.split(':')[0]} ({dtype})", dtype=dtype)
        click.echo(f"wrote {plot}")
    sys.exit(0)


@main.command(short_help="FlashAttention derived end to end from its loop file.")
@click.option("-o", "--output", "outdir", default="thm3-demo", show_default=True,
              type=click.Path(file_okay=False), help="Where the emitted kernel goes.")
@click.option("--dim", type=click.Choice(["64", "128"]), default="64", show_default=True,
              help="Head dimension of the attention kernel.")
@TIMEOUT
def demo(outdir, dim, timeout):
    """Derive FlashAttention from its loop file, end to end: analysis, proofs, kernel, checks."""
    from thm3.cli.demo import run_demo
    sys.exit(run_demo(outdir, int(dim), timeout))


@main.command(name="format", short_help="Print the loop-file format (docs/loop-format.md).")
def format_():
    """Print the loop-file format and the public contract (docs/loop-format.md)."""
    from thm3.cli.docs import loop_format
    click.echo(loop_format())


if __name__ == "__main__":
    main()
