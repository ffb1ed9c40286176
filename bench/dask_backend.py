"""thm3.dask on a LocalCluster of 2 worker processes against the same reduction in one
process (the Numba backend over the whole array), Welford and max prefix sum at
n = 10**7 in 16 chunks.  Ratios against the baseline timed in the same run; writes
bench/results/dask_backend-*."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import thm3                                        # noqa: E402
import thm3.dask as tdask                          # noqa: E402
from common import best, write                           # noqa: E402



def main() -> None:
    import dask.array as da
    import distributed
    n = 10**7
    x = np.random.default_rng(0).standard_normal(n)
    rows = []
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=40) as cluster, \
            distributed.Client(cluster) as client:
        dx = client.persist(da.from_array(x, chunks=n // 16))   # the data already on the workers
        distributed.wait(dx)
        for name in ("welford", "mps"):
            a = thm3.analyze(thm3.sample_path(name))
            a.run(x[:10], backend="numba")
            client.compute(tdask.reduce(a, dx)).result()    # workers compile or load the cache
            t_dask = best(lambda: client.compute(tdask.reduce(a, dx)).result())
            t_one = best(lambda: a.run(x, backend="numba"))
            rows.append((f"{name} reduce", n, t_dask, t_one))
    table = ("| case | n | Dask, 2 workers s | one process s | time ratio |\n| --- | --- | --- | --- | --- |\n"
             + "\n".join(f"| {c} | {m} | {a:.4f} | {b:.4f} | {a / b:.2f} |" for c, m, a, b in rows)
             + "\n\nOne process: the Numba backend (2 threads) on the whole array; Dask: 16 chunks, "
               "each folded by the Numba backend in a worker, combined in order.")
    print(table)
    print(write("dask_backend", {"rows": rows}, table))


if __name__ == "__main__":
    main()
