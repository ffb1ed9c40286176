"""Time `thm3.analyze` on every sample, each in a fresh process.

Baseline, measured in the same run: a fresh process that only imports thm3 (the
fixed cost every analysis pays).  Needed (issue 2): median under 2 s, none over
10 s, a witness for each non-homomorphism under 1 s.

    python bench/analyze.py
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from catalog import SAMPLES  # noqa: E402
from common import write  # noqa: E402

PROBE = """
import json, sys, time
t0 = time.perf_counter()
import thm3
from thm3.analysis.witness import find_witness
t1 = time.perf_counter()
a = thm3.analyze(sys.argv[1], lift=False)
t2 = time.perf_counter()
w = None
if a.verdict == "not-homomorphism":
    loop = thm3.parse_file(sys.argv[1])
    t3 = time.perf_counter(); find_witness(loop, timeout=1.0); w = time.perf_counter() - t3
print(json.dumps({"verdict": a.verdict, "analyze_s": t2 - t1, "import_s": t1 - t0, "witness_s": w,
                  "proofs": a.proofs, "steps": {s.name: s.seconds for s in a.steps}}))
"""


def _fmt(v) -> str:
    return "" if v is None else f"{v:.3f}"


def main():
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import thm3, thm3.pipeline"], check=True)
    baseline = time.perf_counter() - t0
    rows = []
    for s in SAMPLES:
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", PROBE, str(s.path)], capture_output=True, text=True, check=True)
        wall = time.perf_counter() - t0
        r = json.loads(out.stdout.strip().splitlines()[-1])
        r |= {"name": s.name, "wall_s": wall, "expected": s.verdict}
        rows.append(r)
        w = f"  witness {r['witness_s']:.3f} s" if r["witness_s"] is not None else ""
        print(f"{s.name:<24} {r['verdict']:<18} analyze {r['analyze_s']:6.2f} s  process {wall:6.2f} s "
              f"({wall / baseline:5.1f}x import){w}", flush=True)
    times = [r["analyze_s"] for r in rows]
    walls = [r["wall_s"] for r in rows]
    wit = [r["witness_s"] for r in rows if r["witness_s"] is not None]
    summary = {
        "samples": len(rows),
        "baseline_import_s": baseline,
        "median_analyze_s": statistics.median(times),
        "max_analyze_s": max(times),
        "median_process_s": statistics.median(walls),
        "max_process_s": max(walls),
        "max_witness_s": max(wit) if wit else None,
        "verdicts_as_expected": sum(r["verdict"] == r["expected"] for r in rows),
    }
    ok = summary["median_process_s"] < 2 and summary["max_process_s"] < 10 and (not wit or max(wit) < 1)
    print()
    for k, v in summary.items():
        print(f"{k:<24} {v:.3f}" if isinstance(v, float) else f"{k:<24} {v}")
    print(f"median process / import baseline: {summary['median_process_s'] / baseline:.2f}x")
    print("targets (median < 2 s, max < 10 s, witness < 1 s):", "met" if ok else "MISSED")
    table = "| sample | verdict | analyze s | process s | witness s |\n|---|---|---|---|---|\n" + "\n".join(
        f"| {r['name']} | {r['verdict']} | {r['analyze_s']:.2f} | {r['wall_s']:.2f} | "
        f"{_fmt(r['witness_s'])} |" for r in rows)
    table += "\n\n" + "\n".join(f"- {k}: {v}" for k, v in summary.items())
    print("wrote", write("analyze", {"summary": summary, "rows": rows}, table))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
