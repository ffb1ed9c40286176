"""The declarations at module level of a loop file: imports, `class State`, a NamedTuple of
results, loop parameters, and the signatures of `left`, `right` and `result`, whose bodies
`thm3.syntax.body` reads.  `Module.read` puts them together into a `Loop`."""
from __future__ import annotations

import ast
import inspect
import math
from dataclasses import dataclass, field

from thm3.errors import LoopError
from thm3.syntax.names import FUNCTIONS, LANG_NAMES, NAMES_IN_USE, RESERVED
from thm3.ir import Expr, FieldDecl, Fn, Loop, ParamDecl, Type, walk
from thm3.syntax.body import Body
from thm3.syntax.expressions import float_infinity
from thm3.syntax.positions import HINT_DEFAULT, HINT_IMPORT, HINT_MODULE, HINT_TYPE, TYPES, Source, describe, snippet

# Bounds on what a loop file may hold, so that a huge or deep file is refused at once
# instead of exhausting the recursion limit, the time budget or memory of later stages.
# The samples reach depth 8 and 19 nodes a function.
MAX_SOURCE_BYTES = 256 * 1024
MAX_DEPTH = 64          # longest chain of operations from an output to a leaf
MAX_NODES = 2000        # distinct operations in one function


@dataclass
class Module:
    """The declarations at module level: imports, State, loop parameters, functions."""
    src: Source
    name: str
    docstring: str | None = None
    imported: set[str] = field(default_factory=set)
    state: ast.ClassDef | None = None
    fields: list[FieldDecl] = field(default_factory=list)
    field_lines: dict[str, int] = field(default_factory=dict)
    params: dict[str, ParamDecl] = field(default_factory=dict)
    param_comments: dict[str, str] = field(default_factory=dict)
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)
    result_classes: dict[str, tuple[tuple[str, Type], ...]] = field(default_factory=dict)  # NamedTuples `result` may return
    result_class_nodes: dict[str, ast.ClassDef] = field(default_factory=dict)

    def read(self, tree: ast.Module) -> Loop:
        for i, stmt in enumerate(tree.body):
            self.read_statement(stmt, first=i == 0)
        if self.state is None:
            raise self.src.error(None, "missing `class State(NamedTuple)`",
                                 "class State(NamedTuple): with fields `name: Type = default`")
        if "left" not in self.functions:
            raise self.src.error(None, "missing `def left(acc: State, <element parameters>) -> State`",
                                 "def left(acc: State, x: Real) -> State: ...")

        left = self.functions["left"]
        acc, elements = self.signature(left)
        body = Body(self, left, acc, elements)
        left_fn = Fn(self.inputs(elements), self.bounded(left, body.outputs()))
        right_fn = result_fn = result_type = None
        if "right" in self.functions:
            fn = self.functions["right"]
            outputs = Body(self, fn, *self.right_signature(fn, elements)).outputs()
            right_fn = Fn(self.inputs(elements), self.bounded(fn, outputs))
        result_kind, result_names, result_class = "value", (), ""
        if "result" in self.functions:
            fn = self.functions["result"]
            acc, declared, shape = self.result_signature(fn)
            result_body = Body(self, fn, acc, [], declared, shape)
            outputs = self.bounded(fn, result_body.outputs())
            result_fn = Fn(self.inputs([]), outputs)
            result_kind = result_body.result_kind
            if result_kind == "value":
                result_type = declared or outputs[0].type
            if result_kind == "namedtuple":
                result_class = shape[2]
                result_names = tuple(name for name, _ in self.result_classes[result_class])
        unused = [name for name in self.result_classes if name != result_class]
        if unused:
            raise self.src.error(self.result_class_nodes[unused[0]], f"class `{unused[0]}` is not what `result` "
                                 "returns", f"def result(acc: State) -> {unused[0]}: return {unused[0]}(...)")

        doc = inspect.cleandoc(self.docstring).strip() if self.docstring else ""
        # the title is the first paragraph (its lines joined), the doc what follows it
        paragraph = doc.split("\n\n", 1)[0].splitlines() if doc else []
        return Loop(
            name=self.name, title=" ".join(line.strip() for line in paragraph) if doc else self.name,
            path=self.src.path, source=self.src.text,
            fields=tuple(self.fields), elements=tuple(elements), params=tuple(self.params.values()),
            left=left_fn, right=right_fn, result=result_fn, result_type=result_type,
            result_kind=result_kind, result_names=result_names, result_class=result_class,
            preconditions=tuple(body.preconditions),
            doc="\n".join(doc.splitlines()[len(paragraph):]).strip("\n"), param_comments=dict(self.param_comments))

    def bounded(self, fn: ast.FunctionDef, outputs: tuple[Expr, ...]) -> tuple[Expr, ...]:
        """`outputs`, unless they are deeper or larger than every later stage can take."""
        depth: dict[int, int] = {}
        for e in walk(outputs):
            depth[id(e)] = 1 + max((depth[id(s)] for s in e.src), default=0)
            if len(depth) > MAX_NODES:
                raise self.src.error(fn, f"`{fn.name}` computes more than {MAX_NODES} distinct operations",
                                     "a loop step of at most that size: split the work into several loops")
        deepest = max((depth[id(e)] for e in outputs), default=0)
        if deepest > MAX_DEPTH:
            raise self.src.error(fn, f"`{fn.name}` chains {deepest} operations, more than the {MAX_DEPTH} "
                                 "a loop step may chain", "a shallower step: fewer chained assignments")
        return outputs

    def inputs(self, elements: list[ParamDecl]) -> tuple[tuple[str, Type], ...]:
        return (tuple((f"acc.{f.name}", f.type) for f in self.fields)
                + tuple((p.name, p.type) for p in elements)
                + tuple((p.name, p.type) for p in self.params.values()))

    def read_statement(self, stmt: ast.stmt, first: bool) -> None:
        match stmt:
            case ast.Expr(value=ast.Constant(value=str() as doc)) if first:
                self.docstring = doc
            case ast.ImportFrom():
                self.read_import(stmt)
            case ast.Import(names=names):
                raise self.src.error(stmt, f"unsupported construct: import of `{names[0].name}`", HINT_IMPORT)
            case ast.ClassDef(name="State"):
                self.read_state(stmt)
            case ast.ClassDef(name=name, bases=[ast.Name(id="NamedTuple") as base], keywords=[],
                              decorator_list=[]):
                self.require_import(base, "NamedTuple")
                self.read_result_class(stmt)
            case ast.ClassDef(name=name):
                raise self.src.error(stmt, f"unsupported construct: class `{name}`",
                                     "`class State(NamedTuple)`, and a NamedTuple that `result` returns")
            case ast.AnnAssign():
                self.read_param(stmt)
            case ast.FunctionDef():
                self.read_def(stmt)
            case ast.Assign() | ast.AugAssign():
                raise self.src.error(stmt, "unsupported construct: assignment with a value at module level",
                                     "a loop parameter is declared without a value: `name: Type`")
            case _:
                raise self.src.error(stmt, f"unsupported construct: {describe(stmt)} at module level",
                                     HINT_MODULE)

    def read_import(self, stmt: ast.ImportFrom) -> None:
        allowed = {"typing": frozenset({"NamedTuple"}), "thm3.lang": LANG_NAMES}
        module = "." * stmt.level + (stmt.module or "")
        if module not in allowed:
            raise self.src.error(stmt, f"unsupported construct: import from `{module}`", HINT_IMPORT)
        for alias in stmt.names:
            if alias.name == "*":
                raise self.src.error(alias, "unsupported construct: `import *`",
                                     f"name what the file uses: from {module} import ...")
            if alias.name not in allowed[module]:
                raise self.src.error(alias, f"`{module}` has no `{alias.name}` for loop files",
                                     f"from {module} import {', '.join(sorted(allowed[module]))}")
            if alias.asname not in (None, alias.name):
                raise self.src.error(alias, "unsupported construct: import under another name (`as`)",
                                     f"from {module} import {alias.name}")
            self.imported.add(alias.name)

    def require_import(self, node: ast.AST, name: str) -> None:
        if name not in self.imported:
            origin = "typing" if name == "NamedTuple" else "thm3.lang"
            raise self.src.error(node, f"`{name}` is used but not imported", f"from {origin} import {name}")

    def read_type(self, node: ast.expr | None, what: str, index_ok: bool = False) -> tuple[Type, bool]:
        """A type annotation: (type, is Index)."""
        match node:
            case None:
                raise self.src.error(None, f"{what} needs a type annotation", HINT_TYPE)
            case ast.Name(id="Index"):
                if not index_ok:
                    raise self.src.error(node, f"`Index` is an element parameter type only, not {what}",
                                         "Real, Int, Bool, Vec")
                self.require_import(node, "Index")
                return Type.INT, True
            case ast.Name(id=name) if name in TYPES:
                self.require_import(node, name)
                return TYPES[name], False
        raise self.src.error(node, f"unsupported type `{snippet(node)}` for {what}", HINT_TYPE)

    def read_state(self, cls: ast.ClassDef) -> None:
        if self.state is not None:
            raise self.src.error(cls, "a second `class State`", "one State class")
        if cls.decorator_list:
            raise self.src.error(cls.decorator_list[0], "unsupported construct: class decorator",
                                 "class State(NamedTuple): without decorators")
        match cls:
            case ast.ClassDef(bases=[ast.Name(id="NamedTuple") as base], keywords=[]):
                self.require_import(base, "NamedTuple")
            case _:
                raise self.src.error(cls, "State must be declared as `class State(NamedTuple)`",
                                     "class State(NamedTuple):")
        self.state = cls
        for i, stmt in enumerate(cls.body):
            match stmt:
                case ast.Expr(value=ast.Constant(value=str())) if i == 0:
                    pass
                case ast.Pass():
                    pass
                case ast.AnnAssign(target=ast.Name(id=name), simple=1):
                    self.read_field(stmt, name)
                case _:
                    raise self.src.error(stmt, f"unsupported construct: {describe(stmt)} in State",
                                         "fields `name: Type = default`")
        if not self.fields:
            raise self.src.error(cls, "State has no fields", "fields `name: Type = default`")

    def read_result_class(self, cls: ast.ClassDef) -> None:
        """A NamedTuple of named results: `name: Type` fields, no defaults."""
        if cls.name in self.result_classes or cls.name in TYPES or cls.name in NAMES_IN_USE:
            raise self.src.error(cls, f"a second class `{cls.name}`" if cls.name in self.result_classes
                                 else f"`{cls.name}` is a reserved name in loop files", "another name")
        if self.result_classes:
            raise self.src.error(cls, f"a second result class `{cls.name}`", "one NamedTuple of results")
        fields: list[tuple[str, Type]] = []
        for i, stmt in enumerate(cls.body):
            match stmt:
                case ast.Expr(value=ast.Constant(value=str())) if i == 0:
                    pass
                case ast.AnnAssign(target=ast.Name(id=name), simple=1, value=None):
                    if name.startswith("_") or name in {n for n, _ in fields}:
                        raise self.src.error(stmt, f"field `{name}`: " + ("a second one" if not name.startswith("_")
                                             else "starts with an underscore"), "another name")
                    type_, _ = self.read_type(stmt.annotation, "a result")
                    fields.append((name, type_))
                case ast.AnnAssign(value=value) if value is not None:
                    raise self.src.error(value, f"a field of `{cls.name}` takes no default: `result` gives "
                                         "every value", "name: Type")
                case _:
                    raise self.src.error(stmt, f"unsupported construct: {describe(stmt)} in {cls.name}",
                                         "fields `name: Type`")
        if not fields:
            raise self.src.error(cls, f"{cls.name} has no fields", "fields `name: Type`")
        self.result_classes[cls.name] = tuple(fields)
        self.result_class_nodes[cls.name] = cls

    def read_field(self, stmt: ast.AnnAssign, name: str) -> None:
        if name.startswith("_"):
            raise self.src.error(stmt, f"field `{name}` starts with an underscore",
                                 "a name without a leading underscore (NamedTuple reserves them)")
        if name in self.field_lines:
            raise self.src.error(stmt, f"a second field `{name}` (first on line {self.field_lines[name]})")
        type_, _ = self.read_type(stmt.annotation, "a State field")
        if stmt.value is None:
            raise self.src.error(stmt, f"field `{name}` needs a default: the defaults are the initial state",
                                 HINT_DEFAULT)
        default = self.read_default(stmt.value, type_, name)
        self.fields.append(FieldDecl(name, type_, default, self.src.comments.get(stmt.lineno, "")))
        self.field_lines[name] = stmt.lineno

    def read_default(self, node: ast.expr, type_: Type, name: str):
        value = self.literal(node)
        if value is None:
            raise self.src.error(node, f"unsupported construct: {describe(node)} as the default of `{name}`",
                                 HINT_DEFAULT)
        ok = {
            Type.REAL: not isinstance(value, bool),
            Type.INT: isinstance(value, int) and not isinstance(value, bool),
            Type.BOOL: isinstance(value, bool),
            Type.VEC: not isinstance(value, bool),
        }[type_]
        if not ok:
            raise self.src.error(node, f"the default {snippet(node)} does not fit field `{name}: {type_.value}`",
                                 "a number for a Vec (every lane)" if type_ is Type.VEC else HINT_DEFAULT)
        match type_:
            case Type.REAL:
                return float(value)
            case Type.VEC:
                return 0 if value == 0 else float(value)     # every lane; 0 is the zero vector
            case _:
                return value

    def literal(self, node: ast.expr):
        """A constant default: a number, inf (or float("inf")), True or False, with signs
        folded; else None."""
        match node:
            case ast.Constant(value=bool() | int() | float() as value):
                return value
            case ast.Name(id="inf"):
                self.require_import(node, "inf")
                return math.inf
            case ast.Call() if (value := float_infinity(node)) is not None:
                return value
            case ast.UnaryOp(op=ast.USub() | ast.UAdd() as op, operand=operand):
                value = self.literal(operand)
                if value is None or isinstance(value, bool):
                    return None
                return -value if isinstance(op, ast.USub) else value
        return None

    def read_param(self, stmt: ast.AnnAssign) -> None:
        if not isinstance(stmt.target, ast.Name):
            raise self.src.error(stmt, f"unsupported construct: annotated {describe(stmt.target)} at module level",
                                 HINT_MODULE)
        name = stmt.target.id
        if stmt.value is not None:
            raise self.src.error(stmt, "unsupported construct: assignment with a value at module level",
                                 f"a loop parameter is declared without a value: `{name}: {snippet(stmt.annotation)}`")
        if name in RESERVED:
            raise self.src.error(stmt, f"`{name}` is a reserved name in loop files", "another name")
        if name in self.params:
            raise self.src.error(stmt, f"a second loop parameter `{name}`")
        type_, _ = self.read_type(stmt.annotation, "a loop parameter")
        self.params[name] = ParamDecl(name, type_)
        self.param_comments[name] = self.src.comments.get(stmt.lineno, "")

    def read_def(self, fn: ast.FunctionDef) -> None:
        if fn.name not in FUNCTIONS:
            raise self.src.error(fn, f"unsupported construct: function `{fn.name}`",
                                 "only `left`, `right` and `result`; write helpers inline")
        if fn.name in self.functions:
            raise self.src.error(fn, f"a second `def {fn.name}`")
        if fn.decorator_list:
            raise self.src.error(fn.decorator_list[0], "unsupported construct: decorator", "a plain `def`")
        args = fn.args
        if args.posonlyargs:
            raise self.src.error(args.posonlyargs[0], "unsupported construct: positional-only parameters",
                                 "plain parameters")
        if args.vararg:
            raise self.src.error(args.vararg, "unsupported construct: *args", "plain parameters")
        if args.kwonlyargs:
            raise self.src.error(args.kwonlyargs[0], "unsupported construct: keyword-only parameters",
                                 "plain parameters")
        if args.kwarg:
            raise self.src.error(args.kwarg, "unsupported construct: **kwargs", "plain parameters")
        if args.defaults:
            raise self.src.error(args.defaults[0], "unsupported construct: default argument value",
                                 "parameters without defaults")
        self.functions[fn.name] = fn

    # --- signatures: who is the state, who are the elements

    def state_param(self, fn: ast.FunctionDef, arg: ast.arg) -> str:
        if arg.annotation is not None and not (isinstance(arg.annotation, ast.Name) and arg.annotation.id == "State"):
            raise self.src.error(arg.annotation, f"the state parameter `{arg.arg}` of `{fn.name}` must be a State",
                                 f"{arg.arg}: State")
        if arg.arg in NAMES_IN_USE or arg.arg in self.params:
            raise self.src.error(arg, f"`{arg.arg}` is already a name in this file", "another name, such as acc")
        return arg.arg

    def returns_state(self, fn: ast.FunctionDef) -> None:
        if fn.returns is not None and not (isinstance(fn.returns, ast.Name) and fn.returns.id == "State"):
            raise self.src.error(fn.returns, f"`{fn.name}` returns a State", "-> State")

    def signature(self, fn: ast.FunctionDef) -> tuple[str, list[ParamDecl]]:
        """left(acc: State, x..., ) -> State."""
        args = fn.args.args
        if len(args) < 2:
            raise self.src.error(fn, "`left` takes the state and at least one element parameter",
                                 "def left(acc: State, x: Real) -> State")
        acc = self.state_param(fn, args[0])
        self.returns_state(fn)
        elements: list[ParamDecl] = []
        for arg in args[1:]:
            if arg.arg in NAMES_IN_USE or arg.arg in self.params or arg.arg == acc:
                raise self.src.error(arg, f"`{arg.arg}` is already a name in this file", "another name")
            if any(p.name == arg.arg for p in elements):
                raise self.src.error(arg, f"a second parameter `{arg.arg}`")
            if arg.annotation is None:
                raise self.src.error(arg, f"element parameter `{arg.arg}` needs a type", HINT_TYPE)
            type_, index = self.read_type(arg.annotation, "an element parameter", index_ok=True)
            elements.append(ParamDecl(arg.arg, type_, index))
        return acc, elements

    def right_signature(self, fn: ast.FunctionDef, elements: list[ParamDecl]) -> tuple[str, list[ParamDecl]]:
        """right(x..., acc: State) -> State, with left's element parameters."""
        args = fn.args.args
        expected = ", ".join(p.name for p in elements)
        typed = ", ".join(f"{p.name}: {'Index' if p.index else p.type.value}" for p in elements)
        hint = f"def right({typed}, acc: State) -> State"
        if len(args) != len(elements) + 1:
            raise self.src.error(fn, f"`right` takes left's element parameters ({expected}) and then the state",
                                 hint)
        for arg, p in zip(args, elements):
            if arg.arg != p.name:
                raise self.src.error(arg, f"`right` has parameter `{arg.arg}` where left has `{p.name}`", hint)
            if arg.annotation is None:
                raise self.src.error(arg, f"element parameter `{arg.arg}` needs a type", HINT_TYPE)
            type_, index = self.read_type(arg.annotation, "an element parameter", index_ok=True)
            if (type_, index) != (p.type, p.index):
                want = "Index" if p.index else p.type.value
                got = "Index" if index else type_.value
                raise self.src.error(arg.annotation, f"`{arg.arg}` is {got} here but {want} in left",
                                     f"{arg.arg}: {want}")
        acc = self.state_param(fn, args[-1])
        if acc in {p.name for p in elements}:
            raise self.src.error(args[-1], f"a second parameter `{acc}`")
        self.returns_state(fn)
        return acc, elements

    def result_signature(self, fn: ast.FunctionDef) -> tuple[str, Type | None, tuple]:
        """`result`'s state parameter, its one declared type (or None), and its shape:
        (kind, the declared types of a tuple or None, the NamedTuple's name)."""
        args = fn.args.args
        if len(args) != 1:
            raise self.src.error(fn, "`result` takes the state only", "def result(acc: State) -> Real")
        acc = self.state_param(fn, args[0])
        match fn.returns:
            case None:
                return acc, None, ("value", None, "")
            case ast.Name(id="tuple"):
                return acc, None, ("tuple", None, "")
            case ast.Subscript(value=ast.Name(id="tuple"), slice=ast.Tuple(elts=elts)) if elts:
                return acc, None, ("tuple", tuple(self.read_type(e, "a result")[0] for e in elts), "")
            case ast.Subscript(value=ast.Name(id="tuple"), slice=one):
                return acc, None, ("tuple", (self.read_type(one, "a result")[0],), "")
            case ast.Name(id=name) if name in self.result_classes:
                return acc, None, ("namedtuple", tuple(t for _, t in self.result_classes[name]), name)
        try:
            declared, _ = self.read_type(fn.returns, "a result")
        except LoopError as err:
            raise LoopError(err.message, err.path, err.line, err.col, err.source_line,
                            "Real, Int, Bool, Vec; tuple (or tuple[Real, Int]) for several values; or a "
                            "NamedTuple class of the file for named ones") from None
        return acc, declared, ("value", None, "")
