"""Soundness figures (issue 15): every loop of samples/ and bench/corpus/ analysed in this
process (no lifting); how many candidate combines have every law proved, how many keep
a law only "tested" (goal: under 2% of the proved combines), how many failed, and, for
the corpus, verdicts against the recorded truth (wrong ones, and "unknown" where an
answer exists).  The baseline is the same run's total time per loop.

    python bench/soundness.py [--timeout S] [--only samples|corpus]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

import thm3                                      # noqa: E402
from common import write                         # noqa: E402

LAWS = ("identity", "associativity", "homomorphism")


def truths() -> dict:
    try:
        from corpus import CORPUS
    except ImportError:
        return {}
    return {e.name: e.truth for e in CORPUS}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--only", choices=("samples", "corpus"))
    args = ap.parse_args()
    files = []
    if args.only in (None, "samples"):
        files += sorted((ROOT / "samples").glob("*.py"))
    if args.only in (None, "corpus"):
        files += sorted((ROOT / "bench" / "corpus").glob("*.py"))
    truth = truths()
    rows = []
    for path in files:
        t0 = time.monotonic()
        try:
            a = thm3.analyze(path, timeout=args.timeout, lift=False)
            err = ""
        except thm3.LoopError as e:
            rows.append((path, "LoopError", {}, False, str(e).splitlines()[0], time.monotonic() - t0))
            continue
        except Exception as e:                   # a crash is a finding
            rows.append((path, "CRASH", {}, False, f"{type(e).__name__}: {e}", time.monotonic() - t0))
            continue
        rows.append((path, str(a.verdict), {k: str(a.proofs.get(k)) for k in LAWS},
                     a.combine_fn is not None, err or a.reason, time.monotonic() - t0))
        print(f"{path.parent.name}/{path.name}: {a.verdict} {[str(a.proofs.get(k)) for k in LAWS]} "
              f"{time.monotonic() - t0:.1f} s", flush=True)

    with_combine = [r for r in rows if r[3]]
    all_proved = [r for r in with_combine if all(r[2][k] == "proved" for k in LAWS)]
    tested = [r for r in with_combine if any(r[2][k] == "tested" for k in LAWS)]
    crashes = [r for r in rows if r[1] == "CRASH"]
    wrong, unknown_known = [], []
    for r in rows:
        t = truth.get(r[0].stem) if r[0].parent.name == "corpus" else None
        if t is None:
            continue
        if r[1] in ("homomorphism", "not-homomorphism") and r[1] != t:
            wrong.append(r)
        if r[1] == "unknown":
            unknown_known.append(r)
    share = len(tested) / max(1, len(with_combine))
    lines = [
        "| figure | value |", "| --- | --- |",
        f"| loops | {len(rows)} |",
        f"| crashes (not LoopError) | {len(crashes)} |",
        f"| candidate combines (kept) | {len(with_combine)} |",
        f"| every law proved | {len(all_proved)} |",
        f"| a law only tested | {len(tested)} ({100 * share:.1f}% of kept combines) |",
        f"| corpus: wrong verdicts | {len(wrong)} |",
        f"| corpus: unknown where the truth is known | {len(unknown_known)} |",
        f"| median seconds a loop | {sorted(r[5] for r in rows)[len(rows) // 2]:.2f} |",
        "",
        "| loop | verdict | identity | associativity | homomorphism | s | note |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        note = r[4].replace("|", "/")[:140] if r[1] != "homomorphism" or any(
            r[2].get(k) != "proved" for k in LAWS) else ""
        lines.append(f"| {r[0].parent.name}/{r[0].stem} | {r[1]} | " +
                     " | ".join(r[2].get(k, "") for k in LAWS) + f" | {r[5]:.1f} | {note} |")
    table = "\n".join(lines)
    data = {"loops": len(rows), "crashes": len(crashes), "combines": len(with_combine),
            "all_proved": len(all_proved), "tested": len(tested), "wrong": [r[0].stem for r in wrong],
            "unknown_known": [r[0].stem for r in unknown_known],
            "rows": [{"loop": f"{r[0].parent.name}/{r[0].stem}", "verdict": r[1], "proofs": r[2],
                      "reason": r[4], "seconds": round(r[5], 2)} for r in rows]}
    print(table)
    print(write("soundness", data, table))


if __name__ == "__main__":
    main()
