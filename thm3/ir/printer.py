"""Print IR expressions as loop-file syntax: the IR's text form.

The text is valid in a loop file (given the `thm3.lang` imports it uses), so the lifter
can write generated loops with it, and it is what `Expr.__repr__` shows.  Parentheses
appear only where Python's precedence would otherwise build another tree; a WHERE is
always parenthesised, `(a if c else b)`, as a conditional expression reads best so."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from thm3.ir.ops import Op

if TYPE_CHECKING:
    from thm3.ir.core import Expr

# Python's binding strengths, weakest first.
_OR, _AND, _NOT, _COMPARE, _SUM, _PRODUCT, _UNARY, _POWER, _ATOM = range(1, 10)

# How each op is written: (form, token, binding strength of the result).
SYNTAX: dict[Op, tuple[str, str | None, int]] = {
    Op.CONST: ("leaf", None, _ATOM),
    Op.VAR: ("leaf", None, _ATOM),
    Op.NEG: ("prefix", "-", _UNARY),
    Op.NOT: ("prefix", "not ", _NOT),
    Op.ABS: ("call", "abs", _ATOM),
    Op.EXP: ("call", "exp", _ATOM),
    Op.EXP2: ("call", "exp2", _ATOM),
    Op.LOG: ("call", "log", _ATOM),
    Op.LOG2: ("call", "log2", _ATOM),
    Op.SQRT: ("call", "sqrt", _ATOM),
    Op.ADD: ("infix", "+", _SUM),
    Op.SUB: ("infix", "-", _SUM),
    Op.MUL: ("infix", "*", _PRODUCT),
    Op.DIV: ("infix", "/", _PRODUCT),
    Op.POW: ("power", "**", _POWER),
    Op.POWN: ("power of", "**", _POWER),
    Op.MOD: ("modulo", "%", _PRODUCT),
    Op.MAX: ("call", "max", _ATOM),
    Op.MIN: ("call", "min", _ATOM),
    Op.LT: ("compare", "<", _COMPARE),
    Op.LE: ("compare", "<=", _COMPARE),
    Op.GT: ("compare", ">", _COMPARE),
    Op.GE: ("compare", ">=", _COMPARE),
    Op.EQ: ("compare", "==", _COMPARE),
    Op.NE: ("compare", "!=", _COMPARE),
    Op.AND: ("infix", "and", _AND),
    Op.OR: ("infix", "or", _OR),
    Op.WHERE: ("where", None, _ATOM),
    Op.DOT: ("call", "dot", _ATOM),
}


def to_text(expr: Expr) -> str:
    """The expression as loop-file source text."""
    return _render(expr)[0]


# Texts already rendered, by node: a node is immutable, so its text is fixed, and the
# synthesis routes print many terms that share most of their subterms.  The entries hold
# their nodes (an id is not reused while its entry lives); the memo is emptied when full.
_RENDERED: dict[int, tuple] = {}
_RENDERED_MAX = 1 << 16


def _render(e: Expr) -> tuple[str, int]:
    got = _RENDERED.get(id(e))
    if got is not None and got[0] is e:
        return got[1]
    out = _render_node(e)
    if len(_RENDERED) >= _RENDERED_MAX:
        _RENDERED.clear()
    _RENDERED[id(e)] = (e, out)
    return out


def _render_node(e: Expr) -> tuple[str, int]:
    form, token, strength = SYNTAX[e.op]
    match form:
        case "leaf":
            return _leaf(e)
        case "prefix":
            text, inner = _render(e.src[0])
            # `not` takes a comparison unparenthesised; `-` must not glue into `--x`.
            if inner < strength or (token == "-" and text.startswith("-")):
                text = f"({text})"
            return f"{token}{text}", strength
        case "call":
            return f"{token}({', '.join(_render(s)[0] for s in e.src)})", strength
        case "infix":
            # Left-associative: the right operand is parenthesised at equal strength
            # so that the printed text parses back to the same tree.
            return f"{_operand(e.src[0], strength)} {token} {_operand(e.src[1], strength + 1)}", strength
        case "compare":
            # Python chains comparisons, so a comparison operand always needs parentheses.
            return f"{_operand(e.src[0], strength + 1)} {token} {_operand(e.src[1], strength + 1)}", strength
        case "power":
            return f"{_operand(e.src[0], _ATOM)} ** {e.arg}", strength
        case "power of":
            # `**` binds to the right: a power or a negation as the exponent reads back
            # unparenthesised, a sum or a product needs its parentheses
            return f"{_operand(e.src[0], _ATOM)} ** {_operand(e.src[1], _UNARY)}", strength
        case "modulo":
            return f"{_operand(e.src[0], _PRODUCT)} % {e.arg}", strength
        case "where":
            cond, then, other = (_operand(s, _OR) for s in e.src)
            return f"({then} if {cond} else {other})", strength
        case _:
            raise ValueError(f"no syntax for {e.op}")


def _operand(e: Expr, at_least: int) -> str:
    text, strength = _render(e)
    return text if strength >= at_least else f"({text})"


def _leaf(e: Expr) -> tuple[str, int]:
    if e.op is Op.VAR:
        return str(e.arg), _ATOM
    value = e.arg
    if isinstance(value, bool):
        return repr(value), _ATOM
    if isinstance(value, float) and math.isinf(value):
        text = "inf" if value > 0 else "-inf"
    elif isinstance(value, float) and math.isnan(value):
        text = "nan"        # never produced by the frontend; shown, not parseable
    elif isinstance(value, float):
        text = repr(float(value))     # a NumPy float prints as a plain literal too
    else:
        text = repr(int(value))
    return text, (_UNARY if text.startswith("-") else _ATOM)
