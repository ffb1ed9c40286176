"""Time the lifting search on every catalogued loop with an expected lift (or none), each
run in a fresh Python process so that no cache or warm import helps.

    python bench/lift.py [--prove] [--repeat 3] [--timeout 30] [--only NAME ...] [--quick]

The loops: the samples with a lift in tests/catalog.py (expected fields: `SMALLEST_LIFT`)
and the corpus loops of tests/corpus.py (with corpus_semiring.py, corpus_finite.py,
corpus_bigstate.py) whose entry gives `lift` (the fields the smallest lift adds), or that
have no bounded lift (`NO_BOUNDED_LIFT`: the honest limits, where "none" is right).
`--prove` wires the analyzer in as the prover (`thm3.pipeline.lift_prover`, as `analyze`
does), so a lift counts only when its combine is proved.  Per loop: expected and found
added fields, proved or not, the composition route and seconds; totals "found and proved
N of M", the median and max seconds of `lift` itself (goal: max <= 5 s), the process time
against a fresh process that only imports thm3 (measured in the same run), and each
composition lift's fields against the full table (`thm3.synth.finite.full_table`) or the
full matrix (`thm3.synth.semiring.full_matrix_size`) it replaced.  Writes
bench/results/lift-<time>-<host>-<commit>.txt and .json (lift-noprover-* without --prove),
a new file every run."""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_MAX_S = 5.0
# `--quick`: a sample, a finite-state step (its named read-back), a semiring power, finite
# control with linear data, and an honest limit.
QUICK = ("mts", "finite_delay_line", "powers_decay_param", "finite_ones_after_zero", "below_first")

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
process = time.monotonic() - t0
full = None
if res.route == "finite":
    from thm3.synth.finite import full_table
    got = full_table(loop)
    full = got and {"of": "table", "states": got[0], "fields": got[1]}
elif res.route == "semiring":
    from thm3.synth.semiring import full_matrix_size
    got = full_matrix_size(loop)
    full = got and {"of": "matrix", "semiring": got[0], "fields": got[1]}
print(json.dumps({"seconds": res.seconds, "process": process, "found": res.loop is not None,
                  "added": list(res.added), "proved": res.proof is not None, "route": res.route,
                  "full": full, "reason": res.reason}))
"""


@dataclass(frozen=True)
class Item:
    kind: str                   # "sample" | "corpus"
    name: str
    path: Path
    expected: int | None        # fields the smallest lift adds; None: no bounded (or small) lift
    klass: str = ""             # the corpus entry's class (issue 21)


def catalogued() -> list[Item]:
    """The samples with a lift (or none) and the corpus loops that expect a lift (or none)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from catalog import SAMPLES, SMALLEST_LIFT
    from corpus import CORPUS
    from corpus_bigstate import NO_BOUNDED_LIFT
    out = [Item("sample", s.name, s.path, SMALLEST_LIFT.get(s.name)) for s in SAMPLES if s.lift is not None]
    out += [Item("corpus", e.name, e.path, e.lift, e.klass) for e in CORPUS
            if e.lift is not None or e.name in NO_BOUNDED_LIFT]
    return out


def run_once(path: Path, timeout: float, prove: bool) -> dict:
    """One fresh process; killed at 3x the timeout (a search that ignores its deadline
    shows as "killed", not as a hung run)."""
    t0 = time.monotonic()
    try:
        out = subprocess.run([sys.executable, "-c", CHILD, str(path), str(timeout), "1" if prove else "0"],
                             capture_output=True, text=True, cwd=ROOT, timeout=3 * timeout + 30)
    except subprocess.TimeoutExpired:
        why = f"killed at {3 * timeout + 30:g} s"
    else:
        try:
            return json.loads(out.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            why = f"no answer (exit {out.returncode}): {(out.stderr.strip().splitlines() or [''])[-1]}"
    secs = time.monotonic() - t0
    return {"seconds": secs, "process": secs, "found": False, "added": [], "proved": False, "route": "",
            "full": None, "reason": why, "failed": True}


def build_rows(items: list[Item], timeout: float, prove: bool, repeat: int = 1, echo=print) -> list[dict]:
    """One row a loop: expected and found added fields (None: no lift), proved (None
    without a prover), whether the outcome is the catalogued one (`ok`: the expected
    number of fields, proved where a prover is given; no lift where none exists), the
    composition route and the full table or matrix it replaced, and seconds."""
    rows = []
    for it in items:
        runs = [run_once(it.path, timeout, prove) for _ in range(repeat)]
        secs, procs, last = [r["seconds"] for r in runs], [r["process"] for r in runs], runs[-1]
        found = len(last["added"]) if last["found"] else None
        proved = (last["found"] and last["proved"]) if prove else None
        ok = outcome(it.expected, found, proved, bool(last.get("failed")))
        row = {"kind": it.kind, "name": it.name, "class": it.klass, "expected": it.expected, "found": found,
               "proved": proved, "ok": ok, "route": last["route"], "full": last["full"],
               "added": [a.split(":", 1)[0] for a in last["added"]],
               "median_s": statistics.median(secs), "max_s": max(secs),
               "process_median_s": statistics.median(procs), "process_max_s": max(procs),
               "reason": last["reason"]}
        rows.append(row)
        echo(f"{it.kind:6s} {it.name:28s} expected {_count(it.expected):4s} found {_count(found):4s} "
             f"{'proved' if proved else 'not proved' if prove and found is not None else '':10s} "
             f"{'ok' if ok else 'NO':2s} "
             f"{row['route'] or '-':8s} median {row['median_s']:6.2f} s  max {row['max_s']:6.2f} s  "
             f"({','.join(row['added'])})", flush=True)
    return rows


def outcome(expected: int | None, found: int | None, proved: bool | None, failed: bool = False) -> bool:
    """Whether a loop's lift is the catalogued one: the expected number of added fields
    (proved, where a prover was given), or no lift where none is bounded; never for a
    search that crashed or was killed."""
    if failed:
        return False
    if expected is None:
        return found is None
    return found == expected and proved is not False


def _count(n: int | None) -> str:
    return "none" if n is None else str(n)


def summary(rows: list[dict], prove: bool, baseline: float) -> dict:
    lifts = [r for r in rows if r["expected"] is not None]
    limits = [r for r in rows if r["expected"] is None]
    medians = [r["median_s"] for r in rows]
    worst = max((r["max_s"] for r in rows), default=float("nan"))
    return {"loops": len(rows), "expected_lifts": len(lifts),
            "found": sum(r["found"] is not None for r in lifts),
            "found_and_proved": sum(r["found"] is not None and bool(r["proved"]) for r in lifts),
            "minimal": sum(r["ok"] for r in lifts),
            "no_bounded_lift": len(limits), "none_where_none": sum(r["ok"] for r in limits),
            "median_s": statistics.median(medians) if medians else float("nan"), "max_s": worst,
            "goal_max_s": GOAL_MAX_S, "goal_met": worst <= GOAL_MAX_S,
            "process_max_over_baseline": max((r["process_max_s"] for r in rows), default=0.0) / baseline,
            "prove": prove}


def composition_lines(rows: list[dict]) -> list[str]:
    """Each composition lift's fields against the full table or matrix it replaced."""
    out = []
    for r in rows:
        full = r["full"]
        if not r["route"] or full is None:
            continue
        what = (f"the full table ({full['states']} reachable control states)" if full["of"] == "table" else
                f"the full matrix over {full['semiring']}")
        out.append(f"{r['name']}: {r['found']} fields ({', '.join(r['added'])}) in place of the "
                   f"{full['fields']} of {what}")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="fresh processes per loop (default 3)")
    ap.add_argument("--timeout", type=float, default=30.0, help="lift's timeout per loop, seconds (default 30)")
    ap.add_argument("--prove", action="store_true", help="accept a lift only if the analyzer proves it")
    ap.add_argument("--only", action="append", default=[], metavar="NAME", help="this loop only (repeatable)")
    ap.add_argument("--quick", action="store_true", help=f"a handful of loops only: {', '.join(QUICK)}")
    args = ap.parse_args(argv)
    items = catalogued()
    chosen = set(args.only) | (set(QUICK) if args.quick else set())
    unknown = chosen - {it.name for it in items}
    if unknown:
        ap.error(f"not a catalogued loop with a lift (or none): {', '.join(sorted(unknown))}")
    if chosen:
        items = [it for it in items if it.name in chosen]

    # Baseline, measured in this run: a fresh process that only imports thm3's analyzer.
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-c", "import thm3.pipeline, thm3.lift"], cwd=ROOT, check=True)
    baseline = time.monotonic() - t0
    rows = build_rows(items, args.timeout, args.prove, args.repeat)
    total = summary(rows, args.prove, baseline)
    composition = composition_lines(rows)

    host = socket.gethostname()
    date = datetime.date.today().isoformat()
    meta = {"date": date, "host": host, "python": platform.python_version(), "cpus": os.cpu_count(),
            "repeat": args.repeat, "timeout_s": args.timeout, "prove": args.prove,
            "only": sorted(chosen), "import_baseline_s": baseline, "load_average_1min_end": os.getloadavg()[0]}
    sys.path.insert(0, str(ROOT / "bench"))
    from common import RESULTS, commit, result_stem
    meta["commit"] = commit()
    RESULTS.mkdir(parents=True, exist_ok=True)
    stem = RESULTS / result_stem(f"lift{'' if args.prove else '-noprover'}", rev=meta["commit"])
    stem.with_suffix(".json").write_text(json.dumps({"meta": meta, "summary": total, "rows": rows}, indent=2)
                                         + "\n")
    proved = "found and proved" if args.prove else "found (no prover)"
    totals = [f"{proved} {total['found_and_proved'] if args.prove else total['found']} of "
              f"{total['expected_lifts']} expected lifts; with the catalogued number of fields "
              f"{total['minimal']} of {total['expected_lifts']}; no lift where none is bounded "
              f"{total['none_where_none']} of {total['no_bounded_lift']}",
              f"lift seconds: median {total['median_s']:.2f}, max {total['max_s']:.2f} "
              f"(goal max <= {GOAL_MAX_S:g} s: {'met' if total['goal_met'] else 'MISSED'}); process time at "
              f"most {total['process_max_over_baseline']:.1f}x the import baseline ({baseline:.2f} s)"]
    lines = [f"# Lifting search, {date}, {host}, commit {meta['commit']}", "",
             f"Python {meta['python']}, {meta['cpus']} CPUs; {args.repeat} fresh processes per loop; "
             f"timeout {args.timeout:g} s; prover: {'the analyzer' if args.prove else 'none'}; "
             + (f"loops: {', '.join(sorted(chosen))}; " if chosen else "")
             + f"baseline (a process importing thm3) {baseline:.2f} s; "
             f"1-minute load average at the end {meta['load_average_1min_end']:.1f} (a shared machine).", "",
             "| loop | class | expected | found | proved | ok | route | added | median s | max s | process median s |",
             "| --- | --- | ---: | ---: | --- | --- | --- | --- | ---: | ---: | ---: |"]
    for r in rows:
        lines.append(f"| {r['name']} | {r['class'] or r['kind']} | {_count(r['expected'])} | {_count(r['found'])} | "
                     f"{'-' if r['proved'] is None else 'yes' if r['proved'] else 'no'} | "
                     f"{'yes' if r['ok'] else 'NO'} | {r['route'] or '-'} | {', '.join(r['added']) or '-'} | "
                     f"{r['median_s']:.2f} | {r['max_s']:.2f} | {r['process_median_s']:.2f} |")
    lines += [""] + totals + ["", "Composition lifts against the full table or matrix they replaced:", ""]
    lines += [f"- {c}" for c in composition] or ["- none in this run"]
    lines += ["", "Reasons:", ""] + [f"- {r['name']}: {r['reason']}" for r in rows]
    stem.with_suffix(".txt").write_text("\n".join(lines) + "\n")
    print()
    print("\n".join(totals))
    print("composition lifts against the full table or matrix:")
    print("\n".join(f"  {c}" for c in composition) or "  none in this run")
    print(f"wrote {stem.with_suffix('.txt').relative_to(ROOT)} and .json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
