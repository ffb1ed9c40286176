"""Straight-line array code from the one lowering: a function's outputs as Python
expressions over whole arrays, one operation a template of a per-target table, and each
subterm that two operands read computed once into a local (`t0 = ...`).

Two targets print through it: the emitted NumPy module (`gpu/render/module.py`: the
reduction module's `_left`, `_combine`, `_result`, and the attention module's combine)
and the JAX module (`backends/jax_module.py`).  They differ only in their `Dialect`: the
table of operations, how a literal, a power with a literal exponent and a remainder are
written, and how an Int operation that int64 can overflow is checked:
- by a call (`checked`): a helper computes the value and raises OverflowError (NumPy);
- by a flag (`flags`): the value is computed as usual into a local r, and a Bool
  expression over its operands and r says whether it wrapped; the flags are returned
  with the lines, for the caller to fold into its state (JAX, where traced code cannot
  raise).
A dialect on Python floats standing for float32 (`rounded`) wraps each Real operation's
value in a call that rounds it to single precision.
The order of the lines and the numbering of the locals follow the expression tree, left
operand first, so the NumPy module's text is what it was before this printer was
shared."""
from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Mapping

from thm3.ir.core import Expr
from thm3.ir.ops import Op, Type
from thm3.ir.program import lower


@dataclass(frozen=True, eq=False)
class Dialect:
    """How one array target writes the IR's operations."""
    name: str
    ops: Mapping[Op, str]                           # Op -> "np.exp({0})": operand texts by position
    literal: Callable[[object, Type], str]          # a constant of a type
    power: Callable[[str, int], str]                # base text, literal exponent (Op.POW)
    modulo: str                                     # "np.mod({0}, {m})" (Op.MOD, m a literal)
    checked: Mapping[Op, str] = field(default_factory=dict)     # call style: "{c}" is the check's context
    checked_power: str = ""                         # call style for POW: "{0}", "{n}", "{c}"
    flags: Mapping[Op, str] = field(default_factory=dict)       # flag style: "{0}", "{1}", "{r}"
    rounded: str = ""                               # "{0}" wrapped around each Real operation's value


def scalar_literals(nan: str, inf: str) -> Callable[[object, Type], str]:
    """A dialect's literal writer for bare Python literals: Bools and Ints as Python writes
    them, a Real as its repr, NaN and the infinities as `nan` and `inf` (negated) say."""
    def literal(v, t: Type) -> str:
        if t is Type.BOOL:
            return repr(bool(v))
        if t is Type.INT:
            return repr(int(v))
        v = float(v)
        if v != v:
            return nan
        if v in (float("inf"), float("-inf")):
            return inf if v > 0 else f"-{inf}"
        return repr(v)
    return literal


def wrap_flags(least: str, quotient: str) -> dict[Op, str]:
    """Flag-style checks for two's complement Ints: whether the wrapped result r of an
    operation differs from its exact value, from its operands ({0}, {1}) and r ({r}).
    `least` is the Int's minimum; `quotient` is r divided by a zero-safe {0} (floored or
    truncated alike: r / a is b exactly when a * b did not wrap, a wrapped product being
    2**64 away from a * b, more than |a|, but for a = -1, b = least, whose product wraps
    to least)."""
    return {
        Op.ADD: "((({0}) ^ {r}) & (({1}) ^ {r})) < 0",
        Op.SUB: "((({0}) ^ ({1})) & (({0}) ^ {r})) < 0",
        Op.NEG: f"({{0}}) == {least}",
        Op.ABS: f"({{0}}) == {least}",
        Op.MUL: f"(({{0}}) != 0) & (({quotient} != ({{1}}))"
                f" | ((({{0}}) == -1) & (({{1}}) == {least})))",
    }


def straight_lines(outputs, names: Mapping[str, str], dialect: Dialect, *, indent: str = "        ",
                   checks: Mapping[Expr, object] | None = None,
                   context: Callable[[Expr], str] | None = None) -> tuple[list[str], list[str], list[str]]:
    """(lines, outputs' texts, overflow flags): `outputs` printed in `dialect`, `names`
    mapping the IR variables to Python names.  `checks` names the Int operations whose
    overflow is checked; `context(node)` is the text a call-style check passes its helper
    (which field, where).  Flag style: each checked operation becomes a local, and its
    flag expression one of the returned flags."""
    checks = checks or {}
    program = lower(outputs)
    outs = Counter(program.outputs)
    reads = [n - outs[k] for k, n in enumerate(program.uses)]     # by operands alone
    lines: list[str] = []
    flags: list[str] = []
    count = itertools.count()

    def local(out: str) -> str:
        temp = f"t{next(count)}"
        lines.append(f"{indent}{temp} = {out}")
        return temp

    def flagged(e: Expr, args: list[str]) -> str:
        """A checked operation in the flag style: r named, its flag kept."""
        if e.op is Op.POW:              # n - 1 checked products, n a literal >= 0
            r = dialect.literal(1, Type.INT) if e.arg == 0 else args[0]
            for _ in range(max(e.arg - 1, 0)):
                nxt = local(dialect.ops[Op.MUL].format(r, args[0]))
                flags.append(dialect.flags[Op.MUL].format(r, args[0], r=nxt))
                r = nxt
            return r
        r = local(dialect.ops[e.op].format(*args))
        flags.append(dialect.flags[e.op].format(*args, r=r))
        return r

    def entry(k, step, args: list[str]) -> str:
        """The dialect's text of one step from its operands' texts."""
        e = step.node
        match e.op:
            case Op.CONST:
                return dialect.literal(e.arg, e.type)
            case Op.VAR:
                return names[e.arg]
            case _ if e in checks and dialect.flags:
                return flagged(e, args)
            case Op.POW if e in checks:
                out = dialect.checked_power.format(args[0], n=e.arg, c=context(e))
            case Op.POW:
                out = dialect.power(args[0], e.arg)
            case Op.MOD:
                out = dialect.modulo.format(args[0], m=e.arg)
            case op if e in checks:
                out = dialect.checked[op].format(*args, c=context(e))
            case _:
                out = dialect.ops[e.op].format(*args)
        if dialect.rounded and e.type is Type.REAL:
            out = dialect.rounded.format(out)
        return out

    def keep(k, step, out: str) -> str:
        """A step that two operands read is a local (a flagged one is one already)."""
        e = step.node
        if reads[k] > 1 and e.op not in (Op.CONST, Op.VAR) and not (e in checks and dialect.flags):
            return local(out)
        return out

    texts = program.run(entry, keep)
    return lines, [texts[k] for k in program.outputs], flags


__all__ = ["Dialect", "straight_lines"]
