"""The scan: on the CPU, a sum's scan (NumPy and Numba backends) against numpy.cumsum
(goal <= 2x) and the Numba scan of the linear recurrence (affine) against a sequential
Numba loop (the same rendered `left`, one thread); with --gpu, the CUDA scan's GB/s next
to cupy.cumsum (CUB) at n = 2**28 (goal >= 0.9x).  Ratios against baselines timed in
the same run; writes bench/results/scan-* (scan_gpu-* with --gpu)."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # this checkout's thm3, not an installed one
import thm3                                        # noqa: E402
from common import best, write                           # noqa: E402



def cpu(n: int) -> None:
    from thm3.backends.numba_tree import run_numba_sequential
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n)
    s = thm3.analyze(thm3.sample_path("sum"))
    s.scan(x[:10], backend="numba")
    t_cum = best(lambda: np.cumsum(x), repeat=5)
    rows = [("sum scan, NumPy backend (accumulate route) vs numpy.cumsum", n, best(lambda: s.scan(x), 5), t_cum, "<= 2"),
            ("sum scan, Numba backend vs numpy.cumsum", n, best(lambda: s.scan(x, backend="numba"), repeat=5), t_cum, "<= 2")]
    from thm3.backends.scan import scan_parallel
    rows.append(("sum scan, NumPy blocked scan vs numpy.cumsum", n,
                 best(lambda: scan_parallel(s.loop, s.combine_fn, [x], {}), 3), t_cum, "(reported)"))
    a = thm3.analyze(thm3.sample_path("affine"))
    m, c = rng.uniform(-1, 1, n), rng.standard_normal(n)
    a.scan(m[:10], c[:10], backend="numba")
    t_seq = best(lambda: run_numba_sequential(a.loop, a.combine_fn, [m, c], {}), repeat=5)
    rows.append(("linear recurrence scan (Numba) vs sequential Numba fold", n,
                 best(lambda: a.scan(m, c, backend="numba"), repeat=5), t_seq, "(reported)"))
    table = "| case | n | scan s | baseline s | time ratio | goal |\n| --- | --- | --- | --- | --- | --- |\n"
    table += "\n".join(f"| {r[0]} | {r[1]} | {r[2]:.4f} | {r[3]:.4f} | {r[2] / r[3]:.2f} | {r[4]} |" for r in rows)
    table += ("\n\nLoad average at the end (the machine is shared): "
              + ", ".join(f"{v:.2f}" for v in os.getloadavg()) + ".")
    print(table)
    print(write("scan", {"rows": rows, "load": os.getloadavg()}, table))


def gpu(n: int, kernels: str) -> None:
    """The emitted module of samples/sum.py (bench/prepare_gpu.py writes it with its scan;
    no solver is needed on the device) against cupy.cumsum."""
    import importlib.util
    import cupy
    spec = importlib.util.spec_from_file_location("thm3_bench_sum", Path(kernels) / "sum.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)                   # thm3's own emitted module
    x = cupy.random.standard_normal(n, dtype=cupy.float32)

    def timed(f):
        f()
        cupy.cuda.Device().synchronize()
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        for _ in range(10):
            f()
        stop.record()
        stop.synchronize()
        return cupy.cuda.get_elapsed_time(start, stop) / 10 / 1e3

    t_scan = timed(lambda: mod.scan(x))
    t_cub = timed(lambda: cupy.cumsum(x))
    small = x[:1 << 20]
    err = float(cupy.max(cupy.abs(mod.scan(small)[0] - cupy.cumsum(small.astype(cupy.float64)))))
    gbs = lambda t: 2 * n * 4 / t / 1e9            # noqa: E731  (one read, one write)
    table = ("| case | n | thm3 scan GB/s | cupy.cumsum GB/s | ratio | goal |\n| --- | --- | --- | --- | --- | --- |\n"
             f"| sum scan, float32 | {n} | {gbs(t_scan):.1f} | {gbs(t_cub):.1f} | {t_cub / t_scan:.2f} | >= 0.9 |\n\n"
             f"max abs(scan - cumsum in float64) on 2**20: {err:.3g}")
    print(table)
    print(write("scan_gpu", {"n": n, "t_scan": t_scan, "t_cub": t_cub, "err": err}, table))


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--gpu", action="store_true")
    p.add_argument("--n", type=int, default=None)
    p.add_argument("--kernels", default="bench/kernels", help="where bench/prepare_gpu.py emitted sum.py")
    args = p.parse_args()
    if args.gpu:
        gpu(args.n or 1 << 28, args.kernels)
    else:
        cpu(args.n or 10**7)
