"""Emit the kernels that bench/gpu_reduce.py times, into bench/kernels/ (run here, where thm3
and its solvers are; the GPU machine has CuPy but no z3, so the kernels travel as files).

    python bench/prepare_gpu.py            # sum, mps, welford, safe_softmax; float32
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import thm3                                      # noqa: E402

try:
    from thm3.gpu.emit import emit               # noqa: E402
except ImportError:
    from gpu.emit import emit                    # noqa: E402

LOOPS = ("sum", "mps", "welford", "safe_softmax")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "bench" / "kernels"))
    ap.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    ap.add_argument("loops", nargs="*", default=LOOPS)
    args = ap.parse_args()
    for name in args.loops:
        a = thm3.analyze(ROOT / "samples" / f"{name}.py")
        if a.combine_fn is None:
            raise SystemExit(f"{name}: no combine ({a.verdict}: {a.reason})")
        cu, py = emit(a.loop, a.combine_fn, args.out, dtype=args.dtype)
        print(f"{name}: {a.verdict}, proofs {a.proofs} -> {py.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
