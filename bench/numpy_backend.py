"""The NumPy backend (thm3/backends/numpy_tree.py) against the plain Python fold at n = 10**6 (target:
at least 30x faster) and, for sum, against numpy.sum at n = 10**7 (target: within 5x).
The Python fold is the loop file itself, imported as plain Python (its own sequential
reference).  Writes bench/results/numpy_backend-<date>-<hostname>.json and .md.

    python bench/numpy_backend.py [--loops sum mps welford safe_softmax]
"""
from __future__ import annotations

import argparse
import runpy
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import thm3                                                     # noqa: E402
from common import write                                         # noqa: E402
from thm3.backends.numpy_tree import run_parallel                          # noqa: E402

LOOPS = ("sum", "mps", "welford", "safe_softmax")


def python_fold(path: Path, xs) -> tuple:
    """The loop file run as Python: State() folded with left over Python floats."""
    namespace = runpy.run_path(str(path))
    state, left = namespace["State"](), namespace["left"]
    for x in xs:
        state = left(state, x)
    return tuple(state)


def median_seconds(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loops", nargs="*", default=LOOPS)
    ap.add_argument("--n", type=int, default=10**6)
    ap.add_argument("--n-sum", type=int, default=10**7)
    ap.add_argument("--reps", type=int, default=15)
    args = ap.parse_args()
    rng = np.random.default_rng(0)

    rows = []
    x = rng.normal(size=args.n)
    for name in args.loops:
        path = ROOT / "samples" / f"{name}.py"
        a = thm3.analyze(path)
        start = time.perf_counter()
        want = python_fold(path, x.tolist())
        python_s = time.perf_counter() - start
        got = run_parallel(a.loop, a.combine_fn, [x], {})
        numpy_s = median_seconds(lambda: run_parallel(a.loop, a.combine_fn, [x], {}), 5)
        agree = all(np.allclose(g, w, rtol=1e-8, atol=1e-8) for g, w in zip(got, want))
        rows.append({"loop": name, "n": args.n, "python_s": python_s, "numpy_s": numpy_s,
                     "speedup": python_s / numpy_s, "target": 30.0,
                     "met": python_s / numpy_s >= 30.0, "agrees_with_fold": bool(agree)})
        print(f"{name}: Python fold {python_s:.2f} s, NumPy backend {numpy_s * 1e3:.1f} ms, "
              f"{python_s / numpy_s:.0f}x, agree {agree}", flush=True)

    # sum against numpy.sum: interleaved, medians, so that machine noise hits both alike
    a = thm3.analyze(ROOT / "samples" / "sum.py")
    big = rng.normal(size=args.n_sum)
    ours, theirs = [], []
    run_parallel(a.loop, a.combine_fn, [big], {})
    for _ in range(args.reps):
        theirs.append(median_seconds(lambda: np.sum(big), 1))
        ours.append(median_seconds(lambda: run_parallel(a.loop, a.combine_fn, [big], {}), 1))
    ratio = float(np.median(ours) / np.median(theirs))
    total = run_parallel(a.loop, a.combine_fn, [big], {})[0]
    sum_row = {"n": args.n_sum, "numpy_sum_ms": float(np.median(theirs)) * 1e3,
               "numpy_backend_ms": float(np.median(ours)) * 1e3, "ratio": ratio, "target": 5.0,
               "met": ratio <= 5.0, "rel_err": float(abs(total - np.sum(big)) / abs(np.sum(big)))}
    print(f"sum at n = {args.n_sum}: numpy.sum {sum_row['numpy_sum_ms']:.1f} ms, NumPy backend "
          f"{sum_row['numpy_backend_ms']:.1f} ms, {ratio:.2f}x (target <= 5x)")

    lines = [f"| loop | n | Python fold s | NumPy backend ms | speedup (>= 30x) |",
             "| --- | ---: | ---: | ---: | ---: |"]
    lines += [f"| {r['loop']} | {r['n']} | {r['python_s']:.2f} | {r['numpy_s'] * 1e3:.1f} | "
              f"{r['speedup']:.0f}x{'' if r['met'] else ' MISSED'} |" for r in rows]
    lines += ["", "| sum, n | numpy.sum ms | NumPy backend ms | ratio (<= 5x) |",
              "| ---: | ---: | ---: | ---: |",
              f"| {args.n_sum} | {sum_row['numpy_sum_ms']:.1f} | {sum_row['numpy_backend_ms']:.1f} | "
              f"{ratio:.2f}x{'' if sum_row['met'] else ' MISSED'} |",
              "", f"NumPy {np.__version__}; medians, the sum pair interleaved (a loaded machine "
              "moves both; its load shows in the spread of repeated runs)."]
    table = "\n".join(lines)
    path = write("numpy_backend", {"numpy": np.__version__, "fold_vs_backend": rows,
                                   "sum_vs_numpy_sum": sum_row}, table)
    print(table)
    print(f"written: {path.relative_to(ROOT)} (and .json)")


if __name__ == "__main__":
    main()
