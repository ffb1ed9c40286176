"""The step law field by field, each split on the control fields of a that its selections read.

The step law combine(a, left(b, x)) == left(combine(a, b), x) is one equation per field,
and it holds where each holds.  A composed combine (`thm3.synth.copies`, or the finite
route's table) selects, in each field, on a's image of one reachable state only: a's
copies from that state.  Split over the reachable control tuples of all of a's fields
(`thm3.prove.reachable`), every field's equation is asked on every tuple, and the step of
b, taken whole, branches on every copy's control at once: a four-mode lexer's lift (88
lifted states) is 88 cases of about 300 paths each.  Field by field, the split is over
the distinct values of the fields that field's selections read (4 for a lexer's image of
one mode), the field's term is simplified on each, and only the fields of b it then reads
are stepped: a few paths a case.

Sound: on a case the fields split are constants that some reachable tuple has, every
state the invariants admit projects onto one of the cases, and the invariants stay on
the path as hypotheses; a field of b or of combine(a, b) left out is one the terms of the
field's equation do not read."""
from __future__ import annotations

import time

from thm3.ir import Fn, Op, const, free_vars, substitute, walk
from thm3.ir.simplify import simplify
from thm3.prove.reachable import widest

# where a's reachable control has at least this many tuples, the step law is asked field by
# field first (below it the whole split is a few cases, and proved as before)
FIELDWISE_FROM = 24


def applies(setting, combine: Fn) -> bool:
    """Whether the step law is asked field by field first: a combine that selects on a's
    control, of which a proved invariant lists FIELDWISE_FROM tuples or more."""
    tuples = widest(setting.invariants)
    if not tuples or len(tuples) < FIELDWISE_FROM:
        return False
    names = {f"a.{g}" for g in tuples[0]}
    conds = [e.src[0] for e in walk(list(combine.outputs)) if e.op is Op.WHERE]
    return any(v.op is Op.VAR and v.arg in names for v in walk(conds))


def prove_step_law_by_fields(setting, combine: Fn, deadline: float):
    """The step law's `Outcome`: proved where every field's equation is proved on every
    case of its split; else the first field's outcome that is not (its detail naming the
    field).  None where the invariants list no reachable tuples."""
    from thm3.prove.laws import Law, Outcome, apply_fn, check_equal_pairs, element_of, params_of, state_of
    loop = setting.loop
    left = loop.left
    fields = loop.fields
    tuples = widest(setting.invariants)
    if not tuples:
        return None
    types = {f.name: f.type for f in fields}
    t0 = time.monotonic()
    paths = 0
    cases = 0
    for i, out in enumerate(combine.outputs):
        conds = [e.src[0] for e in walk([out]) if e.op is Op.WHERE]
        read = sorted({v.arg[2:] for v in walk(conds) if v.op is Op.VAR and v.arg.startswith("a.")} & set(tuples[0]))
        split = list({tuple((g, t[g]) for g in read): None for t in tuples})
        for case in split:
            if time.monotonic() > deadline:
                return Outcome("timeout", f"field {fields[i].name}: the time ran out", time.monotonic() - t0, paths)
            term = simplify(substitute([out], {f"a.{g}": const(v, types[g]) for g, v in case})[0])
            need_b = [j for j, f in enumerate(fields) if f"b.{f.name}" in free_vars([term])]
            need_c = [j for j, f in enumerate(fields) if f"acc.{f.name}" in free_vars([left.outputs[i]])]
            step_b = Fn(left.inputs, tuple(left.outputs[j] for j in need_b))
            term_fn = Fn(combine.inputs, (term,))
            part = Fn(combine.inputs, tuple(combine.outputs[j] for j in need_c))
            step_i = Fn(left.inputs, (left.outputs[i],))

            def build(table, env, need_b=need_b, need_c=need_c, step_b=step_b, term_fn=term_fn, part=part,
                      step_i=step_i):
                a, b = state_of(env, "a", loop), state_of(env, "b", loop)
                x, p = element_of(env, "x", loop), params_of(env, loop)
                stepped = list(b)
                for j, v in zip(need_b, apply_fn(table, step_b, b + x, p)):
                    stepped[j] = v
                lhs = apply_fn(table, term_fn, a + stepped, p)
                combined = list(a)          # the fields step_i does not read keep a's (unread)
                for j, v in zip(need_c, apply_fn(table, part, a + b, p)):
                    combined[j] = v
                rhs = apply_fn(table, step_i, combined + x, p)
                return list(zip(lhs, rhs))

            law = Law(setting, ["a", "b"], ["x"], deadline,
                      (term,) + part.outputs + step_b.outputs + (left.outputs[i],), split=("a",))
            law.control = [dict(case)] if case else None
            law.split_control = bool(case)
            if any(e.op is Op.MOD for e in walk([term, left.outputs[i]])):
                # a remainder of a product (a hash's slope times a's data): Z3 on the
                # If-terms spends its whole limit and decides nothing; path by path the
                # remainders' arguments are compared as polynomials (`thm3.prove.modular`)
                law.lazy = False
            got = law._run_modes(build, check_equal_pairs)
            paths += got.paths
            cases += 1
            if not got.proved:
                where = ", ".join(f"a.{g} = {v}" for g, v in case) or "every state"
                got.detail = f"field {fields[i].name} where {where}: {got.detail}".rstrip(": ")
                got.seconds = time.monotonic() - t0
                got.paths = paths
                return got
    return Outcome("proved", f"field by field, each split on the control of a its selections read "
                             f"({cases} cases of {len(tuples)} reachable tuples' projections)",
                   time.monotonic() - t0, paths)
