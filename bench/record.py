"""Record what thm3 answers for every sample and corpus loop, to compare two trees.

For each loop: the verdict, the route, the combine and identity as `to_json()` prints
them, the laws' statuses, the stability verdicts, and the text of every printer of the
IR: the human report (times blanked), the loop file, the Python fold, and for a
homomorphism the Numba module and every emitted file (the CUDA kernels and the
NumPy/CuPy module, float32).  A change
that should keep behaviour (a refactoring, a merge) is checked by recording before and
after and comparing:

    python bench/record.py -o before.json [--timeout S] [--only NAME ...]
    python bench/record.py --compare before.json after.json

Each loop runs in a fresh process (as bench/analyze.py does), in the thm3 found from
the current directory, its GPU stage and CLI (`gpu/`, `cli/`) included.  This is a tool, not a benchmark: it writes where -o says.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

PROBE = r"""
import importlib.util, json, os, sys, tempfile, pathlib
import thm3
# the GPU stage and the CLI from this tree too: an editable install maps them to its own
for name, folder in (("thm3.gpu", "gpu"), ("thm3.cli", "cli")):
    path = os.path.join(os.getcwd(), folder)
    spec = importlib.util.spec_from_file_location(name, os.path.join(path, "__init__.py"),
                                                  submodule_search_locations=[path])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    setattr(thm3, name.rsplit(".", 1)[1], module)
a = thm3.analyze(sys.argv[1], timeout=float(sys.argv[2]), lift=False)
j = a.to_json()
out = {"verdict": str(a.verdict), "combine": j.get("combine"), "identity": j.get("identity"),
       "proofs": {k: str(v) for k, v in (j.get("proofs") or {}).items()},
       "stability": j.get("stability"), "method": j.get("method"), "files": {}}
if str(a.verdict) == "homomorphism":
    with tempfile.TemporaryDirectory() as d:
        try:
            for p in a.emit(d, dtype="float32"):
                p = pathlib.Path(p)
                out["files"][p.name] = p.read_text()
        except Exception as e:          # a loop thm3 cannot emit: record why
            out["files"] = {"error": f"{type(e).__name__}: {e}"}
# every printer of the IR: the report (its times blanked), the loop file, the Python fold
# and, for a combine, the Numba module
import re
from thm3.report import render_report
from thm3.syntax.loopfile import loop_text
from thm3.semantics.fold import Fold
from thm3.semantics.evaluate import PYTHON
report = "\n".join(l for l in render_report(a).splitlines() if not l.startswith("steps:"))
out["report"] = re.sub(r"\d+\.\d+ ?s\b", "T s", report)
out["loop_text"] = loop_text(a.loop)
out["fold"] = Fold(a.loop, PYTHON).source
if a.combine_fn is not None:
    from thm3.backends.numba_tree import render
    try:
        out["numba"] = render(a.loop, a.combine_fn)
    except Exception as e:
        out["numba"] = f"{type(e).__name__}: {e}"
print(json.dumps(out, default=str))
"""


def loops(only):
    from catalog import SAMPLES
    from corpus import CORPUS
    for s in SAMPLES:
        if not only or s.name in only:
            yield f"samples/{s.name}", s.path
    for e in CORPUS:
        if not only or e.name in only:
            yield f"corpus/{e.name}", e.path


def record(args) -> dict:
    got = {}
    for key, path in loops(set(args.only or ())):
        try:
            p = subprocess.run([sys.executable, "-c", PROBE, str(path), str(args.timeout)],
                               capture_output=True, text=True, timeout=args.timeout * 3 + 30)
            got[key] = json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 and p.stdout.strip() \
                else {"crash": p.stderr.strip().splitlines()[-1:] or [f"exit {p.returncode}"]}
        except subprocess.TimeoutExpired:
            got[key] = {"crash": ["hang"]}
        print(f"{key}: {got[key].get('verdict', got[key].get('crash'))}", flush=True)
    return got


def compare(before: dict, after: dict) -> int:
    """Print every loop whose record differs, field by field; return their number."""
    changed = 0
    for key in sorted(set(before) | set(after)):
        b, a = before.get(key), after.get(key)
        if b == a:
            continue
        changed += 1
        if b is None or a is None:
            print(f"{key}: {'new' if b is None else 'gone'}")
            continue
        for field in sorted(set(b) | set(a)):
            if b.get(field) != a.get(field):
                if field == "files" and isinstance(b.get(field), dict) and isinstance(a.get(field), dict):
                    names = [n for n in sorted(set(b[field]) | set(a[field])) if b[field].get(n) != a[field].get(n)]
                    print(f"{key}: files differ: {', '.join(names)}")
                else:
                    print(f"{key}: {field}: {b.get(field)!r} -> {a.get(field)!r}")
    print(f"{changed} of {len(set(before) | set(after))} loops differ")
    return changed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", help="write the record here (JSON)")
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    args = ap.parse_args()
    if args.compare:
        return 1 if compare(*(json.loads(Path(p).read_text()) for p in args.compare)) else 0
    if not args.output:
        ap.error("-o/--output or --compare is needed")
    got = record(args)
    Path(args.output).write_text(json.dumps(got, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
