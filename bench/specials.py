"""What the guard of `thm3/backends/guard.py` costs, every ratio against a baseline timed
in the same run, on safe_softmax (log-sum-exp's state), n = 10**6 by default:

- a clean list (normal values): the parallel forms as they always ran, with the guard's
  checks; with `--before PATH` also the same call in a checkout without the guard (a
  subprocess with PATH first on sys.path, three rounds alternated, the fastest of each
  kept), so the checks' overhead is a ratio;
- -inf at 100 random places (1 run start in about 40 for the NumPy scan): the runs they
  poison are folded again from their carried states;
- the last half -inf (a masked tail): every run there is folded as the loop does;

on NumPy, Numba and JAX (each where installed), and the emitted module's own NumPy path
(`reduce_state` and `scan` with backend="numpy", float64), against the sequential fold (`run_sequential`, the loop element by element in Python).
Writes bench/results/specials-*."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # this checkout's thm3, not an installed one
import thm3                                        # noqa: E402
from common import best, write                     # noqa: E402

CLEAN = '''
import importlib.util, os, sys, time, numpy as np
sys.path.insert(0, sys.argv[1])
import thm3
# thm3.gpu from the same checkout (an editable install maps it to its own gpu/ folder)
gpu = os.path.join(sys.argv[1], "gpu")
spec = importlib.util.spec_from_file_location("thm3.gpu", os.path.join(gpu, "__init__.py"),
                                              submodule_search_locations=[gpu])
sys.modules["thm3.gpu"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sys.modules["thm3.gpu"])
from specials import module
from thm3.backends.numpy_tree import run_parallel
from thm3.backends.scan import scan_numpy
a = thm3.analyze(thm3.sample_path("safe_softmax"), lift=False)
x = np.random.default_rng(0).standard_normal(int(sys.argv[2]))
m = module(a, os.path.join(sys.argv[3], os.path.basename(sys.argv[1].rstrip('/'))))
for f in (lambda: run_parallel(a.loop, a.combine_fn, [x], {}), lambda: scan_numpy(a.loop, a.combine_fn, [x], {}),
          lambda: m.reduce_state(x, backend="numpy"), lambda: m.scan(x, backend="numpy")):
    f()
    ts = []
    for _ in range(5):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    print(min(ts))
'''


def module(a, folder: str):
    """The emitted module of `a` (float64), imported: its NumPy path is backend="numpy"."""
    import importlib.util
    from thm3.gpu import api
    _, py = api.emit(a.loop, a.combine_fn, Path(folder), dtype="float64")
    spec = importlib.util.spec_from_file_location(f"emitted_{a.loop.name}", py)
    out = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(out)
    return out


def lists(n: int) -> dict:
    rng = np.random.default_rng(0)
    clean = rng.standard_normal(n)
    scattered = clean.copy()
    scattered[rng.choice(n, 100, replace=False)] = -np.inf
    tail = clean.copy()
    tail[n // 2:] = -np.inf
    return {"clean": clean, "-inf at 100 places": scattered, "last half -inf": tail}


def main(argv=None) -> None:
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10**6)
    parser.add_argument("--before", help="a checkout without the guard, for the clean list's overhead")
    args = parser.parse_args(argv)
    from thm3.backends.numpy_tree import run_parallel, run_sequential
    from thm3.backends.scan import run_sequential_prefixes, scan_numpy
    a = thm3.analyze(thm3.sample_path("safe_softmax"), lift=False)
    forms = {"NumPy reduce": lambda x: run_parallel(a.loop, a.combine_fn, [x], {}),
             "NumPy scan": lambda x: scan_numpy(a.loop, a.combine_fn, [x], {})}
    try:
        from thm3.backends.numba_tree import run_numba, scan_numba
        forms["Numba reduce"] = lambda x: run_numba(a.loop, a.combine_fn, [x], {})
        forms["Numba scan"] = lambda x: scan_numba(a.loop, a.combine_fn, [x], {})
    except ImportError:
        pass
    try:
        from thm3.backends.jax_tree import run_jax, scan_jax
        forms["JAX reduce"] = lambda x: run_jax(a.loop, a.combine_fn, [x], {})
        forms["JAX scan"] = lambda x: scan_jax(a.loop, a.combine_fn, [x], {})
    except ImportError:
        pass
    folder = tempfile.mkdtemp()
    emitted = module(a, folder)
    forms["emitted module reduce"] = lambda x: emitted.reduce_state(x, backend="numpy")
    forms["emitted module scan"] = lambda x: emitted.scan(x, backend="numpy")
    rows = []
    for label, x in lists(args.n).items():
        seq = best(lambda: run_sequential(a.loop, [x], {}), 1)
        want = run_sequential(a.loop, [x], {})
        prefixes = run_sequential_prefixes(a.loop, [x], {}) if "scan" in " ".join(forms) else None
        for name, f in forms.items():
            got = f(x)
            ref = prefixes if "scan" in name else want
            for g, w in zip(got, ref):
                assert np.allclose(g, w, rtol=1e-9, equal_nan=True), (label, name)
            t = best(lambda: f(x), 3)
            rows.append((label, name, t, seq, seq / t))
            print(rows[-1], flush=True)
    table = ("| list | form | s | sequential fold s | speed-up over the sequential fold |\n"
             "| --- | --- | --- | --- | --- |\n")
    table += "\n".join(f"| {l} | {f} | {t:.4f} | {s:.3f} | {r:.1f} |" for l, f, t, s, r in rows)
    before = None
    if args.before:
        def timed(root):
            out = subprocess.run([sys.executable, "-c", CLEAN, root, str(args.n), folder], capture_output=True,
                                 text=True, check=True, cwd=Path(__file__).resolve().parent,
                                 env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent)}).stdout.split()
            return [float(v) for v in out]
        here = str(Path(__file__).resolve().parents[1])
        rounds = [(timed(args.before), timed(here)) for _ in range(3)]     # alternated: the load drifts
        old = [min(r[0][k] for r in rounds) for k in range(4)]
        now = [min(r[1][k] for r in rounds) for k in range(4)]
        before = {k: (old[i], now[i]) for i, k in enumerate(["NumPy reduce", "NumPy scan", "emitted module reduce",
                                                              "emitted module scan"])}
        table += "\n\nThe clean list, without the guard (`--before`) and with it:\n\n| form | before s | after s | after / before |\n| --- | --- | --- | --- |\n"
        table += "\n".join(f"| {k} | {b:.4f} | {w:.4f} | {w / b:.2f} |" for k, (b, w) in before.items())
    table += (f"\n\nn = {args.n}, float64.  Load average at the end (the machine is shared): "
              f"{', '.join(f'{v:.2f}' for v in os.getloadavg())}.")
    print(table)
    print(write("specials", {"rows": rows, "before": before, "n": args.n, "load": os.getloadavg()}, table))


if __name__ == "__main__":
    main()
