"""Every emitted kernel held to its sm_90 machine code (gpu/runtime/sass.py): NVRTC compiles the
source to a cubin with ptxas's report, cuobjdump disassembles it.  No GPU needed.

- no spill bytes and no stack in any kernel, float32 and float64, rows and blocks;
- 16-byte loads (LDG.E.128) in the reductions whose arrays hold Reals;
- tensor-core products (HMMA) and asynchronous 16-byte copies (LDGSTS) in the 16-bit
  attention kernels, at most 2 EX2 a merged row on top of one a score, one reciprocal an
  output row;
- registers within the budget with a margin.

The default tier checks a few kernels the issue named (Welford, safe softmax at float64,
bf16 attention at D = 64); the slow tier every sample and every attention variant.
The loops come from the catalog's samples, analysed once a session (tests/analyzed.py)."""
from __future__ import annotations

import functools

import pytest

from analyzed import analysis
from catalog import HOMOMORPHISMS, SAMPLES_DIR

nvrtc = pytest.importorskip("thm3.gpu.runtime.nvrtc")
sass = pytest.importorskip("thm3.gpu.runtime.sass")
from thm3.gpu.render import cuda as R                      # noqa: E402
from thm3.gpu.render.attention import render_attention     # noqa: E402
from thm3.gpu.runtime import attention as fa               # noqa: E402
from thm3.ir import Type                                    # noqa: E402

pytestmark = [
    pytest.mark.skipif(not nvrtc.available(), reason="NVRTC (cuda-bindings + nvidia-cuda-nvrtc-cu12) is not installed"),
    pytest.mark.skipif(sass.cuobjdump() is None, reason="cuobjdump + nvdisasm (the test extra) are not installed"),
]

MAX_REGISTERS = 255         # a thread's registers on sm_90: past them ptxas spills
MARGIN = 8                  # registers a kernel keeps free below its budget
QUICK = {("welford", "float32"), ("welford", "float64"), ("safe_softmax", "float64")}


def _dim(a):
    return 4 if any(x.type is Type.VEC for x in a.loop.fields + a.loop.elements + a.loop.params) else None


def _reductions():
    for sample in HOMOMORPHISMS:
        for dtype in R.DTYPES:
            slow = (sample.name, dtype) not in QUICK
            marks = [pytest.mark.slow] if slow else []
            yield pytest.param(sample.name, dtype, id=f"{sample.name}-{dtype}", marks=marks)


@pytest.mark.parametrize("name, dtype", list(_reductions()))
def test_reduction_machine_code(name, dtype):
    a = analysis(str(SAMPLES_DIR / f"{name}.py"))
    spec = R.make_spec(a.loop, a.combine_fn, dtype, _dim(a))
    code = sass.machine_code(R.render(a.loop, a.combine_fn, dtype=dtype, dim=_dim(a)), name=f"{name}.cu")
    assert set(code) >= {"thm3_reduce_blocks", "thm3_reduce_partials", "thm3_reduce_rows"}
    for fn, f in code.items():
        assert (f.stack, f.spill_stores, f.spill_loads) == (0, 0, 0), (fn, f)
        assert f.registers + MARGIN <= MAX_REGISTERS, (fn, f.registers)
        assert f.count("STL") == f.count("LDL") == 0, fn
    if spec.vector_loads:
        fast = None
        for fn in ("thm3_reduce_blocks", "thm3_reduce_rows"):
            if code[fn].loop_with("LDG") is None:
                # no element is loaded in any loop: `left` discards it (count), and ptxas
                # dropped the dead loads
                continue
            if code[fn].loop_with("LDG.E.128") is not None:
                continue
            # no 16-byte load in any loop: only allowed where ptxas loads fewer elements
            # than a tile holds (first, last: one element of each run matters, and it loads
            # just that one), never where it split the vectors into scalar loads
            fast = fast or sass.machine_code(R.render(a.loop, a.combine_fn, dtype=dtype, dim=_dim(a)),
                                             name=f"{name}.cu", options=("-DTHM3_FULL_TILES=1",))
            tile = fast[fn].loop_with("LDG", outermost=True)
            loads = fast[fn].count("LDG", tile)
            assert loads < len(spec.data_elements) * spec.items // spec.vector, (
                f"{fn}: element loads in a loop, none of them LDG.E.128 ({loads} narrow ones)")


def _variants():
    for dtype in fa.DTYPES:
        for dim in fa.DIMS:
            for causal in (False, True):
                for warps in ((4,) if dtype == "float32" else (1, 4, 8)):
                    quick = (dtype, dim, causal, warps) == ("bfloat16", 64, False, 4)
                    marks = [] if quick else [pytest.mark.slow]
                    yield pytest.param(dtype, dim, causal, warps, marks=marks,
                                       id=fa.variant_name(dtype, dim, causal, warps))


@pytest.fixture(scope="module")
def merge():
    """The derived combine's merge, as the emitted attention module carries it."""
    from thm3.analysis.attention import recognize
    from thm3.gpu.render.attention import merge_source
    a = analysis(str(SAMPLES_DIR / "flash_attention.py"))
    return merge_source(a.loop, a.combine_fn, recognize(a.loop, a.transport_map))


@functools.cache
def _attention_code(merge, dtype, dim, causal, warps):
    source = render_attention(merge, dim=dim, dtype=dtype, causal=causal, num_warps=warps)
    return sass.machine_code(source, name=f"{fa.variant_name(dtype, dim, causal, warps)}.cu")


@pytest.mark.parametrize("dtype, dim, causal, warps", [
    pytest.param(*v.values, marks=[m for m in v.marks if m.name == "slow"], id=v.id) for v in _variants()])
def test_attention_machine_code(merge, dtype, dim, causal, warps):
    cfg = fa.kernel_config(dtype, dim, n_q=10**9, num_warps=warps)
    code = _attention_code(merge, dtype, dim, causal, warps)
    for fn, f in code.items():
        assert (f.stack, f.spill_stores, f.spill_loads) == (0, 0, 0), (fn, f)
    f = code["thm3_attention_fwd"]
    assert f.registers <= cfg.registers, "registers past what the split-K sizing assumes"
    sixteen = dtype != "float32"
    tile = f.loop_with("HMMA" if sixteen else "FFMA", outermost=True)
    assert tile is not None
    if sixteen:
        assert f.count("HMMA", tile) >= 2 * (cfg.block_n // 16) * (dim // 16)
        assert f.count("LDGSTS") > 0
    scores = cfg.block_m * cfg.block_n // cfg.threads          # a lane's scores a tile
    rows = 2 if sixteen else 4                                  # a lane's query rows
    assert f.count("MUFU.EX2", tile) <= scores + 2 * rows, "more than 2 EX2 a merged row"
    assert f.count("MUFU.RCP", f.body()) <= rows, "more than one reciprocal an output row"
    assert code["thm3_attention_merge"].count("MUFU.RCP", code["thm3_attention_merge"].body()) <= 1


@pytest.mark.parametrize("dtype, dim, causal, warps", list(_variants()))
def test_attention_register_margin(merge, dtype, dim, causal, warps):
    cfg = fa.kernel_config(dtype, dim, n_q=10**9, num_warps=warps)
    f = _attention_code(merge, dtype, dim, causal, warps)["thm3_attention_fwd"]
    assert f.registers + MARGIN <= min(cfg.registers, MAX_REGISTERS)


@pytest.mark.slow
def test_the_record_reads_the_fast_path():
    """The tile loop the record counts: a build with every tile full (THM3_FULL_TILES)
    has one loop holding the 16-byte loads, and fewer instructions per element for sum
    than for Welford (whose left divides)."""
    per = {}
    for name in ("sum", "welford"):
        a = analysis(str(SAMPLES_DIR / f"{name}.py"))
        items = R.make_spec(a.loop, a.combine_fn).items
        records = sass.reduction_records(name, R.render(a.loop, a.combine_fn), items=items,
                                         threads=R.BLOCK)
        per[name] = records[0].per_element
        assert records[0].wide_loads > 0 and records[0].spills == 0
    assert 0 < per["sum"] < per["welford"]
