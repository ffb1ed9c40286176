"""Function bodies: `left`, `right` and `result` executed symbolically.  Locals hold
`Expr`s, an `if` merges them with WHERE, and returns inside branches become WHERE chains
over the outputs; the expressions are read by `thm3.syntax.expressions`."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from thm3.syntax.names import NAMES_IN_USE
from thm3.ir import Expr, ParamDecl, Type, as_real, free_vars, var
from thm3.syntax.expressions import Expressions, Unbound
from thm3.syntax.positions import HINT_STATE, HINT_STATEMENT, describe, plural

if TYPE_CHECKING:
    from thm3.syntax.declarations import Module


class Body(Expressions):
    """Symbolic execution of `left`, `right` or `result`.  Statements go through `run`;
    expressions through the `visit_*` methods, whose fallback rejects the construct."""

    def __init__(self, module: Module, fn: ast.FunctionDef, acc: str, elements: list[ParamDecl],
                 declared: Type | None = None, shape: tuple = ("value", None, "")):
        self.module, self.src, self.fn, self.acc = module, module.src, fn, acc
        self.fields = {f.name: f for f in module.fields}
        # One leaf per input, so that `a is b` finds equal branches (`x if c else x`).
        self.state = {f.name: var(f"acc.{f.name}", f.type) for f in module.fields}
        self.elements = {p.name: var(p.name, p.type) for p in elements}
        self.params = {name: var(name, p.type) for name, p in module.params.items()}
        self.declared = declared        # result's annotated type
        self.shape = shape              # result's declared shape (result_signature)
        self.result_kind = shape[0]     # what its returns give: "value", "tuple", "namedtuple"
        self.result_count: int | None = None
        self.preconditions: list[Expr] = []
        self.env: dict[str, Expr | Unbound] = {}

    def outputs(self) -> tuple[Expr, ...]:
        body = list(self.fn.body)
        match body:
            case [ast.Expr(value=ast.Constant(value=str())), *rest]:
                body = rest                      # the docstring
        env: dict[str, Expr | Unbound] = dict(self.elements)
        if self.fn.name == "left":
            while body and isinstance(body[0], ast.Assert):
                self.precondition(body.pop(0), env)
        self.check_reachable(body)
        return self.run(body, env, tail=True, last=self.fn.body[-1])

    def precondition(self, stmt: ast.Assert, env) -> None:
        if stmt.msg is not None and not (isinstance(stmt.msg, ast.Constant) and isinstance(stmt.msg.value, str)):
            raise self.error(stmt.msg, "an assert message must be a string", 'assert w > 0, "weights are positive"')
        cond = self.condition(stmt.test, env)
        outside = sorted(free_vars([cond]) - set(self.elements) - set(self.params))
        if outside:
            raise self.error(stmt.test, "an assert may mention only element and loop parameters, "
                             f"not {plural(n.replace('acc.', self.acc + '.') for n in outside)}",
                             plural([*self.elements, *self.params]))
        self.preconditions.append(cond)

    def check_reachable(self, stmts: list[ast.stmt]) -> None:
        for i, s in enumerate(stmts):
            if isinstance(s, ast.If):
                self.check_reachable(s.body)
                self.check_reachable(s.orelse)
            if _always_returns(s) and i + 1 < len(stmts):
                raise self.error(stmts[i + 1], "unreachable statement after return", "remove it")

    # --- statements

    def run(self, stmts: list[ast.stmt], env: dict, tail: bool, last: ast.stmt):
        """Execute `stmts`.  With `tail`, `stmts` is everything up to the function's end
        and the outputs come back; without, the block holds no return and the locals
        come back."""
        env = dict(env)
        for i, s in enumerate(stmts):
            match s:
                case ast.Return():
                    return self.returned(s, env)
                case ast.If() if tail and _has_return(s):
                    # The rest of the function runs once under each branch.
                    cond = self.condition(s.test, env)
                    rest = stmts[i + 1:]
                    then = self.run(s.body + rest, env, True, s)
                    other = self.run(s.orelse + rest, env, True, s)
                    return tuple(self.where(cond, a, b, s) for a, b in zip(then, other))
                case ast.If():
                    cond = self.condition(s.test, env)
                    then = self.run(s.body, env, False, s)
                    other = self.run(s.orelse, env, False, s)
                    env = self.merge(s, cond, then, other)
                case ast.Assign():
                    self.assign(s, env)
                case ast.AugAssign(target=ast.Name(), op=op, value=value):
                    self.check_target(s.target)
                    current = self.expr(s.target, env)
                    self.bind(s.target, self.binary(s, op, current, value), env)
                case ast.AugAssign(target=target) | ast.AnnAssign(target=target) if not isinstance(target, ast.Name):
                    self.check_target(target)        # raises with the reason
                case ast.AnnAssign(value=None):
                    raise self.error(s, "a local needs a value", "name: Type = value")
                case ast.AnnAssign(target=target, annotation=annotation, value=value):
                    self.check_target(target)
                    type_, _ = self.module.read_type(annotation, "a local")
                    self.bind(target, self.fit(self.expr(value, env), type_, value, f"`{target.id}`"), env)
                case ast.Pass() | ast.Expr(value=ast.Constant(value=str())):
                    pass
                case ast.Assert():
                    where = "as the first statements of left" if self.fn.name == "left" else "in left, first"
                    raise self.error(s, f"assert is allowed only {where}",
                                     "move the assert to the top of left")
                case _:
                    raise self.error(s, f"unsupported construct: {describe(s)}", HINT_STATEMENT)
            last = s
        if tail:
            raise self.error(last, f"`{self.fn.name}` can reach its end without a return",
                             "an else branch or a final return")
        return env

    def merge(self, s: ast.If, cond: Expr, then: dict, other: dict) -> dict:
        merged: dict[str, Expr | Unbound] = {}
        for name in {**then, **other}:
            a, b = then.get(name), other.get(name)
            if a is b:
                merged[name] = a
            elif a is None or b is None or isinstance(a, Unbound) or isinstance(b, Unbound):
                merged[name] = Unbound(f"`{name}` is assigned in only one branch of the if on line {s.lineno}")
            elif (a.type is Type.BOOL) != (b.type is Type.BOOL):
                merged[name] = Unbound(f"`{name}` is Bool in one branch of the if on line {s.lineno} "
                                        "and a number in the other")
            else:
                merged[name] = self.where(cond, a, b, s)
        return merged

    def assign(self, s: ast.Assign, env: dict) -> None:
        for t in s.targets:
            for name in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]):
                self.check_target(name)         # a bad target is refused before its value is read
        if any(isinstance(t, (ast.Tuple, ast.List)) for t in s.targets):
            if len(s.targets) != 1:
                raise self.error(s, "unsupported construct: chained tuple assignment", "a, b = x, y")
            target = s.targets[0]
            if not isinstance(s.value, ast.Tuple):
                raise self.error(s.value, "tuple unpacking needs a tuple of values on the right",
                                 "a, b = x, y")
            if len(target.elts) != len(s.value.elts):
                raise self.error(s.value, f"unpacking {len(s.value.elts)} values into {len(target.elts)} names",
                                 "as many names as values")
            values = [self.expr(v, env) for v in s.value.elts]     # all read before any is bound
            for t, v in zip(target.elts, values):
                self.bind(t, v, env)
        else:
            value = self.expr(s.value, env)
            for t in s.targets:
                self.bind(t, value, env)

    def bind(self, target: ast.expr, value: Expr, env: dict) -> None:
        env[self.check_target(target)] = value

    def check_target(self, target: ast.expr) -> str:
        """The local name assigned to, or an error for anything else."""
        match target:
            case ast.Name(id=name) if name == self.acc:
                raise self.error(target, f"the state `{name}` cannot be reassigned", HINT_STATE)
            case ast.Name(id=name) if name in self.params:
                raise self.error(target, f"`{name}` is a loop parameter; it cannot be assigned", "another name")
            case ast.Name(id=name) if name in NAMES_IN_USE:
                raise self.error(target, f"`{name}` is a reserved name in loop files", "another name")
            case ast.Name(id=name):
                return name
            case ast.Attribute(value=ast.Name(id=self.acc)):
                raise self.error(target, "the state is immutable", HINT_STATE)
            case ast.Tuple() | ast.List():
                raise self.error(target, "unsupported construct: nested unpacking", "a, b = x, y")
            case _:
                raise self.error(target, f"unsupported construct: assignment to {describe(target)}",
                                 "assignment to a local name")

    def returned(self, s: ast.Return, env: dict) -> tuple[Expr, ...]:
        value = s.value
        if self.fn.name == "result":
            return self.result_values(s, value, env)
        match value:
            case ast.Name(id=self.acc):
                return tuple(self.state.values())
            case ast.Call(func=ast.Name(id="State")):
                return self.state_call(value, env)
            case ast.Call(func=ast.Attribute(value=ast.Name(id=self.acc), attr="_replace")):
                return self.replace_call(value, env)
        raise self.error(value or s, f"`{self.fn.name}` must return the state", HINT_STATE)

    def result_values(self, s: ast.Return, value, env: dict) -> tuple[Expr, ...]:
        """What one `return` of `result` gives: one value, a tuple of them, or the declared
        NamedTuple's fields in order; every return the same shape."""
        kind, types, cls = self.shape
        if value is None or _is_state(value, self.acc):
            raise self.error(s, "`result` returns values, not the state",
                             "return an expression such as acc.m, a tuple (acc.m, acc.n), or leave result out "
                             "to return the state")
        match value:
            case ast.Tuple(elts=elts):
                if kind == "namedtuple":
                    raise self.error(value, f"`result` is declared to return {cls}, this is a tuple",
                                     f"return {cls}(...)")
                if self.declared is not None:
                    raise self.error(value, f"`result` is declared to return one {self.declared.value}, this "
                                     f"returns {len(elts)} values", "-> tuple (or tuple[Real, ...])")
                if not elts:
                    raise self.error(value, "`result` returns an empty tuple", "at least one value")
                if types is not None and len(types) != len(elts):
                    raise self.error(value, f"`result` is declared to return {len(types)} values, this returns "
                                     f"{len(elts)}", f"{len(types)} values")
                out = [self.expr(e, env) for e in elts]
                if types is not None:
                    out = [self.fit(e, t, node, f"result value {k + 1}")
                           for k, (e, t, node) in enumerate(zip(out, types, elts))]
                self.result_kind = "tuple"
            case ast.Call(func=ast.Name(id=name)) if name in self.module.result_classes:
                if kind != "namedtuple":
                    raise self.error(value, f"`result` returns {name} but is not declared to",
                                     f"def result({self.acc}: State) -> {name}")
                out = self.named_results(value, name, env)
            case _:
                if kind != "value":
                    want = f"{cls}(...)" if kind == "namedtuple" else "a tuple (a, b)"
                    raise self.error(value, "`result` is declared to return several values, this is one",
                                     f"return {want}")
                e = self.expr(value, env)
                out = [self.fit(e, self.declared, value, "the result") if self.declared else e]
                self.result_kind = "value"
        if self.result_count is not None and self.result_count != len(out):
            raise self.error(value, f"this return gives {len(out)} value(s), another gives {self.result_count}",
                             "the same number of values at every return")
        self.result_count = len(out)
        return tuple(out)

    def named_results(self, call: ast.Call, name: str, env: dict) -> list[Expr]:
        fields = dict(self.module.result_classes[name])
        names = list(fields)
        if len(call.args) > len(names):
            raise self.error(call.args[len(names)], f"{name} has {len(names)} fields ({plural(names)})",
                             f"{name}({', '.join(names)})")
        given = {n: arg for n, arg in zip(names, call.args)}
        for kw in call.keywords:
            if kw.arg is None or kw.arg not in fields or kw.arg in given:
                raise self.error(kw, f"{name} has no field `{kw.arg}`" if kw.arg not in fields or kw.arg is None
                                 else f"field `{kw.arg}` is given twice", plural(names))
            given[kw.arg] = kw.value
        missing = [n for n in names if n not in given]
        if missing:
            raise self.error(call, f"{name}(...) is missing {plural(missing)}", f"{name}({', '.join(names)})")
        return [self.fit(self.expr(given[n], env), fields[n], given[n], f"field `{n}` of {name}") for n in names]

    def state_call(self, call: ast.Call, env: dict) -> tuple[Expr, ...]:
        names = list(self.fields)
        given: dict[str, tuple[ast.expr, Expr]] = {}
        if len(call.args) > len(names):
            raise self.error(call.args[len(names)], f"State has {len(names)} fields ({plural(names)}), "
                             f"this is argument {len(names) + 1}", f"State({', '.join(names)})")
        for name, arg in zip(names, call.args):
            given[name] = (arg, self.expr(arg, env))
        for kw in call.keywords:
            self.check_keyword(kw, given)
            given[kw.arg] = (kw.value, self.expr(kw.value, env))
        missing = [n for n in names if n not in given]
        if missing:
            raise self.error(call, f"State(...) is missing {plural(missing)}",
                             f"every field: State({', '.join(names)}), or {self.acc}._replace(...)")
        return tuple(self.fit(given[n][1], self.fields[n].type, given[n][0], f"field `{n}`") for n in names)

    def replace_call(self, call: ast.Call, env: dict) -> tuple[Expr, ...]:
        if call.args:
            raise self.error(call.args[0], "_replace takes keyword arguments only",
                             f"{self.acc}._replace(field=value)")
        given: dict[str, tuple[ast.expr, Expr]] = {}
        for kw in call.keywords:
            self.check_keyword(kw, given)
            given[kw.arg] = (kw.value, self.expr(kw.value, env))
        return tuple(self.fit(given[n][1], d.type, given[n][0], f"field `{n}`") if n in given
                     else self.state[n] for n, d in self.fields.items())

    def check_keyword(self, kw: ast.keyword, given: dict) -> None:
        if kw.arg is None:
            raise self.error(kw, "unsupported construct: ** in a call", "field=value")
        if kw.arg not in self.fields:
            raise self.error(kw, f"State has no field `{kw.arg}`", plural(self.fields))
        if kw.arg in given:
            raise self.error(kw, f"field `{kw.arg}` is given twice", "each field once")

    def fit(self, e: Expr, type_: Type, node: ast.expr, what: str) -> Expr:
        """`e` stored where `type_` is declared: equal types, or an Int into a Real."""
        if e.type is type_:
            return e
        if type_ is Type.REAL and e.type is Type.INT:
            return as_real(e)
        raise self.error(node, f"{what} is {type_.value} but this value is {e.type.value}",
                         f"a value of type {type_.value}" + (" (or Int)" if type_ is Type.REAL else ""))


# --- small pure helpers ----------------------------------------------------------

def _has_return(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Return) for n in ast.walk(node))


def _always_returns(s: ast.stmt) -> bool:
    match s:
        case ast.Return():
            return True
        case ast.If(body=body, orelse=orelse):
            return any(map(_always_returns, body)) and any(map(_always_returns, orelse))
    return False


def _is_state(node: ast.expr, acc: str) -> bool:
    match node:
        case ast.Name(id=name) if name == acc:
            return True
        case ast.Call(func=ast.Name(id="State")) | ast.Call(func=ast.Attribute(attr="_replace")):
            return True
    return False

