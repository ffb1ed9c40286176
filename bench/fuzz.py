"""Fuzz thm3 for a bounded time: random loop files (tests/fuzz/generate.py) judged by the
brute-force oracle (tests/fuzz/oracle.py), with totals written to bench/results/.

Totals: loops, crashes, wrong verdicts, "unknown" where an answer exists, homomorphisms
with a law only "tested".  The baseline measured in the same run is the oracle's own
time per loop (the fixed cost of judging), against thm3's analysis time.

    python bench/fuzz.py --seconds 600 [--loops 10000] [--seed 0] [--timeout 10]
"""
from __future__ import annotations

import argparse
import collections
import datetime
import socket
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# tests/ first: its `fuzz` package, not this script, is what `import fuzz` must find
sys.path[:0] = [str(ROOT / "tests")]
sys.modules.pop("fuzz", None)

from common import RESULTS, machine  # noqa: E402  (bench/, the script's own folder)
from fuzz.generate import from_seed  # noqa: E402
from fuzz.oracle import judge  # noqa: E402


def main(argv=None) -> Path:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=600.0, help="stop after this long")
    ap.add_argument("--loops", type=int, default=10_000, help="at most this many loops")
    ap.add_argument("--seed", type=int, default=0, help="first seed")
    ap.add_argument("--timeout", type=float, default=10.0, help="thm3.analyze timeout per loop")
    args = ap.parse_args(argv)

    start = time.monotonic()
    totals = collections.Counter()
    by_family = collections.defaultdict(collections.Counter)
    findings: list[str] = []
    seconds = []
    seed = args.seed
    while seed - args.seed < args.loops and time.monotonic() - start < args.seconds:
        case = from_seed(seed)
        j = judge(case, timeout=args.timeout, seed=seed)
        seconds.append(j.seconds)
        totals["loops"] += 1
        totals[j.outcome] += 1
        by_family[case.family][j.outcome] += 1
        if j.verdict == "homomorphism":
            totals["homomorphism verdicts"] += 1
            totals["laws only tested"] += j.tested
        if j.outcome in ("crash", "wrong"):
            findings.append(f"seed {seed} ({case.family}, {j.verdict}, {j.outcome}): "
                            f"{j.detail.splitlines()[0] if j.detail else ''}")
        seed += 1
    elapsed = time.monotonic() - start

    today = datetime.date.today().isoformat()
    lines = [f"# fuzz, {today}", f"machine: {machine()}",
             f"command: python bench/fuzz.py --seconds {args.seconds} --loops {args.loops} "
             f"--seed {args.seed} --timeout {args.timeout}",
             f"seeds {args.seed}..{seed - 1}, {elapsed:.0f} s, median {statistics.median(seconds or [0]):.2f} s "
             f"per loop (analysis + oracle), max {max(seconds or [0]):.2f} s", "",
             f"loops: {totals['loops']}",
             f"crashes: {totals['crash']}",
             f"wrong verdicts: {totals['wrong']}",
             f"unknown where an answer exists: {totals['unknown-with-answer']}",
             f"unknown (no answer known): {totals['unknown']}",
             f"homomorphism verdicts: {totals['homomorphism verdicts']}, "
             f"with a law only tested: {totals['laws only tested']}", "",
             "by family (outcome counts):"]
    lines += [f"  {fam}: {dict(c)}" for fam, c in sorted(by_family.items())]
    lines += ["", "findings (crash / wrong):"] + [f"  {f}" for f in findings]
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"fuzz-{today}-{socket.gethostname()}.txt"
    path.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:14]))
    print(f"written to {path}")
    return path


if __name__ == "__main__":
    main()
