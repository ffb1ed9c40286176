"""The FlashAttention kernels as text: one variant a (dtype, D, causal, warps), rendered
from `templates/attention*.cu` with the derived combine in its split form
(`merge_source`).  The configuration each variant is built for (tiles, warps, shared
memory) is the runtime's (`gpu/runtime/attention.py`), so that what is rendered and what is
launched agree; nothing here compiles or launches."""
from __future__ import annotations

from thm3.analysis.attention import merge_form
from thm3.ir import Fn

from ..runtime.attention import DIMS, DTYPES, dtype_name, kernel_config, variant_name
from . import cuda_template, cuda_text
from .cuda import c_name, render_lane_struct_function


def merge_source(loop, combine: Fn, shape) -> str:
    """`thm3_merge thm3_merge_rows(a_m, a_d, b_m, b_d)`: the derived combine in the split
    form the kernels merge in (m, d, and o's two coefficients), rendered from its terms.
    Raises ValueError when the combine has no such form (the kernel would be wrong)."""
    form = merge_form(loop, combine, shape)
    if form is None:
        raise ValueError(f"{loop.name}: the combine is not linear in {shape.sum_field} and "
                         f"{shape.out_field} with coefficients of {shape.max_field} alone; the "
                         f"attention kernel's partial sums would be wrong")
    m, d = shape.max_field, shape.sum_field
    inputs = {f"{side}.{n}": c_name(f"{side}_{n}") for side in "ab" for n in (m, d)}
    return render_lane_struct_function(
        loop, combine, "thm3_merge_rows", "thm3_merge", inputs,
        [("m", form.m), ("d", form.d), ("alpha_a", form.alpha_a), ("alpha_b", form.alpha_b)],
        f"the combine of `{loop.name}` as the kernel merges: ({m}, {d}) and the coefficients "
        f"of a.{shape.out_field} and b.{shape.out_field}; a is the earlier part")


_ELEM = {"float16": "f16", "bfloat16": "bf16"}

# The device primitives as inline PTX.  NVRTC here has no CUDA headers, so 16-bit values
# are raw `unsigned short` bits and pairs of them `unsigned int`, converted with `cvt`.
PTX_MMA = cuda_template("attention_mma.cu")


PTX_EXP2 = cuda_text("attention_exp2.cu")


def ptx_primitives(dtype: str) -> str:
    """The device-primitives hole as inline PTX: `thm3_exp2` for every dtype, and the
    cp.async / ldmatrix / mma / cvt wrappers for the 16-bit ones."""
    dtype = dtype_name(dtype)
    tensor = PTX_MMA.substitute(elem=_ELEM[dtype]) if dtype in _ELEM else ""
    return PTX_EXP2 + tensor


SOURCE = cuda_template("attention.cu")


FORWARD_16 = cuda_template("attention_forward16.cu")


FORWARD_32 = cuda_template("attention_forward32.cu")


def render_attention(merge_src: str, *, dim: int, dtype: str, causal: bool = False,
                     num_warps: int | None = None, primitives: str | None = None) -> str:
    """The CUDA source of one variant: kernels `thm3_attention_fwd` (grid (q tiles, splits,
    batch * heads), `KernelConfig.threads` threads, `shared_bytes` of dynamic shared memory)
    and `thm3_attention_merge` (grid ceil(rows / 4), 128 threads).  `merge_src` defines
    `thm3_merge thm3_merge_rows(a_m, a_d, b_m, b_d)`, the derived combine in its split form
    (`merge_source`); `primitives` fills
    the device-primitive hole (default: inline PTX)."""
    dtype = dtype_name(dtype)
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, not {dtype}")
    if dim not in DIMS:
        raise ValueError(f"dim must be one of {DIMS}, not {dim}")
    cfg = kernel_config(dtype, dim, n_q=10**9, num_warps=num_warps)
    sixteen = dtype != "float32"
    return SOURCE.substitute(
        variant=f"{variant_name(dtype, dim, causal, cfg.num_warps)}, "
                f"{cfg.block_m} queries x {cfg.block_n} keys a tile",
        merge=merge_src.strip("\n"),
        primitives=(ptx_primitives(dtype) if primitives is None else primitives).strip("\n"),
        dim=dim, num_warps=cfg.num_warps, block_m=cfg.block_m, block_n=cfg.block_n,
        causal=int(bool(causal)), dtype=dtype,
        elem_c="unsigned short" if sixteen else "float",
        store_elem="*p = thm3_to_elem(x);" if sixteen else "*p = x;",
        forward=(FORWARD_16 if sixteen else FORWARD_32).substitute(
            # decoding (one warp) at D = 128: a minimum of one block lifts the cap that the
            # math functions' calls put on the registers (168, where it spilled)
            launch_bounds="THM3_THREADS, 1" if (cfg.num_warps, dim) == (1, 128) else "THM3_THREADS",
        ).strip("\n"),
    )


def render_variants(merge_src: str, *, dim: int, warps=(1, 4, 8)) -> dict:
    """Every variant the runtime picks for head dimension `dim` (`kernel_config` with no
    num_warps): (dtype, causal, num_warps) -> source, for an emitted module to carry."""
    out = {}
    for dtype in DTYPES:
        for causal in (False, True):
            for w in (warps if dtype != "float32" else (kernel_config(dtype, dim, 1).num_warps,)):
                out[(dtype, causal, w)] = render_attention(merge_src, dim=dim, dtype=dtype,
                                                           causal=causal, num_warps=w)
    return out
