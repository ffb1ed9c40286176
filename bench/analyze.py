"""Time `thm3.analyze` (inside a fresh process each, import excluded) on every sample and every corpus loop (issue 14); wall and CPU seconds (the CPU time, this process and its
waited-for children, is what the machine's load affects least).

Baseline, measured in the same run: a fresh process that only imports thm3 and its
pipeline (the fixed cost every command pays).  Reported: solved/total (the verdict is
the catalogued one: tests/catalog.py for samples/, tests/corpus.py for bench/corpus/),
solved/total of the homomorphisms (all three laws proved), median and max seconds in
process, and the peers' published times where there is one (Synduce on this kind of
machine, issue 14).  Goal: every loop with a combine solved, median <= 0.3 s, max <= 5 s.

    python bench/analyze.py [--timeout S] [--only NAME ...] [--label LABEL]

The loops run in the thm3 found from the current directory (run it from a checkout's
root; another checkout's root measures that one).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from catalog import SAMPLES  # noqa: E402
from common import RESULTS, write  # noqa: E402
from corpus import CORPUS  # noqa: E402

PROBE = """
import json, os, sys, time
import thm3, thm3.pipeline
t0 = time.perf_counter()
c0 = os.times()
a = thm3.analyze(sys.argv[1], timeout=float(sys.argv[2]), lift=False)
dt = time.perf_counter() - t0
c1 = os.times()
cpu = sum(c1[:4]) - sum(c0[:4])     # this process and its waited-for children
proved = all(a.proofs.get(k) == "proved" for k in ("identity", "associativity", "homomorphism"))
# the synthesis route (`a.route`; a tree before ef33106 kept it in `a.synthesis`)
route = getattr(a, "route", None)
if route is None:
    syn = getattr(a, "synthesis", None)
    route = syn.route if syn is not None else ""
print(json.dumps({"verdict": str(a.verdict), "seconds": dt, "cpu_s": cpu, "proved": proved, "reason": a.reason,
                  "route": route if a.combine_fn is not None else ""}))
"""

# Synduce's times on this machine, as issue 14 gives them (seconds).
PEERS = {"parsynt_mss": 13.0, "parsynt_max_block_ones": 12.0, "parsynt_balanced": 5.0}


def loops(only: set[str]):
    for s in SAMPLES:
        if not only or s.name in only:
            yield "sample", s.name, s.path, s.verdict
    for e in CORPUS:
        if not only or e.name in only:
            yield "corpus", e.name, e.path, e.truth


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=60.0, help="analyze's timeout per loop, seconds (default 60)")
    ap.add_argument("--only", nargs="*", default=[], metavar="NAME", help="these loops only")
    ap.add_argument("--label", default="", help="a suffix for the result files (e.g. before)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import thm3, thm3.pipeline"], check=True)
    import_s = time.perf_counter() - t0
    rows = []
    for kind, name, path, expected in loops(set(args.only)):
        # one process a loop, timed inside (import excluded), killed at 3x the timeout:
        # a solver call that ignores the deadline shows as "killed", not as a hung run
        try:
            out = subprocess.run([sys.executable, "-c", PROBE, str(path), str(args.timeout)], capture_output=True,
                                 text=True, timeout=3 * args.timeout + 30)
            r = json.loads(out.stdout.strip().splitlines()[-1])
        except (subprocess.TimeoutExpired, IndexError, json.JSONDecodeError):
            r = {"verdict": "killed", "seconds": 3 * args.timeout + 30, "cpu_s": float("nan"), "route": "", "proved": False, "reason": "killed"}
        dt = r["seconds"]
        solved = r["verdict"] == expected and (expected != "homomorphism" or r["proved"])
        route = r["route"]
        rows.append({"kind": kind, "name": name, "expected": expected, "verdict": r["verdict"],
                     "solved": solved, "seconds": dt, "cpu_s": r["cpu_s"], "route": route,
                     "reason": "" if solved else r["reason"][:300]})
        peer = f"  (Synduce {PEERS[name]:.0f} s: {dt / PEERS[name]:.2f}x)" if name in PEERS else ""
        print(f"{kind:<6} {name:<30} {r['verdict']:<17} {'ok ' if solved else 'NO '} {dt:6.2f} s "
              f"(cpu {r['cpu_s']:5.2f}) "
              f"{route}{peer}", flush=True)
    times = [r["seconds"] for r in rows]
    cpus = [r["cpu_s"] for r in rows if r["cpu_s"] == r["cpu_s"]] or [float("nan")]
    homs = [r for r in rows if r["expected"] == "homomorphism"]
    summary = {
        "loops": len(rows),
        "solved": sum(r["solved"] for r in rows),
        "homomorphisms": len(homs),
        "homomorphisms_solved": sum(r["solved"] for r in homs),
        "median_s": statistics.median(times),
        "max_s": max(times),
        "median_cpu_s": statistics.median(cpus),
        "max_cpu_s": max(cpus),
        "import_s": import_s,
        "median_over_import": statistics.median(times) / import_s,
        "timeout_s": args.timeout,
        "load_average": os.getloadavg()[0],
    }
    by_route: dict = {}
    for r in rows:
        if r["route"]:
            by_route[r["route"]] = by_route.get(r["route"], 0) + 1
    summary["combines_by_route"] = by_route
    print()
    for k, v in summary.items():
        print(f"{k:<22} {v:.3f}" if isinstance(v, float) else f"{k:<22} {v}")
    met = summary["median_s"] <= 0.3 and summary["max_s"] <= 5 and summary["homomorphisms_solved"] == len(homs)
    print("goal (all combines found, median <= 0.3 s, max <= 5 s):", "met" if met else "MISSED")
    table = "| kind | loop | expected | verdict | solved | s | cpu s | route |\n|---|---|---|---|---|---|---|---|\n" + "\n".join(
        f"| {r['kind']} | {r['name']} | {r['expected']} | {r['verdict']} | {r['solved']} | {r['seconds']:.2f} | "
        f"{r['cpu_s']:.2f} | "
        f"{r['route']} |" for r in rows)
    table += "\n\n" + "\n".join(f"- {k}: {v}" for k, v in summary.items())
    name = "analyze" + (f"-{args.label}" if args.label else "")
    md = write(name, {"summary": summary, "rows": rows}, table)
    txt = md.with_suffix(".txt")
    txt.write_text(md.read_text())
    print("wrote", md, "and", txt)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
