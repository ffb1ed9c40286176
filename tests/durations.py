"""Record what each default-tier test costs here, for the fast tier's budget (tests/conftest.py).

    python tests/durations.py          # about 13 minutes on this project's 2 cores

runs every test that no explicit mark sends to the slow tier (`REPRESENTATIVE`,
`SLOW_SINGLES`, `@pytest.mark.slow`), serially, with the budget switched off
(THM3_FAST_TIER=all), and writes `tests/durations.txt`: one line a test that took
MIN_SECONDS or more (setup, call and teardown together), its seconds and its node id.
conftest.py then sends to the slow tier every test recorded at `BUDGET_SECONDS` or more,
and keeps each test file's cheapest test in the fast tier.  Rerun it when tests are added
or made dearer, on a quiet machine, and commit the file with them."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "durations.txt"
MIN_SECONDS = 0.05
LINE = re.compile(r"^([\d.]+)s (setup|call|teardown)\s+(\S+)")


def parse(text: str) -> dict[str, float]:
    """node id -> seconds (setup + call + teardown) from pytest's --durations report."""
    seconds: dict[str, float] = {}
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            seconds[m.group(3)] = seconds.get(m.group(3), 0.0) + float(m.group(1))
    return seconds


def main() -> int:
    env = dict(os.environ, THM3_FAST_TIER="all")
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow",
                        "--durations=0", "--durations-min=0"], cwd=HERE.parent, env=env,
                       capture_output=True, text=True)
    print(p.stdout.splitlines()[-1] if p.stdout else p.stderr[-2000:])
    if p.returncode != 0:
        print("the run failed; durations.txt left as it was", file=sys.stderr)
        return 1
    seconds = parse(p.stdout)
    lines = [f"{t:.2f} {nid}" for nid, t in sorted(seconds.items()) if t >= MIN_SECONDS]
    OUT.write_text("# seconds node-id: tests/durations.py, serially, the budget off\n" + "\n".join(lines) + "\n")
    print(f"{len(lines)} tests of {MIN_SECONDS} s or more written to {OUT.relative_to(HERE.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
