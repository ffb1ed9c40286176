"""Print IR expressions as loop-file syntax: the IR's text form.

The text is valid in a loop file (given the `thm3.lang` imports it uses), so the lifter
can write generated loops with it, and it is what `Expr.__repr__` shows.  Parentheses
appear only where Python's precedence would otherwise build another tree; a WHERE is
always parenthesised, `(a if c else b)`, as a conditional expression reads best so.

The same tree prints for other readers through a `Target`: a table of how that reader
writes a name, a number and an operation (the report's mathematics writes a.m as m₁ and
a product with `·`).  No reader edits printed text: a field named `inflow` stays
`inflow` where a text replacement of `inf` by `∞` made it `∞low`."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from thm3.ir.ops import Op
from thm3.ir.cache import Bounded
from thm3.ir.program import lower

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


def _no_number(value) -> str | None:
    return None


@dataclass(frozen=True, eq=False)
class Target:
    """How one reader writes the IR: a name, a literal (None: as in a loop file), and
    operations by other tokens.  Precedence and parentheses are the loop file's."""
    name: str
    name_of: Callable[[str], str] = str
    number_of: Callable[[object], str | None] = _no_number
    tokens: dict = field(default_factory=dict)      # Op -> its token in place of SYNTAX's
    tight: frozenset = frozenset()                  # infix Ops written without spaces


def _without_acc(name: str) -> str:
    return name.removeprefix("acc.")


def _subscripted(name: str) -> str:
    """a.m -> m₁, b.m -> m₂ (the two operands of the combine)."""
    side, dot, rest = name.partition(".")
    return rest + {"a": "₁", "b": "₂"}[side] if dot and side in ("a", "b") else name


def _integral(value) -> str | None:
    """An integral float as an integer: 0.0 -> 0 (invariants read as bounds)."""
    if isinstance(value, float) and re.fullmatch(r"-?\d+\.0", repr(value)):
        return repr(value)[:-2]
    return None


def _infinity(value) -> str | None:
    if isinstance(value, float) and math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return None


# The loop file; left's new values as the report lists them (fields without `acc.`); an
# invariant (bounds as integers where they are); the combine as mathematics; a transport
# of structure.
LOOP = Target("loop file")
STATE = Target("state", name_of=_without_acc)
INVARIANT = Target("invariant", name_of=_without_acc, number_of=_integral)
MATH = Target("math", name_of=_subscripted, number_of=_infinity, tokens={Op.MUL: "·"}, tight=frozenset({Op.MUL}))
TRANSPORT = Target("transport", name_of=_without_acc, tokens={Op.MUL: "·", Op.EXP: "e^"},
                   tight=frozenset({Op.MUL}))


def to_text(expr: Expr, target: Target = LOOP, standalone: bool = False) -> str:
    """The expression as loop-file source text, or as `target` writes it.  `standalone`:
    the text stands alone (an assignment's value, a return), where a conditional
    expression needs no parentheses around it."""
    if standalone and expr.op is Op.WHERE:
        return _conditional([_render(s, target) for s in expr.src])
    return _render(expr, target)[0]


def _conditional(args: list[tuple[str, int]]) -> str:
    cond, then, other = (_operand(a, _OR) for a in args)
    return f"{then} if {cond} else {other}"


# Texts already rendered, by (interned) node and target: a node is immutable, so its text
# is fixed, and the synthesis routes print many terms that share most of their subterms.
_RENDERED = Bounded(1 << 16)


class _Printed(dict):
    """The texts `target` has printed, as the lowering's and `Program.run`'s known values:
    each text found in the memo is kept here, so that the memo's dropping an entry while
    the program runs cannot lose it."""

    def __init__(self, target: Target):
        super().__init__()
        self.target = target

    def get(self, e: Expr, default=None):
        got = dict.get(self, e)
        if got is None:
            got = _RENDERED.get((e, self.target))
            if got is not None:
                self[e] = got
        return got if got is not None else default


def _render(e: Expr, target: Target) -> tuple[str, int]:
    """(text, binding strength): the one lowering's driver over SYNTAX, each node's text
    remembered."""
    got = _RENDERED.get((e, target))
    if got is not None:
        return got

    def entry(k, step, args):
        return _RENDERED.put((step.node, target), _render_node(step.node, args, target))

    known = _Printed(target)
    return lower((e,), known=known).run(entry, known=known)[-1]


def _render_node(e: Expr, args: list[tuple[str, int]], t: Target) -> tuple[str, int]:
    """One node's text from its operands' (text, strength)."""
    form, token, strength = SYNTAX[e.op]
    token = t.tokens.get(e.op, token)
    match form:
        case "leaf":
            return _leaf(e, t)
        case "prefix":
            text, inner = args[0]
            # `not` takes a comparison unparenthesised; `-` must not glue into `--x`.
            if inner < strength or (token == "-" and text.startswith("-")):
                text = f"({text})"
            return f"{token}{text}", strength
        case "call":
            return f"{token}({', '.join(a[0] for a in args)})", strength
        case "infix":
            # Left-associative: the right operand is parenthesised at equal strength
            # so that the printed text parses back to the same tree.
            between = token if e.op in t.tight else f" {token} "
            return f"{_operand(args[0], strength)}{between}{_operand(args[1], strength + 1)}", strength
        case "compare":
            # Python chains comparisons, so a comparison operand always needs parentheses.
            return f"{_operand(args[0], strength + 1)} {token} {_operand(args[1], strength + 1)}", strength
        case "power":
            return f"{_operand(args[0], _ATOM)} ** {e.arg}", strength
        case "power of":
            # `**` binds to the right: a power or a negation as the exponent reads back
            # unparenthesised, a sum or a product needs its parentheses
            return f"{_operand(args[0], _ATOM)} ** {_operand(args[1], _UNARY)}", strength
        case "modulo":
            return f"{_operand(args[0], _PRODUCT)} % {e.arg}", strength
        case "where":
            return f"({_conditional(args)})", strength
        case _:
            raise ValueError(f"no syntax for {e.op}")


def _operand(printed: tuple[str, int], at_least: int) -> str:
    text, strength = printed
    return text if strength >= at_least else f"({text})"


def _leaf(e: Expr, t: Target) -> tuple[str, int]:
    if e.op is Op.VAR:
        return t.name_of(str(e.arg)), _ATOM
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
    # the binding strength is the loop file's, so the parentheses are too
    return t.number_of(value) or text, (_UNARY if text.startswith("-") else _ATOM)
