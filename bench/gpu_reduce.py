"""Bandwidth of thm3's emitted reduction kernels on a GPU: GB/s (bytes read over time) at
n = 2**28 float32 for sum, max prefix sum, Welford and online-softmax statistics, next to
`cupy.sum` and to a multi-pass plain CuPy composition of the same statistics, with a
device copy as the speed of light.  Needs CuPy and NumPy only: the kernels come emitted,
from bench/kernels/ (bench/prepare_gpu.py writes them).  Run by bench/gpu_check.sh.

    python bench/gpu_reduce.py [--n 268435456] [--out bench/results]
"""
from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import socket
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def _welford(cp, x):
    mean = x.mean()
    return x.size, mean, ((x - mean) ** 2).sum()


def _softmax(cp, x):
    m = x.max()
    return m, cp.exp(x - m).sum()


# The same statistics as plain CuPy, one library call per pass.
COMPOSITIONS = {
    "sum": ("x.sum()", lambda cp, x: (x.sum(),)),
    "mps": ("x.sum(); max(cumsum(x).max(), 0)",
            lambda cp, x: (x.sum(), cp.maximum(cp.cumsum(x).max(), 0))),
    "welford": ("x.mean(); ((x - mean)**2).sum()", _welford),
    "safe_softmax": ("m = x.max(); exp(x - m).sum()", _softmax),
}


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


def rel_err(got, want) -> float:
    got, want = np.asarray(got, np.float64).ravel(), np.asarray(want, np.float64).ravel()
    return float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-30)))


def main() -> None:
    import cupy as cp

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2**28)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--kernels", default=str(ROOT / "bench" / "kernels"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    args = ap.parse_args()

    n, gb = args.n, args.n * 4 / 1e9
    x = cp.random.default_rng(0).standard_normal(n, dtype=cp.float32)
    y = cp.empty_like(x)
    x64 = x.astype(cp.float64)
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    device = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])

    copy_ms = time_ms(cp, lambda: cp.copyto(y, x), args.reps)
    sum_ms = time_ms(cp, lambda: x.sum(), args.reps)
    rows = []
    for name, (text, compose) in COMPOSITIONS.items():
        path = Path(args.kernels) / f"{name}.py"
        if not path.exists():
            print(f"{name}: no {path}; run bench/prepare_gpu.py first")
            continue
        module = load(path)
        ours_ms = time_ms(cp, lambda: module.reduce_device(x), args.reps)
        multi_ms = time_ms(cp, lambda: compose(cp, x), args.reps)
        got = module.reduce_state(x)
        want = [float(v) for v in compose(cp, x64)]
        rows.append({
            "loop": name, "fields": [f for f, _ in module.FIELDS], "composition": text,
            "thm3_ms": ours_ms, "thm3_GBps": gb / ours_ms * 1e3,
            "vs_cupy_sum": sum_ms / ours_ms,
            "composition_ms": multi_ms, "composition_GBps": gb / multi_ms * 1e3,
            "speedup_over_composition": multi_ms / ours_ms,
            "of_copy_bandwidth": (gb / ours_ms) / (2 * gb / copy_ms),
            "max_rel_err_vs_float64": rel_err([float(v) for v in got], want),
        })

    stamp = datetime.date.today().isoformat()
    result = {"device": device, "n": n, "dtype": "float32", "reps": args.reps,
              "copy_GBps": 2 * gb / copy_ms * 1e3, "cupy_sum_ms": sum_ms,
              "cupy_sum_GBps": gb / sum_ms * 1e3, "rows": rows,
              "targets": "sum within 10% of cupy.sum; multi-field states >= 85% of its bandwidth"}
    lines = [f"# thm3 reductions on {device}, n = {n} float32 ({stamp})", "",
             f"device copy: {result['copy_GBps']:.0f} GB/s (read + write); "
             f"cupy.sum: {result['cupy_sum_GBps']:.0f} GB/s", "",
             "| loop | thm3 GB/s | of cupy.sum | plain CuPy GB/s | speedup | of copy | rel err |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    lines += [f"| {r['loop']} | {r['thm3_GBps']:.0f} | {r['vs_cupy_sum']:.0%} | "
              f"{r['composition_GBps']:.0f} | {r['speedup_over_composition']:.2f}x | "
              f"{r['of_copy_bandwidth']:.0%} | {r['max_rel_err_vs_float64']:.1e} |" for r in rows]
    table = "\n".join(lines)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    base = out / f"gpu_reduce-{stamp}-{socket.gethostname()}"      # as bench/common.py names them
    base.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
    base.with_suffix(".md").write_text(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
