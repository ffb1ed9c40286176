"""Shared by the benchmarks: where results go, and what machine made them."""
from __future__ import annotations

import datetime
import json
import os
import platform
import socket
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def machine() -> dict:
    try:
        cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "")
    except OSError:
        cpu = platform.processor()
    return {"host": socket.gethostname(), "cpu": cpu, "cores": os.cpu_count(),
            "python": platform.python_version(), "platform": platform.platform()}


def write(name: str, data: dict, table: str) -> Path:
    RESULTS.mkdir(exist_ok=True)
    today = datetime.date.today().isoformat()
    stem = f"{name}-{today}-{socket.gethostname()}"
    data = {"date": today, "machine": machine()} | data
    (RESULTS / f"{stem}.json").write_text(json.dumps(data, indent=2, default=str))
    md = f"# {name}, {today}\n\nMachine: {data['machine']}\n\n{table}\n"
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
