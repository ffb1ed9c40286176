"""Emit the kernels that bench/gpu_reduce.py times, into bench/kernels/ (run here, where thm3
and its solvers are; the GPU machine has CuPy but no z3, so the kernels travel as files).

    python bench/prepare_gpu.py            # sum, mps, welford, safe_softmax; float32
                                           # and FlashAttention's derived lane combine
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import thm3                                      # noqa: E402

from thm3.gpu.emit import emit                   # noqa: E402

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
    # FlashAttention: the derived combine as the lane function the attention kernel calls,
    # and the emitted module (D = 64 and 128) that bench/attention.py and the GPU tests use.
    from thm3.analysis.attention import recognize
    from thm3.gpu.emit_attention import combine_lane_source, emit_attention
    a = thm3.analyze(ROOT / "samples" / "flash_attention.py", lift=False)
    shape = recognize(a.loop, a.transport_map)
    if shape is None:
        raise SystemExit("flash_attention: not recognised as attention")
    lane = Path(args.out) / "flash_attention_lane.cu"
    lane.write_text(combine_lane_source(a.loop, a.combine_fn, shape))
    for dim in (64, 128):
        emit_attention(a, shape, Path(args.out) / f"attention_d{dim}", dim=dim)
    print(f"flash_attention: {a.verdict}, proofs {a.proofs} -> {lane.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
