"""thm3.dask on a LocalCluster of 2 worker processes against the same work in one
process (the Numba backend over the whole array): Welford and max prefix sum reduced,
and the max prefix sum scanned, at n = 10**7 and 10**8 in 16 chunks.  Also where the
time goes: building the graph (client side), the number of tasks, and the tasks' own
compute time on the workers.  Ratios against the baseline timed in the same run; writes
bench/results/dask_backend-*."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # this checkout's thm3, not an installed one
import thm3                                        # noqa: E402
import thm3.dask as tdask                          # noqa: E402
from common import best, write                     # noqa: E402


def _task_seconds(client, lazy) -> tuple[int, float]:
    """(tasks run, their summed compute seconds on the workers) for one compute."""
    import distributed
    with distributed.get_task_stream(client) as ts:
        client.compute(lazy).result()
    spent = sum(s["stop"] - s["start"] for t in ts.data for s in t["startstops"] if s["action"] == "compute")
    return len(ts.data), spent


def _fresh(client, make):
    """One compute from scratch: the graph's keys are deterministic (pure tasks), so wait
    until the scheduler has forgotten the last run's results before timing the next."""
    import time
    base = client.run_on_scheduler(_task_count)
    def run():
        fut = client.compute(make())
        fut.result()
        fut.release()
        del fut
    def settled():
        deadline = time.perf_counter() + 30
        while client.run_on_scheduler(_task_count) > base and time.perf_counter() < deadline:
            time.sleep(0.02)
    return run, settled


def _task_count(dask_scheduler=None):
    return len(dask_scheduler.tasks)


def _best_fresh(client, make, repeat: int = 3) -> float:
    import time
    run, settled = _fresh(client, make)
    times = []
    for _ in range(repeat):
        settled()
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    settled()
    return min(times)


def main(argv=None) -> None:
    import argparse
    import time
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                            epilog="THM3_DASK_SIZES=n1,n2 sets the sizes").parse_args(argv)   # -h: nothing run

    import dask.array as da
    import distributed
    sizes = [int(s) for s in os.environ.get("THM3_DASK_SIZES", "10000000,100000000").split(",")]
    rows = []
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=40) as cluster, \
            distributed.Client(cluster) as client:
        for n in sizes:
            x = np.random.default_rng(0).standard_normal(n)
            dx = client.persist(da.from_array(x, chunks=-(-n // 16)))   # the data already on the workers
            distributed.wait(dx)
            cases = [("welford", "reduce"), ("mps", "reduce"), ("mps", "scan")]
            for name, kind in cases:
                a = thm3.analyze(thm3.sample_path(name))
                make = (lambda: tdask.reduce(a, dx)) if kind == "reduce" else (lambda: tdask.scan(a, dx))
                one = (lambda: a.run(x, backend="numba")) if kind == "reduce" else \
                    (lambda: a.scan(x, backend="numba"))
                one()                                          # compile or load the cache
                run, settled = _fresh(client, make)
                run()                                          # workers compile or load the cache
                settled()
                t = time.perf_counter()
                lazy = make()
                t_build = time.perf_counter() - t
                tasks, t_tasks = _task_seconds(client, lazy)
                t_dask = _best_fresh(client, make)
                t_one = best(one)
                rows.append((f"{name} {kind}", n, t_dask, t_one, t_build, tasks, t_tasks))
    table = ("| case | n | Dask, 2 workers s | one process s | time ratio | graph build s | tasks "
             "| tasks' compute s (summed) |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n"
             + "\n".join(f"| {c} | {m} | {a:.4f} | {b:.4f} | {a / b:.2f} | {g:.4f} | {k} | {s:.4f} |"
                         for c, m, a, b, g, k, s in rows)
             + "\n\nOne process: the Numba backend (2 threads) on the whole array; Dask: 16 chunks, "
               "each folded (scanned) by the Numba backend in a worker, combined in order; the Dask "
               "time includes building the graph and, for a scan, bringing the n prefixes back to "
               "the client; every run starts after the scheduler has forgotten the last one's results.  Load average at the end (the machine is shared): "
               + ", ".join(f"{v:.2f}" for v in os.getloadavg()) + ".")
    print(table)
    print(write("dask_backend", {"rows": rows, "load": os.getloadavg()}, table))


if __name__ == "__main__":
    main()
