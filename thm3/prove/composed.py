"""The laws of a combine that composes the step's maps over a semiring (the route
"semiring"), proved by one lemma over one state in place of associativity over three.

Theorem.  Let `left` be affine over a semiring K on the whole state, left(s, x) =
A(x) (x) s (+) c(x), and let E(b) be a matrix and D(b) a vector of terms in b's fields.
Let S be the states that satisfy the inductive invariants (every reachable state is in
S).  If
  (I) E(init) is K's identity matrix and D(init) is K's zero vector, and
  (L) E(left(b, x)) == A(x) (x) E(b) and D(left(b, x)) == A(x) (x) D(b) (+) c(x), entry
      by entry, for b in S and every element x,
then c(h(xs), h(ys)) == h(xs + ys) for all lists xs, ys, where c(a, b) = E(b) (x) a (+)
D(b).
Proof.  Let T_ys(s) = M(ys) (x) s (+) d(ys) be the composed map of a list: M([]) the
identity and d([]) the zero, and for ys + [y], M' = A(y) (x) M(ys) and d' = A(y) (x)
d(ys) (+) c(y) (the product over K is associative and distributes over its sum).  Then
h(ys) = T_ys(init) and h(xs + ys) = T_ys(h(xs)).  By induction on ys, E(h(ys)) == M(ys)
and D(h(ys)) == d(ys): (I) is the base, and (L) with b = h(ys), which is in S, the step.
So c(h(xs), h(ys)) = M(ys) (x) h(xs) (+) d(ys) = h(xs + ys).  Hence on reachable states
the combine is associative, init is its identity (ys = [] and xs = []), and it is the
homomorphism's combine.

The route reads E's entries as constants or fields of b, and D as the zero (a step
without an offset), over a ring as b - E(b) init (h(ys) = M(ys) init + d(ys)), and over
the others as a field of b: b's own where the row reads only fields that start at the
zero, a lifted offset field otherwise.  (I) and (L) prove those readings.

Modulo m (> 0), the reduced fields' updates a remainder by m and their initial values
in [0, m): reduction is a ring map onto Z/m, so the argument holds for the residues, and
two remainders by m that are congruent are equal; (L) is then asked of the residues in a
reduced field's rows, E(left(b, x)) % m == (A(x) (x) E(b)) % m and so on: E(h(ys)) and
D(h(ys)) are congruent to M(ys) and d(ys) there, which is all the reduced combine needs.
A field that is not reduced (a length) reads no reduced one (the route's recognition
ensures it), so its rows are a composition over the integers, and (L) is asked of them
exactly.

K is (+, *) over finite values, (max, +) on values below +inf, (min, +) on values above
-inf, (max, *) on finite nonnegative values (a step whose coefficients, offsets and
initial values are nonnegative: on negative values max_k (p_k * s) is not (max_k p_k) * s,
and an infinity times a coefficient 0 is NaN), or (or, and): on these the semiring laws
hold exactly, so the matrix product is
associative (with +inf in (max, +), -inf + inf is NaN and they do not).  (L) quantifies
over one state and one element: for a 3x3 (max, +) matrix state it is a few hundred
small problems, where associativity over three states split on every field's infinite
case is 2**18 of them (Blelloch 1990, "Prefix sums and their applications": the matrix
product as the combine of a linear recurrence, and the pair (M, d) for an affine one)."""
from __future__ import annotations

import math

import numpy as np

from thm3.ir import Expr, Fn, Loop, Op, initial_state, var, walk
from thm3.prove.laws import (Law, Outcome, Setting, apply_fn, check_equal_pairs, element_of, params_of,
                             state_of)

HOW = ("from E(init) == I, D(init) == 0, E(left(b, x)) == A(x) (x) E(b) and D(left(b, x)) == "
       "A(x) (x) D(b) (+) c(x) on invariant states, with E(b) and D(b) the composed map and its offset that "
       "b's fields hold (the matrix product over the semiring is associative)")
HOW_MOD = HOW + ", modulo {m} (every field a remainder by {m}, congruent remainders equal)"


def composition(loop: Loop, setting: Setting, combine: Fn):
    """(step, reading, offset) where `combine` is the composition that the route "semiring"
    builds (up to the order of the operands of +, *, max, min) for a step affine on the
    whole state over a semiring whose laws hold exactly on the state's values, else None.
    The cheap tests come before the sampling of the composed map."""
    from thm3.errors import SolverTimeout
    from thm3.ir import equal_upto_order
    from thm3.ir.normalize import normalize_loop
    from thm3.synth import semiring
    work = normalize_loop(loop)
    step = semiring.whole_affine(work)
    # (max, *) and (min, *) distribute only over nonnegative coefficients, and a matrix's
    # product only on nonnegative values (max_k (p_k * s) is (max_k p_k) * s for s >= 0
    # only): the lemma is used over (max, *) on nonnegatives, where the step's coefficients,
    # offsets and initial values are (`semiring_recognition.scaling_step`), the others'
    # combines are proved by the laws themselves
    scaled = step is not None and semiring.scaling(step.semiring)
    if step is None or (scaled and step.semiring is not semiring.MAX_TIMES_NONNEGATIVE) \
            or not _applies(work, step) or not _exact_on(setting, step):
        return None
    try:
        fn, reading, offset = semiring.composition(work, step)
    except (semiring.Failed, SolverTimeout):
        return None
    if len(fn.outputs) != len(combine.outputs) or \
            not all(equal_upto_order(a, b) for a, b in zip(fn.outputs, combine.outputs)):
        return None
    return step, reading, offset


def _applies(loop: Loop, step) -> bool:
    """The theorem's conditions modulo m: every field's update a remainder by m and every
    initial value one already (an Int in [0, m))."""
    s = step.semiring
    if s.modulus is None:
        return True
    m = s.modulus
    if not (isinstance(m, int) and m > 0) or not step.reduced or set(step.block) != set(loop.field_names):
        return False
    if any(g in step.reduced for f in step.block if f not in step.reduced for g in step.matrix[f]):
        return False
    init = dict(zip(loop.field_names, initial_state(loop)))
    for f in step.reduced:
        e = init[f]
        if e.op is not Op.CONST or isinstance(e.arg, bool) or not isinstance(e.arg, int) or not 0 <= e.arg < m:
            return False
    return True


def _exact_on(setting: Setting, step) -> bool:
    """Whether the semiring's laws hold on every value the fields and the step's
    coefficients may take: no infinity that breaks distributivity."""
    from thm3.synth.semiring import scaling
    s = step.semiring
    bad = {Op.ADD: (math.inf, -math.inf), Op.MAX: (math.inf,), Op.MIN: (-math.inf,), Op.OR: ()}[s.plus]
    if scaling(s):
        bad = (math.inf, -math.inf)         # (max, *): an infinity times a coefficient 0 is NaN
    if not bad:
        return True
    opts = setting.inf_options()           # per field: "fin", and -1 / 1 for -inf / +inf
    for f in setting.loop.fields:
        if any(o in (-1, 1) and o * math.inf in bad for o in opts.get(f.name, ())):
            return False
    coeffs = [c for row in step.matrix.values() for c in row.values()]
    coeffs += [c for c in step.offset.values() if c is not None]
    return not any(e.op is Op.CONST and isinstance(e.arg, float) and e.arg in bad for e in walk(coeffs))


def prove_composed(loop: Loop, setting: Setting, combine: Fn, deadline: float) -> Outcome | None:
    """(I) and (L) for a combine that `composition` recognises: "proved" where both hold,
    else the lemma that failed; None where the theorem does not apply."""
    from thm3.ir import substitute
    from thm3.semantics.evaluate import PYTHON, evaluate
    from thm3.synth import semiring
    got = composition(loop, setting, combine)
    if got is None:
        return None
    step, reading, offset = got
    s, block, types = step.semiring, step.block, step.types
    init = dict(zip(loop.field_names, initial_state(loop)))
    # (I): E(init) is the identity, read off the constants; D(init) is the zero
    for (f, g), e in reading.items():
        value = _at(e, init)
        if value is None or not semiring.is_value(value, s.one if f == g else s.zero):
            return Outcome("unproved", f"E(init) is not the identity at ({f}, {g})")
    at_init = {f"b.{f.name}": e.arg for f, e in zip(loop.fields, initial_state(loop))}
    for f, d in offset.items():
        if d is not None and not _is_zero(s, _value_at(d, at_init, evaluate, PYTHON)):
            return Outcome("unproved", f"D(init) is not the zero at {f}")
    at_b = {f"b.{f}": var(f"acc.{f}", types[f]) for f in loop.field_names}
    zero = {f: semiring.zero_of(s, types[f]) for f in block}
    lhs_terms = tuple(reading[(f, g)] for f in block for g in block) + \
        tuple(zero[f] if offset[f] is None else offset[f] for f in block)
    rows = [f for f in block for _ in block] + list(block)     # the row of each term
    if s.modulus is not None:
        lhs_terms = tuple(Expr(Op.MOD, e.type, (e,), s.modulus) if f in step.reduced else e
                          for f, e in zip(rows, lhs_terms))
    lhs = Fn(tuple((f"b.{f.name}", f.type) for f in loop.fields), lhs_terms)
    # A(x) (x) E(b) and A(x) (x) D(b) (+) c(x): in the step's own inputs (acc.* for b's
    # fields, the elements)
    columns = [(g, {k: reading[(k, g)] for k in block}) for g in block]
    columns.append((None, {k: zero[k] if offset[k] is None else offset[k] for k in block}))
    rhs_terms: list = [[] for _ in columns]
    for i, (g, col) in enumerate(columns):
        for f in block:
            out = semiring.zero_of(s, types[f])
            for k in block:
                coeff = step.matrix[f].get(k)
                if coeff is not None:
                    (entry,) = substitute([col[k]], at_b)
                    out = semiring.oplus(s, out, semiring.otimes(s, coeff, entry))
            if g is None and step.offset.get(f) is not None:
                out = semiring.oplus(s, out, step.offset[f])
            if s.modulus is not None and f in step.reduced:
                out = Expr(Op.MOD, out.type, (out,), s.modulus)
            rhs_terms[i].append(out)
    # entry (f, g) of E: row f of column g; the offset last, as in lhs
    ordered = [rhs_terms[j][i] for i in range(len(block)) for j in range(len(block))] + rhs_terms[-1]
    rhs = Fn(loop.left.inputs, tuple(ordered))

    def build(table, env):
        b, x, p = state_of(env, "b", loop), element_of(env, "x", loop), params_of(env, loop)
        after = apply_fn(table, loop.left, b + x, p)
        return list(zip(apply_fn(table, lhs, after, p), apply_fn(table, rhs, b + x, p)))

    out = Law(setting, ["b"], ["x"], deadline, lhs.outputs + rhs.outputs + loop.left.outputs).run(
        build, check_equal_pairs)
    if out.proved:
        out.detail = HOW if s.modulus is None else HOW_MOD.format(m=s.modulus)
    else:
        out.detail = f"E(left(b, x)) == A(x) (x) E(b) and D(left(b, x)) == A(x) (x) D(b) (+) c(x) not shown " \
                     f"({out.detail})"
    return out


def _value_at(e, env: dict, evaluate, table):
    try:
        (v,) = evaluate([e], env, table)
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None
    return v


def _is_zero(s, v) -> bool:
    if v is None:
        return False
    if isinstance(s.zero, bool):
        return isinstance(v, (bool, np.bool_)) and bool(v) is s.zero
    return float(v) == float(s.zero)


def _at(e, init: dict):
    """The constant that `e` (a constant, a field of b, or a linear reading: a sum of
    products of b's fields and the loop parameters) is at the initial state, for every
    value of the parameters; None where it is no constant there."""
    if e.op is Op.CONST:
        return e
    if e.op is Op.VAR and e.arg.startswith("b.") and e.arg[2:] in init:
        return init[e.arg[2:]]
    import sympy as sp
    from thm3.ir import Type, const, free_vars
    from thm3.semantics.evaluate import evaluate
    from thm3.semantics.sympy_table import SYMPY, sympy_const
    env = {}
    for name in free_vars([e]):
        if name.startswith("b."):
            v = init.get(name[2:])
            if v is None or v.op is not Op.CONST:
                return None
            env[name] = sympy_const(v.arg, v.type)
        else:
            env[name] = sp.Symbol(name.replace(".", "__"))
    value = evaluate([e], env, SYMPY)[0]
    if value is None:
        return None
    value = sp.expand(value)
    if not value.is_number or not value.is_finite:
        return None
    return const(int(value), e.type) if value.is_integer and e.type is Type.INT else const(float(value), e.type)


__all__ = ["HOW", "HOW_MOD", "composition", "prove_composed"]
