"""The emitted Triton modules on a GPU (bench/gpu_check.sh; prepared by bench/prepare_gpu.py,
which renders NAME_triton.py for every sample homomorphism with scalar values): each module's
reduce_state, scan, reduce_rows and scan_rows on PyTorch CUDA tensors against the NumPy
backend on the same data (float64 inputs, n = 0, 1, 1007, 10**6 + 3), then the sum's scan
next to torch.cumsum and the mps reduction next to torch.sum at 2**26, each ratio against a
baseline timed in the same run.  Needs triton and torch; no z3, no thm3 solver.

    python bench/triton_gpu.py --kernels bench/kernels --out DIR
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import pickle
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _close(got, want) -> bool:
    for u, v in zip(got, want):
        u = np.asarray(u.cpu() if hasattr(u, "cpu") else u, dtype=np.float64)
        v = np.asarray(v, dtype=np.float64)
        if u.shape != v.shape:
            return False
        with np.errstate(all="ignore"):
            ok = (u == v) | (np.isnan(u) & np.isnan(v)) | (np.abs(u - v) <= 1e-9 * np.maximum(1.0, np.abs(v)))
        if not ok.all():
            return False
    return True


def _timed(f, repeat=5) -> float:
    import torch
    f()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", default=str(ROOT / "bench" / "kernels"))
    ap.add_argument("--out", default=".")
    args = ap.parse_args(argv)
    import torch
    from thm3.backends.numpy_tree import run_parallel
    from thm3.backends.scan import scan_numpy
    from thm3.semantics.samples import random_arrays
    kernels = Path(args.kernels)
    samples = pickle.loads((kernels / "samples.pkl").read_bytes())
    rows, failures = [], 0
    for path in sorted(kernels.glob("*_triton.py")):
        name = path.stem.removesuffix("_triton")
        loop, combine = samples[name]["loop"], samples[name]["combine"]
        mod = _load(path)
        for n in (0, 1, 1007, 10**6 + 3):
            arrays, params = random_arrays(loop, n, 4, np.random.default_rng(n))
            dev = [torch.as_tensor(np.asarray(x)).cuda() for x in arrays]
            ok = _close(mod.scan(*dev, n=n, **params), scan_numpy(loop, combine, arrays, params, n=n))
            ok &= _close(mod.reduce_state(*dev, n=n, **params), run_parallel(loop, combine, arrays, params, n=n))
            if n == 1007 and arrays:
                grid = [x[:1000].reshape(4, 250) for x in dev]
                got = mod.reduce_rows(*grid, **params)
                for r in range(4):
                    want = run_parallel(loop, combine, [np.asarray(x[:1000]).reshape(4, 250)[r] for x in arrays], params)
                    ok &= _close([g[r] for g in got], want)
            rows.append({"loop": name, "n": n, "ok": bool(ok), "reduction": mod.BLOCK_REDUCTION})
            failures += not ok
            print(rows[-1], flush=True)
    timings = []
    big = 1 << 26
    x = torch.randn(big, device="cuda", dtype=torch.float32)
    for name, ours, base, label in (
            ("sum", lambda m: m.scan(x), lambda: torch.cumsum(x, 0), "torch.cumsum"),
            ("mps", lambda m: m.reduce_state(x), lambda: torch.sum(x), "torch.sum")):
        path = kernels / f"{name}_triton.py"
        if path.exists():
            mod = _load(path)
            t_ours, t_base = _timed(lambda: ours(mod)), _timed(base)
            timings.append({"loop": name, "n": big, "thm3_s": t_ours, "baseline": label, "baseline_s": t_base,
                            "ratio": t_ours / t_base})
            print(timings[-1], flush=True)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "triton_gpu.json").write_text(json.dumps({"checks": rows, "timings": timings,
                                                                "device": torch.cuda.get_device_name()}, indent=1))
    print(f"triton: {len(rows) - failures} of {len(rows)} checks agree with the NumPy backend")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
