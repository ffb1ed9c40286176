"""The fast tier's wall time (`python -m pytest -q -p no:cacheprovider -m "not slow"`, serially,
in a fresh process), as a ratio against issue 24's bound of 120 s on this machine's cores,
with pytest's own count of what passed, failed and was skipped.  The figure the README and
CONTRIBUTING quote comes from here.

    python bench/fast_tier.py

Run it on a quiet machine, twice in a row (the default): on a fresh machine the first run
also fills Numba's on-disk cache and the like.  The tier's budget (tests/durations.txt, conftest.py) chose the
tests, and load lengthens every one of them."""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
from common import ROOT, write  # noqa: E402

BOUND = 120.0           # seconds, serially (issue 24, item 7)


def run_tier() -> dict:
    started = time.perf_counter()
    got = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow"],
                         cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - started
    summary = next((l for l in reversed(got.stdout.splitlines()) if re.search(r"\d+ passed", l)), "")
    counts = {k: int(n) for n, k in re.findall(r"(\d+) (passed|failed|skipped|deselected|errors?)", summary)}
    return {"wall_s": round(wall, 1), "ratio": round(wall / BOUND, 3), "counts": counts,
            "exit": got.returncode, "summary": summary.strip("= ")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=2,
                    help="runs in a row (the first on a fresh machine also fills Numba's and NVRTC's caches)")
    runs = [run_tier() for _ in range(ap.parse_args().runs)]
    rows = ["| run | wall (s) | bound (s) | wall / bound | pytest's summary | exit |",
            "|---:|---:|---:|---:|---|---:|"]
    for k, r in enumerate(runs, 1):
        print(f"fast tier, run {k}: {r['wall_s']:.1f} s wall, {r['ratio']:.2f} of the {BOUND:.0f} s bound; "
              f"{r['summary']}")
        rows.append(f"| {k} | {r['wall_s']:.1f} | {BOUND:.0f} | {r['ratio']:.2f} | {r['summary']} | {r['exit']} |")
    print(write("fast_tier", {"bound_s": BOUND, "runs": runs}, "\n".join(rows)))
    sys.exit(max(r["exit"] for r in runs))


if __name__ == "__main__":
    main()
