"""The composed map of the semiring route (`thm3.synth.semiring`) on sampled lists: its
entries and offsets, computed step by step beside h(ys) (`composed_entries`), and each
entry read back from its samples as a constant, a field of b, a power of a count, or a
linear form in b's fields whose coefficients are polynomials in the parameters."""
from __future__ import annotations

import math

import numpy as np

from thm3.ir import Expr, Loop, Op, Type, const, var
from thm3.synth.powers import read_exponential, read_power, read_power_product
from thm3.synth.semiring_algebra import BOOLEAN, Failed, Semiring, Step, arith, is_value, np_plus, np_times, zero_of


def composed_entries(loop: Loop, step: Step, *, seed: int = 0, count: int = 24, max_len: int = 6,
                     settings: int = 3, reduce: bool = True):
    """On sampled lists ys (every length up to `max_len`, a few parameter settings): the
    composed map's entries E[f][g] and offsets d[f] (rows of values), and h(ys) field by
    field (with each loop parameter's value under "$<name>"), each as one flat array over
    all samples.  Raises `Failed` where a coefficient
    or a sampled value does not fit the int64 the samples are computed in (an Int literal
    beyond int64: the analysis stays exact, this route does not read it).  With
    `reduce=False` a modulus is not taken of the entries and offsets (the integers they are
    residues of, for a reading fitted over the integers)."""
    try:
        return _composed_entries(loop, step, seed, count, max_len, settings, reduce)
    except OverflowError as err:
        raise Failed(f"affine over {step.semiring.name}, but the composed map overflows int64 on samples "
                     f"({err})") from None


def _composed_entries(loop: Loop, step: Step, seed: int, count: int, max_len: int, settings: int,
                      reduce: bool):
    from thm3.semantics.evaluate import NUMPY, compiled, quiet
    from thm3.semantics.samples import Domain, batch_fold, batch_init, stack_elements
    rng = np.random.default_rng(seed)
    dom = Domain(loop)
    s, block = step.semiring, step.block
    coeffs = [step.matrix[f].get(g, zero_of(s, step.types[f])) for f in block for g in block]
    coeffs += [step.offset[f] if step.offset[f] is not None else zero_of(s, step.types[f]) for f in block]
    run = compiled(tuple(coeffs), NUMPY)
    add, mul = np_plus(s), np_times(s)
    k = len(block)
    entries = {(f, g): [] for f in block for g in block}
    offsets = {f: [] for f in block}
    states = {f.name: [] for f in loop.fields}
    with quiet():
        for i in range(settings):
            params = dom.params(rng, small=i < 2)
            for n in range(max_len + 1):
                lists = dom.random_lists(rng, params, count, n, small=(n + i) % 2 == 0)
                steps = stack_elements(loop, lists)
                # Int only over (+, *): the tropical zero is an infinity
                dtype = bool if s is BOOLEAN else (np.int64 if s.plus is Op.ADD and all(
                    step.types[f] is Type.INT for f in block) else np.float64)
                if s.modulus is not None and not reduce:
                    dtype = object          # Python's integers: no int64 wrap-around unreduced
                one, zero = np.asarray(s.one, dtype=dtype), np.asarray(s.zero, dtype=dtype)
                e = [[np.full((count, 1), one if a == b else zero) for b in range(k)] for a in range(k)]
                d = [np.full((count, 1), zero) for _ in range(k)]
                for el in steps:
                    env = dict(params) | {p.name: v for p, v in zip(loop.elements, el)}
                    vals = [np.broadcast_to(np.asarray(v, dtype=dtype), (count, 1)) for v in run(env)]
                    m = [vals[a * k:(a + 1) * k] for a in range(k)]
                    c = vals[k * k:]
                    e2 = [[_dot(add, mul, [mul(m[a][j], e[j][b]) for j in range(k)]) for b in range(k)]
                          for a in range(k)]
                    d2 = [add(_dot(add, mul, [mul(m[a][j], d[j]) for j in range(k)]), c[a]) for a in range(k)]
                    if s.modulus is not None and reduce:
                        e2 = [[x % s.modulus for x in row] for row in e2]
                        d2 = [x % s.modulus for x in d2]
                    e, d = e2, d2
                h = batch_fold(loop, steps, params, batch_init(loop, count, 3), NUMPY)
                for a, f in enumerate(block):
                    offsets[f].append(d[a].ravel())
                    for b, g in enumerate(block):
                        entries[(f, g)].append(e[a][b].ravel())
                for fd, v in zip(loop.fields, h):
                    states[fd.name].append(np.asarray(v, dtype=np.float64).reshape(count, -1)[:, 0])
                for d in loop.params:
                    if d.type is not Type.VEC:
                        states.setdefault("$" + d.name, []).append(np.full(count, float(params[d.name])))
                states.setdefault(LENGTH, []).append(np.full(count, float(n)))
    def flat(parts):
        out = np.concatenate(parts)
        if out.dtype == object and out.size and max(abs(int(v)) for v in out) >= 2 ** 53:
            raise OverflowError("an unreduced entry beyond 2**53")
        return out.astype(np.float64)
    return ({key: flat(v) for key, v in entries.items()}, {f: flat(v) for f, v in offsets.items()},
            {f: flat(v) for f, v in states.items()})


LENGTH = "#length"       # the sampled lists' lengths, among composed_entries' states


def _dot(add, mul, terms):
    out = terms[0]
    for t in terms[1:]:
        out = add(out, t)
    return out


def same_samples(a: np.ndarray, b: np.ndarray) -> bool:
    from thm3.semantics.equality import close
    return a.shape == b.shape and bool(np.all(close(a, b)))


# --- readings ------------------------------------------------------------------------------

LINEAR_DEGREE = 2          # the parameters' degree in a linear reading's coefficients
LINEAR_DENOMINATOR = 64    # and the denominators of their rational constants
COUNT_DEGREE = 3           # a count field's highest power in a reading (A**n for a unipotent A)


def _settings_for(loop: Loop) -> int:
    """Parameter settings enough to tell the monomials of a linear reading apart (each
    setting is one value of every parameter), two per monomial and some to spare."""
    from math import comb
    p = sum(d.type is not Type.VEC for d in loop.params)
    return min(48, 2 * comb(p + LINEAR_DEGREE, LINEAR_DEGREE) + 4)


def _count_fields(step: Step) -> list[str]:
    """The block's fields that count: the update adds a nonzero constant to the field and
    reads nothing else (mod m allowed), so the field is a multiple of the length plus its
    initial value, and every entry of A**n for a constant A that is unipotent is a
    polynomial in it (of degree below the block's size)."""
    out = []
    for f in step.block:
        row, off = step.matrix[f], step.offset.get(f)
        if set(row) == {f} and is_value(row[f], 1) and off is not None and off.op is Op.CONST \
                and not isinstance(off.arg, bool) and off.arg != 0:
            out.append(f)
    return out


def read_linear(col: np.ndarray, basis: "_LinearBasis", type_: Type, modulus: int | None = None) -> Expr | None:
    """An entry of the composed map over (+, *) as a linear form in b's fields, the powers
    of its count fields and 1, whose coefficients are polynomials in the loop parameters of
    degree <= LINEAR_DEGREE with small rational constants, fitted exactly on the samples,
    lowest degree first: the entries of A**n that a Cayley-Hamilton lift holds as A**n =
    ch0 I + ch1 A (b.ch0 + a * b.ch1 for y' = a y + b z + x), and those of a unipotent A**n
    held by a length (n (n + 1) / 2 for a third running sum).  Modulo m the samples are
    the unreduced entries, and a rational constant p/q is p times q's inverse mod m (None
    where q has none).  None where no such form fits; the composition lemma proves the
    reading it gives."""
    from fractions import Fraction
    if not np.all(np.isfinite(col[basis.ok])):
        return None
    target = col[basis.ok]
    scale = max(1.0, float(np.max(np.abs(target)))) if target.size else 1.0
    for degree in range(basis.degrees):
        labels, columns, pinv = basis.at(degree)
        if pinv is None:
            return None
        coeffs = [Fraction(float(x)).limit_denominator(LINEAR_DENOMINATOR) for x in pinv @ target]
        if not np.allclose(columns @ np.array([float(c) for c in coeffs]), target, rtol=1e-9, atol=1e-9 * scale):
            continue
        if modulus is not None:
            try:
                coeffs = [Fraction(residue(c, modulus)) for c in coeffs]
            except ValueError:          # a denominator with no inverse mod m
                return None
        out: Expr | None = None
        for (fs, m), c in zip(labels, coeffs):
            if c == 0:
                continue
            term: Expr | None = None
            for name in m:
                term = basis.param(name) if term is None else arith(Op.MUL, term, basis.param(name))
            for f in fs:
                fv = var(f"b.{f.name}", f.type)
                term = fv if term is None else arith(Op.MUL, term, fv)
            if c.denominator == 1:
                k = const(int(c), Type.INT) if type_ is Type.INT else const(float(c.numerator), Type.REAL)
            else:
                k = Expr(Op.DIV, Type.REAL, (const(float(c.numerator), Type.REAL), const(float(c.denominator), Type.REAL)))
            if term is None:
                term = k
            elif c != 1:
                term = arith(Op.MUL, k, term)
            out = term if out is None else arith(Op.ADD, out, term)
        return out if out is not None else const(0 if type_ is Type.INT else 0.0, type_)
    return None


class _LinearBasis:
    """The columns a linear reading is fitted over, per degree in the parameters: b's
    number fields (and 1, and the powers 2 .. `COUNT_DEGREE` of the count fields) times the
    parameters' monomials, the independent ones only, simplest first (so that the fit is
    the sparse one), with their pseudo-inverse; built once per composition, on the rows
    where every field is finite."""

    def __init__(self, states: dict, loop: Loop, counts: tuple[str, ...] = (), count_degree: int = 0):
        self.loop = loop
        self.fields = [f for f in loop.fields if f.type in (Type.REAL, Type.INT)]
        by_name = {f.name: f for f in self.fields}
        self.monomials = [()] + [(f,) for f in self.fields] + \
            [(by_name[c],) * k for k in range(2, count_degree + 1) for c in counts if c in by_name]
        self.params = [d.name for d in loop.params if "$" + d.name in states]
        self.states = states
        ok = np.ones_like(states[loop.fields[0].name], dtype=bool)
        for f in self.fields:
            ok &= np.isfinite(states[f.name])
        self.ok = ok
        self.degrees = LINEAR_DEGREE + 1 if self.params else 1
        self._at: dict = {}

    def param(self, name: str) -> Expr:
        return var(name, next(d.type for d in self.loop.params if d.name == name))

    def at(self, degree: int):
        import itertools
        got = self._at.get(degree)
        if got is not None:
            return got
        ok = self.ok
        monos = [m for k in range(degree + 1) for m in itertools.combinations_with_replacement(self.params, k)]
        labels, columns = [], []
        for m in monos:
            pv = np.ones(int(ok.sum()))
            for name in m:
                pv = pv * self.states["$" + name][ok]
            for fs in self.monomials:
                col = pv
                for f in fs:
                    col = col * self.states[f.name][ok]
                labels.append((fs, m))
                columns.append(col)
        from thm3.synth.finite import independent_columns
        chosen = independent_columns(np.stack(columns, axis=1)) if columns else []
        kept = [columns[j] for j in chosen]
        kept_labels = [labels[j] for j in chosen]
        if not kept or len(kept) * 2 > int(ok.sum()):
            got = (kept_labels, None, None)
        else:
            mat = np.stack(kept, axis=1)
            got = (kept_labels, mat, np.linalg.pinv(mat))
        self._at[degree] = got
        return got


def residue(c, m: int) -> int:
    """A rational p/q as p times q's inverse mod m; `ValueError` where q has none."""
    return c.numerator * pow(c.denominator, -1, m) % m


def residues(e: Expr, step: Step) -> Expr:
    """A reading mod m with each field of b that is not reduced (a count) taken mod m
    first: congruent, and its products stay below m**2 (no int64 overflow for a long
    list's length)."""
    from thm3.ir import transform
    m = step.semiring.modulus

    def rule(x, go):
        if x.op is Op.VAR and x.arg.startswith("b.") and x.arg[2:] in step.block and x.arg[2:] not in step.reduced:
            return Expr(Op.MOD, x.type, (x,), m)
        return None

    (out,) = transform([e], rule)
    return out


def linear_samples(loop: Loop, step: Step, entries: dict, offsets: dict, states: dict):
    """(entries, basis) for the linear readings: with more parameter settings where the
    loop has parameters, and modulo m the unreduced entries (they are what a polynomial
    in a count fits); () where those samples overflow."""
    s = step.semiring
    wide = (entries, offsets, states)
    if loop.params or s.modulus is not None:
        try:
            wide = composed_entries(loop, step, seed=1, count=8, max_len=6, settings=_settings_for(loop)
                                    if loop.params else 3, reduce=False)
        except Failed:
            return ()
    counts = tuple(_count_fields(step))
    return wide[0], _LinearBasis(wide[2], loop, counts, min(COUNT_DEGREE, len(step.block) - 1) if counts else 0)


def read_entry(col: np.ndarray, states: dict, loop: Loop, s: Semiring, type_: Type, bases=()) -> Expr | None:
    """An entry of the composed map as a constant or a field of b, or a power of a count
    of b (with a constant base, or one of `bases`), from its samples."""
    if np.all(col == col[0]) or (np.isnan(col).all()):
        v = col[0]
        if s is BOOLEAN:
            return const(bool(v), Type.BOOL)
        if math.isinf(v):
            return const(float(v), Type.REAL)
        return const(int(v), Type.INT) if type_ is Type.INT and float(v).is_integer() else const(float(v), type_)
    # the last field that holds it: a lift's entries come after the fields they carry, and
    # an original field may equal an entry on every reachable state only (an independent
    # set's best weight is the entry from the state that excludes the first vertex), where
    # the composition lemma, over the invariant states, needs the entry itself
    for f in reversed(loop.fields):
        if f.type is not Type.VEC and same_samples(col, states[f.name]):
            return var(f"b.{f.name}", f.type)
    if type_ is Type.REAL and s.times is Op.MUL and s.modulus is None:
        # a constant's power of a count of b (0.9 ** b.n: a decay applied at each step b counts),
        # or the exponential of a sum b keeps (exp(-b.t): the product of exp(-dt) over b's list)
        counts = {f.name: states[f.name] for f in loop.fields if f.type is Type.INT}
        got = read_power(col, counts, bases=bases)
        if got is None:
            got = read_power_product(col, counts)
        if got is None:
            got = read_exponential(col, {f.name: states[f.name] for f in loop.fields if f.type is Type.REAL})
        return got
    return None
