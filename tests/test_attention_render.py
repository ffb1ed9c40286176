"""FlashAttention's rendering (gpu/render/attention.py): the CUDA text with every hole filled, and
NVRTC compiling it (ptxas included) for sm_90 and sm_80."""
from __future__ import annotations

import re

import pytest

from thm3.gpu import api
from thm3.gpu.render.attention import render_attention
from thm3.gpu.runtime import attention as fa

from attention_support import merge_src, nvrtc_compile, ptx_entry

# --------------------------------------------------------------------------------------
# rendering
# --------------------------------------------------------------------------------------

def test_render_is_text_with_every_hole_filled():
    for dtype in fa.DTYPES:
        src = render_attention(merge_src(), dim=128, dtype=dtype, causal=True)
        assert merge_src().strip() in src
        assert "${" not in src and "$" not in src
        assert 'extern "C" __global__' in src
        assert src.count("thm3_attention_fwd(") == 1 and src.count("thm3_attention_merge(") == 1
        assert "#define THM3_CAUSAL 1" in src and "#define THM3_DIM 128" in src
        assert "__fmul_rn(s[j][e], scale_log2)" in src or "__fmul_rn(t[r], scale_log2)" in src
    bf = render_attention(merge_src(), dim=64, dtype="bfloat16")
    assert "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" in bf
    assert "cvt.rn.bf16x2.f32" in bf
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in render_attention(
        merge_src(), dim=64, dtype="float16")
    assert "mma.sync" not in render_attention(merge_src(), dim=64, dtype="float32")
    assert render_attention(merge_src(), dim=64, dtype="float16") == render_attention(
        merge_src(), dim=64, dtype="float16")
    with pytest.raises(ValueError):
        render_attention(merge_src(), dim=96, dtype="float16")


# --------------------------------------------------------------------------------------
# NVRTC: the rendered CUDA compiles, ptxas included, for sm_90 and sm_80
# --------------------------------------------------------------------------------------







@pytest.mark.parametrize("arch", ["90", "80"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dim", [64, 128])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_nvrtc_compiles(dtype, dim, causal, arch):
    src = render_attention(merge_src(), dim=dim, dtype=dtype, causal=causal)
    nvrtc_compile(src, arch)


@pytest.mark.parametrize("num_warps", [1, 4, 8])
@pytest.mark.parametrize("dim", [64, 128])
def test_nvrtc_registers_fit_without_spills(dim, num_warps):
    src = render_attention(merge_src(), dim=dim, dtype="bfloat16", num_warps=num_warps)
    _, log = nvrtc_compile(src, "90", verbose=True)
    fwd = log[log.index("Function properties for thm3_attention_fwd"):]
    assert "0 bytes spill stores" in fwd.splitlines()[1], fwd
    regs = int(re.search(r"Used (\d+) registers", fwd).group(1))
    cfg = fa.kernel_config("bfloat16", dim, 10**6, num_warps)
    assert regs <= cfg.registers


def test_ptx_shape_of_the_tile_loop():
    """One tile of the bf16 D=128 kernel: 64 + 64 mma.sync, 8 + 32 + 32 ldmatrix, and
    exp2 32 times for the weights plus the derived combine's exp a handful of times a row
    (it is asked for the row's coefficients, not once a lane); no call left."""
    src = render_attention(merge_src(), dim=128, dtype="bfloat16", causal=True, num_warps=8)
    ptx, _ = nvrtc_compile(src, "90", ptx=True)
    fwd = ptx_entry(ptx, "thm3_attention_fwd")
    assert fwd.count("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32") == 128
    assert fwd.count("ldmatrix.sync.aligned.m8n8.x4.shared.b16") == 8 + 32
    assert fwd.count("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == 32
    assert fwd.count("cp.async.cg.shared.global") >= 1
    ex2 = fwd.count("ex2.approx")
    assert 32 < ex2 <= 32 + 2 * 2 * 2, ex2
    assert "call" not in fwd
    merge = ptx_entry(ptx, "thm3_attention_merge")
    assert "call" not in merge
