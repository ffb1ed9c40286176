"""Fuzz thm3 for a bounded time: random loop files (tests/fuzz/generate.py) judged by the
brute-force oracle (tests/fuzz/oracle.py), with totals written to bench/results/.

Totals: loops, crashes, wrong verdicts, "unknown" where an answer exists, homomorphisms
with a law only "tested".  The baseline measured in the same run is the oracle's own
time per loop (the fixed cost of judging), against thm3's analysis time.

Seeds run in `--jobs` worker processes.  A worker whose loop runs past `--hang` seconds
(thm3.analyze was given `--timeout`) is killed and the seed counts as a crash ("hang"):
a timeout must be an honest "unknown", never a hang.  The totals file is rewritten every
minute, so a run that is stopped early still leaves its counts (marked partial).

    python bench/fuzz.py --seconds 600 [--loops 10000] [--seed 0] [--timeout 10] [--jobs 2] [--family NAME]
"""
from __future__ import annotations

import argparse
import collections
import datetime
import multiprocessing as mp
import os
import queue
import socket
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# tests/ first: its `fuzz` package, not this script, is what `import fuzz` must find
sys.path[:0] = [str(ROOT / "tests")]
sys.modules.pop("fuzz", None)

from common import RESULTS, machine, result_stem  # noqa: E402  (bench/, the script's own folder)


def _worker(tasks, results, timeout: float, families: tuple = ()) -> None:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from fuzz.generate import from_seed
    from fuzz.oracle import judge
    import thm3.pipeline  # noqa: F401  (imported before the first loop: its timeout is the analysis')
    while (seed := tasks.get()) is not None:
        results.put(("start", seed, os.getpid(), None))
        case = from_seed(seed, families)
        j = judge(case, timeout=timeout, seed=seed)
        results.put(("done", seed, os.getpid(), {
            "family": case.family, "verdict": j.verdict, "outcome": j.outcome, "tested": j.tested,
            "seconds": j.seconds, "analysis": j.analysis_seconds,
            "detail": j.detail.splitlines()[0] if j.detail else ""}))


class Run:
    """The running totals, and the text of the results file."""

    def __init__(self, args):
        self.args = args
        self.start = time.monotonic()
        self.totals = collections.Counter()
        self.by_family = collections.defaultdict(collections.Counter)
        self.findings: list[tuple[int, str]] = []
        self.missed: dict[str, list[int]] = collections.defaultdict(list)   # unknown with an answer
        self.seconds: list[float] = []
        self.analysis: list[float] = []
        self.last_seed = args.seed - 1

    def add(self, seed: int, r: dict) -> None:
        self.totals["loops"] += 1
        self.totals[r["outcome"]] += 1
        self.by_family[r["family"]][r["outcome"]] += 1
        self.seconds.append(r["seconds"])
        self.analysis.append(r["analysis"])
        self.last_seed = max(self.last_seed, seed)
        if r["verdict"] == "homomorphism":
            self.totals["homomorphism verdicts"] += 1
            self.totals["laws only tested"] += r["tested"]
        if r["outcome"] == "unknown-with-answer":
            self.missed[r["family"]].append(seed)
        if r["outcome"] in ("crash", "wrong", "overrun"):
            self.findings.append((seed, f"seed {seed} ({r['family']}, {r['verdict']}, {r['outcome']}): {r['detail']}"))

    def text(self, partial: bool) -> str:
        a = self.args
        t = self.totals
        elapsed = time.monotonic() - self.start
        hom = t["homomorphism verdicts"]
        oracle = [s - x for s, x in zip(self.seconds, self.analysis)]
        ratio = (sum(self.analysis) / sum(oracle)) if sum(oracle) > 0 else float("nan")
        today = datetime.date.today().isoformat()
        lines = [f"# fuzz, {today}" + (" (partial: the run is still going or was stopped)" if partial else ""),
                 f"machine: {machine()}, load average {os.getloadavg()[0]:.1f} at writing",
                 f"command: python bench/fuzz.py --seconds {a.seconds} --loops {a.loops} --seed {a.seed} "
                 f"--timeout {a.timeout} --jobs {a.jobs} --hang {a.hang}" + "".join(f" --family {f}" for f in a.family),
                 f"seeds {a.seed}..{self.last_seed}, {elapsed:.0f} s, median {statistics.median(self.seconds or [0]):.2f} s "
                 f"per loop (analysis + oracle), max {max(self.seconds or [0]):.2f} s",
                 f"thm3's analysis time against the oracle's (the baseline, same run): {ratio:.2f}x", "",
                 f"loops: {t['loops']}",
                 f"crashes: {t['crash']} (of which hangs past --hang: {t['hang']})",
                 f"analyses past the timeout plus a tenth: {t['overrun']}",
                 f"wrong verdicts: {t['wrong']}",
                 f"unknown where an answer exists: {t['unknown-with-answer']}",
                 f"unknown (no answer known): {t['unknown']}",
                 f"homomorphism verdicts: {hom}, with a law only tested: {t['laws only tested']}"
                 f" ({100 * t['laws only tested'] / hom if hom else 0:.2f}%)", "",
                 "by family (outcome counts):"]
        lines += [f"  {fam}: {dict(c)}" for fam, c in sorted(self.by_family.items())]
        lines += ["", "findings (crash / wrong):"] + [f"  {f}" for _, f in sorted(self.findings)]
        lines += ["", "seeds of \"unknown\" where an answer exists, by family:"]
        lines += [f"  {fam}: {' '.join(map(str, sorted(seeds)))}" for fam, seeds in sorted(self.missed.items())]
        return "\n".join(lines) + "\n"


def main(argv=None) -> Path:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=600.0, help="stop after this long")
    ap.add_argument("--loops", type=int, default=10_000, help="at most this many loops")
    ap.add_argument("--seed", type=int, default=0, help="first seed")
    ap.add_argument("--timeout", type=float, default=10.0, help="thm3.analyze timeout per loop")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    ap.add_argument("--hang", type=float, default=None,
                    help="seconds after which a loop counts as a hang (default: 6x --timeout + 30)")
    ap.add_argument("--name", default="", help="suffix of the results file's name")
    ap.add_argument("--family", action="append", default=[],
                    help="draw only from this family (repeatable; e.g. asserted_params, wide_coupled)")
    args = ap.parse_args(argv)
    args.hang = args.hang or 6 * args.timeout + 30
    today = datetime.date.today().isoformat()
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{result_stem('fuzz' + ('-' + args.name if args.name else ''))}.txt"

    ctx = mp.get_context("fork")
    results = ctx.Queue()
    run = Run(args)
    next_seed = args.seed
    end_seed = args.seed + args.loops
    workers: dict[int, tuple] = {}        # pid -> (process, its task queue)
    running: dict[int, tuple[int, float]] = {}   # pid -> (seed, started)

    def spawn():
        tasks = ctx.Queue()
        p = ctx.Process(target=_worker, args=(tasks, results, args.timeout, tuple(args.family)), daemon=False)  # thm3 forks its own bounded children
        p.start()
        workers[p.pid] = (p, tasks)
        return p.pid

    def feed(pid):
        nonlocal next_seed
        if next_seed < end_seed and time.monotonic() - run.start < args.seconds:
            workers[pid][1].put(next_seed)
            running[pid] = (next_seed, time.monotonic())
            next_seed += 1
        else:
            workers[pid][1].put(None)
            running.pop(pid, None)

    for _ in range(max(1, args.jobs)):
        feed(spawn())
    written = time.monotonic()
    while running:
        try:
            kind, seed, pid, payload = results.get(timeout=1.0)
        except queue.Empty:
            kind = None
        if kind == "start" and pid in running:
            running[pid] = (seed, time.monotonic())
        elif kind == "done":
            run.add(seed, payload)
            if pid in workers:
                feed(pid)
        now = time.monotonic()
        for pid, (seed, started) in list(running.items()):
            if now - started > args.hang:
                p, _ = workers.pop(pid)
                p.kill()
                p.join()
                running.pop(pid)
                run.totals["hang"] += 1
                run.add(seed, {"family": "?", "verdict": "-", "outcome": "crash", "tested": False,
                               "seconds": now - started, "analysis": now - started,
                               "detail": f"hang: still running after {args.hang:.0f} s (--timeout {args.timeout})"})
                feed(spawn())
            elif not workers[pid][0].is_alive():
                p, _ = workers.pop(pid)
                running.pop(pid)
                run.add(seed, {"family": "?", "verdict": "-", "outcome": "crash", "tested": False,
                               "seconds": now - started, "analysis": now - started,
                               "detail": f"the worker died (exit code {p.exitcode})"})
                feed(spawn())
        if now - written > 60:
            path.write_text(run.text(partial=True))
            written = now
    for p, _ in workers.values():
        p.join(timeout=5)
    text = run.text(partial=False)
    path.write_text(text)
    print(text.split("\nby family")[0])
    print(f"written to {path}")
    return path


if __name__ == "__main__":
    main()
