"""FlashAttention's NumPy twin (gpu/runtime/attention.py): the kernels' tiles, splits and merges on
the CPU, with the derived combine, against float64 softmax attention; the split-K sizing."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import thm3
from thm3.gpu.runtime import attention as fa

from attention_support import (derived, twin, naive, BF16_TOL, rel_err, assert_lse, seeded, inputs)

# --------------------------------------------------------------------------------------
# the NumPy twin
# --------------------------------------------------------------------------------------

SHAPES = [
    # b, h, n_q, n_kv, dim, causal, splits
    (1, 2, 37, 37, 64, False, 1),
    (2, 3, 50, 130, 64, True, 2),
    (2, 1, 130, 50, 128, True, 3),
    (1, 3, 1, 300, 64, False, 8),
    (1, 2, 65, 200, 128, False, 5),
    (3, 2, 100, 333, 64, True, 8),
    (1, 1, 200, 129, 64, True, 4),
    (2, 2, 17, 17, 128, True, 1),
]


@pytest.mark.parametrize("b,h,n_q,n_kv,dim,causal,splits", SHAPES)
def test_numpy_float32_matches_float64_softmax(b, h, n_q, n_kv, dim, causal, splits):
    rng = seeded(b, h, n_q, n_kv, dim, causal, splits)
    q, k, v = inputs(rng, b, h, n_q, n_kv, dim)
    out, lse = twin(q, k, v, causal, None, splits)
    ref, ref_lse = naive(q, k, v, causal)
    assert out.dtype == np.float32 and lse.dtype == np.float32
    assert not np.isnan(out).any()
    assert rel_err(out, ref) < 1e-5
    assert_lse(lse, ref_lse, 1e-5)


@pytest.mark.parametrize("splits", [1, 2, 3, 5, 8])
def test_numpy_splits_change_only_rounding(splits):
    rng = np.random.default_rng(7)
    q, k, v = inputs(rng, 1, 2, 40, 500, 64)
    one, lse_one = twin(q, k, v, True, 0.2, 1)
    out, lse = twin(q, k, v, True, 0.2, splits)
    assert rel_err(out, one) < 2e-6
    assert_lse(lse, lse_one, 2e-6)


def test_numpy_float64_is_exact_in_structure():
    rng = np.random.default_rng(3)
    q, k, v = (x.astype(np.float64) for x in inputs(rng, 2, 2, 33, 257, 64))
    out, lse = twin(q, k, v, True, None, 4)
    ref, ref_lse = naive(q, k, v, True)
    assert rel_err(out, ref) < 1e-12
    assert_lse(lse, ref_lse, 1e-12)


def test_numpy_large_logits_stay_finite():
    """Scores around +-1e4 (scale 1): no overflow, no NaN.  The inputs make every score
    exact in float32, so what is left is t = fl(s c) with c = log2(e): at |t| ~ 1.4e4 its
    ulp is 2^-10, a relative error of about 7e-4 in a weight; hence the tolerance."""
    rng = np.random.default_rng(11)
    b, h, n_q, n_kv, dim = 1, 2, 40, 150, 64
    q = np.zeros((b, h, n_q, dim), np.float32)
    k = np.zeros((b, h, n_kv, dim), np.float32)
    q[..., 0] = 128.0
    sign = np.where(rng.random((b, h, n_kv)) < 0.5, -1.0, 1.0)
    k[..., 0] = (sign * 10000 + rng.integers(-6, 7, (b, h, n_kv))) / 128.0
    q[:, :, ::2, 0] = -128.0                            # half the rows see the other sign
    v = rng.standard_normal((b, h, n_kv, dim)).astype(np.float32)
    for causal, splits in [(False, 1), (True, 3)]:
        out, lse = twin(q, k, v, causal, 1.0, splits)
        ref, ref_lse = naive(q, k, v, causal, 1.0)
        assert np.isfinite(out).all()
        assert rel_err(out, ref) < 5e-3
        assert_lse(lse, ref_lse, 1e-6)


def test_numpy_fully_masked_rows():
    """Causal with n_q > n_kv: query i sees keys j <= i - (n_q - n_kv), so the first rows
    see nothing (their first K/V tile, and every other, is fully masked)."""
    rng = np.random.default_rng(5)
    q, k, v = inputs(rng, 2, 2, 150, 70, 64)
    for splits in (1, 2):
        out, lse = twin(q, k, v, True, None, splits)
        ref, ref_lse = naive(q, k, v, True)
        empty = slice(0, 150 - 70)
        assert not np.isnan(out).any() and not np.isnan(lse).any()
        assert (out[:, :, empty] == 0).all()
        assert np.isneginf(lse[:, :, empty]).all()
        assert rel_err(out, ref) < 1e-5
        assert_lse(lse, ref_lse, 1e-5)


def test_numpy_no_keys():
    q = np.ones((1, 1, 3, 64), np.float32)
    kv = np.ones((1, 1, 0, 64), np.float32)
    out, lse = twin(q, kv, kv)
    assert (out == 0).all() and np.isneginf(lse).all()


@pytest.mark.parametrize("fmt", ["float16", "bfloat16"])
def test_numpy_16bit_inputs(fmt):
    rng = np.random.default_rng(9)
    q, k, v = inputs(rng, 1, 2, 70, 150, 64, fmt)
    if fmt == "float16":
        out, lse = twin(*(x.astype(np.float16) for x in (q, k, v)), True, None, 2)
        assert out.dtype == np.float16
    else:
        out, lse = twin(q, k, v, True, None, 2, input_dtype="bfloat16")
        assert np.array_equal(out, fa.round_to_bfloat16(out))
    ref, ref_lse = naive(q, k, v, True)
    assert rel_err(out, ref) < (2e-3 if fmt == "float16" else BF16_TOL)
    assert_lse(lse, ref_lse, 1e-5)


def test_numpy_takes_the_combine_it_is_given():
    calls = []

    def combine(a, b):
        calls.append(1)
        return derived()[1](a, b)

    rng = np.random.default_rng(2)
    q, k, v = inputs(rng, 1, 1, 5, 100, 64)
    out, _ = twin(q, k, v, False, None, 2, combine=combine)
    # float32 tiles hold 32 keys: 4 tile merges in 2 splits, then the 2 partials are
    # merged into the identity in order
    assert len(calls) == 4 + 2
    assert rel_err(out, naive(q, k, v)[0]) < 1e-5


@pytest.mark.slow
def test_numpy_with_the_derived_combine():
    """The combine thm3 derives from samples/flash_attention.py, evaluated from Python,
    drives the same tiles and splits."""
    analysis = thm3.analyze(Path(__file__).resolve().parents[1] / "samples" / "flash_attention.py")
    assert analysis.verdict == "homomorphism", analysis.reason

    combine = fa.rowwise(analysis.combine)      # it takes one row at a time
    rng = np.random.default_rng(6)
    q, k, v = inputs(rng, 1, 2, 40, 150, 64)
    for causal, splits in [(False, 3), (True, 2)]:
        out, lse = twin(q, k, v, causal, None, splits, combine=combine)
        ref, ref_lse = naive(q, k, v, causal)
        assert rel_err(out, ref) < 1e-5
        assert_lse(lse, ref_lse, 1e-5)


def test_derived_combine_identity_and_linearity():
    """(-inf, 0, 0) is a two-sided identity without NaN, and the o part is linear with
    the coefficients the split form gives: what the kernels rely on."""
    combine = derived()[1]
    rng = np.random.default_rng(4)
    m = np.array([[-np.inf], [0.5], [3.0], [-2.0]], np.float32)
    d = np.array([[0.0], [1.5], [2.0], [1.0]], np.float32)
    o = rng.standard_normal((4, 8)).astype(np.float32) * (d > 0)
    ident = (np.full_like(m, -np.inf), np.zeros_like(d), np.zeros_like(o))
    for r in (combine(ident, (m, d, o)), combine((m, d, o), ident)):
        assert all(np.array_equal(p, q) for p, q in zip(r, (m, d, o)))
    r = combine(ident, ident)
    assert np.isneginf(r[0]).all() and (r[1] == 0).all() and (r[2] == 0).all()
    a, b = (m, d, o), (m[::-1], d[::-1], o[::-1])
    ones, zeros = np.ones((4, 1), np.float32), np.zeros((4, 1), np.float32)
    alpha_a = combine((m, d, ones), (m[::-1], d[::-1], zeros))[2]
    alpha_b = combine((m, d, zeros), (m[::-1], d[::-1], ones))[2]
    merged = combine(a, b)[2]
    assert np.allclose(merged, o * alpha_a + o[::-1] * alpha_b, rtol=1e-6, atol=0)


def test_without_the_derived_combine_attention_refuses():
    q = np.zeros((1, 1, 4, 64), np.float32)
    with pytest.raises(TypeError, match="derived combine"):
        fa.attention_numpy(q, q, q)
    with pytest.raises(TypeError, match="derived combine"):
        fa.attention_cupy(q, q, q)
    assert not hasattr(fa, "combine_mdo") and not hasattr(fa, "FALLBACK_COMBINE_LANE")


def test_splits_fill_the_gpu_for_decoding():
    for n_kv in (32768, 65536, 131072):
        cfg = fa.kernel_config("bfloat16", 128, 1)
        assert cfg.num_warps == 1
        kv_tiles = n_kv // cfg.block_n
        resident = 132 * fa._blocks_per_sm(cfg)
        for bh in (1, 8, 32):
            splits = fa.choose_splits(1, bh, kv_tiles, blocks_per_sm=fa._blocks_per_sm(cfg))
            assert splits > 1
            assert bh * splits <= resident                # one wave
            assert bh * splits >= min(resident - bh, 128 * bh) * 0.9
    # prefill that fills the GPU by itself is not split
    assert fa.choose_splits(32, 64, 64) == 1


def test_split_ranges_cover_the_tiles_once():
    for kv_tiles in (1, 2, 7, 64, 513):
        for splits in (1, 2, 3, 8, 13, 100):
            n = fa.normalize_splits(kv_tiles, splits)
            per = fa.tiles_per_split(kv_tiles, n)
            covered = [t for s in range(n) for t in fa.key_tile_range(s, per, kv_tiles)]
            assert covered == list(range(kv_tiles))
            assert all(len(fa.key_tile_range(s, per, kv_tiles)) > 0 for s in range(n))
