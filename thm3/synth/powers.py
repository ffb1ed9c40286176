"""Coefficients that are a constant's power of a count: read off sampled values.

A decay applied once an element (`v' = 0.9 * v + x`) leaves, after b's list, the
coefficient 0.9 ** len on a's value; where b's state counts those steps in an Int field
(`n`, or the copies made in one mode), that coefficient is `0.9 ** b.n` (`Op.POWN`), and
no field has to be added for it.  `read_power` finds r * c ** b.f on the samples, with c
and r small rationals; the caller's prover decides whether the reading holds."""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from thm3.ir import Expr, Op, Type, const, var

DENOMINATOR = 1000          # c and r as fractions p / q with q <= this


def read_power(values, counts: dict[str, np.ndarray], prefix: str = "b.", bases=()) -> Expr | None:
    """r * c ** <prefix><f> for the first Int column f of `counts` (name -> values, one a
    sample) where it holds on every sample (relative 1e-9), c not 0, 1 or -1 and r not 0,
    with c a constant or one of `bases` ((expression, its value on each sample): a
    coefficient of the loop's parameters, 1 - alpha); None where none does.  Samples
    where a value is not finite are left out."""
    values = np.asarray(values, dtype=np.float64)
    for name, column in counts.items():
        t = np.asarray(column)
        ok = np.isfinite(values) & (np.abs(t) < 4096)
        if ok.sum() < 3 or np.any(values[ok] == 0.0) or len(set(t[ok].tolist())) < 2:
            continue
        exponent = var(prefix + name, Type.INT)
        got = _fit(values[ok], t[ok].astype(np.int64))
        if got is not None:
            return _scaled(got[0], Expr(Op.POWN, Type.REAL, (const(float(got[1]), Type.REAL), exponent)))
        for base, value in bases:
            r = _fit_base(values[ok], t[ok].astype(np.float64), np.asarray(value, dtype=np.float64)[ok])
            if r is not None:
                return _scaled(r, Expr(Op.POWN, Type.REAL, (base, exponent)))
    return None


def _scaled(r: Fraction, power: Expr) -> Expr:
    return power if r == 1 else Expr(Op.MUL, Type.REAL, (const(float(r), Type.REAL), power))


def _fit_base(v: np.ndarray, t: np.ndarray, base: np.ndarray) -> Fraction | None:
    """r with v == r * base ** t on every sample (base a constant of the step, or a
    parameters' coefficient whose value varies with the sampled parameters); None where
    none fits."""
    with np.errstate(all="ignore"):
        power = np.power(base, t)
        use = np.isfinite(power) & (power != 0.0)
        if use.sum() < 3:
            return None
        r = Fraction(float(v[use][0] / power[use][0])).limit_denominator(DENOMINATOR)
        if r == 0 or not np.allclose(float(r) * power, v, rtol=1e-9, atol=0.0):
            return None
    return r


def _fit(v: np.ndarray, t: np.ndarray) -> tuple[Fraction, Fraction] | None:
    """(r, c) with v == r * c ** t on every sample, from the two samples of the smallest
    exponents that differ; None where none fits."""
    order = np.argsort(t, kind="stable")
    t0, v0 = int(t[order[0]]), float(v[order[0]])
    later = [i for i in order if t[i] != t0]
    if not later:
        return None
    t1, v1 = int(t[later[0]]), float(v[later[0]])
    ratio, gap = v1 / v0, t1 - t0
    if not np.isfinite(ratio) or ratio == 0.0 or (ratio < 0 and gap % 2 == 0):
        return None
    magnitude = abs(ratio) ** (1.0 / gap)
    signs = (1.0, -1.0) if gap % 2 == 0 else ((1.0,) if ratio > 0 else (-1.0,))
    for sign in signs:
        c = Fraction(sign * magnitude).limit_denominator(DENOMINATOR)
        if c == 0 or abs(c) == 1:
            continue
        with np.errstate(all="ignore"):
            r = Fraction(v0 / float(c) ** t0).limit_denominator(DENOMINATOR) if np.isfinite(float(c) ** t0) else None
            if r is None or r == 0:
                continue
            want = float(r) * np.power(float(c), t.astype(np.float64))
        if np.allclose(want, v, rtol=1e-9, atol=0.0):
            return r, c
    return None


def parameter_bases(loop, env: dict, size: int) -> list:
    """The bases a power may have besides the fraction `read_power` reads: the subterms of
    the loop's step that read its Real parameters only (p, 1 - alpha), the largest first,
    then its Real constants (0.9999, which no small fraction is), each with its value on
    each of `size` samples (`env`: parameter name -> its value on each sample)."""
    from thm3.ir import free_vars, walk
    from thm3.semantics.evaluate import NUMPY, evaluate, quiet
    names = {p.name for p in loop.params if p.type is Type.REAL}
    if not all(n in env for n in names):
        return []
    terms: dict[str, Expr] = {}
    constants: dict[float, Expr] = {}
    for e in reversed(walk(loop.left.outputs)):         # parents before their operands
        if e.type is not Type.REAL:
            continue
        if e.op is Op.CONST:
            if not isinstance(e.arg, bool) and np.isfinite(e.arg) and abs(float(e.arg)) not in (0.0, 1.0):
                constants.setdefault(float(e.arg), e)
            continue
        free = free_vars([e])
        if free and free <= names:
            terms.setdefault(repr(e), e)
    out = []
    for e in terms.values():
        with quiet():
            value, = evaluate([e], {n: np.asarray(env[n], dtype=np.float64) for n in names}, NUMPY)
        out.append((e, np.broadcast_to(np.asarray(value, dtype=np.float64), (size,))))
    return out + [(e, np.full(size, v)) for v, e in constants.items()]
