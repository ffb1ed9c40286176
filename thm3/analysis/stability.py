"""Numerical stability of the combine and the left step as emitted: every exp argument
<= 0 on reachable states, no division by a value that can be 0 where its quotient is
used, and no NaN from combining with the identity.  Proved, else checked on samples:
"failed" with the value that breaks it, or "tested".

An exp argument or a denominator is judged on the path where it is evaluated only: under
the conditions of the selections (`where`, an if/else) that lead to it, as the
hypothesis of the proof and as a filter on the sampled states, so that an if/else, a
`where` and a `max` spelling of one step get one verdict."""
from __future__ import annotations

import numpy as np

from thm3.prove import laws as prove
from thm3.ir import Expr, Fn, Loop, Op, Type, const, walk
from thm3.prove.laws import Setting
from thm3.semantics.evaluate import NUMPY, evaluate, quiet
from thm3.semantics.samples import Domain, make_triples, stack_elements


def stability(loop: Loop, combine: Fn | None, setting: Setting, deadline: float) -> tuple[dict, dict]:
    """The stability verdicts {"exp_overflow", "division", "identity_nan"} and a note for each."""
    verdicts: dict = {}
    notes: dict = {}
    fns = [("left", loop.left, ["s"], ["x"])]
    if combine is not None:
        fns.append(("combine", combine, ["a", "b"], []))
    if loop.result is not None:
        fns.append(("result", loop.result, ["s"], []))

    def args_for(fn_name, operands, elements):
        def args_of(env):
            vals = []
            for p in operands:
                vals += [env[f"{p}.{f.name}"] for f in loop.fields]
            for p in elements:
                vals += [env[f"{p}.{d.name}"] for d in loop.elements]
            return vals
        return args_of

    exp_status, exp_notes = [], []
    div_status, div_notes = [], []
    # `result` runs once, on the final state: a division by zero there (the mean of the
    # empty list) is reported apart, as a note, not as the combine's or left's "division".
    res_status, res_notes = [], []
    probes: dict = {}

    def settle(out, name, fn, proved_note, find_bad, sampled_note, statuses, notes):
        """A proof's outcome, or where none was reached, what the sampled states say:
        "failed" with the breaking value, else "tested"."""
        if out.proved:
            statuses.append("proved")
            notes.append(f"{name}: {proved_note}")
            return
        if not probes:
            probes.update(_numeric_inputs(loop, fns))      # sampled only when a proof is missing
        bad = find_bad(fn, probes[name])
        statuses.append("failed" if bad else "tested")
        notes.append(f"{name}: " + (bad or f"not proved ({out.detail}); {sampled_note}"))

    for name, fn, ops, els in fns:
        out = prove.exp_arguments_nonpositive(setting, fn, ops, els, args_for(name, ops, els), deadline,
                                              args=exp_arguments(fn))
        if out.status != "skipped":
            settle(out, name, fn, "every exp argument <= 0", _positive_exp_argument,
                   "no positive argument on sampled states", exp_status, exp_notes)
        if any(_divides(e) for e in walk(fn.outputs)):
            out = prove.no_nan_outputs(setting, fn, ops, els, args_for(name, ops, els), deadline, cause="division")
            settle(out, name, fn, "no denominator is 0 where its quotient is used", _nan_output,
                   "no NaN on sampled states", *((res_status, res_notes) if name == "result"
                                                  else (div_status, div_notes)))
    verdicts["exp_overflow"] = _worst(exp_status)
    verdicts["division"] = _worst(div_status)
    if combine is not None:
        out = prove.identity_nan_free(setting, combine, deadline)
        verdicts["identity_nan"] = "proved" if out.proved else "failed"
        notes["identity_nan"] = ("combining with the identity creates no NaN" if out.proved
                                             else out.detail)
    else:
        verdicts["identity_nan"] = "skipped"
    notes["exp_overflow"] = "; ".join(exp_notes) or "no exp"
    notes["division"] = "; ".join(div_notes) or "no division"
    if res_notes:
        notes["result_division"] = f"{_worst(res_status)}: " + "; ".join(res_notes)
    return verdicts, notes


def _is_exp(e: Expr) -> bool:
    return e.op in (Op.EXP, Op.EXP2)


def _divides(e: Expr) -> bool:
    """A division, or a power with a negative exponent (a division in disguise): c ** n
    with n an Int expression may have one, unless c is a nonzero constant."""
    if e.op is Op.POWN:
        base = e.src[0]
        return not (base.op is Op.CONST and float(base.arg) != 0.0)
    return e.op is Op.DIV or (e.op is Op.POW and e.arg < 0)


def _numeric_inputs(loop: Loop, fns) -> dict:
    """Sampled input environments for each function checked for stability."""
    triples = make_triples(loop, seed=7, rows=8, max_len=4, param_sets=2, table=NUMPY)
    rng = np.random.default_rng(7)
    dom = Domain(loop)
    out = {}
    for name, fn, ops, els in fns:
        envs = []
        for t in triples:
            rows = t.a[0].shape[0]
            names = [n for n, _ in fn.inputs]
            vals = list(t.a) + (list(t.b) if len(ops) == 2 else [])
            if els:
                elems = dom.random_list(rng, t.params, rows, small=len(envs) % 2 == 0)
                steps = stack_elements(loop, [[e] for e in elems])
                vals += list(steps[0]) if steps else []
            envs.append(dict(zip(names, vals)) | t.params)
        out[name] = envs
    return out


def paths_to(outputs, picked) -> list[tuple[Expr, tuple]]:
    """Each node `picked(e)` selects, with the path to it through the selections
    (`where`, an if/else) of `outputs`: the conditions (c, True) on a then-branch and
    (c, False) on an else-branch, outermost first.  A node on two paths is there twice.
    Past `_MAX_VISITS` the paths stop growing: a node is then judged on more paths than
    its own, never on fewer."""
    out: dict = {}
    seen: set = set()

    def visit(e: Expr, path: tuple, key: tuple):
        if (id(e), key) in seen:
            return
        seen.add((id(e), key))
        if picked(e):
            out.setdefault((id(e), key), (e, path))
        if e.op is Op.WHERE and len(seen) < _MAX_VISITS:
            c, then, other = e.src
            visit(c, path, key)
            visit(then, path + ((c, True),), key + ((id(c), True),))
            visit(other, path + ((c, False),), key + ((id(c), False),))
            return
        for s in e.src:
            visit(s, path, key)

    for o in outputs:
        visit(o, (), ())
    return list(out.values())


_MAX_VISITS = 20000


def under(path: tuple, term: Expr, neutral: float) -> Expr:
    """`term` where the conditions of `path` hold, `neutral` elsewhere (nested `where`s,
    so that each condition is evaluated only where the outer ones hold)."""
    for c, taken in reversed(path):
        other = const(int(neutral), Type.INT) if term.type is Type.INT else const(neutral, Type.REAL)
        term = Expr(Op.WHERE, term.type, (c, term, other) if taken else (c, other, term))
    return term


def exp_arguments(fn: Fn) -> tuple[Expr, ...]:
    """Each exp argument of `fn` where its path is taken, 0 (which is <= 0) elsewhere."""
    return tuple(under(path, e.src[0], 0.0) for e, path in paths_to(fn.outputs, _is_exp))


def _positive_exp_argument(fn: Fn, envs) -> str:
    from thm3.ir.printer import to_text
    found = paths_to(fn.outputs, _is_exp)
    terms = tuple(under(path, e.src[0], 0.0) for e, path in found)
    with quiet():
        for env in envs:
            for (e, _), v in zip(found, evaluate(terms, env, NUMPY)):
                v = np.asarray(v, dtype=np.float64)
                if np.any(v > 0):
                    return (f"exp({to_text(e.src[0])}) has argument {float(np.max(v[v > 0])):.4g} > 0 "
                            f"on a sampled state")
    return ""


def _nan_output(fn: Fn, envs) -> str:
    """A sampled row with finite inputs where a denominator is 0 and an output is not
    finite (inf or NaN from the division)."""
    # each denominator where its quotient's path is taken (1 elsewhere: no division there)
    dens = tuple(under(path, e.src[1] if e.op is Op.DIV else e.src[0], 1.0)
                 for e, path in paths_to(fn.outputs, _divides))
    with quiet():
        for env in envs:
            # batched inputs only (loop parameters are shared by every row)
            ins = [np.asarray(env[n], dtype=np.float64) for n, _ in fn.inputs
                   if n in env and np.ndim(env[n]) == 2]
            if not ins:
                continue
            rows = np.shape(ins[0])[0]
            finite = np.ones(rows, dtype=bool)
            for x in ins:
                finite &= np.isfinite(x).reshape(rows, -1).all(axis=1)
            zero = np.zeros(rows, dtype=bool)
            for d in evaluate(dens, env, NUMPY):
                d = np.broadcast_to(np.asarray(d, dtype=np.float64), (rows,) + np.shape(d)[1:])
                zero |= (d == 0).reshape(rows, -1).any(axis=1)
            bad = np.zeros(rows, dtype=bool)
            for v in evaluate(fn.outputs, env, NUMPY):
                v = np.broadcast_to(np.asarray(v, dtype=np.float64), (rows,) + np.shape(v)[1:])
                bad |= ~np.isfinite(v).reshape(rows, -1).all(axis=1)
            if np.any(bad & zero & finite):
                return "a division by 0 gives inf or NaN on a sampled state with finite inputs"
    return ""


def _worst(statuses: list[str]) -> str:
    if not statuses:
        return "skipped"
    for s in ("failed", "tested"):
        if s in statuses:
            return s
    return "proved"
