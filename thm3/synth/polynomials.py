"""Polynomials over sampled states, for the linear-algebra routes (interpolation,
transport, the equalities): monomials as exponent tuples, their values on samples (in
floats and exactly), the columns independent on the samples, and a polynomial back as an
`Expr` over named variables."""
from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np

from thm3.ir import Expr, Op, Type, const, promote, var


def poly(coeffs: dict, variables, field_type: Type, absolute: bool = False) -> Expr:
    terms: list[tuple[Fraction, Expr | None]] = []
    for mono, c in sorted(coeffs.items(), key=lambda kv: (sum(kv[0]), kv[0])):
        factors = []
        for (name, t), e in zip(variables, mono):
            if e:
                v = var(name, t)
                if absolute:
                    v = Expr(Op.ABS, t, (v,))
                factors.append(v if e == 1 else Expr(Op.POW, t, (v,), e))
        body = None
        for f in factors:
            body = f if body is None else Expr(Op.MUL, promote(body.type, f.type), (body, f))
        terms.append((c, body))
    out: Expr | None = None
    for c, body in terms:
        neg = c < 0 and out is not None
        mag = -c if neg else c
        if body is None:
            term = _number(mag, field_type)
        elif mag == 1:
            term = body
        else:
            k = _number(mag, body.type)
            term = Expr(Op.MUL, promote(k.type, body.type), (k, body))
        if out is None:
            out = term
        else:
            out = Expr(Op.SUB if neg else Op.ADD, promote(out.type, term.type), (out, term))
    return out if out is not None else _number(Fraction(0), field_type)


def _number(c: Fraction, type_: Type) -> Expr:
    if c.denominator == 1 and type_ is Type.INT:
        return const(int(c), Type.INT)
    return const(float(c), Type.REAL)


def monomials(nvars: int, degree: int) -> list[tuple[int, ...]]:
    """Exponent tuples of total degree <= `degree`, lower degrees first."""
    out = []
    for d in range(degree + 1):
        for combo in itertools.combinations_with_replacement(range(nvars), d):
            e = [0] * nvars
            for i in combo:
                e[i] += 1
            out.append(tuple(e))
    return out


def monomial_values(mono_list, cols: np.ndarray) -> np.ndarray:
    """Float values of each monomial on each row (cols: rows x variables)."""
    out = np.ones((cols.shape[0], len(mono_list)))
    with np.errstate(all="ignore"):         # a huge sample overflows to inf: callers drop such rows
        for j, mono in enumerate(mono_list):
            for i, e in enumerate(mono):
                if e:
                    out[:, j] *= cols[:, i] ** e
    return out


def exact_monomial_value(mono, row_vals) -> Fraction:
    v = Fraction(1)
    for x, e in zip(row_vals, mono):
        if e:
            v *= x ** e
    return v


def independent(m: np.ndarray) -> list[int]:
    """Columns linearly independent of the earlier ones (greedy, in order)."""
    if m.shape[1] == 0:
        return []
    r = np.linalg.qr(m, mode="r")
    d = np.abs(np.diag(r))
    if d.size == 0 or d.max() == 0:
        return []
    return [j for j in range(d.size) if d[j] > 1e-9 * d.max()]
