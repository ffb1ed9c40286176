"""The Numba backend (thm3[cpu]) against numpy.sum at n = 10**7 (goal <= 1.2x, both cores)
and against the NumPy backend on mss, Welford and safe softmax (goal >= 5x); every
ratio against a baseline timed in the same run.  Writes bench/results/numba_backend-*."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # this checkout's thm3, not an installed one
import thm3                                        # noqa: E402
from common import best, write                           # noqa: E402



def main(argv=None) -> None:
    import argparse
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args(argv)   # -h: this, nothing run
    import numba
    n = 10**7
    x = np.random.default_rng(0).standard_normal(n)
    rows = []
    s = thm3.analyze(thm3.sample_path("sum"))
    s.run(x[:10], backend="numba")                 # compile or load from the disk cache
    t_np, t_nb = best(lambda: np.sum(x), repeat=9), best(lambda: s.run(x, backend="numba"), repeat=9)
    rows.append(("sum vs numpy.sum", n, t_nb, t_np, t_nb / t_np, "<= 1.2 (time ratio)"))
    for name in ("mss", "welford", "safe_softmax"):
        a = thm3.analyze(thm3.sample_path(name))
        a.run(x[:10], backend="numba")
        t_nb = best(lambda: a.run(x, backend="numba"), 7)     # best of several: the machine is shared
        t_np = best(lambda: a.run(x), 3)
        rows.append((f"{name} vs NumPy backend", n, t_nb, t_np, t_np / t_nb, ">= 5 (speed-up)"))
    table = "| case | n | numba s | baseline s | ratio | goal |\n| --- | --- | --- | --- | --- | --- |\n"
    table += "\n".join(f"| {c} | {m} | {a:.4f} | {b:.4f} | {r:.2f} | {g} |" for c, m, a, b, r, g in rows)
    table += (f"\n\nNumba {numba.__version__}, {numba.config.NUMBA_NUM_THREADS} threads.  Load average "
              f"at the end (the machine is shared): {', '.join(f'{v:.2f}' for v in os.getloadavg())}.")
    print(table)
    print(write("numba_backend", {"rows": rows, "threads": numba.config.NUMBA_NUM_THREADS,
                                  "load": os.getloadavg()}, table))


if __name__ == "__main__":
    main()
