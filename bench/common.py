"""Shared by the benchmarks: where results go, and what machine made them."""
from __future__ import annotations

import datetime
import json
import os
import platform
import socket
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"


def machine() -> dict:
    try:
        cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "")
    except OSError:
        cpu = platform.processor()
    return {"host": socket.gethostname(), "cpu": cpu, "cores": os.cpu_count(),
            "python": platform.python_version(), "platform": platform.platform()}


def commit() -> str:
    """The checkout's commit (short), with "+dirty" when its tracked files differ; "unknown"
    outside git."""
    import subprocess
    root = ROOT
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                              text=True, check=True, timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def result_stem(name: str, now: datetime.datetime | None = None, rev: str | None = None) -> str:
    """A results file's stem, new for every run: the benchmark's name, the UTC time to the
    second, the host and the commit (`sum-20261202T071500Z-vm-1a2b3c4d5e6f`); a number is
    added where a file of that stem exists already, so no run overwrites another's file."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    rev = (rev or commit()).replace("+", "-")
    stem = f"{name}-{now.strftime('%Y%m%dT%H%M%SZ')}-{socket.gethostname()}-{rev}"
    k, out = 1, stem
    while any((RESULTS / f"{out}{ext}").exists() for ext in (".json", ".md", ".txt")):
        k += 1
        out = f"{stem}-{k}"
    return out


def write(name: str, data: dict, table: str) -> Path:
    """The run's results as bench/results/STEM.json and STEM.md (STEM from `result_stem`),
    stamped with the commit and the time; returns the .md's path."""
    RESULTS.mkdir(exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)
    rev = commit()
    stem = result_stem(name, now, rev)
    stamp = now.isoformat(timespec="seconds")
    data = {"date": now.date().isoformat(), "time": stamp, "commit": rev, "machine": machine()} | data
    (RESULTS / f"{stem}.json").write_text(json.dumps(data, indent=2, default=str))
    md = f"# {name}, {stamp}, commit {rev}\n\nMachine: {data['machine']}\n\n{table}\n"
    (RESULTS / f"{stem}.md").write_text(md)
    return RESULTS / f"{stem}.md"


def best(f, repeat: int = 3) -> float:
    """The fastest of `repeat` timed calls of `f`, in seconds."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)
