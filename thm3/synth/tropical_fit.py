"""The numbers under the tropical combine (`thm3.synth.tropical`): the matrix product over
a semiring on arrays; each sampled list folded from each control state, with the data at
the zero, at its initial values, or with one field far past the rest, whose fold reads the
products of the coefficients along the list (`slopes_of`); and the sparse forms over the
semiring fitted to such values by residuation (`fit_form`, Cuninghame-Green 1979)."""
from __future__ import annotations

import math
import time

import numpy as np

from thm3.ir import Op, initial_state
from thm3.synth.finite import Failed, Machine
from thm3.synth.semiring import MAX_PLUS, MIN_PLUS, Semiring, np_times, scaling


def matrix_product(s: Semiring):
    """The matrix product over `s` on the last two axes."""
    pick = np.max if s.plus is Op.MAX else np.min
    times = np_times(s)

    def product(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return pick(times(x[..., :, :, None], y[..., None, :, :]), axis=-2)
    return product


def unit_matrix(s: Semiring, n: int) -> np.ndarray:
    out = np.full((n, n), float(s.zero))
    np.fill_diagonal(out, float(s.one))
    return out


BIG = 2.0 ** 20     # the start of one field in `slopes_of`, at most: far above what sampled lists reach


def _big(m: Machine, folded: list) -> float:
    """The start of one field in `slopes_of`: a power of 2 far above what any path's sum
    reaches on the sampled lists (1024 times the largest finite value folded, or the sum
    of the elements' sizes plus a constant's a step: a coefficient 10 * x stays far
    below it), at most BIG.  Small where the values are: each step's sum near it rounds
    to its ulp, 2.0 ** 20 to 1e-10, which seven steps of random floats carry past the
    fits' 1e-9."""
    from thm3.ir import walk
    consts = [abs(float(e.arg)) for e in walk(list(m.loop.left.outputs))
              if e.op is Op.CONST and not isinstance(e.arg, bool) and math.isfinite(float(e.arg))]
    c = max(consts, default=0.0) + 1.0
    most = 1.0
    for xs, _, row, _ in folded:
        vals = [abs(float(v)) for v in row[:-1] if isinstance(v, (int, float)) and math.isfinite(float(v))]
        size = sum(abs(float(v)) for x in xs for v in (x if isinstance(x, tuple) else (x,))
                   if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(float(v)))
        most = max(most, max(vals, default=0.0), size + c * (len(xs) + 1))
    return min(BIG, 2.0 ** math.ceil(math.log2(1024 * most)))


SCALE = 2.0 ** 500   # the start of one field in `slopes_of` over (max, *): exact to scale by, far past any offset


def slopes_of(m: Machine, s: Semiring, folded: list, deadline: float) -> np.ndarray:
    """(list, control state q, field k, field j) -> the product of the coefficients of k
    in j along the list from q (the semiring's zero where j never reaches k): the fold
    from q with j at `_big` and the rest at the zero, less that, where it is past half.
    Over (max, *) the start is SCALE, a power of 2 (so the product is read back exactly),
    and the fold is divided by it where it is past SCALE * 2 ** -300; over (min, *) the
    start is 1 / SCALE, the fold read where it is below 2 ** 300 / SCALE.  NaN where the
    fold is the other infinity, which hides the product (a reading of 0 under min)."""
    sign = 1.0 if s.plus is Op.MAX else -1.0
    nd = len(m.data)
    out = np.full((len(folded), len(m.states), nd, nd), float(s.zero))
    if scaling(s):
        start = SCALE ** sign
        for jj in range(nd):
            got = ends_from(m, s, folded, deadline, ("big", jj, start))
            with np.errstate(invalid="ignore", divide="ignore"):
                scale = sign * np.log2(np.maximum(got, 0.0))
            # the other infinity (0 under min, +inf under max) hides the product: no reading
            out[:, :, :, jj] = np.where(scale == math.inf, math.nan,
                                        np.where(scale >= 200.0, got / start, float(s.zero)))
        return out
    big = _big(m, folded)
    for jj in range(nd):
        got = ends_from(m, s, folded, deadline, ("big", jj, sign * big))
        high = sign * got >= big / 2
        out[:, :, :, jj] = np.where(high, got - sign * big, float(s.zero))
    return out


def ends_from(m: Machine, s: Semiring, folded: list, deadline: float, start) -> np.ndarray:
    """(list, control state q, data field) -> the field after the list, folded from q with
    the data at the semiring's zero (`start` "zero": T_q(zero), what the list adds), or at
    the fields' initial values ("init": T_q(init), which the combine may read instead where
    the data never falls below its start: a worst level that starts at 0), every q at once."""
    from thm3.semantics.samples import fold_left
    loop = m.loop
    fields = loop.fields
    init = [e.arg for e in initial_state(loop)]
    starts = []
    for q in range(len(m.states)):
        st = list(init)
        for j, v in zip(m.control, m.states[q]):
            st[j] = v
        for jj, j in enumerate(m.data):
            if start == "init":
                st[j] = float(init[j])
            elif start == "zero" or start[1] != jj:
                st[j] = float(s.zero)
            else:                               # ("big", jj, v): field jj at v, far past the rest
                st[j] = start[2]
        starts.append(st)
    batch = tuple(np.array([st[f] for st in starts], dtype=float if f in m.data else None)
                  for f in range(len(fields)))
    out = np.empty((len(folded), len(m.states), len(m.data)))
    for n, (xs, params, _, _) in enumerate(folded):
        if time.monotonic() > deadline:
            raise Failed(f"recognised as {m.describe()}; time ran out fitting the data's forms")
        end = fold_left(loop, xs, params, state=batch, dim=1)
        for k, i in enumerate(m.data):
            out[n, :, k] = np.broadcast_to(np.asarray(end[i], dtype=float), (len(m.states),))
    return out


def fit_form(s: Semiring, bdata: np.ndarray, v: np.ndarray, nice=None) -> list[float] | None:
    """A sparse tropical form (+)_j (c_j + b_j) (+) c_0 equal to `v` on every row of
    `bdata`: [c_1, ..., c_k, c_0], the zero for a term left out; None where none is.  The
    greatest subsolution over every term is a solution where any form is (residuation);
    then each term whose removal keeps it one is removed, the constant first.  (min, +)
    is read as (max, +) of the negated values; (max, *) and (min, *), over nonnegative
    values, as (max, +) and (min, +) of their logarithms (a negative field of b is no
    term), the coefficients read nicely as the values they scale by."""
    if scaling(s):
        if np.any(np.isnan(v)) or np.any(v < 0):
            return None
        with np.errstate(divide="ignore", invalid="ignore"):
            lb = np.where(bdata >= 0, np.log(np.maximum(bdata, 0.0)), math.nan)
            got = _fit_additive(MAX_PLUS if s.plus is Op.MAX else MIN_PLUS, lb, np.log(v), _nice_log, tops=True)
        return None if got is None else [_nice(math.exp(c)) for c in got]
    return _fit_additive(s, bdata, v, nice or _nice)


def _fit_additive(s: Semiring, bdata: np.ndarray, v: np.ndarray, nice, tops: bool = False) -> list[float] | None:
    """`fit_form` over (max, +) or (min, +), the coefficients read nicely by `nice`.  `tops`:
    the other infinity is a value like any (the logarithm of 0 over (min, *), which
    absorbs every product), not a field of another semiring."""
    sign = 1.0 if s is MAX_PLUS else -1.0
    bd, vv = sign * bdata, sign * v
    n, k = bd.shape
    if np.any(np.isnan(vv)) or (not tops and np.any(vv == math.inf)):
        return None
    # a field of b that is ever the other infinity (a (min, +) field beside) is no term
    bad = np.any(np.isnan(bd) | (not tops and bd == math.inf), axis=0)
    if bad.any():
        bd = np.where(bad[None, :], -math.inf, bd)
    raw = np.full(k + 1, -math.inf)
    for j in range(k):
        if np.any(bd[:, j] > -math.inf):
            # c_j <= v - b_j on every row where b_j is not the zero (-inf where v is; no
            # bound where both are the other infinity)
            with np.errstate(invalid="ignore"):
                gap = vv - bd[:, j]
            raw[j] = float(np.min(np.where(np.isnan(gap), math.inf, gap)))
    raw[k] = float(np.min(vv)) if n else -math.inf
    # each as the small rational it is up to rounding, unless that lifts a term that no
    # row attains past the values (-2.000000005 read as -2 where the 5e-9 counts)
    coefs = np.array([nice(c) for c in raw])
    if not _matches(bd, vv, coefs):
        coefs = raw
        if not _matches(bd, vv, coefs):
            return None
    # the terms that attain the value on the fewest rows go first (b's trailing streak,
    # never above its longest one, before the longest: of two that explain the samples
    # the one that explains more stays), the constant first among equals
    with np.errstate(invalid="ignore"):
        tight = [int(np.sum(np.isclose(coefs[j] + bd[:, j], vv, rtol=1e-12, atol=1e-9) & np.isfinite(vv)))
                 if j < k else int(np.sum(np.isclose(coefs[k], vv))) for j in range(k + 1)]
    for j in sorted(range(k + 1), key=lambda j: (tight[j], j != k, -j)):
        if math.isfinite(coefs[j]):
            kept = coefs[j]
            coefs[j] = -math.inf
            if not _matches(bd, vv, coefs):
                coefs[j] = kept
    for j in range(k + 1):          # (the kept terms' coefficients read nicely where they still fit)
        if math.isfinite(coefs[j]) and nice(coefs[j]) != coefs[j]:
            kept = coefs[j]
            coefs[j] = nice(kept)
            if not _matches(bd, vv, coefs):
                coefs[j] = kept
    return [sign * c if c != -math.inf else float(s.zero) for c in coefs]


def _matches(bd: np.ndarray, vv: np.ndarray, coefs: np.ndarray) -> bool:
    k = bd.shape[1]
    pred = np.full(len(vv), coefs[k])
    for j in range(k):
        if math.isfinite(coefs[j]):
            pred = np.maximum(pred, coefs[j] + bd[:, j])
    return bool(np.array_equal(pred == -math.inf, vv == -math.inf) and np.array_equal(pred == math.inf, vv == math.inf)
                and np.allclose(
        np.where(np.isfinite(pred), pred, 0.0), np.where(np.isfinite(vv), vv, 0.0), rtol=1e-12, atol=1e-9))


def _nice(c: float) -> float:
    """A coefficient as the small rational it is up to rounding (2.0000000000000004 is 2),
    else as it is."""
    from fractions import Fraction
    if not math.isfinite(c):
        return c
    near = float(Fraction(c).limit_denominator(1000))
    return near if abs(near - c) <= 1e-9 * max(1.0, abs(c)) else c


def _nice_log(c: float) -> float:
    """`_nice` for the logarithm of a coefficient: the log of the small rational it scales
    by, up to rounding (log(0.5) + 1e-17 is log(0.5)), else as it is."""
    if not math.isfinite(c) or abs(c) > 700.0:
        return c
    near = _nice(math.exp(c))
    return math.log(near) if near > 0 and abs(math.log(near) - c) <= 1e-9 else c
