"""Prepare the one device run (bench/gpu_check.sh): emit here, where thm3 and its solvers
are, everything the GPU machine needs but cannot make (it has CuPy, torch, NumPy and SymPy,
but no z3 and no pip).  Writes bench/kernels/:

- NAME.py and NAME.cu for every homomorphic sample (float32, Vec length 4), the emitted
  modules that bench/gpu_reduce.py checks and times; NAME_triton.py for those with scalar
  values, the Triton modules that bench/triton_gpu.py checks;
- samples.pkl: each sample's loop and combine as thm3 IR, for the NumPy backend
  (thm3.backends.numpy_tree, which needs neither z3 nor SymPy) that the kernels are
  checked against;
- attention_merge.cu and attention_combine.py: the combine derived from
  samples/flash_attention.py in the kernels' split form and as NumPy code, for
  bench/attention.py; MANIFEST, the list gpu_check.sh verifies.

    python bench/prepare_gpu.py [--out bench/kernels]

Then carry bench/kernels (an ignored path) with the working tree; see bench/README.md.
"""
from __future__ import annotations

import argparse
import pickle
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import thm3                                                    # noqa: E402
from thm3.analysis.attention import recognize                  # noqa: E402
from thm3.backends.triton_module import render as render_triton  # noqa: E402
from thm3.gpu.api import emit                                  # noqa: E402
from thm3.gpu.render.attention import merge_source            # noqa: E402
from thm3.gpu.render.module import numpy_combine_source       # noqa: E402
from thm3.ir import Type                                       # noqa: E402

DIM = 4


def _uses_vec(a) -> bool:
    return any(x.type is Type.VEC for x in a.loop.fields + a.loop.elements + a.loop.params)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "bench" / "kernels"))
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    samples, files = {}, []
    for path in sorted((ROOT / "samples").glob("*.py")):
        a = thm3.analyze(path, lift=False)
        if a.verdict != "homomorphism" or a.combine_fn is None:
            print(f"{path.stem}: {a.verdict}, not emitted")
            continue
        dim = DIM if _uses_vec(a) else None
        cu, py = emit(a.loop, a.combine_fn, out, dtype="float32", dim=dim,
                      exp_nonpositive=a.stability.get("exp_overflow") == "proved")
        samples[path.stem] = {"loop": a.loop, "combine": a.combine_fn, "dim": dim}
        files += [cu.name, py.name]
        if dim is None:         # the Triton module (scalar values), for bench/triton_gpu.py
            triton_py = out / f"{path.stem}_triton.py"
            triton_py.write_text(render_triton(a.loop, a.combine_fn, commutativity=a.proofs["commutativity"]))
            files.append(triton_py.name)
        print(f"{path.stem}: proofs {a.proofs} -> {py.name}", flush=True)
    (out / "samples.pkl").write_bytes(pickle.dumps(samples))
    a = thm3.analyze(ROOT / "samples" / "flash_attention.py", lift=False)
    shape = recognize(a.loop, a.transport_map)
    if shape is None:
        raise SystemExit("flash_attention: not recognised as attention")
    (out / "attention_merge.cu").write_text(merge_source(a.loop, a.combine_fn, shape))
    (out / "attention_combine.py").write_text(
        "import numpy as np\n" + numpy_combine_source(a.loop, a.combine_fn, shape))
    files += ["samples.pkl", "attention_merge.cu", "attention_combine.py"]
    (out / "MANIFEST").write_text("\n".join(files) + "\n")
    print(f"wrote {len(files)} files to {out}")


if __name__ == "__main__":
    main()
