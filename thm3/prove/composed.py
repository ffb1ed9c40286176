"""The laws of a combine that composes the step's maps over a semiring (the route
"semiring" on a homogeneous step), proved by one lemma over one state in place of
associativity over three.

Theorem.  Let `left` be linear over a semiring K on the whole state, left(s, x) =
A(x) (x) s (no offset), and let the combine be c(a, b) = E(b) (x) a, where E(b) is a
matrix of constants and fields of b.  Let S be the states that satisfy the inductive
invariants (every reachable state is in S).  If
  (I) E(init) is K's identity matrix, and
  (L) E(left(b, x)) == A(x) (x) E(b) entry by entry, for b in S and every element x,
then c(h(xs), h(ys)) == h(xs + ys) for all lists xs, ys.
Proof.  Let M(ys) = A(y_n) (x) ... (x) A(y_1), the identity for ys = []; then h(ys) =
M(ys) (x) init, and h(xs + ys) = M(ys) (x) h(xs) (the product over K is associative).  By
induction on ys, E(h(ys)) == M(ys): (I) is the base, and (L) with b = h(ys), which is
in S, the step.  So c(h(xs), h(ys)) = E(h(ys)) (x) h(xs) = M(ys) (x) h(xs) = h(xs + ys).
Hence on reachable states the combine is associative, init is its identity (ys = [] and
xs = []), and it is the homomorphism's combine.

K is (+, *) over finite values, (max, +) on values below +inf, (min, +) on values above
-inf, or (or, and): on these the semiring laws hold exactly, so the matrix product is
associative (with +inf in (max, +), -inf + inf is NaN and they do not).  (L) quantifies
over one state and one element: for a 3x3 (max, +) matrix state it is a few hundred
small problems, where associativity over three states split on every field's infinite
case is 2**18 of them (Blelloch 1990, "Prefix sums and their applications": the matrix
product as the combine of a linear recurrence)."""
from __future__ import annotations

import math

from thm3.ir import Fn, Loop, Op, initial_state, var, walk
from thm3.prove.laws import (Law, Outcome, Setting, apply_fn, check_equal_pairs, element_of, params_of,
                             state_of)

HOW = ("from E(init) == I and E(left(b, x)) == A(x) (x) E(b) on invariant states, with E(b) the "
       "composed map that b's fields hold (the matrix product over the semiring is associative)")


def composition(loop: Loop, setting: Setting, combine: Fn):
    """(step, reading) where `combine` is the composition that the route "semiring" builds
    for a step linear on the whole state over a semiring whose laws hold exactly on the
    state's values (the same terms), else None.  The cheap tests come before the sampling
    of the composed map."""
    from thm3.errors import SolverTimeout
    from thm3.ir import same
    from thm3.ir.normalize import normalize_loop
    from thm3.synth import semiring
    work = normalize_loop(loop)
    step = semiring.whole_linear(work)
    if step is None or step.semiring.modulus is not None or not _exact_on(setting, step):
        return None
    try:
        fn, reading = semiring.composition(work, step)
    except (semiring.Failed, SolverTimeout):
        return None
    if len(fn.outputs) != len(combine.outputs) or not all(same(a, b) for a, b in zip(fn.outputs, combine.outputs)):
        return None
    return step, reading


def _exact_on(setting: Setting, step) -> bool:
    """Whether the semiring's laws hold on every value the fields and the step's
    coefficients may take: no infinity that breaks distributivity."""
    s = step.semiring
    bad = {Op.ADD: (math.inf, -math.inf), Op.MAX: (math.inf,), Op.MIN: (-math.inf,), Op.OR: ()}[s.plus]
    if not bad:
        return True
    opts = setting.inf_options()           # per field: "fin", and -1 / 1 for -inf / +inf
    for f in setting.loop.fields:
        if any(o in (-1, 1) and o * math.inf in bad for o in opts.get(f.name, ())):
            return False
    coeffs = [c for row in step.matrix.values() for c in row.values()]
    return not any(e.op is Op.CONST and isinstance(e.arg, float) and e.arg in bad for e in walk(coeffs))


def prove_composed(loop: Loop, setting: Setting, combine: Fn, deadline: float) -> Outcome | None:
    """(I) and (L) for a combine that `composition` recognises: "proved" where both hold,
    else the lemma that failed; None where the theorem does not apply."""
    from thm3.synth import semiring
    got = composition(loop, setting, combine)
    if got is None:
        return None
    step, reading = got
    s, block = step.semiring, step.block
    init = dict(zip(loop.field_names, initial_state(loop)))
    # (I): E(init) is the identity, read off the constants
    for (f, g), e in reading.items():
        value = _at(e, init)
        if value is None or not semiring._is_value(value, s.one if f == g else s.zero):
            return Outcome("unproved", f"E(init) is not the identity at ({f}, {g})")
    types = step.types
    at_b = {f: var(f"acc.{f}", types[f]) for f in loop.field_names}
    lhs = Fn(tuple((f"b.{f.name}", f.type) for f in loop.fields),
             tuple(reading[(f, g)] for f in block for g in block))
    # A(x) (x) E(b): in the step's own inputs (acc.* for b's fields, the elements)
    rhs_terms = []
    for f in block:
        for g in block:
            out = semiring._zero(s, types[f])
            for k in block:
                coeff = step.matrix[f].get(k)
                if coeff is None:
                    continue
                entry = _rename(reading[(k, g)], at_b)
                out = semiring._plus(s, out, semiring._times(s, coeff, entry))
            rhs_terms.append(out)
    rhs = Fn(loop.left.inputs, tuple(rhs_terms))

    def build(table, env):
        b, x, p = state_of(env, "b", loop), element_of(env, "x", loop), params_of(env, loop)
        after = apply_fn(table, loop.left, b + x, p)
        return list(zip(apply_fn(table, lhs, after, p), apply_fn(table, rhs, b + x, p)))

    out = Law(setting, ["b"], ["x"], deadline, lhs.outputs + rhs.outputs + loop.left.outputs).run(
        build, check_equal_pairs)
    if out.proved:
        out.detail = HOW
    else:
        out.detail = f"E(left(b, x)) == A(x) (x) E(b) not shown ({out.detail})"
    return out


def _at(e, init: dict):
    """The constant that `e` (a constant or a field of b) is at the initial state."""
    if e.op is Op.CONST:
        return e
    if e.op is Op.VAR and e.arg.startswith("b.") and e.arg[2:] in init:
        return init[e.arg[2:]]
    return None


def _rename(e, at_b: dict):
    if e.op is Op.VAR and e.arg.startswith("b."):
        return at_b[e.arg[2:]]
    if e.op is Op.CONST:
        return e
    raise ValueError(f"a reading that is neither a constant nor a field of b: {e}")


__all__ = ["HOW", "composition", "prove_composed"]
