"""The laws by cases on a loop parameter: where a combine's laws are only "tested", each
law is proved under `P >= v` and again under `P < v` (or `P > v` and `P <= v`), each case
with the inductive invariants inferred under it.

A saturating sum min(s + x, cap) keeps 0 <= s <= cap where cap >= 0, and s in {0, cap}
where cap < 0; no one set of the invariant candidates holds on both, so the laws are
not shown over every cap, though they hold on each side.  Splitting is sound: a loop
parameter is constant through the fold, so the reachable states with the parameter in a
case satisfy the invariants proved inductive under that case, and a law proved on each
of two complementary cases holds for every value of the parameter."""
from __future__ import annotations

import math
import time
from dataclasses import replace

from thm3.ir import Expr, Loop, Op, Type, const, initial_state, var, walk
from thm3.status import Status

MAX_SPLITS = 4          # the atoms tried, each over its two cases
SHARE = 0.5             # of the time left, for all the splits together


def split_atoms(loop: Loop) -> list[Expr]:
    """P >= v and P > v for each numeric loop parameter P and each value v among 0, the
    fields' finite initial values and the constants of `left` (the values a parameter is
    compared with where a clamp or a cap switches), at most MAX_SPLITS of them."""
    values = [0.0]
    for f, e in zip(loop.fields, initial_state(loop)):
        if f.type in (Type.REAL, Type.INT) and math.isfinite(float(e.arg)):
            values.append(float(e.arg))
    values += [float(e.arg) for e in walk(loop.left.outputs)
               if e.op is Op.CONST and e.type in (Type.REAL, Type.INT) and math.isfinite(float(e.arg))]
    out: list[Expr] = []
    seen: set[Expr] = set()
    for d in loop.params:
        if d.type not in (Type.REAL, Type.INT):
            continue
        p = var(d.name, d.type)
        for v in dict.fromkeys(values):
            if d.type is Type.INT and v != int(v):
                continue
            c = const(int(v), Type.INT) if d.type is Type.INT else const(v, Type.REAL)
            for op in (Op.GE, Op.GT):
                atom = Expr(op, Type.BOOL, (p, c))
                if atom not in seen:
                    seen.add(atom)
                    out.append(atom)
    return out[:MAX_SPLITS]


def by_parameter_cases(loop: Loop, combine, deadline: float):
    """(statuses, details) with every law proved on both cases of one atom of
    `split_atoms`, or None where no atom does it in the time given."""
    from thm3.analysis.invariants import infer
    from thm3.prove.combine import LAWS, prove_combine
    from thm3.prove.laws import Setting
    from thm3.semantics.samples import make_triples
    atoms = split_atoms(loop)
    if not atoms:
        return None
    until = min(deadline, time.monotonic() + SHARE * max(0.0, deadline - time.monotonic()))
    for atom in atoms:
        parts = []
        for cond in (atom, Expr(Op.NOT, Type.BOOL, (atom,))):
            if time.monotonic() >= until:
                return None
            case = replace(loop, preconditions=tuple(loop.preconditions) + (cond,))
            try:
                triples = make_triples(case)
            except Exception:           # no parameter value meets the case: not shown vacuous
                triples = []
            if not triples:
                break
            inv, timed_out = infer(case, triples, min(until, time.monotonic() + 0.3 * (until - time.monotonic())))
            if timed_out:
                break
            statuses, details, _ = prove_combine(case, Setting(case, inv), combine, triples, until, cases=False)
            if not all(statuses.get(k) == Status.PROVED for k in LAWS):
                break
            parts.append((cond, inv, details))
        else:
            return ({k: Status.PROVED for k in LAWS},
                    {k: "by cases on the loop parameter: " + "; ".join(
                        f"where {cond!r} (invariants {', '.join(map(repr, inv)) or 'none'}): {details[k]}"
                        for cond, inv, details in parts) for k in LAWS})
    return None


__all__ = ["MAX_SPLITS", "by_parameter_cases", "split_atoms"]
