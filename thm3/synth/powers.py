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


MAX_FACTORS = 3          # counts whose powers `read_power_product` multiplies, at most


def read_power_product(values, counts: dict[str, np.ndarray], prefix: str = "b.") -> Expr | None:
    """r * c_1 ** <prefix>f_1 * ... * c_k ** <prefix>f_k, 2 <= k <= MAX_FACTORS Int
    columns of `counts`, where it holds on every sample (relative 1e-9), each c_i a small
    positive rational not 1 and r a small positive one: a decay of 0.5 in one mode and
    0.9 in another leaves 0.5 ** b.quiet * 0.9 ** b.loud on a's value.  The logarithm of
    the value is solved by least squares as a linear form in the counts, each base then
    read as the fraction it is.  None where none does; samples where a value is not finite
    and positive are left out."""
    from itertools import combinations
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(all="ignore"):
        ok = np.isfinite(values) & (values > 0)
        logs = np.log(np.where(ok, values, 1.0))
    names = [n for n, c in counts.items() if len(set(np.asarray(c)[ok].tolist())) >= 2]
    for k in range(2, min(MAX_FACTORS, len(names)) + 1):
        for chosen in combinations(names, k):
            t = np.column_stack([np.asarray(counts[n], dtype=np.float64) for n in chosen])
            use = ok & np.all(np.abs(t) < 4096, axis=1)
            if use.sum() < k + 3:
                continue
            mat = np.column_stack([np.ones(int(use.sum())), t[use]])
            if np.linalg.matrix_rank(mat) < k + 1:
                continue
            sol = np.linalg.lstsq(mat, logs[use], rcond=None)[0]
            with np.errstate(all="ignore"):
                r = Fraction(float(np.exp(sol[0]))).limit_denominator(DENOMINATOR)
                cs = [Fraction(float(np.exp(x))).limit_denominator(DENOMINATOR) for x in sol[1:]]
            if r <= 0 or any(c <= 0 or c == 1 for c in cs):
                continue
            with np.errstate(all="ignore"):
                want = float(r) * np.prod([np.power(float(c), t[use][:, i]) for i, c in enumerate(cs)], axis=0)
            if not np.allclose(want, values[use], rtol=1e-9, atol=0.0):
                continue
            out = None
            for n, c in zip(chosen, cs):
                power = Expr(Op.POWN, Type.REAL, (const(float(c), Type.REAL), var(prefix + n, Type.INT)))
                out = power if out is None else Expr(Op.MUL, Type.REAL, (out, power))
            return _scaled(r, out)
    return None


def read_exponential(values, fields: dict[str, np.ndarray], prefix: str = "b.") -> Expr | None:
    """r * exp(k * <prefix><f>) for the first Real field f of `fields` (name -> values)
    where it holds on every sample (relative 1e-9), k a small nonzero rational and r a
    small positive one: the product of exp(-dt) over b's list is exp(-b.t) where b sums the
    dt.  None where none does; samples where a value is not finite and positive are left
    out (at least 3 must remain, with 2 distinct values of f)."""
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(all="ignore"):
        ok = np.isfinite(values) & (values > 0)
        logs = np.log(np.where(ok, values, 1.0))
    for name, column in fields.items():
        t = np.asarray(column, dtype=np.float64)
        use = ok & np.isfinite(t)
        if use.sum() < 3 or len(set(t[use].tolist())) < 2:
            continue
        slope, icept = np.polyfit(t[use], logs[use], 1)
        k = Fraction(float(slope)).limit_denominator(DENOMINATOR)
        if k == 0:
            continue
        r = Fraction(float(np.exp(icept))).limit_denominator(DENOMINATOR)
        if r <= 0:
            continue
        with np.errstate(all="ignore"):
            want = float(r) * np.exp(float(k) * t[use])
        if not np.allclose(want, values[use], rtol=1e-9, atol=0.0):
            continue
        field = var(prefix + name, Type.REAL)
        exponent = field if k == 1 else Expr(Op.NEG, Type.REAL, (field,)) if k == -1 else \
            Expr(Op.MUL, Type.REAL, (_number(k), field))
        return _scaled(r, Expr(Op.EXP, Type.REAL, (exponent,)))
    return None


def _number(k: Fraction) -> Expr:
    if Fraction(float(k)) == k:         # exact in binary: -0.5, 0.25, 3.0
        return const(float(k), Type.REAL)
    return Expr(Op.DIV, Type.REAL, (const(float(k.numerator), Type.REAL), const(float(k.denominator), Type.REAL)))


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
            terms.setdefault(e, e)
    out = []
    for e in terms.values():
        with quiet():
            value, = evaluate([e], {n: np.asarray(env[n], dtype=np.float64) for n in names}, NUMPY)
        out.append((e, np.broadcast_to(np.asarray(value, dtype=np.float64), (size,))))
    return out + [(e, np.full(size, v)) for v, e in constants.items()]


# --- a step that reads a power of a count ----------------------------------------------------

def with_power_fields(loop):
    """`loop` (normalised) with each power c ** (k * acc.n + e) in its step, c free of the
    state, k an Int constant, e an Int term free of the state and n a count (n' = n + d, d
    free of the state, n starting at 0), read as c ** e * acc.P for an added Real field P
    = c ** (k * n): P starts at 1 and P' = c ** (k * d) * P.  The step is then affine in
    the state where it was only through its powers (v' = v + x * 2.0 ** -(acc.n + 1), a
    binary fraction's digits, is v' = v + x * 0.5 * P), and `expand` writes a combine of
    the extended loop back over the loop's own fields, P as c ** (k * n).  (extended loop,
    {P: its power as a function of the field n, prefix-free}) or None where the step reads
    no such power, or reads the state through a power some other way."""
    from dataclasses import replace

    from thm3.ir import FieldDecl, Fn, free_vars, transform
    names = loop.field_names
    types = {f.name: f.type for f in loop.fields}
    init = dict(zip(names, (f.default for f in loop.fields)))
    outputs = dict(zip(names, loop.left.outputs))
    counts = {f: _count_step(outputs[f], f) for f in names if types[f] is Type.INT and init[f] == 0}
    counts = {f: d for f, d in counts.items() if d is not None}
    added: dict[tuple, str] = {}          # (base, k, n) -> the added field's name
    meaning: dict[str, tuple] = {}
    bad = []

    def rule(x, go):
        if x.op is not Op.POWN or not any(v.startswith("acc.") for v in free_vars([x.src[1]])):
            return None
        base, exponent = x.src
        split = _linear_in_one(exponent)
        if any(v.startswith("acc.") for v in free_vars([base])) or split is None or split[1] not in counts:
            bad.append(x)
            return None
        k, n, rest = split
        key = (base, k, n)
        if key not in added:
            added[key] = _fresh(f"pow_{n}", set(names) | set(added.values()))
            meaning[added[key]] = (base, k, n)
        power = var(f"acc.{added[key]}", Type.REAL)
        if rest is None:
            return power
        return Expr(Op.MUL, Type.REAL, (Expr(Op.POWN, Type.REAL, (base, rest)), power))

    new_outputs = transform(list(loop.left.outputs), rule)
    if bad or not added:
        return None
    fields, updates = list(loop.fields), list(new_outputs)
    inputs = [i for i in loop.left.inputs if i[0].startswith("acc.")]
    for name, (base, k, n) in meaning.items():
        step = _times_int(k, counts[n])
        fields.append(FieldDecl(name, Type.REAL, 1.0, f"{_text(base)} ** ({k} * {n})"))
        updates.append(Expr(Op.MUL, Type.REAL, (Expr(Op.POWN, Type.REAL, (base, step)), var(f"acc.{name}", Type.REAL))))
        inputs.append((f"acc.{name}", Type.REAL))
    inputs += [i for i in loop.left.inputs if not i[0].startswith("acc.")]
    extended = replace(loop, fields=tuple(fields), left=Fn(tuple(inputs), tuple(updates)), right=None,
                       result=None, combine_hint=None)
    return extended, meaning


def expand(outputs, meaning: dict, field_names) -> list:
    """A combine of the extended loop over the loop's own fields: its outputs for
    `field_names`, each added power P read as c ** (k * a.n) or c ** (k * b.n)."""
    from thm3.ir import transform
    subst = {}
    for name, (base, k, n) in meaning.items():
        for side in "ab":
            exponent = var(f"{side}.{n}", Type.INT)
            if k == -1:
                exponent = Expr(Op.NEG, Type.INT, (exponent,))
            elif k != 1:
                exponent = Expr(Op.MUL, Type.INT, (const(k, Type.INT), exponent))
            subst[f"{side}.{name}"] = Expr(Op.POWN, Type.REAL, (base, exponent))

    def rule(x, go):
        return subst.get(x.arg) if x.op is Op.VAR else None

    return transform(list(outputs), rule)


def _count_step(update: Expr, f: str) -> Expr | None:
    """d where `update` is acc.f + d with d free of the state (a count), else None."""
    from thm3.ir import free_vars
    from thm3.synth.semiring import RING, is_value, semiring_form
    from thm3.ir.simplify import simplify
    form = semiring_form(RING, update, {f"acc.{f}": f}, Type.INT)
    if form is None or set(form) - {f, ""} or not is_value(simplify(form.get(f, const(0, Type.INT))), 1):
        return None
    d = simplify(form[""]) if "" in form else None
    if d is None or d.type is not Type.INT or any(v.startswith("acc.") for v in free_vars([d])):
        return None
    return d


def _linear_in_one(e: Expr):
    """(k, n, rest) where `e` is k * acc.n + rest, k a nonzero Int constant and rest free
    of the state (None where it is 0); None where `e` is not that."""
    from thm3.ir import free_vars
    from thm3.synth.semiring import RING, semiring_form
    fields = {v[4:] for v in free_vars([e]) if v.startswith("acc.")}
    if len(fields) != 1:
        return None
    (n,) = fields
    form = semiring_form(RING, e, {f"acc.{n}": n}, Type.INT)
    if form is None or set(form) - {n, ""}:
        return None
    k = form[n]
    from thm3.ir.simplify import simplify
    k = simplify(k)
    if k.op is not Op.CONST or isinstance(k.arg, bool) or not float(k.arg).is_integer() or k.arg == 0:
        return None
    rest = form.get("")
    return int(k.arg), n, (simplify(rest) if rest is not None else None)


def _times_int(k: int, d: Expr) -> Expr:
    from thm3.ir.simplify import simplify
    return d if k == 1 else simplify(Expr(Op.MUL, Type.INT, (const(k, Type.INT), d)))


def _fresh(stem: str, taken: set) -> str:
    name, i = stem, 1
    while name in taken:
        i += 1
        name = f"{stem}{i}"
    return name


def _text(e: Expr) -> str:
    from thm3.syntax.loopfile import expression_text
    return expression_text(e)
