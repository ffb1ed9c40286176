"""Equality of a parallel form's states with the sequential fold's, up to the rounding of
another order: NaN where the reference has NaN, the same infinities, and finite values
within `rel` of the value, or of `scale` where given (the largest magnitude the fold has
held so far: a product of matrices cancels to 0 in one order and to 1e-4 in another when
its terms were 1e12)."""
from __future__ import annotations

import numpy as np


def _bad(got, want, rel: float, scale):
    gs = got if isinstance(got, (tuple, list)) else (got,)
    ws = want if isinstance(want, (tuple, list)) else (want,)
    if len(gs) != len(ws):
        return f"{len(gs)} values against {len(ws)}"
    for u, v in zip(gs, ws):
        u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
        if u.shape != v.shape:
            return f"shape {u.shape} against {v.shape}"
        if scale is None:
            size = np.abs(v)
        else:
            s = np.asarray(scale, dtype=np.float64)
            size = np.broadcast_to(s.reshape(s.shape + (1,) * (v.ndim - s.ndim)), v.shape)
        with np.errstate(all="ignore"):
            same = (u == v) | (np.isnan(u) & np.isnan(v))
            near = np.isfinite(u) & np.isfinite(v) & (np.abs(u - v) <= rel * np.maximum(1.0, size))
        wrong = ~(same | near)
        if wrong.any():
            return (np.flatnonzero(wrong)[:5], u[wrong][:5], v[wrong][:5])
    return None


def close(got, want, rel: float = 1e-8, scale=None) -> bool:
    return _bad(got, want, rel, scale) is None


def same(got, want, rel: float = 1e-8, scale=None) -> None:
    bad = _bad(got, want, rel, scale)
    assert bad is None, bad


def running_magnitude(prefixes, n: int):
    """The largest magnitude of any field over prefixes 0 .. i, for each i."""
    if n == 0:
        return np.zeros(0)
    top = np.max([np.abs(np.asarray(p, dtype=np.float64)).reshape(n, -1).max(axis=1) for p in prefixes], axis=0)
    return np.maximum.accumulate(top)
