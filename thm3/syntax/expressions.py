"""Expressions of a loop file's functions, read symbolically: each construct the format
allows is a `visit_*` case building an `Expr`, and every other one ends in "unsupported
construct".  `thm3.syntax.body` runs the statements on top of this."""
from __future__ import annotations

import ast
import difflib
import math
from dataclasses import dataclass

from thm3.errors import LoopError
from thm3.ir import Expr, Op, Type, as_real, const
from thm3.ir.types import result_type
from thm3.syntax.positions import CALLS, HINT_CALL, HINT_EXPRESSION, TYPES, describe, plural, snippet

ARITHMETIC = {ast.Add: (Op.ADD, "+"), ast.Sub: (Op.SUB, "-"), ast.Mult: (Op.MUL, "*"),
              ast.Div: (Op.DIV, "/"), ast.Pow: (Op.POW, "**")}
COMPARISONS = {ast.Lt: Op.LT, ast.LtE: Op.LE, ast.Gt: Op.GT, ast.GtE: Op.GE,
               ast.Eq: Op.EQ, ast.NotEq: Op.NE}
MATH_CALLS = {"exp": Op.EXP, "exp2": Op.EXP2, "log": Op.LOG, "log2": Op.LOG2, "sqrt": Op.SQRT}


_INFINITIES = {"inf": math.inf, "+inf": math.inf, "-inf": -math.inf, "infinity": math.inf,
               "+infinity": math.inf, "-infinity": -math.inf}


def float_infinity(node: ast.AST) -> float | None:
    """inf or -inf for `float("inf")`, `float("-inf")` (any case, "infinity" too), the way
    plain Python spells them, so that a loop pasted from Python code reads as written;
    None for anything else."""
    match node:
        case ast.Call(func=ast.Name(id="float"), args=[ast.Constant(value=str() as text)], keywords=[]):
            return _INFINITIES.get(text.strip().lower())
    return None


@dataclass(frozen=True)
class Unbound:
    """A local that may not be read: assigned in only one branch of an if."""
    why: str


class Expressions(ast.NodeVisitor):
    """The expression half of `Body`: `expr` reads one expression under the locals `env`,
    with the function's state, elements and parameters that `Body` holds."""

    def error(self, node, message, hint=None) -> LoopError:
        return self.src.error(node, message, hint)

    # --- expressions

    def expr(self, node: ast.expr, env: dict) -> Expr:
        self.env = env
        return self.visit(node)

    def condition(self, node: ast.expr, env: dict) -> Expr:
        e = self.expr(node, env)
        if e.type is not Type.BOOL:
            raise self.error(node, f"a condition must be Bool, this is {e.type.value}",
                             "a comparison such as x > 0, or and/or/not of comparisons")
        return e

    def generic_visit(self, node: ast.AST):
        raise self.error(node, f"unsupported construct: {describe(node)}", HINT_EXPRESSION)

    def visit_Constant(self, node: ast.Constant) -> Expr:
        match node.value:
            case bool() | int() | float() as value:
                return const(value)
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> Expr:
        name = node.id
        if name in self.env:
            value = self.env[name]
            if isinstance(value, Unbound):
                raise self.error(node, value.why, "assign it before the if or in every branch")
            return value
        if name in self.params:
            return self.params[name]
        if name == self.acc:
            raise self.error(node, f"the state `{name}` can only be read by field",
                             plural(f"{name}.{f}" for f in self.fields))
        if name == "inf":
            self.module.require_import(node, "inf")
            return const(math.inf)
        if name in TYPES or name == "Index":
            raise self.error(node, f"`{name}` is a type, not a value", HINT_EXPRESSION)
        if name in CALLS or name == "State":
            raise self.error(node, f"`{name}` can only be called", f"{name}(...)")
        locals_ = [n for n, v in self.env.items() if n not in self.elements and not isinstance(v, Unbound)]
        known = [*locals_, *self.elements, *self.params, *(f"{self.acc}.{f}" for f in self.fields), "inf"]
        close = difflib.get_close_matches(name, known, n=1)
        groups = [("local names", locals_), ("element parameters", list(self.elements)),
                  ("loop parameters", list(self.params)),
                  ("state fields", [f"{self.acc}.{f}" for f in self.fields])]
        raise self.error(node, f"unknown name `{name}`" + (f" (did you mean `{close[0]}`?)" if close else ""),
                         "; ".join(f"{what} {plural(names)}" for what, names in groups if names) + "; inf")

    def visit_Attribute(self, node: ast.Attribute) -> Expr:
        fields = plural(f"{self.acc}.{f}" for f in self.fields)
        match node:
            case ast.Attribute(value=ast.Name(id=self.acc), attr=attr) if attr in self.fields:
                return self.state[attr]
            case ast.Attribute(value=ast.Name(id=self.acc), attr="_replace"):
                raise self.src.error_at_attribute(node, "_replace(...) is allowed only directly in a return",
                                                  f"return {self.acc}._replace(field=value)")
            case ast.Attribute(value=ast.Name(id=self.acc), attr=attr):
                close = difflib.get_close_matches(attr, list(self.fields), n=1)
                raise self.src.error_at_attribute(
                    node, f"State has no field `{attr}`" + (f" (did you mean `{close[0]}`?)" if close else ""),
                    fields)
        raise self.src.error_at_attribute(node, f"unsupported construct: attribute access `.{node.attr}`",
                                          f"state fields {fields}")

    def visit_BinOp(self, node: ast.BinOp) -> Expr:
        return self.binary(node, node.op, self.visit(node.left), node.right)

    def binary(self, node: ast.AST, op: ast.operator, a: Expr, right: ast.expr) -> Expr:
        """`a op right`, for a BinOp and for an augmented assignment."""
        if isinstance(op, ast.Mod):
            return self.modulo(node, a, right)
        if type(op) not in ARITHMETIC:
            raise self.error(node, f"unsupported construct: operator `{_operator(node)}`",
                             "+ - * /, ** with a constant integer exponent, "
                             "and % by a positive integer constant")
        code, token = ARITHMETIC[type(op)]
        if code is Op.POW:
            return self.power(node, a, right)
        return self.arithmetic(code, token, a, self.visit(right), node)

    def power(self, node: ast.AST, base: Expr, exponent: ast.expr) -> Expr:
        n = self.module.literal(exponent) if not isinstance(exponent, ast.Name) else None
        if not isinstance(n, int) or isinstance(n, bool):
            return self.power_of_int(node, base, exponent)
        self.numeric(base, node, "**")
        type_ = result_type(Op.POW, n, (base.type,))
        return Expr(Op.POW, type_, (as_real(base) if type_ is not Type.INT else base,), n)

    def power_of_int(self, node: ast.AST, base: Expr, exponent: ast.expr) -> Expr:
        """`c ** n` with n an Int expression (a count, a field): a Real."""
        allowed = ("x ** 2 (a constant integer exponent), c ** n with c a Real and n an Int (0.5 ** acc.n); "
                   "other powers: exp(y * log(x))")
        n = self.visit(exponent)
        if n.type is not Type.INT:
            raise self.error(exponent, "`**` needs an integer exponent: a constant, or an Int expression", allowed)
        if base.type is not Type.REAL:
            article = "an" if base.type is Type.INT else "a"
            raise self.error(node, f"`c ** n` with an Int exponent takes a Real base, not {article} {base.type.value}",
                             "0.5 ** acc.n, or 2.0 ** acc.n for a power of two as a Real")
        return Expr(Op.POWN, result_type(Op.POWN, None, (base.type, n.type)), (base, n))

    def modulo(self, node: ast.AST, a: Expr, modulus: ast.expr) -> Expr:
        m = self.module.literal(modulus) if not isinstance(modulus, ast.Name) else None
        if not isinstance(m, int) or isinstance(m, bool) or not 0 < m < 2 ** 31:
            raise self.error(modulus, "`%` needs a positive integer constant (below 2**31) on its right",
                             "c % 2, x % 3: a positive integer literal")
        if a.type not in (Type.INT, Type.REAL):
            raise self.error(node, f"`%` takes an Int or a Real on its left, not a {a.type.value}",
                             "c % 2 with c a number: a field, a local or an element")
        return Expr(Op.MOD, result_type(Op.MOD, m, (a.type,)), (a,), m)

    def numeric(self, e: Expr, node: ast.AST, token: str) -> None:
        if e.type is Type.BOOL:
            raise self.error(node, f"arithmetic on Bool: `{token}` takes Real, Int or Vec values",
                             "Bool values go into and, or, not, conditions and where(...)")

    def arithmetic(self, code: Op, token: str, a: Expr, b: Expr, node: ast.AST) -> Expr:
        self.numeric(a, node, token)
        self.numeric(b, node, token)
        type_ = result_type(code, None, (a.type, b.type))
        if type_ is not Type.INT:
            a, b = as_real(a), as_real(b)
        return Expr(code, type_, (a, b))

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Expr:
        operand = self.visit(node.operand)
        match node.op:
            case ast.USub():
                self.numeric(operand, node, "-")
                if operand.op is Op.CONST:
                    return const(-operand.arg, operand.type)
                return Expr(Op.NEG, operand.type, (operand,))
            case ast.UAdd():
                self.numeric(operand, node, "+")
                return operand
            case ast.Not():
                if operand.type is not Type.BOOL:
                    raise self.error(node, f"`not` needs a Bool, this is {operand.type.value}",
                                     "not of a comparison, such as not x > 0")
                return Expr(Op.NOT, Type.BOOL, (operand,))
        raise self.error(node, "unsupported construct: operator `~`", "not, or unary -")

    def visit_Compare(self, node: ast.Compare) -> Expr:
        operands = [self.visit(node.left)]
        result = None
        for op, right in zip(node.ops, node.comparators):
            if type(op) not in COMPARISONS:
                raise self.error(node, f"unsupported construct: comparison `{_compare_token(op)}`",
                                 "< <= > >= == !=")
            operands.append(self.visit(right))
            test = self.compare(COMPARISONS[type(op)], operands[-2], operands[-1], node)
            result = test if result is None else Expr(Op.AND, Type.BOOL, (result, test))
        return result

    def compare(self, code: Op, a: Expr, b: Expr, node: ast.AST) -> Expr:
        if Type.VEC in (a.type, b.type):
            raise self.error(node, "comparison of Vec values: comparisons are scalar only",
                             "compare scalars, such as dot(u, v) or a Real field")
        if Type.BOOL in (a.type, b.type):
            if a.type is not b.type or code not in (Op.EQ, Op.NE):
                raise self.error(node, "Bool values compare only to Bool values, with == or !=",
                                 "and, or, not for Bool values")
        elif Type.REAL in (a.type, b.type):
            a, b = as_real(a), as_real(b)
        return Expr(code, Type.BOOL, (a, b))

    def visit_BoolOp(self, node: ast.BoolOp) -> Expr:
        code, word = (Op.AND, "and") if isinstance(node.op, ast.And) else (Op.OR, "or")
        result = None
        for value in node.values:
            e = self.visit(value)
            if e.type is not Type.BOOL:
                raise self.error(value, f"`{word}` needs Bool operands, this is {e.type.value}",
                                 "comparisons, such as x > 0")
            result = e if result is None else Expr(code, Type.BOOL, (result, e))
        return result

    def visit_IfExp(self, node: ast.IfExp) -> Expr:
        cond = self.condition(node.test, self.env)
        return self.where(cond, self.visit(node.body), self.visit(node.orelse), node)

    def where(self, cond: Expr, a: Expr, b: Expr, node: ast.AST) -> Expr:
        if a is b:
            return a
        if (a.type is Type.BOOL) != (b.type is Type.BOOL):
            raise self.error(node, f"the two branches give {a.type.value} and {b.type.value}",
                             "branches that are both Bool or both numbers")
        type_ = result_type(Op.WHERE, None, (Type.BOOL, a.type, b.type))       # (the condition is Bool here)
        if type_ in (Type.REAL, Type.VEC):
            a, b = as_real(a), as_real(b)
        return Expr(Op.WHERE, type_, (cond, a, b))

    def visit_Call(self, node: ast.Call) -> Expr:
        if (value := float_infinity(node)) is not None:          # float("-inf") as plain Python spells it
            return const(value)
        match node.func:
            case ast.Attribute(value=ast.Name(id=self.acc), attr="_replace"):
                raise self.error(node, "_replace(...) is allowed only directly in a return",
                                 f"return {self.acc}._replace(field=value)")
            case ast.Name(id="State"):
                raise self.error(node, "State(...) is allowed only directly in a return",
                                 "return State(...)")
            case ast.Name(id=name) if name in CALLS:
                pass
            case ast.Name(id=name):
                raise self.error(node, f"unknown function `{name}`", HINT_CALL)
            case _:
                raise self.error(node, f"unsupported construct: call to `{snippet(node.func)}`", HINT_CALL)
        if name not in ("max", "min", "abs"):
            self.module.require_import(node.func, name)
        if node.keywords:
            raise self.error(node.keywords[0], "unsupported construct: keyword argument", f"{name}(a, b)")
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                raise self.error(arg, "unsupported construct: starred argument", f"{name}(a, b)")
        arity = {"max": None, "min": None, "where": 3, "dot": 2}.get(name, 1)
        if (arity is None and len(node.args) < 2) or (arity is not None and len(node.args) != arity):
            want = "two or more arguments" if arity is None else f"{arity} argument{'s' * (arity > 1)}"
            raise self.error(node, f"`{name}` takes {want}, got {len(node.args)}", f"{name}(...) with {want}")
        args = [self.visit(a) for a in node.args]
        match name:
            case "max" | "min":
                code = Op.MAX if name == "max" else Op.MIN
                result = args[0]
                for arg in args[1:]:
                    result = self.arithmetic(code, name, result, arg, node)
                return result
            case "abs":
                self.numeric(args[0], node, name)
                return Expr(Op.ABS, result_type(Op.ABS, None, (args[0].type,)), (args[0],))
            case "where":
                if args[0].type is not Type.BOOL:
                    raise self.error(node.args[0], f"a condition must be Bool, this is {args[0].type.value}",
                                     "a comparison such as x > 0")
                return self.where(args[0], args[1], args[2], node)
            case "dot":
                for arg, e in zip(node.args, args):
                    if e.type is not Type.VEC:
                        raise self.error(arg, f"`dot` takes two Vec values, this is {e.type.value}",
                                         "dot(u, v) with u, v: Vec; scalars multiply with *")
                return Expr(Op.DOT, result_type(Op.DOT, None, (args[0].type, args[1].type)), tuple(args))
            case _:
                self.numeric(args[0], node, name)
                type_ = result_type(MATH_CALLS[name], None, (args[0].type,))
                return Expr(MATH_CALLS[name], type_, (as_real(args[0]),))


_OPERATORS = {ast.FloorDiv: "//", ast.Mod: "%", ast.MatMult: "@", ast.LShift: "<<", ast.RShift: ">>",
              ast.BitOr: "|", ast.BitAnd: "&", ast.BitXor: "^"}


def _operator(node: ast.AST) -> str:
    op = getattr(node, "op", None)
    return _OPERATORS.get(type(op), type(op).__name__)


def _compare_token(op: ast.cmpop) -> str:
    return {ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}.get(type(op), type(op).__name__)
