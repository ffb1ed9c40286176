"""The static performance record: every emitted kernel compiled to sm_90 machine code
(NVRTC, ptxas's report, cuobjdump's SASS), one table row per kernel function: registers,
stack, spills, shared memory, occupancy, warp-instructions per element in the tile loop,
MUFU.EX2 per attention score, 16-byte loads and tensor-core instructions.  No GPU needed.

    python bench/sass_table.py [--label after] [--quick]   # writes bench/results/sass-*
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import thm3                                         # noqa: E402
from common import write                            # noqa: E402
from thm3.gpu.render import cuda as R              # noqa: E402
from thm3.gpu.render.attention import merge_source, render_attention   # noqa: E402
from thm3.gpu.runtime import attention as fa        # noqa: E402
from thm3.gpu.runtime import sass                   # noqa: E402
from thm3.ir import Type                            # noqa: E402

QUICK = ("sum", "mps", "welford", "safe_softmax", "logsumexp")


def _dim(a):
    uses_vec = any(x.type is Type.VEC for x in a.loop.fields + a.loop.elements + a.loop.params)
    return 4 if uses_vec else None


def reductions(names) -> list:
    records = []
    for path in sorted((ROOT / "samples").glob("*.py")):
        if names and path.stem not in names:
            continue
        a = thm3.analyze(path, lift=False)
        if a.verdict != "homomorphism" or a.combine_fn is None:
            continue
        # as emitted (thm3 emit, Analysis.run): with the stability certificate, when proved
        certified = a.stability.get("exp_overflow") == "proved"
        for dtype in R.DTYPES:
            source = R.render(a.loop, a.combine_fn, dtype=dtype, dim=_dim(a), exp_nonpositive=certified)
            items = R.make_spec(a.loop, a.combine_fn, dtype, _dim(a)).items
            records += sass.reduction_records(f"{path.stem}-{dtype}", source,
                                              items=items, threads=R.BLOCK)
            print(f"{path.stem} {dtype}", flush=True)
    return records


def attention_variants() -> list:
    from thm3.analysis.attention import recognize
    a = thm3.analyze(ROOT / "samples" / "flash_attention.py", lift=False)
    shape = recognize(a.loop, a.transport_map)
    if shape is None:           # e.g. the transport proof timed out on a loaded machine
        raise SystemExit(f"flash_attention: not recognised as attention ({a.transport})")
    lane = merge_source(a.loop, a.combine_fn, shape)
    records = []
    for dtype in fa.DTYPES:
        for dim in fa.DIMS:
            for causal in (False, True):
                for warps in ((4,) if dtype == "float32" else (1, 4, 8)):
                    cfg = fa.kernel_config(dtype, dim, n_q=10**9, num_warps=warps)
                    source = render_attention(lane, dim=dim, dtype=dtype, causal=causal, num_warps=warps)
                    name = fa.variant_name(dtype, dim, causal, warps)
                    records += sass.attention_records(name, source, threads=cfg.threads,
                                                      dynamic_shared=cfg.shared_bytes,
                                                      scores_per_lane=cfg.block_m * cfg.block_n // cfg.threads)
                    print(name, flush=True)
    return records


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--label", default="", help="e.g. before / after, part of the file name")
    ap.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)} and attention")
    args = ap.parse_args()
    records = reductions(QUICK if args.quick else ()) + attention_variants()
    table = sass.table(records)
    print(table)
    path = write("sass" + (f"-{args.label}" if args.label else ""),
                 {"arch": "sm_90", "records": [asdict(r) for r in records]},
                 "sm_90 machine code of every emitted kernel (NVRTC + cuobjdump), reductions "
                 "rendered as emitted (the stability certificate where proved); instr/elem "
                 "counts the tile loop of the fast path (THM3_FULL_TILES build): what it issues, "
                 "the slow paths that a predicated branch skips over their call left out, and in "
                 "parentheses all of its instructions; EX2/score the MUFU.EX2 of the attention "
                 "K/V tile loop per score a lane computes.\n\n" + table)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
