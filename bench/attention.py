"""FlashAttention forward from the derived combine, on a GPU, next to torch's SDPA.

Measured in the same run: torch.nn.functional.scaled_dot_product_attention on the same
inputs with its flash and cuDNN backends named explicitly (torch.nn.attention.sdpa_kernel;
prefill, TFLOP/s counted as 4 B H N^2 D, halved for causal), and the bandwidth of a large
device-to-device copy (decoding: GB/s of K and V read against it).  Goal (issue 11): at
least 0.8x SDPA flash at N = 4096, D = 128, bf16, non-causal.

    python bench/attention.py --merge FILE         # render with this derived merge, run
    python bench/attention.py --derive             # derive the merge with thm3 (needs z3)
    python bench/attention.py --render DIR --merge FILE   # only write the .cu variants

Needs CuPy, torch and NumPy on the GPU machine, not z3: the kernels are rendered by
gpu/render/attention.py from the derived combine's merge (`thm3_merge_rows`, written by
bench/prepare_gpu.py as bench/kernels/attention_merge.cu), or derived with --derive where
thm3 can run.  There is no hand-written fallback: without one of the two it stops.
"""
from __future__ import annotations

import argparse
import datetime
import json
import platform
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# thm3 from this tree (bench/gpu_check.sh lays it out on PYTHONPATH, thm3.gpu = gpu/)
from thm3.gpu.render.attention import render_attention      # noqa: E402
from thm3.gpu.runtime import attention as fa                # noqa: E402

RESULTS = ROOT / "bench" / "results"
DTYPE = "bfloat16"
PREFILL_N = (1024, 4096, 16384)
DECODE_N = (32768, 65536, 131072)
TOKENS = 16384          # batch * N, as FlashAttention's own benchmark
MODEL_DIM = 2048        # heads * D


# --------------------------------------------------------------------------------------
# where the kernels come from
# --------------------------------------------------------------------------------------

def derived_merge() -> str:
    """thm3_merge_rows from thm3's analysis of samples/flash_attention.py (needs z3)."""
    import thm3
    from thm3.analysis.attention import recognize
    from thm3.gpu.render.attention import merge_source
    analysis = thm3.analyze(ROOT / "samples" / "flash_attention.py", lift=False)
    if analysis.verdict != "homomorphism":
        raise SystemExit(f"flash_attention: {analysis.verdict}: {analysis.reason}")
    return merge_source(analysis.loop, analysis.combine_fn, recognize(analysis.loop, analysis.transport_map))


def lane_source(args) -> tuple[str, str]:
    """(the derived merge source, where it came from)."""
    if args.merge:
        return Path(args.merge).read_text(), f"file {args.merge}"
    if args.derive:
        return derived_merge(), "derived by thm3 from samples/flash_attention.py"
    raise SystemExit("give the derived combine: --merge FILE (bench/prepare_gpu.py writes "
                     "bench/kernels/attention_merge.cu) or --derive")


VARIANTS = [(dim, causal, warps) for dim in (64, 128) for causal in (False, True)
            for warps in (1, 4, 8)]


def render_all(directory: Path, lane: str, origin: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    names = []
    for dim, causal, warps in VARIANTS:
        name = fa.variant_name(DTYPE, dim, causal, warps) + ".cu"
        (directory / name).write_text(
            render_attention(lane, dim=dim, dtype=DTYPE, causal=causal, num_warps=warps))
        names.append(name)
    (directory / "manifest.json").write_text(json.dumps({"lane": origin, "files": names}, indent=2))
    print(f"wrote {len(names)} variants to {directory}")


class Kernels:
    """The source of each variant: read from pre-rendered files, or rendered once."""

    def __init__(self, lane: str | None, directory: Path | None):
        self.lane, self.directory, self.cache = lane, directory, {}

    def source(self, dim: int, causal: bool, warps: int) -> str:
        key = (dim, causal, warps)
        if key not in self.cache:
            if self.directory is not None:
                path = self.directory / (fa.variant_name(DTYPE, dim, causal, warps) + ".cu")
                self.cache[key] = path.read_text()
            else:
                self.cache[key] = render_attention(self.lane, dim=dim, dtype=DTYPE,
                                                      causal=causal, num_warps=warps)
        return self.cache[key]

    def __call__(self, q, k, v, causal: bool):
        cfg = fa.kernel_config(DTYPE, q.shape[-1], q.shape[2])
        return fa.attention_cupy(q, k, v, causal=causal,
                                 source=self.source(q.shape[-1], causal, cfg.num_warps))


# --------------------------------------------------------------------------------------
# measuring
# --------------------------------------------------------------------------------------

def seconds(torch, fn, *, budget: float = 0.5, rounds: int = 5) -> float:
    """Median over `rounds` of the mean time of back-to-back calls (so the launch overhead
    hides behind the GPU work), timed with CUDA events on torch's stream."""
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    once = max(time.perf_counter() - t0, 1e-6)
    reps = max(2, min(200, int(budget / rounds / once)))
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(rounds):
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / reps)
    return statistics.median(times)


def copy_bandwidth(torch, nbytes: int = 2 << 30) -> float:
    """Bytes read plus bytes written per second by a device-to-device copy."""
    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    return 2 * nbytes / seconds(torch, lambda: dst.copy_(src), budget=1.0)


def rel_fro(torch, a, b) -> float:
    a, b = a.float(), b.float()
    return float(torch.linalg.vector_norm(a - b) / torch.linalg.vector_norm(b).clamp_min(1e-30))


def prefill(torch, kernels, dim: int, n: int, causal: bool) -> dict:
    b, h = max(1, TOKENS // n), MODEL_DIM // dim
    gen = torch.Generator(device="cuda").manual_seed(n + dim)
    q, k, v = (torch.randn((b, h, n, dim), device="cuda", generator=gen, dtype=torch.bfloat16)
               for _ in range(3))
    from torch.nn.attention import SDPBackend, sdpa_kernel
    sdpa = torch.nn.functional.scaled_dot_product_attention
    ours_out, ours_lse = kernels(q, k, v, causal)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        ref = sdpa(q, k, v, is_causal=causal)
    err = rel_fro(torch, ours_out, ref)
    nan = bool(torch.isnan(ours_out).any() or torch.isnan(ours_lse).any())
    t_ours = seconds(torch, lambda: kernels(q, k, v, causal))
    flops = 4 * b * h * n * n * dim / (2 if causal else 1)
    cfg = fa.kernel_config(DTYPE, dim, n)
    row = {"kind": "prefill", "dim": dim, "n": n, "causal": causal, "batch": b, "heads": h,
           "warps": cfg.num_warps, "ms": t_ours * 1e3, "tflops": flops / t_ours / 1e12,
           "rel_err_vs_sdpa": err, "nan": nan}
    for name, backend in (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
        try:
            with sdpa_kernel(backend):
                t = seconds(torch, lambda: sdpa(q, k, v, is_causal=causal))
            row.update({f"sdpa_{name}_ms": t * 1e3, f"sdpa_{name}_tflops": flops / t / 1e12,
                        f"vs_{name}": t / t_ours})
        except Exception as exc:                    # that backend does not run here
            row[f"sdpa_{name}_error"] = f"{type(exc).__name__}: {exc}"[:120]
    # the older fields, against flash
    row.update({"sdpa_ms": row.get("sdpa_flash_ms"), "sdpa_tflops": row.get("sdpa_flash_tflops"),
                "ratio": row.get("vs_flash")})
    return row


def decode(torch, kernels, dim: int, n: int, copy_bw: float, heads: int = 32) -> dict:
    b = 1
    gen = torch.Generator(device="cuda").manual_seed(n + dim + 1)
    q = torch.randn((b, heads, 1, dim), device="cuda", generator=gen, dtype=torch.bfloat16)
    k, v = (torch.randn((b, heads, n, dim), device="cuda", generator=gen, dtype=torch.bfloat16)
            for _ in range(2))
    sdpa = torch.nn.functional.scaled_dot_product_attention
    ours_out, _ = kernels(q, k, v, False)
    err = rel_fro(torch, ours_out, sdpa(q, k, v))
    t_ours = seconds(torch, lambda: kernels(q, k, v, False))
    t_sdpa = seconds(torch, lambda: sdpa(q, k, v))
    kv_bytes = 2 * b * heads * n * dim * 2
    cfg = fa.kernel_config(DTYPE, dim, 1)
    splits = fa.choose_splits(1, b * heads, -(-n // cfg.block_n),
                              num_sms=torch.cuda.get_device_properties(0).multi_processor_count,
                              blocks_per_sm=fa._blocks_per_sm(cfg))
    return {"kind": "decode", "dim": dim, "n": n, "batch": b, "heads": heads, "splits": splits,
            "ms": t_ours * 1e3, "sdpa_ms": t_sdpa * 1e3, "gbs": kv_bytes / t_ours / 1e9,
            "sdpa_gbs": kv_bytes / t_sdpa / 1e9, "copy_gbs": copy_bw / 1e9,
            "of_copy": kv_bytes / t_ours / copy_bw, "rel_err_vs_sdpa": err}


# --------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------

def tables(rows: list[dict]) -> str:
    pre = [r for r in rows if r.get("kind") == "prefill"]
    dec = [r for r in rows if r.get("kind") == "decode"]
    out = ["## Prefill (bf16, forward)", "",
           "| D | N | causal | B x H | ours ms | ours TFLOP/s | SDPA flash TFLOP/s | SDPA cuDNN TFLOP/s "
           "| ours / flash (goal >= 0.8 at D=128 N=4096) | ours / cuDNN | rel. err vs flash |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    num = lambda x, f: "n/a" if x is None else format(x, f)
    for r in pre:
        if "error" in r:
            out.append(f"| {r['dim']} | {r['n']} | {r['causal']} | | error: {r['error']} | | | | |")
            continue
        out.append(f"| {r['dim']} | {r['n']} | {r['causal']} | {r['batch']} x {r['heads']} | "
                   f"{r['ms']:.3f} | {r['tflops']:.1f} | {num(r.get('sdpa_flash_tflops'), '.1f')} | "
                   f"{num(r.get('sdpa_cudnn_tflops'), '.1f')} | {num(r.get('vs_flash'), '.2f')} | "
                   f"{num(r.get('vs_cudnn'), '.2f')} | "
                   f"{r['rel_err_vs_sdpa']:.1e}{' NaN!' if r['nan'] else ''} |")
    out += ["", "## Decoding (one query, bf16)", "",
            "| D | K/V length | heads | splits | ours ms | ours GB/s | SDPA GB/s | copy GB/s | ours / copy | rel. err vs SDPA |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in dec:
        if "error" in r:
            out.append(f"| {r['dim']} | {r['n']} | | | error: {r['error']} | | | | | |")
            continue
        out.append(f"| {r['dim']} | {r['n']} | {r['heads']} | {r['splits']} | {r['ms']:.3f} | "
                   f"{r['gbs']:.0f} | {r['sdpa_gbs']:.0f} | {r['copy_gbs']:.0f} | "
                   f"{r['of_copy']:.2f} | {r['rel_err_vs_sdpa']:.1e} |")
    return "\n".join(out)


def targets(rows: list[dict]) -> dict:
    key = [r for r in rows if r.get("kind") == "prefill" and r["dim"] == 128 and r["n"] == 4096
           and not r["causal"] and "ratio" in r]
    dec = [r["of_copy"] for r in rows if r.get("kind") == "decode" and "of_copy" in r]
    return {"prefill_4096_d128_vs_sdpa": key[0]["ratio"] if key else None,
            "prefill_target": 0.8, "decode_worst_of_copy": min(dec) if dec else None,
            "decode_target": 0.7}


def write(out_dir: Path, data: dict, table: str) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    gpu = re.sub(r"[^A-Za-z0-9]+", "-", data["gpu"]).strip("-").lower() or "gpu"
    sys.path.insert(0, str(ROOT / "bench"))
    from common import result_stem
    stem = data.get("stem") or f"{result_stem('attention')}-{gpu}"
    (out_dir / f"{stem}.json").write_text(json.dumps(data, indent=2, default=str))
    t = data["targets"]
    fmt = lambda x: "n/a" if x is None else f"{x:.2f}"
    md = (f"# attention, {data['date']}\n\nGPU: {data['gpu']}; torch {data['torch']}, "
          f"CuPy {data['cupy']}; lane combine: {data['lane']}.\n\n"
          f"Targets: N=4096 D=128 non-causal ours/SDPA = {fmt(t['prefill_4096_d128_vs_sdpa'])} "
          f"(needed >= {t['prefill_target']}); decoding worst ours/copy = "
          f"{fmt(t['decode_worst_of_copy'])} (needed >= {t['decode_target']}).\n\n{table}\n")
    (out_dir / f"{stem}.md").write_text(md)
    return out_dir / f"{stem}.md"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--render", metavar="DIR", help="write the .cu variants and stop")
    parser.add_argument("--sources", metavar="DIR", help="run pre-rendered .cu variants")
    parser.add_argument("--merge", metavar="FILE", help="the derived thm3_merge_rows source")
    parser.add_argument("--derive", action="store_true", help="derive the merge with thm3")
    parser.add_argument("--quick", action="store_true", help="N = 4096 and 32k only")
    parser.add_argument("--out", metavar="DIR", default=str(RESULTS))
    parser.add_argument("--stem", help="fixed file name (no date) for the .md and .json")
    args = parser.parse_args(argv)

    if args.sources:
        lane, manifest = None, Path(args.sources) / "manifest.json"
        origin = (json.loads(manifest.read_text())["lane"] if manifest.exists()
                  else f"pre-rendered in {args.sources}")
    else:
        lane, origin = lane_source(args)
    if args.render:
        render_all(Path(args.render), lane, origin)
        return 0

    import cupy
    import torch
    kernels = Kernels(lane, Path(args.sources) if args.sources else None)
    props = torch.cuda.get_device_properties(0)
    print(f"{props.name}, {props.multi_processor_count} SMs; lane combine: {origin}", flush=True)
    copy_bw = copy_bandwidth(torch)
    print(f"device-to-device copy: {copy_bw / 1e9:.0f} GB/s", flush=True)

    rows = []
    prefill_n = (4096,) if args.quick else PREFILL_N
    decode_n = (32768,) if args.quick else DECODE_N
    for dim in (128, 64):
        for n in prefill_n:
            for causal in (False, True):
                try:
                    row = prefill(torch, kernels, dim, n, causal)
                except Exception as exc:                # keep the rest of the table
                    row = {"kind": "prefill", "dim": dim, "n": n, "causal": causal,
                           "error": f"{type(exc).__name__}: {exc}"[:200]}
                rows.append(row)
                print(json.dumps(row), flush=True)
    for dim in (128, 64):
        for n in decode_n:
            try:
                row = decode(torch, kernels, dim, n, copy_bw)
            except Exception as exc:
                row = {"kind": "decode", "dim": dim, "n": n, "error": f"{type(exc).__name__}: {exc}"[:200]}
            rows.append(row)
            print(json.dumps(row), flush=True)

    table = tables(rows)
    data = {"date": datetime.date.today().isoformat(), "gpu": props.name,
            "sms": props.multi_processor_count, "torch": torch.__version__,
            "cupy": cupy.__version__, "python": platform.python_version(), "lane": origin,
            "copy_gbs": copy_bw / 1e9, "targets": targets(rows), "rows": rows, "stem": args.stem}
    print()
    print(table)
    print()
    print(json.dumps(data["targets"]))
    print(f"wrote {write(Path(args.out), data, table)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
