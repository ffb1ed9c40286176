"""Tidying a synthesized combine with SymPy: a field whose term is a rational function
(divisions guarded against 0) is rewritten as a.f + b.f + factor(rest) when that is
smaller, so Welford's combine reads as Chan's: M2 = M2₁ + M2₂ + n₁n₂(mean₂ − mean₁)²/n.

The tidy form replaces the synthesized one only if it agrees on the sampled states;
the prover then proves whichever combine is used, so tidying never weakens a proof."""
from __future__ import annotations

import math

import sympy as sp

from thm3.ir import Expr, Fn, Loop, Op, Type, walk
from thm3.semantics.evaluate import evaluate
from thm3.semantics.sympy_table import SYMPY, sympy_const, to_ir
from thm3.synth.check import Checker, guard_for_stability

# A rational function's ops, read by the SymPy table; every other op (and a Bool, an
# infinity) has no value here, so a term that uses one is not a rational function.
_RATIONAL = {op: (lambda *args: None) for op in Op} | {
    op: SYMPY[op] for op in (Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.NEG, Op.POW)} | {
    Op.CONST: lambda value, type_: None if type_ is Type.REAL and math.isinf(value) else sympy_const(value, type_)}


def _unguard(e: Expr):
    """The term with `0 if den == 0 else num / den` read as num / den, as a SymPy
    expression; None when the term is not a rational function."""
    memo: dict[int, Expr] = {}

    def strip(x: Expr) -> Expr:                 # the guards taken off, sharing kept
        got = memo.get(id(x))
        if got is not None:
            return got
        if x.op is Op.WHERE and x.src[0].op is Op.EQ and x.src[2].op is Op.DIV \
                and x.src[1].op is Op.CONST and x.src[1].arg == 0:
            out = strip(x.src[2])
        else:
            src = tuple(strip(s) for s in x.src)
            out = x if all(a is b for a, b in zip(src, x.src)) else Expr(x.op, x.type, src, x.arg)
        memo[id(x)] = out
        return out

    term = strip(e)
    env = {v.arg: None if v.type is Type.BOOL else sp.Symbol(v.arg.replace(".", "__"), real=True)
           for v in walk([term]) if v.op is Op.VAR}
    return evaluate([term], env, _RATIONAL)[0]


def tidy_field(loop: Loop, combine: Fn, i: int) -> Expr | None:
    """A smaller spelling of field i's term, or None."""
    f = loop.fields[i]
    e = combine.outputs[i]
    if f.type not in (Type.REAL,) or not any(x.op is Op.DIV for x in walk([e])):
        return None
    expr = _unguard(e)
    if expr is None:
        return None
    a = sp.Symbol(f"a__{f.name}", real=True)
    b = sp.Symbol(f"b__{f.name}", real=True)
    rest = sp.factor(sp.cancel(sp.together(expr - a - b)))
    num, _ = sp.fraction(rest)
    # Worth it when the rest factors into a monomial times powers (Chan's n₁n₂δ²/n),
    # not when it is another sum.
    def plain_sum(t) -> bool:       # a difference of fields such as mean₁ − mean₂
        return all(x.is_Symbol or (-x).is_Symbol or x.is_Number for x in t.args)

    if rest != 0 and any(factor.is_Add and not plain_sum(factor) for factor in sp.Mul.make_args(num)):
        return None
    types = {name: t for name, t in combine.inputs}
    try:
        tidy = to_ir(a + b + rest if rest != 0 else a + b, types)
    except ValueError:
        return None
    tidy = guard_for_stability(tidy, loop)
    return tidy if len(walk([tidy])) < len(walk([e])) else None


def tidy_combine(loop: Loop, combine: Fn, triples) -> Fn | None:
    """The combine with fields rewritten by `tidy_field` where that agrees on samples."""
    outs = list(combine.outputs)
    changed = False
    for i in range(len(outs)):
        t = tidy_field(loop, combine, i)
        if t is not None and Checker(combine.inputs, triples, i).passes(t):
            outs[i] = t
            changed = True
    return Fn(combine.inputs, tuple(outs)) if changed else None
