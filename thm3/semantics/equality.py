"""When two computed states are the same: the one comparison every stage uses on
sampled values (synthesis, law tests, the Bird check, witnesses, lifting, transport).

Values are compared as float64 (Bool and Int exactly, as 0/1 and integers); an infinity
equals only itself; NaN equals NaN unless the tolerance says otherwise.  A `Tolerance`
bounds |a - b| <= atol + rtol * max(|a|, |b|).  The policy is four named tolerances,
from tight to loose, each for one kind of claim:

- `ROUND_OFF`: the same value computed two ways (a fold against a fold, a lifted state
  against the original).  A witness claims h(xs1) == h(xs2) only at this tolerance, and
  there NaN does not count as equal (`ROUND_OFF_NO_NAN`).
- `SAMPLED`: a candidate term against h(xs + ys) on batched samples, where the two sides
  sum in different orders over lists of up to a dozen elements.
- `LAW`: a law checked on sampled states after the prover gave up; a violation must be
  clear before a candidate is called "failed".
- `APART`: the margin by which two states must differ before a witness says they do
  (NaN is never apart); states that are neither `ROUND_OFF`-close nor apart prove nothing."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from thm3.semantics.evaluate import quiet


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float
    nan_equal: bool = True


ROUND_OFF = Tolerance(rtol=1e-9, atol=1e-9)
ROUND_OFF_NO_NAN = Tolerance(rtol=1e-9, atol=1e-9, nan_equal=False)
SAMPLED = Tolerance(rtol=1e-7, atol=1e-9)
LAW = Tolerance(rtol=1e-6, atol=1e-8)
APART = Tolerance(rtol=1e-6, atol=1e-6)


def _floats(x, y) -> tuple[np.ndarray, np.ndarray]:
    """Both as float64 arrays (the ufuncs below broadcast them)."""
    return np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)


def close(x, y, tol: Tolerance = ROUND_OFF) -> np.ndarray:
    """Element-wise: x and y are the same value within `tol`."""
    x, y = _floats(x, y)
    with quiet():
        both_nan = np.isnan(x) & np.isnan(y)
        # infinities must match exactly: |inf - 1| <= rtol * inf would hold.  The gap is
        # finite exactly when both are (inf - x is inf, inf - inf is NaN), or it overflowed,
        # and then no finite bound holds it either.
        gap = np.abs(x - y)
        near = np.isfinite(gap) & (gap <= tol.atol + tol.rtol * np.maximum(np.abs(x), np.abs(y)))
        same = (x == y) | near
    return same | both_nan if tol.nan_equal else same & ~both_nan


def apart(x, y, tol: Tolerance = APART) -> np.ndarray:
    """Element-wise: x and y differ by more than `tol` (NaN is never apart)."""
    x, y = _floats(x, y)
    with quiet():
        finite = np.isfinite(x) & np.isfinite(y)
        gap = finite & (np.abs(x - y) > tol.atol + tol.rtol * np.maximum(np.abs(x), np.abs(y)))
        inf_gap = ~finite & ~np.isnan(x) & ~np.isnan(y) & (x != y)
    return gap | inf_gap


def rows_close(x, y, tol: Tolerance = SAMPLED) -> np.ndarray:
    """Row-wise over batched values (rows first): every entry of the row is close."""
    ok = close(x, y, tol)
    return ok.reshape(ok.shape[0], -1).all(axis=1) if ok.ndim > 1 else ok


def states_close(a: tuple, b: tuple, tol: Tolerance = ROUND_OFF) -> bool:
    """Two states (tuples of field values, a Vec as an array) are equal field by field."""
    return all(bool(np.all(close(x, y, tol))) for x, y in zip(a, b, strict=True))


def states_apart(a: tuple, b: tuple, tol: Tolerance = APART) -> bool:
    """Two states differ by a clear margin in some field."""
    return any(bool(np.any(apart(x, y, tol))) for x, y in zip(a, b, strict=True))
