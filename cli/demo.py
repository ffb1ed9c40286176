"""`thm3 demo`: FlashAttention derived end to end from its loop file.

Analyse the loop (Bird check, invariants, combine, proofs, transport, stability),
recognise it as attention, emit the kernel with the derived combine, compile it with
NVRTC, check the NumPy path of the emitted module against naive attention, and, where a
GPU is present, run and check the kernel too."""
from __future__ import annotations

import importlib.util
import io
import sys
import time
from pathlib import Path

import click
import numpy as np

import thm3
from thm3.report import combine_terms, invariant_text, math_text


def _sample() -> Path:
    try:
        return thm3.sample_path("flash_attention")      # shipped in the wheel as thm3/samples/
    except LookupError as err:
        raise click.ClickException(str(err)) from None


def _steps_table(steps) -> str:
    """The analysis steps as an aligned table (rich), as plain text."""
    from rich.console import Console
    from rich.table import Table
    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    from rich.text import Text
    table.add_column("step")
    table.add_column("status", max_width=22, overflow="fold")
    table.add_column("seconds", justify="right")
    table.add_column("detail", overflow="fold")
    for s in steps:                 # Text: a detail such as "[x]" is not rich markup
        table.add_row(Text(s.name), Text(str(s.status)), Text(f"{s.seconds:.2f}"), Text(s.detail))
    console = Console(width=120, record=True, file=io.StringIO(), color_system=None)
    console.print(table)
    return "\n".join("     " + line.rstrip() for line in console.export_text().splitlines())


def _naive(q, k, v, causal, scale):
    s = np.einsum("bhqd,bhkd->bhqk", q.astype(np.float64), k.astype(np.float64)) * scale
    n_q, n_kv = q.shape[2], k.shape[2]
    if causal:
        mask = np.arange(n_kv)[None, :] > np.arange(n_q)[:, None] + (n_kv - n_q)
        s = np.where(mask, -np.inf, s)
    m = s.max(-1, keepdims=True)
    with np.errstate(invalid="ignore"):
        p = np.exp(s - np.where(np.isfinite(m), m, 0))
    d = p.sum(-1, keepdims=True)
    out = np.where(d > 0, np.einsum("bhqk,bhkd->bhqd", p, v.astype(np.float64)) / np.where(d > 0, d, 1), 0)
    with np.errstate(divide="ignore"):
        lse = np.where(d[..., 0] > 0, np.log(np.where(d > 0, d, 1))[..., 0] + m[..., 0], -np.inf)
    return out, lse


def _rel(x, ref) -> float:
    return float(np.linalg.norm((x - ref).ravel()) / max(1e-30, np.linalg.norm(ref.ravel())))


def _import(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem + "_emitted", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod          # dataclasses look their module up there
    spec.loader.exec_module(mod)          # thm3's own generated module, not user input
    return mod


def run_demo(outdir: str, dim: int, timeout: float) -> int:
    ok = True
    say = click.echo
    path = _sample()
    say(f"thm3 demo: FlashAttention from {path.name}\n")
    say(path.read_text())
    t0 = time.perf_counter()
    a = thm3.analyze(path, timeout=timeout, lift=False)
    say(f"1. analysis: {a.verdict} in {time.perf_counter() - t0:.2f} s")
    say(_steps_table(a.steps))
    say("2. invariants: " + "; ".join(invariant_text(e) for e in a.invariant_exprs))
    say("3. combine (synthesized from left, no table of known loops):")
    for f, e in zip(a.loop.fields, combine_terms(a.loop, a.combine_fn.outputs)):
        say(f"     {f.name} = {math_text(e)}")
    say(f"   identity: ({', '.join(str(f.default) for f in a.loop.fields)})")
    say(f"   transport of structure: {a.transport}")
    say("4. laws: " + ", ".join(f"{k} {v}" for k, v in a.proofs.items()))
    say("5. stability: " + ", ".join(f"{k} {v}" for k, v in a.stability.items()))
    proved = all(a.proofs[k] == "proved" for k in ("bird", "identity", "associativity", "homomorphism"))
    stable = all(a.stability[k] in ("proved", "skipped") for k in a.stability)
    ok &= a.verdict == "homomorphism" and proved and stable

    from thm3.analysis.attention import recognize
    shape = recognize(a.loop, a.transport_map)
    if shape is None:
        say("6. not recognised as attention")
        return 1
    say(f"6. recognised: {shape.describe()}")
    from thm3.backends.gpu import gpu
    try:
        cu, py = gpu().emit_attention(a, shape, outdir, dim=dim)
    except OSError as err:                  # an unwritable -o: one line, exit 2
        click.echo(f"cannot write {err.filename or outdir}: {err.strerror or err}", err=True)
        return 2
    say(f"7. emitted {cu} and {py}")

    nvrtc = gpu().nvrtc
    compiled = nvrtc.available()
    if compiled:
        for arch in ("sm_90", "sm_80"):
            t = time.perf_counter()
            nvrtc.compile_cuda(cu.read_text(), arch=arch, name=cu.name)
            say(f"     NVRTC {arch}: compiled in {time.perf_counter() - t:.2f} s")
    else:
        say("     NVRTC not installed (pip install 'thm3[nvrtc]' adds it, a few tens of MB): compile check skipped")

    mod = _import(py)
    rng = np.random.default_rng(0)
    say("8. NumPy path of the emitted module against naive float64 attention:")
    for (b, h, n_q, n_kv, causal, splits) in ((1, 2, 100, 300, False, 1), (2, 2, 77, 190, True, 3),
                                               (1, 1, 1, 1000, False, None)):
        q = rng.normal(size=(b, h, n_q, dim)).astype(np.float32)
        k = rng.normal(size=(b, h, n_kv, dim)).astype(np.float32)
        v = rng.normal(size=(b, h, n_kv, dim)).astype(np.float32)
        out, lse = mod.attention(q, k, v, causal=causal, splits=splits, backend="numpy")
        ref, ref_lse = _naive(q, k, v, causal, 1 / np.sqrt(dim))
        e_out, e_lse = _rel(out, ref), _rel(lse, ref_lse)
        good = e_out < 1e-5 and e_lse < 1e-5 and not np.isnan(out).any()
        ok &= good
        say(f"     q {n_q} x kv {n_kv}, causal={causal!s:<5} splits={splits!s:<4} "
            f"rel. error out {e_out:.1e}, lse {e_lse:.1e}  {'ok' if good else 'FAILED'}")

    say("9. the kernel on a GPU:")
    try:
        import cupy
        has_gpu = cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:                       # no CuPy, no driver or no device
        has_gpu = False
    if not has_gpu:
        say("     no GPU here: kernel run skipped" + (" (NVRTC compiled it above)" if compiled else ""))
    else:
        for causal in (False, True):
            q = rng.normal(size=(2, 4, 512, dim)).astype(np.float32)
            k = rng.normal(size=(2, 4, 1024, dim)).astype(np.float32)
            v = rng.normal(size=(2, 4, 1024, dim)).astype(np.float32)
            ref, _ = _naive(q, k, v, causal, 1 / np.sqrt(dim))
            for dt in (np.float32, np.float16):
                out, _ = mod.attention(cupy.asarray(q.astype(dt)), cupy.asarray(k.astype(dt)),
                                       cupy.asarray(v.astype(dt)), causal=causal)
                err = _rel(cupy.asnumpy(out).astype(np.float64), ref)
                tol = 1e-5 if dt == np.float32 else 2e-3
                good = err < tol and not bool(cupy.isnan(out).any())
                ok &= good
                say(f"     {np.dtype(dt).name:<8} causal={causal!s:<5} rel. error {err:.1e}  {'ok' if good else 'FAILED'}")
    say("\n" + ("all checks passed" if ok else "SOME CHECKS FAILED"))
    return 0 if ok else 1
