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
from dataclasses import replace

from thm3.ir import Fn, Op, const, free_vars, substitute, walk
from thm3.ir.simplify import simplify
from thm3.prove.laws import Law, Outcome, apply_fn, check_equal_pairs, element_of, params_of, state_of
from thm3.prove.reachable import widest

# where a's reachable control has at least this many tuples, the step law may be asked field by
# field first (below it the whole split is a few cases, and proved as before)
FIELDWISE_FROM = 24


def applies(setting, combine: Fn) -> bool:
    """Whether the step law is asked field by field first: a combine that selects on a's
    control, of which a proved invariant lists FIELDWISE_FROM tuples or more, where the
    fields' splits have at most half as many cases in all as the whole split (a lexer's
    lift: 16 against 88; a debounce's, whose fields read a's level and streak from each of
    ten states: 100 against 81, and the whole split goes first)."""
    tuples = widest(setting.invariants)
    if not tuples or len(tuples) < FIELDWISE_FROM:
        return False
    names = {f"a.{g}" for g in tuples[0]}
    conds = [e.src[0] for e in walk(list(combine.outputs)) if e.op is Op.WHERE]
    if not any(v.op is Op.VAR and v.arg in names for v in walk(conds)):
        return False
    return 2 * sum(len(_split(tuples, read)) for read in _groups(combine, tuples)) <= len(tuples)


def _groups(combine: Fn, tuples: list[dict]) -> dict[tuple, list[int]]:
    """The combine's fields by the control fields of a that their selections read."""
    groups: dict[tuple, list[int]] = {}
    for i, out in enumerate(combine.outputs):
        conds = [e.src[0] for e in walk([out]) if e.op is Op.WHERE]
        read = tuple(sorted({v.arg[2:] for v in walk(conds) if v.op is Op.VAR and v.arg.startswith("a.")}
                            & set(tuples[0])))
        groups.setdefault(read, []).append(i)
    return groups


def _split(tuples: list[dict], read: tuple) -> list[tuple]:
    """The distinct values of the fields `read` among the reachable tuples."""
    return list({tuple((g, t[g]) for g in read): None for t in tuples})


def prove_step_law_by_fields(setting, combine: Fn, deadline: float):
    """The step law's `Outcome`: proved where every field's equation is proved on every
    case of its split; else the first outcome that is not (its detail naming the fields).
    The fields whose selections read the same control fields of a (a's image of one
    state) are asked together, one law over the cases of their split.  None where the
    invariants list no reachable tuples."""
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
    for read, idx in _groups(combine, tuples).items():
        split = _split(tuples, read)
        plans = {case: _plan(loop, combine, idx, {f"a.{g}": const(v, types[g]) for g, v in case}) for case in split}
        terms = tuple(e for plan in plans.values() for fn in plan if isinstance(fn, Fn) for e in fn.outputs) + \
            tuple(left.outputs[i] for i in idx)
        law = _ByCase(setting, ["a", "b"], ["x"], deadline, terms, split=("a",))
        # a remainder of a product (a hash's slope times a's data): Z3 on the If-terms spends
        # its whole limit and decides nothing; path by path the remainders' arguments are
        # compared as polynomials (`thm3.prove.modular`)
        mode = replace(law.mode, control=[dict(case) for case in split] if read else None, split_control=bool(read),
                       lazy=law.mode.lazy and not any(e.op is Op.MOD for e in walk(list(terms))))

        def build(table, env, law=law, plans=plans, idx=idx):
            case = tuple(sorted(law.current[0].items())) if law.current else ()
            need_b, step_b, terms_fn, need_c, part, step_i = plans[case]
            a, b = state_of(env, "a", loop), state_of(env, "b", loop)
            x, p = element_of(env, "x", loop), params_of(env, loop)
            stepped = list(b)
            for j, v in zip(need_b, apply_fn(table, step_b, b + x, p)):
                stepped[j] = v
            lhs = apply_fn(table, terms_fn, a + stepped, p)
            combined = list(a)              # the fields the steps do not read keep a's (unread)
            for j, v in zip(need_c, apply_fn(table, part, a + b, p)):
                combined[j] = v
            rhs = apply_fn(table, step_i, combined + x, p)
            return list(zip(lhs, rhs))

        if time.monotonic() > deadline:
            return Outcome("timeout", "the time ran out", time.monotonic() - t0, paths)
        got = law._run_modes(build, check_equal_pairs, mode)
        paths += got.paths
        cases += len(split)
        if not got.proved:
            names = ", ".join(fields[i].name for i in idx)
            got.detail = f"fields {names} split on {', '.join('a.' + g for g in read) or 'nothing'}: {got.detail}"
            got.seconds = time.monotonic() - t0
            got.paths = paths
            return got
    return Outcome("proved", f"field by field, each split on the control of a its selections read "
                             f"({cases} cases of {len(tuples)} reachable tuples' projections)",
                   time.monotonic() - t0, paths)


def _plan(loop, combine: Fn, idx: list[int], consts: dict):
    """For the fields `idx` on one case (a's split fields the constants `consts`): the fields
    of b their simplified terms read and the step of those, the terms, the fields of
    combine(a, b) their steps read and those outputs, and their steps."""
    left, fields = loop.left, loop.fields
    terms = [simplify(t) for t in substitute([combine.outputs[i] for i in idx], consts)]
    need_b = [j for j, f in enumerate(fields) if f"b.{f.name}" in free_vars(terms)]
    read = free_vars([left.outputs[i] for i in idx])
    need_c = [j for j, f in enumerate(fields) if f"acc.{f.name}" in read]
    return (need_b, Fn(left.inputs, tuple(left.outputs[j] for j in need_b)), Fn(combine.inputs, tuple(terms)),
            need_c, Fn(combine.inputs, tuple(combine.outputs[j] for j in need_c)),
            Fn(left.inputs, tuple(left.outputs[i] for i in idx)))


class _ByCase(Law):
    """A law that knows, while it builds a case's terms, which case of its split it is on."""
    current = None

    def _cases(self, mode):
        for item in super()._cases(mode):
            self.current = item[2]
            yield item
