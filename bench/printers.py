"""Lines of code of the IR's printers at two commits (issue 24's figure "lines of code per
printer, before and after"), as a ratio after / before.

A printer's code is counted by one rule at every commit, read from `git show`: in each of
its modules, the top-level definitions (functions, classes, assignments of tables) whose
text walks or tabulates the IR (it names an `Op.` member, reads a node's `.src`, or runs
the lowering's steps), their lines less blank lines, comments and docstrings.  The kernel
templates, launchers and module scaffolding around a printer are not counted.

    python bench/printers.py [--before c0b4c2f] [--after HEAD]

c0b4c2f is the last commit before the redesign of issue 24 (5d332e1's parent)."""
from __future__ import annotations

import argparse
import ast
import io
import re
import subprocess
import sys
import tokenize

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
from common import ROOT, write  # noqa: E402

# printer -> its modules, at any commit (a module absent at a commit is skipped)
PRINTERS = {
    "shared: lowering, driver, array printer": ["thm3/ir/program.py", "thm3/ir/lines.py"],
    "loop-file text and report mathematics": ["thm3/ir/printer.py", "thm3/report.py"],
    "loop file (locals, layout)": ["thm3/syntax/loopfile.py"],
    "Python fold": ["thm3/semantics/fold.py"],
    "Numba module": ["thm3/backends/numba_tree.py", "thm3/backends/numba_module.py"],
    "NumPy module": ["gpu/render/module.py"],
    "CUDA": ["gpu/render/cuda.py", "gpu/render/c_printer.py"],
    "JAX module": ["thm3/backends/jax_module.py"],
    "Triton module": ["thm3/backends/triton_module.py"],
}
_WALKS = re.compile(r"\bOp\.[A-Z]|\.src\b|\.steps\b|\.run\(")


def _source(rev: str, path: str) -> str | None:
    if rev == "WORKTREE":
        p = ROOT / path
        return p.read_text() if p.exists() else None
    got = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"], capture_output=True, text=True)
    return got.stdout if got.returncode == 0 else None


def _code_lines(text: str) -> int:
    """Lines holding code: no blank line, comment or docstring."""
    lines: set[int] = set()
    previous = None
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                        tokenize.ENDMARKER):
            continue
        # a string that begins a logical line is a docstring (or a bare string): not code
        if tok.type == tokenize.STRING and previous in (None, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            previous = tok.type
            continue
        previous = tok.type
        lines.update(range(tok.start[0], tok.end[0] + 1))
    return len(lines)


def count(rev: str) -> dict:
    out = {}
    for printer, paths in PRINTERS.items():
        total, parts = 0, []
        for path in paths:
            text = _source(rev, path)
            if text is None:
                continue
            for node in ast.parse(text).body:
                if not isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign)):
                    continue
                segment = ast.get_source_segment(text, node) or ""
                if not _WALKS.search(segment):
                    continue
                n = _code_lines(segment)
                total += n
                name = getattr(node, "name", None) or ast.unparse(node.targets[0] if isinstance(node, ast.Assign)
                                                                  else node.target)
                parts.append(f"{path.rsplit('/', 1)[1]}:{name} {n}")
        out[printer] = {"lines": total, "definitions": parts}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", default="c0b4c2f")
    ap.add_argument("--after", default="WORKTREE")
    args = ap.parse_args()
    before, after = count(args.before), count(args.after)
    rows = ["| printer | before | after | after / before |", "|---|---:|---:|---:|"]
    for printer in PRINTERS:
        b, a = before[printer]["lines"], after[printer]["lines"]
        ratio = f"{a / b:.2f}" if b else "new"
        rows.append(f"| {printer} | {b} | {a} | {ratio} |")
        print(f"{printer:42s} {b:5d} -> {a:5d}  ({ratio})")
    tb = sum(v["lines"] for v in before.values())
    ta = sum(v["lines"] for v in after.values())
    old = [p for p in PRINTERS if before[p]["lines"]]
    ta_same = sum(after[p]["lines"] for p in old)
    rows.append(f"| all | {tb} | {ta} | {ta / tb:.2f} |")
    rows.append(f"| the printers that existed before | {tb} | {ta_same} | {ta_same / tb:.2f} |")
    print(f"all: {tb} -> {ta} ({ta / tb:.2f}); the printers that existed before: {tb} -> {ta_same} "
          f"({ta_same / tb:.2f})")
    table = (f"Before: {args.before}; after: {args.after}.  Rule: see bench/printers.py's docstring.\n\n"
             + "\n".join(rows))
    print(write("printers", {"before_rev": args.before, "after_rev": args.after, "before": before,
                             "after": after}, table))


if __name__ == "__main__":
    main()
