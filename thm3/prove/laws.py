"""The laws over all states, each a list of equations between symbolic operands that
`thm3.prove.paths` runs on every case and feasible path: a candidate combine's identity,
associativity, commutativity, step and homomorphism laws, Bird's law for `left` and
`right`, which invariant atoms one step preserves, and the stability laws (no exp
argument above 0, no NaN).  A law is "proved" only when every path was discharged;
otherwise the caller tests it."""
from __future__ import annotations

import time
from dataclasses import replace

from thm3.errors import SolverTimeout
from thm3.prove.equal import check_equal_pairs, sympy_zero
from thm3.prove.paths import SPLIT_MAX_SECONDS, Law, Outcome, Setting, emptiness_group, order_only
from thm3.prove.reachable import finite_fields, selects_on_finite_first, selects_on_first, widest
from thm3.semantics.evaluate import evaluate
from thm3.ir import WITH_ARG, Expr, Fn, Loop, Op, initial_state, walk
from thm3.semantics.symbolic import Inf, SymbolicTable, constant, isnan


# -- building the laws ----------------------------------------------------------

def state_of(env, prefix, loop):
    return [env[f"{prefix}.{f.name}"] for f in loop.fields]


def initial(loop: Loop) -> list:
    """The initial state as symbolic values."""
    return [constant(e.arg, e.type) for e in initial_state(loop)]


def apply_fn(table, fn: Fn, args: list, params: dict):
    if isinstance(table, SymbolicTable) and table.ends is not None:
        args = [table.extended(a) for a in args]
    env = {name: a for (name, _), a in zip(fn.inputs, args)}
    env.update(params)
    if isinstance(table, SymbolicTable) and not table.lazy:
        return guarded(fn.outputs, env, table)
    return evaluate(fn.outputs, env, table)


def guarded(exprs, env: dict, table: SymbolicTable) -> list:
    """The values of `exprs` on a path of the explorer, each selection's condition decided
    before its branches and only the branch taken evaluated: the path splits on the
    comparisons the terms perform, in their order, never on those of a branch not taken
    (an eager evaluation decides them all, and the paths multiply with every nested
    selection of a combine that folds several fields, as the k smallest's do)."""
    memo: dict[int, tuple] = {}

    def go(e):
        got = memo.get(id(e))
        if got is not None and got[0] is e:
            return got[1]
        op = e.op
        if op is Op.CONST:
            v = table[Op.CONST](e.arg, e.type)
        elif op is Op.VAR:
            v = env[e.arg]
        elif op is Op.WHERE:
            c = go(e.src[0])
            if not isinstance(c, bool):
                c = table.ex.decide(c)
            v = go(e.src[1] if c else e.src[2])
        elif op in WITH_ARG:
            v = table[op](go(e.src[0]), e.arg)
        else:
            v = table[op](*[go(x) for x in e.src])
        memo[id(e)] = (e, v)
        return v

    try:
        return [go(e) for e in exprs]
    except RecursionError:
        # the path has decided part of the terms: no other evaluation can take it over
        raise SolverTimeout("the terms are too deep for a guarded evaluation") from None


def element_of(env, prefix, loop):
    return [env[f"{prefix}.{d.name}"] for d in loop.elements]


def params_of(env, loop):
    return {d.name: env[d.name] for d in loop.params}


def prove_identity(setting: Setting, combine: Fn, deadline: float, sides: str = "both") -> Outcome:
    """combine(init, a) == a and combine(a, init) == a for states a satisfying the
    invariants; `sides` "right": only the second (with the step law it gives the first
    on reachable states, `prove_step_law`)."""
    loop = setting.loop

    def build(table, env):
        a, p = state_of(env, "a", loop), params_of(env, loop)
        right_id = apply_fn(table, combine, a + initial(loop), p)
        if sides == "right":
            return list(zip(right_id, a))
        left_id = apply_fn(table, combine, initial(loop) + a, p)
        return list(zip(left_id, a)) + list(zip(right_id, a))

    return Law(setting, ["a"], [], deadline, combine.outputs,
               split=_split(setting, combine, ["a"])).run(build, check_equal_pairs)


def _split(setting: Setting, combine: Fn, operands: list[str]) -> tuple:
    """The operands to split on the reachable control (`thm3.prove.reachable`): those given
    where the combine selects on its first operand's control fields, else none."""
    return tuple(operands) if selects_on_first(combine, widest(setting.invariants)) else ()


def composes_on_control(setting: Setting, combine: Fn) -> bool:
    """Whether `combine` selects on its first operand's control fields, of which a proved
    invariant lists the reachable tuples: the laws are then split on them."""
    return bool(_split(setting, combine, ["a"]))


def composes_on_finite(setting: Setting, combine: Fn) -> bool:
    """Whether `combine` selects on fields of its first operand that take finitely many
    values (Bool, or Int between constant bounds), where no invariant lists the reachable
    tuples (the box of a `% 2` phase is reached whole): a composed table all the same."""
    return selects_on_finite_first(combine, finite_fields(setting.loop, setting.invariants))


def prove_associativity(setting: Setting, combine: Fn, deadline: float) -> Outcome:
    loop = setting.loop

    def build(table, env):
        a, b, c = (state_of(env, x, loop) for x in "abc")
        p = params_of(env, loop)
        ab = apply_fn(table, combine, a + b, p)
        lhs = apply_fn(table, combine, ab + c, p)
        bc = apply_fn(table, combine, b + c, p)
        rhs = apply_fn(table, combine, a + bc, p)
        return list(zip(lhs, rhs))

    return Law(setting, ["a", "b", "c"], [], deadline, combine.outputs,
               split=_split(setting, combine, ["a", "b"])).run(build, check_equal_pairs)


def prove_commutativity(setting: Setting, combine: Fn, deadline: float) -> Outcome:
    """combine(a, b) == combine(b, a) for states a, b satisfying the invariants: what a
    reduction that reorders its partial states (Triton's `tl.reduce`, an atomic merge)
    needs besides associativity."""
    loop = setting.loop

    def build(table, env):
        a, b, p = state_of(env, "a", loop), state_of(env, "b", loop), params_of(env, loop)
        return list(zip(apply_fn(table, combine, a + b, p), apply_fn(table, combine, b + a, p)))

    return Law(setting, ["a", "b"], [], deadline, combine.outputs,
               split=_split(setting, combine, ["a", "b"])).run(build, check_equal_pairs)


def prove_step_law(setting: Setting, combine: Fn, deadline: float) -> Outcome:
    """combine(a, left(b, x)) == left(combine(a, b), x) for states a, b satisfying the
    invariants and any element x: one `left` step on the right operand commutes with
    the combine.  With the right identity combine(a, init) == a it gives, by induction
    on a list ys, combine(a, h(ys)) == foldl(left, a, ys) for every state a; so on
    reachable states combine(h(xs), h(ys)) == h(xs + ys), from which associativity,
    the left identity and the homomorphism law follow (`thm3.prove.combine`).  Two
    state operands and an element, where associativity quantifies over three states:
    the law that a combine of a big state (four smallest, a top-3 with indices) can be
    proved by."""
    loop = setting.loop

    def build(table, env):
        a, b, x, p = state_of(env, "a", loop), state_of(env, "b", loop), element_of(env, "x", loop), params_of(env, loop)
        lhs = apply_fn(table, combine, a + apply_fn(table, loop.left, b + x, p), p)
        rhs = apply_fn(table, loop.left, apply_fn(table, combine, a + b, p) + x, p)
        return list(zip(lhs, rhs))

    return Law(setting, ["a", "b"], ["x"], deadline, combine.outputs + loop.left.outputs,
               split=_split(setting, combine, ["a"])).run(build, check_equal_pairs)


def prove_homomorphism(setting: Setting, combine: Fn, deadline: float) -> Outcome:
    """combine(s, left(init, x)) == left(s, x) on reachable s."""
    loop = setting.loop

    def build(table, env):
        s, x, p = state_of(env, "s", loop), element_of(env, "x", loop), params_of(env, loop)
        single = apply_fn(table, loop.left, initial(loop) + x, p)
        lhs = apply_fn(table, combine, s + single, p)
        rhs = apply_fn(table, loop.left, s + x, p)
        return list(zip(lhs, rhs))

    return Law(setting, ["s"], ["x"], deadline, combine.outputs + loop.left.outputs,
               split=_split(setting, combine, ["s"])).run(build, check_equal_pairs)


def prove_bird(setting: Setting, deadline: float) -> Outcome:
    """left and right compute the same function: they agree on [x], and
    right(x, left(s, y)) == left(right(x, s), y) on reachable s."""
    from thm3.prove.forms import law_by_forms
    by_forms = law_by_forms(setting, None, "bird", deadline)
    if by_forms is not None:
        return by_forms
    loop = setting.loop
    right = loop.right

    def build(table, env):
        s, x, y, p = (state_of(env, "s", loop), element_of(env, "x", loop), element_of(env, "y", loop),
                      params_of(env, loop))
        base_l = apply_fn(table, loop.left, initial(loop) + x, p)
        base_r = apply_fn(table, right, initial(loop) + x, p)
        lhs = apply_fn(table, right, apply_fn(table, loop.left, s + y, p) + x, p)
        rhs = apply_fn(table, loop.left, apply_fn(table, right, s + x, p) + y, p)
        return list(zip(base_l, base_r)) + list(zip(lhs, rhs))

    return Law(setting, ["s"], ["x", "y"], deadline,
               loop.left.outputs + right.outputs).run(build, check_equal_pairs)


# right's Fn takes its inputs in the order (fields, elements, params) like left's, so
# `apply_fn` above passes the state first for both.


def preserved_atoms(setting: Setting, atoms: list[Expr], deadline: float) -> tuple[list[bool], bool]:
    """Which atoms hold after one `left` step from any state satisfying all
    current invariants (the setting's) and any element.  Returns (flags, timed_out)."""
    loop = setting.loop
    alive = [True] * len(atoms)

    def build(table, env):
        s, x, p = state_of(env, "s", loop), element_of(env, "x", loop), params_of(env, loop)
        new = apply_fn(table, loop.left, s + x, p)
        aenv = {f"acc.{f.name}": v for f, v in zip(loop.fields, new)}
        aenv.update(p)
        return evaluate(atoms, aenv, table)

    def check(ex, values, syms):
        for i, v in enumerate(values):
            if alive[i] and not (v is True or (not isinstance(v, bool) and ex.valid(v) is True)):
                alive[i] = False
        return True

    law = Law(setting, ["s"], ["x"], deadline, tuple(loop.left.outputs) + tuple(atoms))
    out = law.run(build, check)
    if not all(alive) and law.mode.ordered and out.status != "timeout" and time.monotonic() < deadline:
        # -inf and +inf as end symbols are sound but weaker: an arithmetic term (s + x from
        # a finite s) may lie past them in Z3's models, so `s > -inf` looks unpreserved.
        # Each mode proves only what holds, so an atom either mode keeps is preserved.
        first = list(alive)
        alive[:] = [True] * len(atoms)
        out = law._run_modes(build, check, replace(law.mode, ordered=False))
        alive[:] = [a or b for a, b in zip(first, alive)]
    return alive, out.status == "timeout"


# -- stability --------------------------------------------------------------------

def exp_arguments_nonpositive(setting: Setting, fn: Fn, operands: list[str], elements: list[str],
                              args_of, deadline: float, args: tuple | None = None) -> Outcome:
    """Every exp/exp2 argument in `fn` is <= 0 (or -inf) on every path; `args`, where
    given, are the terms to judge instead (each argument where its path is taken, else
    a value <= 0: `thm3.analysis.stability.guarded`)."""
    exps = [e for e in walk(fn.outputs) if e.op in (Op.EXP, Op.EXP2)]
    if not exps:
        return Outcome("skipped", "no exp")
    loop = setting.loop
    args = tuple(e.src[0] for e in exps) if args is None else tuple(args)
    probe = Fn(fn.inputs, args)

    def build(table, env):
        return apply_fn(table, probe, args_of(env), params_of(env, loop))

    def check(ex, values, syms):
        for v in values:
            if isnan(v):
                continue      # a guarded branch's argument; the select does not take it
            if isinstance(v, Inf):
                if v.sign > 0:
                    return False
                continue
            if ex.valid(v.z3 <= 0) is not True:
                return False
        return True

    return Law(setting, operands, elements, deadline, fn.outputs).run(build, check)


def no_nan_outputs(setting: Setting, fn: Fn, operands: list[str], elements: list[str],
                   args_of, deadline: float, cause: str | None = None) -> Outcome:
    """`fn`'s outputs are never NaN on any path (of the given cause, if one is named)."""
    loop = setting.loop

    def build(table, env):
        return apply_fn(table, fn, args_of(env), params_of(env, loop))

    def check(ex, values, syms):
        return not any(isnan(v) and (cause is None or v.cause == cause) for v in values)

    return Law(setting, operands, elements, deadline, fn.outputs).run(build, check)


def identity_nan_free(setting: Setting, combine: Fn, deadline: float) -> Outcome:
    """combine(init, a), combine(a, init) and combine(init, init) make no NaN from a
    state that has none."""
    loop = setting.loop

    def build(table, env):
        a, p = state_of(env, "a", loop), params_of(env, loop)
        return (apply_fn(table, combine, initial(loop) + a, p) + apply_fn(table, combine, a + initial(loop), p)
                + apply_fn(table, combine, initial(loop) + initial(loop), p))

    def check(ex, values, syms):
        return not any(isnan(v) for v in values)

    return Law(setting, ["a"], [], deadline, combine.outputs).run(build, check)

# the names stated in `thm3.prove.paths` and `thm3.prove.equal` that the laws' users read here too
__all__ = ["SPLIT_MAX_SECONDS", "Law", "Outcome", "Setting", "apply_fn", "check_equal_pairs", "composes_on_control",
           "composes_on_finite", "element_of", "emptiness_group", "exp_arguments_nonpositive", "guarded",
           "identity_nan_free", "initial", "no_nan_outputs", "order_only", "params_of", "preserved_atoms",
           "prove_associativity", "prove_bird", "prove_commutativity", "prove_homomorphism", "prove_identity",
           "prove_step_law", "state_of", "sympy_zero"]
