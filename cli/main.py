"""The command line: `thm3 analyze | lift | emit | run | demo`.

Exit status follows click: 0 success (a homomorphism, a file written), 1 the
analysis answered no or could not tell, 2 a bad loop file or bad usage."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

from thm3.errors import BackendUnavailable, LoopError


def _load(path: str, timeout: float, lift: bool = True):
    from thm3.pipeline import analyze_loop
    from thm3.syntax.frontend import parse_file
    try:
        loop = parse_file(path)
    except LoopError as err:
        click.echo(str(err), err=True)
        sys.exit(2)
    except OSError as err:
        click.echo(f"{path}: cannot read the file: {err.strerror or err}", err=True)
        sys.exit(2)
    return analyze_loop(loop, timeout=timeout, lift=lift)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="thm3")
def main():
    """thm3: is your loop secretly associative? Find the combine, prove it, run it in parallel."""


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the analysis as JSON (`to_json()`).")
@click.option("--timeout", default=60.0, show_default=True, type=click.FloatRange(0.1, None),
              help="Seconds for the whole analysis; a timeout answers 'unknown', never 'proved'.")
@click.option("--no-lift", is_flag=True, help="Do not search for auxiliary state on a non-homomorphism.")
def analyze(file, as_json, timeout, no_lift):
    """Decide whether FILE's loop is a list homomorphism, with its combine and proofs."""
    from thm3.report import render_report
    a = _load(file, timeout, lift=not no_lift)
    if as_json:
        click.echo(json.dumps(a.to_json(), indent=2, default=str))
    else:
        click.echo(render_report(a))
    sys.exit(0 if a.verdict == "homomorphism" else 1)


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the lifted loop file here.")
@click.option("--timeout", default=60.0, show_default=True, type=click.FloatRange(0.1, None))
def lift(file, output, timeout):
    """Add auxiliary state to FILE's loop so that a combine exists."""
    a = _load(file, timeout, lift=True)
    if a.verdict == "homomorphism":
        click.echo(f"{file}: already a homomorphism; nothing to add.")
        sys.exit(0)
    if a.lifted is None:
        click.echo(f"{file}: {a.verdict}: {a.reason}")
        note = next((s.detail for s in a.steps if s.name == "lift"), "")
        click.echo(f"no lift found: {note}" if note else "no lift found")
        sys.exit(1)
    click.echo(f"{file}: {a.reason}")
    click.echo("added:")
    for line in a.lift_added:
        click.echo(f"  {line}")
    if output:
        Path(output).write_text(a.lifted)
        click.echo(f"wrote {output}")
    else:
        click.echo("")
        click.echo(a.lifted)
    sys.exit(0)


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "outdir", required=True, type=click.Path(file_okay=False),
              help="Directory for NAME.cu and NAME.py.")
@click.option("--dtype", type=click.Choice(["float32", "float64"]), default="float32", show_default=True)
@click.option("--dim", type=click.IntRange(1, 4096), default=None, help="Length of Vec values.")
@click.option("--timeout", default=60.0, show_default=True, type=click.FloatRange(0.1, None))
def emit(file, outdir, dtype, dim, timeout):
    """Write CUDA (NAME.cu) and a CuPy module (NAME.py) for FILE's combine tree."""
    a = _load(file, timeout, lift=False)
    if a.combine_fn is None:
        click.echo(f"{file}: {a.verdict}: {a.reason}; nothing to emit", err=True)
        sys.exit(1)
    if any(f.type.value == "Vec" for f in a.loop.fields) or any(
            d.type.value == "Vec" for d in a.loop.elements + a.loop.params):
        if dim is None:
            raise click.UsageError("this loop has Vec values: give their length with --dim")
    from thm3.analysis.attention import recognize
    shape = recognize(a.loop, a.transport_map)
    if shape is not None:
        # The loop is attention: the kernel walks K/V tiles with two matrix products
        # and merges tiles and splits with the derived combine.
        from thm3.gpu.emit_attention import emit_attention
        if dim not in (64, 128):
            raise click.UsageError("the attention kernel takes --dim 64 or 128")
        paths = emit_attention(a, shape, outdir, dim=dim)
        click.echo(f"{a.loop.name}: {shape.describe()}")
    else:
        from thm3.gpu.emit import emit as emit_files
        paths = emit_files(a.loop, a.combine_fn, outdir, dtype=dtype, dim=dim)
    for p in paths:
        click.echo(f"wrote {p}")
    sys.exit(0)


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--n", "n", default=100_000, show_default=True, type=click.IntRange(0, None))
@click.option("--backend", type=click.Choice(["numpy", "cupy"]), default="numpy", show_default=True)
@click.option("--dim", type=click.IntRange(1, 4096), default=4, show_default=True)
@click.option("--seed", default=0, show_default=True)
@click.option("--timeout", default=60.0, show_default=True, type=click.FloatRange(0.1, None))
def run(file, n, backend, dim, seed, timeout):
    """Run the parallel reduction on random data and compare it with the sequential fold."""
    import numpy as np
    from thm3.backends.numpy_tree import apply_result, run_sequential
    from thm3.semantics.samples import random_arrays
    a = _load(file, timeout, lift=False)
    if a.combine_fn is None:
        click.echo(f"{file}: {a.verdict}: {a.reason}; no parallel form", err=True)
        sys.exit(1)
    rng = np.random.default_rng(seed)
    arrays, params = random_arrays(a.loop, n, dim, rng)
    t0 = time.perf_counter()
    try:
        par = a.run(*arrays, backend=backend, **params)
    except BackendUnavailable as err:
        click.echo(f"{file}: backend {backend}: {err}", err=True)
        sys.exit(2)
    t1 = time.perf_counter()
    seq = apply_result(a.loop, run_sequential(a.loop, arrays, params), params)
    t2 = time.perf_counter()
    diff = _difference(par, seq)
    click.echo(f"{a.loop.title}  n = {n}  backend = {backend}")
    click.echo(f"  parallel   {_short(par)}   {t1 - t0:.4f} s")
    click.echo(f"  sequential {_short(seq)}   {t2 - t1:.4f} s")
    click.echo(f"  max relative difference {diff:.3g}")
    sys.exit(0 if diff <= 1e-6 or diff != diff and _short(par) == _short(seq) else 1)


def _short(v) -> str:
    import numpy as np
    arr = np.asarray(v, dtype=object) if isinstance(v, tuple) else np.asarray(v)
    with np.printoptions(precision=6, threshold=6):
        return str(arr) if arr.ndim else repr(arr.item())


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
        worst = max(worst, float(np.max(rel)) if rel.size else 0.0)
    return worst


@main.command()
@click.option("-o", "--output", "outdir", default="thm3-demo", show_default=True,
              type=click.Path(file_okay=False), help="Where the emitted kernel goes.")
@click.option("--dim", type=click.Choice(["64", "128"]), default="64", show_default=True)
@click.option("--timeout", default=60.0, show_default=True, type=click.FloatRange(0.1, None))
def demo(outdir, dim, timeout):
    """Derive FlashAttention from its loop file, end to end."""
    from thm3.cli.demo import run_demo
    sys.exit(run_demo(outdir, int(dim), timeout))


if __name__ == "__main__":
    main()
