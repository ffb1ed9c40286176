"""thm3's emitted reduction kernels on a GPU: every homomorphic sample's kernel against
thm3's NumPy backend (the kernels' order of operations on the CPU) at n = 0, 1, 1007,
10**6 + 3 and 2**28; then GB/s at n = 2**28 float32 for sum, mps, Welford, safe softmax
and mss next to `cupy.sum` (CUB) and a device copy measured in the same run.

Needs CuPy and NumPy, and thm3's IR and NumPy backend on PYTHONPATH (no z3, no SymPy):
the kernels come emitted, and the loops and combines pickled, in bench/kernels/
(bench/prepare_gpu.py writes them).  Run by bench/gpu_check.sh.

    python bench/gpu_reduce.py [--kernels bench/kernels] [--out DIR] [--budget 150]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import pickle
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from thm3.backends.numpy_tree import apply_result, run_parallel    # noqa: E402
from thm3.ir import Type                                           # noqa: E402
from thm3.semantics.samples import random_arrays                   # noqa: E402

SIZES = (0, 1, 1007, 10**6 + 3, 2**28)
TIMED = ("sum", "mps", "welford", "safe_softmax", "mss")
TOLERANCE = 1e-3        # float32 kernels against the float64 NumPy backend, relative


def load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def time_ms(cp, fn, reps: int, warmup: int = 3) -> float:
    """Median milliseconds of `fn` over `reps` runs, timed with CUDA events."""
    for _ in range(warmup):
        fn()
    cp.cuda.Device().synchronize()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(reps):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return float(np.median(times))


def difference(got, want) -> float:
    """Largest relative difference over the values (NaN where exactly one side is NaN;
    equal infinities and equal NaNs count as 0)."""
    worst = 0.0
    gots = got if isinstance(got, tuple) else (got,)
    wants = want if isinstance(want, tuple) else (want,)
    for g, w in zip(gots, wants, strict=True):
        g, w = np.asarray(g, np.float64).ravel(), np.asarray(w, np.float64).ravel()
        same = (g == w) | (np.isnan(g) & np.isnan(w))
        with np.errstate(invalid="ignore"):
            rel = np.where(same, 0.0, np.abs(g - w) / np.maximum(1.0, np.abs(w)))
        worst = max(worst, float(np.max(rel, initial=0.0)))
    return worst


def check(cp, kernels: Path, budget: float, sizes=SIZES) -> list[dict]:
    """Each sample's emitted kernel against the NumPy backend; `cp` None runs the emitted
    module's own NumPy twin instead of the kernel (a dry run of this check, no GPU)."""
    samples = pickle.loads((kernels / "samples.pkl").read_bytes())
    rows, started = [], time.perf_counter()
    for name, s in samples.items():
        loop, combine, dim = s["loop"], s["combine"], s["dim"] or 4
        module = load(kernels / f"{name}.py")
        rng = np.random.default_rng(len(name))
        for n in sizes:
            if n >= 2**28 and time.perf_counter() - started > budget:
                rows.append({"loop": name, "n": n, "status": "skipped (time budget)"})
                continue
            # drawn at up to 2**20 elements and repeated to n: the draw honours the loop's
            # preconditions, and 2**28 fresh draws would take longer than the check
            arrays, params = random_arrays(loop, min(n, 2**20), dim, rng)
            arrays = [np.resize(a, (n,) + a.shape[1:]) for a in arrays]
            typed = [a.astype(np.float32) if d.type in (Type.REAL, Type.VEC) else a
                     for a, d in zip(arrays, [e for e in loop.elements if not e.index])]
            args = typed if typed else [n]
            t0 = time.perf_counter()
            if cp is None:
                got = module.reduce(*args, backend="numpy", **params)
            else:
                got = module.reduce(*[cp.asarray(a) for a in args] if typed else args, **params)
                cp.cuda.Device().synchronize()
            t1 = time.perf_counter()
            # the reference in the kernels' float32, so that an overflow shows on both sides
            want = apply_result(loop, run_parallel(loop, combine, typed, params, n=n,
                                                   dtype=np.float32), params)
            got = tuple(np.asarray(g.get() if hasattr(g, "get") else g)
                        for g in (got if isinstance(got, tuple) else (got,)))
            diff = difference(got, want)
            finite = all(np.all(np.isfinite(np.asarray(w, np.float64)))
                         for w in (want if isinstance(want, tuple) else (want,)))
            status = "ok" if diff <= TOLERANCE else "FAIL" if finite else "differs past a float32 overflow"
            rows.append({"loop": name, "n": n, "status": status, "max_rel_diff": diff,
                         "seconds": t1 - t0})
            print(json.dumps(rows[-1]), flush=True)
    return rows


def timings(cp, kernels: Path, n: int, reps: int) -> dict:
    gb = n * 4 / 1e9
    x = cp.random.default_rng(0).standard_normal(n, dtype=cp.float32)
    y = cp.empty_like(x)
    copy_ms = time_ms(cp, lambda: cp.copyto(y, x), reps)
    sum_ms = time_ms(cp, lambda: x.sum(), reps)
    rows = []
    for name in TIMED:
        path = kernels / f"{name}.py"
        if not path.exists():
            rows.append({"loop": name, "error": f"no {path.name}"})
            continue
        module = load(path)
        ms = time_ms(cp, lambda: module.reduce_device(x), reps)
        rows.append({"loop": name, "ms": ms, "GBps": gb / ms * 1e3, "vs_cupy_sum": sum_ms / ms,
                     "of_copy": (gb / ms) / (2 * gb / copy_ms)})
        print(json.dumps(rows[-1]), flush=True)
    return {"n": n, "copy_GBps": 2 * gb / copy_ms * 1e3, "cupy_sum_ms": sum_ms,
            "cupy_sum_GBps": gb / sum_ms * 1e3, "rows": rows}


def table(checks: list[dict], timed: dict, device: str) -> str:
    failed = [r for r in checks if r["status"] == "FAIL"]
    skipped = [r for r in checks if r["status"] not in ("ok", "FAIL")]
    lines = [f"## Reductions on {device}", "",
             f"Kernels against the NumPy backend: {len(checks) - len(failed) - len(skipped)} ok, "
             f"{len(failed)} failed, {len(skipped)} skipped, over {len({r['loop'] for r in checks})} "
             f"samples at n = {', '.join(map(str, SIZES))} (tolerance {TOLERANCE} relative)."]
    lines += [f"- FAIL {r['loop']} n={r['n']}: max relative difference {r['max_rel_diff']:.2e}" for r in failed]
    lines += [f"- not compared: {r['loop']} n={r['n']}: {r['status']}" for r in skipped]
    lines += ["", f"n = {timed['n']} float32: device copy {timed['copy_GBps']:.0f} GB/s (read + write), "
              f"cupy.sum {timed['cupy_sum_GBps']:.0f} GB/s.", "",
              "| loop | thm3 GB/s | of cupy.sum (goal sum >= 0.95) | of copy (goal multi-field >= 0.85) |",
              "| --- | ---: | ---: | ---: |"]
    for r in timed["rows"]:
        if "error" in r:
            lines.append(f"| {r['loop']} | {r['error']} | | |")
        else:
            lines.append(f"| {r['loop']} | {r['GBps']:.0f} | {r['vs_cupy_sum']:.2f} | {r['of_copy']:.2f} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", default=str(ROOT / "bench" / "kernels"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--n", type=int, default=2**28)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--budget", type=float, default=150.0, help="seconds for the check sweep "
                    "before the 2**28 checks are skipped")
    ap.add_argument("--dry-run", action="store_true", help="no GPU: the emitted modules' NumPy "
                    "twins against the NumPy backend, n up to 10**6 + 3, no timings")
    args = ap.parse_args()
    kernels = Path(args.kernels)
    if args.dry_run:
        checks = check(None, kernels, args.budget, sizes=SIZES[:-1])
        bad = [r for r in checks if r["status"] == "FAIL"]
        print(f"dry run: {len(checks) - len(bad)} ok, {len(bad)} not: {bad}")
        return 1 if bad else 0
    import cupy as cp
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    device = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    checks = check(cp, kernels, args.budget)
    timed = timings(cp, kernels, args.n, args.reps)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "reduce.json").write_text(json.dumps({"device": device, "checks": checks, "timings": timed},
                                                indent=2) + "\n")
    text = table(checks, timed, device)
    (out / "reduce.md").write_text(text + "\n")
    print(text)
    return 1 if any(r["status"] == "FAIL" for r in checks) else 0


if __name__ == "__main__":
    raise SystemExit(main())
