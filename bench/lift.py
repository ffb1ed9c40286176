"""Time the lifting search on every catalog loop that has a lift (or none), each run in
a fresh Python process so that no cache or warm import helps.

    python bench/lift.py [--repeat 3] [--timeout 10] [--prove]

`--prove` wires the analyzer in as the prover (`thm3.pipeline.lift_prover`, as `analyze`
does).  Prints a table (median and max seconds of `lift` itself, and of the whole
process, against a fresh process that only imports thm3, measured in the same run) and
writes bench/results/lift-<time>-<host>-<commit>.txt and .json (lift-noprover-* without
--prove), a new file every run."""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import socket
import statistics
import subprocess
import time
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from catalog import SAMPLES  # noqa: E402

CHILD = r"""
import json, sys, time
t0 = time.monotonic()
from thm3 import parse_file
from thm3.lift import lift
path, timeout, use_prover = sys.argv[1], float(sys.argv[2]), sys.argv[3] == "1"
prove = None
if use_prover:
    from thm3.pipeline import lift_prover
    prove = lift_prover(time.monotonic() + timeout)
loop = parse_file(path)
res = lift(loop, timeout=timeout, prove=prove)
print(json.dumps({"seconds": res.seconds, "process": time.monotonic() - t0,
                  "found": res.loop is not None, "added": list(res.added), "reason": res.reason}))
"""


def run_once(path: Path, timeout: float, prove: bool) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), str(timeout), "1" if prove else "0"],
                         capture_output=True, text=True, cwd=ROOT, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--prove", action="store_true", help="accept a lift only if the analyzer proves it")
    args = ap.parse_args()

    # Baseline, measured in this run: a fresh process that only imports thm3's analyzer.
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-c", "import thm3.pipeline, thm3.lift"], cwd=ROOT, check=True)
    baseline = time.monotonic() - t0
    rows = []
    for s in (s for s in SAMPLES if s.lift is not None):
        runs = [run_once(s.path, args.timeout, args.prove) for _ in range(args.repeat)]
        secs = [r["seconds"] for r in runs]
        procs = [r["process"] for r in runs]
        last = runs[-1]
        row = {"name": s.name, "expected": s.lift, "found": last["found"],
               "added": [a.split(":", 1)[0] for a in last["added"]],
               "median_s": statistics.median(secs), "max_s": max(secs),
               "process_median_s": statistics.median(procs), "process_max_s": max(procs),
               "reason": last["reason"]}
        rows.append(row)
        print(f"{s.name:16s} {'found' if row['found'] else 'none ':5s} {','.join(row['added']):18s} "
              f"median {row['median_s']:6.2f} s  max {row['max_s']:6.2f} s  "
              f"(process median {row['process_median_s']:5.2f} s, "
              f"{row['process_median_s'] / baseline:4.1f}x the import baseline)", flush=True)

    host = socket.gethostname()
    date = datetime.date.today().isoformat()
    meta = {"date": date, "host": host, "python": platform.python_version(), "cpus": os.cpu_count(),
            "repeat": args.repeat, "timeout_s": args.timeout, "prove": args.prove,
            "import_baseline_s": baseline, "load_average_1min_end": os.getloadavg()[0]}
    sys.path.insert(0, str(ROOT / "bench"))
    from common import RESULTS, commit, result_stem
    meta["commit"] = commit()
    out_dir = RESULTS
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = out_dir / result_stem(f"lift{'' if args.prove else '-noprover'}", rev=meta["commit"])
    stem.with_suffix(".json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")
    lines = [f"# Lifting search, {date}, {host}, commit {meta['commit']}", "",
             f"Python {meta['python']}, {meta['cpus']} CPUs; {args.repeat} fresh processes per loop; "
             f"timeout {args.timeout:g} s; prover: {'the analyzer' if args.prove else 'none'}; "
             f"baseline (a process importing thm3) {baseline:.2f} s; "
             f"1-minute load average at the end {meta['load_average_1min_end']:.1f} (a shared machine).", "",
             "| loop | expected | found | added | median s | max s | process median s |",
             "| --- | --- | --- | --- | ---: | ---: | ---: |"]
    for r in rows:
        lines.append(f"| {r['name']} | {r['expected']} | {'yes' if r['found'] else 'no'} | "
                     f"{', '.join(r['added']) or '-'} | {r['median_s']:.2f} | {r['max_s']:.2f} | "
                     f"{r['process_median_s']:.2f} |")
    lines += ["", f"found {sum(r['found'] for r in rows)} of {sum(r['expected'] == 'expected' for r in rows)} "
                  f"expected lifts; process time at most "
                  f"{max(r['process_max_s'] for r in rows) / baseline:.1f}x the import baseline", ""]
    lines += [f"- {r['name']}: {r['reason']}" for r in rows]
    stem.with_suffix(".txt").write_text("\n".join(lines) + "\n")
    print(f"wrote {stem.with_suffix('.txt').relative_to(ROOT)} and .json")


if __name__ == "__main__":
    main()
