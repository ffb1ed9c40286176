"""Fuzz the promises of issue 22 for a bounded number of loops: Bird's "failed" where a
right fold differs from left (on a rare value, past a long length, for a large parameter,
by a relative 1e-8) and never where it agrees; exact Ints (a.combine against Python's
fold, a.run exact or an OverflowError); one stability verdict for the if/else, `where`
and `max` spellings of an exp-stable step.  The families are tests/fuzz/issue22.py.

    python bench/fuzz22.py [--loops 300] [--seed 1000] [--timeout 10]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests")]
sys.modules.pop("fuzz", None)


def main(argv=None) -> int:
    from fuzz.issue22 import run
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loops", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1000)
    ap.add_argument("--timeout", type=float, default=10.0)
    args = ap.parse_args(argv)
    r = run(args.loops, args.seed, args.timeout)
    print(f"{args.loops} loops in {r['seconds']:.0f} s")
    for (family, outcome), count in sorted(r["totals"].items()):
        print(f"  {family}: {outcome} {count}")
    print("findings (crash / wrong):")
    for seed, family, outcome, detail in r["findings"]:
        print(f"  seed {seed} ({family}, {outcome}): {detail}")
    return 1 if r["findings"] else 0


if __name__ == "__main__":
    sys.exit(main())
