"""The README's accuracy figures: `thm3 accuracy --sample NAME --plot docs/img/accuracy-NAME.png`
for Welford and the online softmax normalizer (float32, seed 0, n = 10^2 ... 10^7), each
run's output written to bench/results/accuracy-NAME-<time>-<host>-<commit>.txt, a new file
every run, with the command, the commit and the time above it.

    python bench/accuracy.py [--max-n N] [--no-plot]

The errors do not depend on the machine's load; the times do.  `tests/test_readme.py`
reruns the table's commands at n <= 10^4 and checks the README's rows against them."""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import RESULTS, ROOT, commit, machine, result_stem  # noqa: E402

SAMPLES = ("welford", "safe_softmax")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-n", type=int, default=10**7, help="largest n (the README's table: 10^7)")
    ap.add_argument("--no-plot", action="store_true", help="do not redraw docs/img/accuracy-*.png")
    args = ap.parse_args(argv)
    rev = commit()
    RESULTS.mkdir(exist_ok=True)
    for name in SAMPLES:
        command = ["thm3", "accuracy", "--sample", name]
        if args.max_n != 10**7:
            command += ["--max-n", str(args.max_n)]
        if not args.no_plot:
            command += ["--plot", f"docs/img/accuracy-{name}.png"]
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "thm3", *command[1:]], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout
        seconds = time.perf_counter() - t
        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        m = machine()
        head = (f"# {' '.join(command)} (seed 0), {now}, commit {rev}, {m['cpu']}, {m['cores']} cores, Python "
                f"{platform.python_version()}; {seconds:.1f} s wall at load "
                f"{os.getloadavg()[0]:.1f} (the errors do not depend on the load)\n")
        path = RESULTS / f"{result_stem('accuracy-' + name, rev=rev)}.txt"
        path.write_text(head + out.replace(str(ROOT) + "/", ""))
        print(f"wrote {path.relative_to(ROOT)}")
        print(out)


if __name__ == "__main__":
    main()
