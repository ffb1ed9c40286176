"""Lifts for the semiring route (`thm3.synth.semiring`): where the state does not carry
the composed map, the entries of the product of the step matrices that carry information,
each an added field with its update (`lift_units`), smallest first, then the full matrix;
for a constant step matrix over (+, *), the coefficients of its power in its first powers
(Cayley-Hamilton).  The lifting search ranks them ahead of its other candidates."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from thm3.ir import Expr, Loop, Op, Type, const, free_vars, initial_state, var, walk
from thm3.ir.simplify import simplify
from thm3.synth.semiring_algebra import (BOOLEAN, MAX_PLUS, MAX_TIMES, MIN_PLUS, MIN_TIMES, RING, Failed, Semiring,
                                         Step, arith, is_value, one_of, oplus, otimes, scaling, state_free, zero_of)
from thm3.synth.semiring_recognition import fit_step, row_form, scaling_step
from thm3.synth.semiring_samples import (COUNT_DEGREE, LENGTH, LINEAR_DENOMINATOR, composed_entries, residue,
                                         same_samples)

MAX_FULL = 3        # the full matrix is offered as a lift for blocks of at most this many fields


@dataclass(frozen=True)
class Unit:
    """A lift of one block: the entries of the product of the step matrices that are
    neither constant nor equal to an original field or to another entry, each with its
    update (reading "acc.<key>" of the unit's own keys and the original fields), initial
    value and meaning; `full` marks the whole matrix (the fallback)."""
    semiring: Semiring
    block: tuple[str, ...]
    keys: tuple[tuple[str, str], ...]   # (row, column) of each added entry
    updates: dict                       # (row, column) -> update Expr
    defaults: dict                      # (row, column) -> initial value
    names: dict                         # (row, column) -> a name for the field ("pw", "n", "m_u_v")
    comments: dict
    fields: dict                        # (row, column) -> its key (what `key_of` gave)
    full: bool = False
    how: str = ""                       # what the unit holds, where it is not entries of the product


def lift_units(loop: Loop, key_of) -> list[Unit]:
    """The lifts of the largest block of fields whose step is affine over one semiring,
    smallest first: the entries of the step matrices' product that carry information
    (constants dropped, equal entries merged, entries equal to an original field read from
    it, a count read back as a length), then the full matrix.  `key_of(row, column, full)`
    names the added field of an entry.  Empty where no block is affine, or where every
    step matrix is the identity."""
    step = _moving_block(loop)
    if step is None:
        return []
    s, block = step.semiring, step.block
    try:
        entries, offsets, states = composed_entries(loop, step, count=16, max_len=5, settings=2)
    except Failed:
        return []
    types = step.types
    columns = _columns(loop, step)
    if "" in columns:
        entries = entries | {(f, ""): offsets[f] for f in block}
    kinds = {f: types[f] for f in block}
    # Int entries only over (+, *): a tropical entry may be its zero, an infinity
    dtype = Type.BOOL if s is BOOLEAN else (Type.INT if s.plus is Op.ADD and all(kinds[f] is Type.INT for f in block)
                                            else Type.REAL)

    def identity(f, g):
        return one_of(s, dtype) if f == g and g else zero_of(s, dtype)

    out: list[Unit] = []
    # the reduced lift: constants, twins and original fields read off the samples
    reading: dict = {}
    kept: list[tuple[str, str]] = []
    for key in ((f, g) for f in block for g in columns):
        col = entries[key]
        if np.all(col == col[0]) or np.isnan(col).all():
            reading[key] = identity(*key)          # the same value at [] as everywhere
            continue
        twin = next((f.name for f in loop.fields if f.type is not Type.VEC and same_samples(col, states[f.name])), None)
        if twin is not None:
            reading[key] = var(f"acc.{twin}", types[twin])
            continue
        other = next((k for k in kept if same_samples(col, entries[k])), None)
        if other is not None:
            reading[key] = ("alias", other)
            continue
        kept.append(key)
    _demote_false_twins(step, reading, kept, dtype)
    if s.plus is Op.ADD and s.times is Op.MUL and dtype is not Type.BOOL:
        _polynomials_in_a_count(step, entries, states, reading, kept)
    hamilton = _cayley_hamilton(loop, step, key_of, dtype) if s is RING else None
    if hamilton is not None and len(hamilton.keys) < len(kept):
        out.append(hamilton)
    if kept:
        keys = {k: key_of(*k, False) for k in kept}
        out.append(_unit(loop, step, kept, keys, _reader(reading, lambda k: keys[k], dtype), dtype, full=False))
    full_keys = [(f, g) for f in block for g in columns]
    if len(kept) < len(full_keys) and len(block) <= MAX_FULL:
        keys = {k: key_of(*k, True) for k in full_keys}
        out.append(_unit(loop, step, full_keys, keys, lambda k: var(f"acc.{keys[k]}", dtype), dtype, full=True))
    return out


def _cayley_hamilton(loop: Loop, step: Step, key_of, dtype: Type) -> Unit | None:
    """For a block whose step matrix A over (+, *) is constant (its entries read no element
    and no field, parameters allowed), k = len(block) >= 2 fields ch0 .. ch{k-1} with
    A**n = ch0 I + ch1 A + ... + ch{k-1} A**(k-1): by Cayley-Hamilton, A**k = e0 I + ... +
    e{k-1} A**(k-1) with e the characteristic polynomial's coefficients negated, so A**(n+1)
    = A A**n gives ch0' = e0 ch{k-1}, ch{i}' = ch{i-1} + e{i} ch{k-1}, from ch0 = 1 (A**0 =
    I).  k fields in place of the k*k of the matrix product; None where A is not constant."""
    import sympy as sp
    from thm3.semantics.evaluate import evaluate
    from thm3.semantics.sympy_table import SYMPY, to_ir
    block, k = step.block, len(step.block)
    if k < 2 or step.semiring.modulus is not None:
        return None
    params = {d.name for d in loop.params}
    rows = [[step.matrix[f].get(g, zero_of(RING, step.types[f])) for g in block] for f in block]
    if any(not free_vars([e]) <= params for row in rows for e in row):
        return None
    symbols = {d.name: sp.Symbol(d.name) for d in loop.params if d.type is not Type.VEC}
    values = evaluate([e for row in rows for e in row], symbols, SYMPY)
    if any(v is None for v in values):
        return None
    lam = sp.Symbol("lam_ch")
    coeffs = sp.Matrix(k, k, values).charpoly(lam).all_coeffs()     # lam**k + p1 lam**(k-1) + ... + pk
    e = [sp.expand(-coeffs[k - j]) for j in range(k)]
    types = {d.name: d.type for d in loop.params}
    try:
        factors = [to_ir(x, types, want=dtype) for x in e]
    except ValueError:
        return None
    keys = [("ch", str(i)) for i in range(k)]
    fields = {key: key_of(*key, False) for key in keys}
    last = var(f"acc.{fields[keys[-1]]}", dtype)
    updates, defaults, names, comments = {}, {}, {}, {}
    for i, key in enumerate(keys):
        out = None if i == 0 else var(f"acc.{fields[keys[i - 1]]}", dtype)
        if not is_value(factors[i], 0):
            term = otimes(RING, factors[i], last)
            out = term if out is None else oplus(RING, out, term)
        updates[key] = simplify(out) if out is not None else zero_of(RING, dtype)
        defaults[key] = (1 if i == 0 else 0) if dtype is Type.INT else (1.0 if i == 0 else 0.0)
        names[key] = f"ch{i}"
        comments[key] = (f"the coefficient of A**{i} in A**n, A the constant step matrix of "
                         f"({', '.join(block)}) (Cayley-Hamilton: A**n = ch0 I + ... + ch{k - 1} A**{k - 1})")
    return Unit(RING, block, tuple(keys), updates, defaults, names, comments, fields, False,
                "the coefficients of the constant step matrix's power in its first powers (Cayley-Hamilton)")


def _reader(reading: dict, name_of, dtype: Type):
    """An entry's value in a lift's updates: what `reading` reads it as (a constant or an
    original field), the added field of the entry it aliases, a polynomial in the added
    count it is a function of, or its own added field (`name_of(entry)`)."""
    def value(k):
        r = reading.get(k)
        if r is None:
            return var(f"acc.{name_of(k)}", dtype)
        if isinstance(r, tuple) and r[0] == "alias":
            return var(f"acc.{name_of(r[1])}", dtype)
        if isinstance(r, tuple):
            _, count, coeffs, modulus = r
            n = var(f"acc.{name_of(count)}", dtype)
            if modulus is not None:
                n = Expr(Op.MOD, dtype, (n,), modulus)
            out: Expr | None = None
            for i, c in enumerate(coeffs):
                if c == 0:
                    continue
                term: Expr | None = None
                for _ in range(i):
                    term = n if term is None else arith(Op.MUL, term, n)
                k_ = const(int(c), dtype) if dtype is Type.INT else const(float(c), dtype)
                term = k_ if term is None else (term if c == 1 else arith(Op.MUL, k_, term))
                out = term if out is None else arith(Op.ADD, out, term)
            return out if out is not None else zero_of(RING, dtype)
        return r
    return value


def _polynomials_in_a_count(step: Step, entries: dict, states: dict, reading: dict, kept: list) -> None:
    """Over (+, *) (mod m too): where a kept entry is a count (c times the list's length on
    every sample) and another kept entry is a polynomial of degree <= `COUNT_DEGREE` in the
    length (the entries of A**n for a unipotent A: n (n + 1) / 2 for a third running sum),
    the second is read from the first and not added (in place in `reading` and `kept`).
    Exact rationals, fitted on the distinct lengths and checked on every sample; mod m a
    rational's denominator must have an inverse mod m, else the entry stays."""
    from fractions import Fraction
    length = states.get(LENGTH)
    if length is None:
        return
    m = step.semiring.modulus
    nz = length > 0
    if not nz.any():
        return
    count, scale = None, None
    for key in kept:
        col = entries[key]
        c = col[nz][0] / length[nz][0]
        if c != 0 and float(c).is_integer() and np.array_equal(col, c * length):
            count, scale = key, int(c)
            break
    if count is None:
        return
    lengths = np.unique(length)
    degree = min(COUNT_DEGREE, len(step.block) - 1, len(lengths) - 1)
    for key in [k for k in kept if k != count]:
        col = entries[key]
        at = {float(v): col[length == v] for v in lengths}
        if any(not np.all(vals == vals[0]) for vals in at.values()):
            continue                    # not a function of the length
        xs = np.array(sorted(at))
        ys = np.array([at[v][0] for v in xs])
        fit = np.polyfit(xs, ys, degree)[::-1]          # lowest power first, in the length
        coeffs = [Fraction(float(v)).limit_denominator(LINEAR_DENOMINATOR) for v in fit]
        if not np.allclose(sum(float(cf) * xs ** i for i, cf in enumerate(coeffs)), ys, rtol=0, atol=1e-9):
            continue
        if m is not None and np.any(ys >= m):
            continue                    # reduced on the samples: the fit is of the residues
        # in the count n = scale * length: length**i = n**i / scale**i
        coeffs = [cf / Fraction(scale) ** i for i, cf in enumerate(coeffs)]
        if m is not None:
            try:
                coeffs = [residue(cf, m) for cf in coeffs]
            except ValueError:
                continue
        elif any(cf.denominator != 1 for cf in coeffs) and step.types[key[0]] is Type.INT:
            continue
        reading[key] = ("poly", count, tuple(coeffs), m)
        kept.remove(key)


def _entry_update(step: Step, f: str, g: str, value, dtype: Type) -> Expr:
    """The update of entry (f, g) of the product of the step matrices, M' = A(x) (x) M:
    row f of A times column g, read through `value`; the offset too in column ""."""
    s = step.semiring
    out = zero_of(s, dtype)
    for k in step.block:
        a = step.matrix[f].get(k)
        if a is None or is_value(a, s.zero):
            continue
        out = oplus(s, out, otimes(s, a, value((k, g))))
    if not g and step.offset[f] is not None:
        out = oplus(s, out, step.offset[f])
    return simplify(out)


def _demote_false_twins(step: Step, reading: dict, kept: list, dtype: Type) -> None:
    """An entry read from an original field only where that field's own update is the
    entry's update under the reading (so the field is the entry on every state, not only
    on the reachable ones: from (0, 0) an independent set's best weight with the last
    vertex equals the entry from 'excluded' on reachable states only); the others are
    added as fields of their own (in `kept`), until no reading changes."""
    from thm3.ir import equal_upto_order
    own_cache: dict = {}
    value = _reader(reading, lambda k: f"__entry_{k[0]}_{k[1]}", dtype)

    def own(name):
        got = own_cache.get(name)
        if got is None:
            got = own_cache[name] = _entry_update(step, name, "", lambda k: var(f"acc.{k[0]}", dtype), dtype) \
                if name in step.block else None
        return got

    changed = True
    while changed:
        changed = False
        for key, r in list(reading.items()):
            if not isinstance(r, Expr) or r.op is not Op.VAR or not r.arg.startswith("acc."):
                continue
            mine = own(r.arg[4:])
            if mine is None or not equal_upto_order(_entry_update(step, key[0], key[1], value, dtype), mine):
                del reading[key]
                kept.append(key)
                changed = True


def full_matrix_size(loop: Loop) -> tuple[str, int] | None:
    """The semiring and the number of fields of the full matrix that `lift_units` falls back
    to for `loop`: every entry of the k x k product of the step matrices of its largest
    affine block (and the offsets' column, where the semiring has no subtraction and init is
    not its zero).  None where no block is affine or every step matrix is the identity.  (The
    full matrix is offered as a lift only for blocks of at most `MAX_FULL` fields.)"""
    step = _moving_block(loop)
    if step is None:
        return None
    return step.semiring.name, len(step.block) * len(_columns(loop, step))


def _moving_block(loop: Loop) -> Step | None:
    """The largest affine block (`_largest_block`), None where its step matrices are all the
    identity (the block's fields carry nothing into the later ones)."""
    step = _largest_block(loop)
    if step is None:
        return None
    s, block = step.semiring, step.block
    if all(is_value(step.matrix[f].get(g, zero_of(s, step.types[f])), s.one if f == g else s.zero)
           for f in block for g in block):
        return None
    return step


def _columns(loop: Loop, step: Step) -> list[str]:
    """The composed map's columns: the block's fields, and "" for the offsets where they are
    needed (without subtraction, b's offset is b's own fields only where init is the zero:
    else it is added too, the map's value at the zero)."""
    s, block = step.semiring, step.block
    init = dict(zip(loop.field_names, initial_state(loop)))
    columns = list(block)
    if s.plus is not Op.ADD and not step.homogeneous() and not all(is_value(init[f], s.zero) for f in block):
        columns.append("")
    return columns


def _unit(loop: Loop, step: Step, kept, keys, value, dtype: Type, full: bool) -> Unit:
    s, block = step.semiring, step.block
    updates, defaults, names, comments = {}, {}, {}, {}
    for f, g in kept:
        out = _entry_update(step, f, g, value, dtype)
        me = var(f"acc.{keys[(f, g)]}", dtype)
        count = _counts(out, me)
        if s.modulus is not None and not count:
            out = Expr(Op.MOD, out.type, (out,), s.modulus)
        updates[(f, g)] = out
        v = s.one if f == g and g else s.zero
        defaults[(f, g)] = bool(v) if dtype is Type.BOOL else float(v) if dtype is Type.REAL else int(v)
        inner = out.src[0] if out.op is Op.MOD else out         # the power inside its % m
        names[(f, g)], comments[(f, g)] = _named(loop, step, f, g, inner, me, count, full)
    return Unit(s, block, tuple(kept), updates, defaults, names, comments, dict(keys), full)


def _counts(update: Expr, me: Expr) -> bool:
    """The update adds a constant to the field: a length (or a multiple of it)."""
    if update.op is not Op.ADD:
        return False
    x, y = update.src
    return any(u.op is Op.VAR and u.arg == me.arg and v.op is Op.CONST for u, v in ((x, y), (y, x)))


def _named(loop: Loop, step: Step, f: str, g: str, update: Expr, me: Expr, count: bool,
           full: bool) -> tuple[str, str]:
    """A name and a comment for an entry: a length, a power, or a matrix entry."""
    from thm3.syntax.loopfile import expression_text as to_text
    s = step.semiring
    elements = {d.name for d in loop.elements}
    mod = f" mod {s.modulus}" if s.modulus is not None else ""
    if not g:
        return f"c_{f}", (f"{f} as the elements so far would leave it from the semiring's zero: the offset of "
                          f"the composed map over {s.name}")
    if count and not full:
        step_size = next(x for x in update.src if x.op is Op.CONST)
        return "n", f"how {f} depends on the {g} before the list: {to_text(step_size)} per element (a length)"
    if (not full and update.op is s.times and any(x.op is Op.VAR and x.arg == me.arg for x in update.src)
            and all(state_free(x) for x in update.src if not (x.op is Op.VAR and x.arg == me.arg))):
        factor = next(x for x in update.src if not (x.op is Op.VAR and x.arg == me.arg))
        if s.times is Op.MUL and not free_vars([factor]) & elements:
            base = to_text(factor) if factor.op in (Op.VAR, Op.CONST) else f"({to_text(factor)})"
            return "pw", f"{base} ** (number of elements so far){mod}: the slope of the composed map"
        word = "product" if s.times is Op.MUL else f"{s.name} product"
        return "pw", f"{word} of {to_text(factor)} so far{mod} (the slope of the composed map)"
    return f"m_{f}_{g}", (f"how {f} depends on the {g} before the list: an entry of the {s.name} "
                          f"product of the step matrices so far")


def _largest_block(loop: Loop) -> Step | None:
    """The largest set of fields whose updates are affine over one semiring in that set
    (fields outside it may read it, not the other way): per semiring, the fields whose
    rows do not fit are dropped until the rest fit; of equal sizes, the first semiring."""
    from thm3.ir.normalize import normalize
    if any(d.type is Type.VEC for d in loop.elements):
        return None
    types = {f.name: f.type for f in loop.fields}
    outputs = dict(zip(loop.field_names, normalize(loop.left.outputs)))
    numeric = [f for f in loop.field_names if types[f] in (Type.REAL, Type.INT)]
    ints = [f for f in numeric if types[f] is Type.INT]
    mods = sorted({e.arg for e in walk([outputs[f] for f in ints]) if e.op is Op.MOD})
    options = [(RING, numeric)] + [(RING.with_modulus(m), ints) for m in mods] + \
        [(MAX_PLUS, numeric), (MIN_PLUS, numeric), (BOOLEAN, [f for f in loop.field_names if types[f] is Type.BOOL]),
         (MAX_TIMES, numeric), (MIN_TIMES, numeric)]
    best = None
    for s, group in options:
        block = list(group)
        while block:
            state = {f"acc.{g}": g for g in block}
            keep = [f for f in block if row_form(s, outputs[f], state, types[f]) is not None]
            if keep == block:
                break
            block = keep
        step = fit_step(s, tuple(block), types, outputs) if block else None
        while step is None and block:       # mod m: an unreduced field that reads a reduced one
            block = block[:-1]
            step = fit_step(s, tuple(block), types, outputs) if block else None
        if step is not None and scaling(s):
            step = scaling_step(step, loop, outputs)
        if step is not None and (best is None or len(step.block) > len(best.block)):
            best = step
    return best
