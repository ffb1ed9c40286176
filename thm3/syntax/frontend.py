"""The frontend: a loop file's text to a `Loop` whose `left`, `right` and `result` are
pure expression DAGs.

The file is read with Python's parser (`ast`) and never imported, compiled or run.  A
whitelist reads it: each construct the format allows has a case here, and everything
else ends in "unsupported construct" with its place in the file.  The three functions
are executed symbolically: locals hold `Expr`s, an `if` merges them with WHERE, and
returns inside branches become WHERE chains over the outputs."""
from __future__ import annotations

import ast
import difflib
import inspect
import io
import math
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

from thm3.errors import LoopError
from thm3.syntax.names import FUNCTIONS, LANG_NAMES, NAMES_IN_USE, RESERVED
from thm3.ir import Expr, FieldDecl, Fn, Loop, Op, ParamDecl, Type, as_real, const, free_vars, var, walk
from thm3.ir.types import result_type

TYPES = {"Real": Type.REAL, "Int": Type.INT, "Bool": Type.BOOL, "Vec": Type.VEC}
CALLS = ("max", "min", "abs", "exp", "exp2", "log", "log2", "sqrt", "where", "dot")

ARITHMETIC = {ast.Add: (Op.ADD, "+"), ast.Sub: (Op.SUB, "-"), ast.Mult: (Op.MUL, "*"),
              ast.Div: (Op.DIV, "/"), ast.Pow: (Op.POW, "**")}
COMPARISONS = {ast.Lt: Op.LT, ast.LtE: Op.LE, ast.Gt: Op.GT, ast.GtE: Op.GE,
               ast.Eq: Op.EQ, ast.NotEq: Op.NE}
MATH_CALLS = {"exp": Op.EXP, "exp2": Op.EXP2, "log": Op.LOG, "log2": Op.LOG2, "sqrt": Op.SQRT}

HINT_MODULE = ("a docstring, `from typing import NamedTuple`, `from thm3.lang import ...`, "
               "`class State(NamedTuple)`, loop parameters `name: Type` (no value), "
               "and `def left`, `def right`, `def result`")
HINT_IMPORT = "`from typing import NamedTuple` and `from thm3.lang import <names>`"
HINT_STATEMENT = ("assignment to a local name (tuple unpacking too), if/elif/else, "
                  "`return State(...)`, `return acc._replace(...)`, `return acc`, `pass`, "
                  "and `assert` as the first statements of left")
HINT_EXPRESSION = ("numbers, inf, True, False, local names, parameters, acc.<field>, "
                   "+ - * /, ** with a constant integer exponent, % by a positive integer constant, "
                   "comparisons, and, or, not, "
                   "a if c else b, and calls to " + ", ".join(CALLS))
HINT_CALL = ", ".join(CALLS) + " (all but max, min, abs imported from thm3.lang)"
HINT_TYPE = "Real, Int, Bool, Vec (and Index for an element parameter)"
HINT_DEFAULT = "a number, inf, -inf, True or False (a Vec's number fills every lane)"
HINT_STATE = "return State(...), return acc._replace(field=...), or return acc"

# What the generic errors call a node.
CONSTRUCTS = {
    ast.For: "for loop", ast.AsyncFor: "async for loop", ast.While: "while loop",
    ast.Lambda: "lambda", ast.ListComp: "list comprehension", ast.SetComp: "set comprehension",
    ast.DictComp: "dict comprehension", ast.GeneratorExp: "generator expression",
    ast.Import: "import", ast.ImportFrom: "import", ast.Global: "global statement",
    ast.Nonlocal: "nonlocal statement", ast.Try: "try statement",
    ast.With: "with statement", ast.AsyncWith: "async with statement",
    ast.Delete: "del statement", ast.Raise: "raise statement", ast.Break: "break",
    ast.Continue: "continue", ast.ClassDef: "class definition",
    ast.FunctionDef: "function definition", ast.AsyncFunctionDef: "async function definition",
    ast.Match: "match statement", ast.If: "if statement", ast.Assert: "assert",
    ast.Return: "return", ast.Pass: "pass", ast.Assign: "assignment",
    ast.AugAssign: "augmented assignment", ast.AnnAssign: "annotated assignment",
    ast.Expr: "expression statement", ast.Subscript: "subscript", ast.Slice: "slice",
    ast.List: "list", ast.Tuple: "tuple", ast.Dict: "dict", ast.Set: "set",
    ast.JoinedStr: "f-string", ast.FormattedValue: "f-string",
    ast.NamedExpr: "assignment expression (:=)", ast.Await: "await", ast.Yield: "yield",
    ast.YieldFrom: "yield from", ast.Starred: "starred expression",
}
if hasattr(ast, "TryStar"):                 # Python 3.11+: `try: ... except* E: ...`
    CONSTRUCTS[ast.TryStar] = "try statement"

# Bounds on what a loop file may hold, so that a huge or deep file is refused at once
# instead of exhausting the recursion limit, the time budget or memory of later stages.
# The samples reach depth 8 and 19 nodes a function.
MAX_SOURCE_BYTES = 256 * 1024
MAX_DEPTH = 64          # longest chain of operations from an output to a leaf
MAX_NODES = 2000        # distinct operations in one function


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


_OPENERS = {"(", "[", "{", ",", "=", ":", "return", "if", "elif", "else", "assert", "not"}


def _deepest_expression(text: str) -> tuple[int, int, int]:
    """Where an expression too deep for `ast.parse` is (its 1-based line and column) and
    how many operators its line holds, read from the tokens alone (the tokenizer does not
    recurse): the line with the most operators, at the start of the operand before its
    first one."""
    import io
    import tokenize
    lines: dict[int, list] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in (tokenize.OP, tokenize.NAME, tokenize.NUMBER):
                lines.setdefault(tok.start[0], []).append(tok)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    if not lines:
        return 1, 1, 0

    def operators(toks):
        return [k for k, t in enumerate(toks) if t.type == tokenize.OP and t.string not in "()[]{},.:="
                or t.string in ("and", "or")]

    line, toks = max(lines.items(), key=lambda kv: len(operators(kv[1])))
    ops = operators(toks)
    first = ops[0] if ops else 0
    start = next((k + 1 for k in range(first - 1, -1, -1) if toks[k].string in _OPENERS), 0)
    return line, toks[min(start, len(toks) - 1)].start[1] + 1, len(ops)


def parse_source(text: str, path: str = "<string>", name: str | None = None) -> Loop:
    """Read a loop file's text; `path` names it in errors, `name` defaults to its stem."""
    if name is None:
        name = "loop" if path.startswith("<") else Path(path).stem
    text = text.removeprefix("\ufeff")        # a byte-order mark is not part of the program
    if len(text) > MAX_SOURCE_BYTES:
        raise LoopError(f"the file holds {len(text)} characters, more than the {MAX_SOURCE_BYTES} a loop file "
                        "may hold", path, 1, 1, text.split("\n", 1)[0][:200])
    source = _Source(text, path)
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as err:
        line = err.lineno or 1
        raise LoopError(f"invalid Python syntax: {err.msg}", path, line, err.offset or 1,
                        source.line(line)) from None
    except RecursionError:                  # an expression deeper than Python's parser takes
        raise _too_deep(text, source, "Python's parser") from None
    except (ValueError, MemoryError) as err:   # NUL bytes
        raise LoopError(f"unreadable source: {err}", path, 1, 1, source.line(1)) from None
    try:
        return _Module(source, name).read(tree)
    except LoopError as err:
        raise err.with_traceback(None) from None
    except RecursionError:
        raise _too_deep(text, source, "thm3's frontend") from None


def _too_deep(text: str, source: _Source, reader: str) -> LoopError:
    line, col, count = _deepest_expression(text)
    return LoopError(f"this expression chains {count} operations, more than {reader} can read",
                     source.path, line, col, source.line(line),
                     "a shorter expression: name its parts (t = x + y) and combine the names")


INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def wide_int_literal(loop: Loop, backend: str) -> LoopError | None:
    """A `LoopError` at the first integer literal of the loop's functions beyond int64
    (the analysis reads it exactly; a backend that computes Ints in int64 cannot), or
    None.  The position is the literal's in the file; 1:1 where the value was computed
    from smaller literals (2 ** 70)."""
    fns = [f for f in (loop.left, loop.right, loop.result) if f is not None]
    wide = [e.arg for e in walk([o for f in fns for o in f.outputs] + list(loop.preconditions))
            if e.op is Op.CONST and e.type is Type.INT and isinstance(e.arg, int)
            and not isinstance(e.arg, bool) and not INT64_MIN <= e.arg <= INT64_MAX]
    if not wide:
        return None
    source = _Source(loop.source, loop.path)
    message = f"the Int literal {wide[0]} is beyond int64 ({backend} computes Ints in int64)"
    hint = f"a literal in [{INT64_MIN}, {INT64_MAX}], or a Real literal ({float(wide[0])!r})"
    try:
        tree = ast.parse(loop.source)
    except (SyntaxError, ValueError):
        tree = None
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
                and node.operand.value == -INT64_MIN:
            node.operand.value = 0          # -9223372036854775808 is int64's least value
        if isinstance(node, ast.Constant) and type(node.value) is int and not INT64_MIN <= node.value <= INT64_MAX:
            return source.error(node, message, hint)
    return LoopError(message, loop.path, 1, 1, source.line(1), hint)


def parse_file(path) -> Loop:
    """Read the loop file at `path`; the loop is named after the file's stem."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as err:
        raise LoopError(f"not UTF-8 text: {err.reason}", str(path), 1, 1) from None
    return parse_source(text, str(path), name=p.stem)


# --- positions -------------------------------------------------------------------

class _Source:
    """The file's text, for turning `ast` positions (byte offsets) into errors."""

    def __init__(self, text: str, path: str):
        self.path = path
        self.text = text
        self.lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        self.comments = _comments(text)

    def line(self, number: int) -> str:
        return self.lines[number - 1] if 1 <= number <= len(self.lines) else ""

    def error(self, node: ast.AST | None, message: str, hint: str | None = None) -> LoopError:
        line = getattr(node, "lineno", None) or 1
        return self.error_at(line, getattr(node, "col_offset", 0) or 0, message, hint)

    def error_at(self, line: int, byte_offset: int, message: str, hint: str | None = None) -> LoopError:
        text = self.line(line)
        col = len(text.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore")) + 1
        return LoopError(message, self.path, line, col, text, hint)

    def error_at_attribute(self, node: ast.Attribute, message: str, hint: str | None = None) -> LoopError:
        """An error under the attribute's name, `acc.nope` pointing at `nope`."""
        if node.end_lineno is None or node.end_col_offset is None:
            return self.error(node, message, hint)
        return self.error_at(node.end_lineno, node.end_col_offset - len(node.attr.encode("utf-8")),
                             message, hint)


def _comments(text: str) -> dict[int, str]:
    """Trailing comments by line, for the field descriptions."""
    found: dict[int, str] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                found[tok.start[0]] = tok.string.lstrip("#").strip()
    except (tokenize.TokenError, SyntaxError):
        pass
    return found


def _snippet(node: ast.AST, limit: int = 40) -> str:
    text = ast.unparse(node)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe(node: ast.AST) -> str:
    match node:
        case ast.Call(func=func):
            return f"call to `{_snippet(func)}`"
        case ast.Attribute(attr=attr):
            return f"attribute access `.{attr}`"
        case ast.Constant(value=value):
            return f"{type(value).__name__} literal"
        case ast.Expr(value=value):
            return _describe(value)
    return CONSTRUCTS.get(type(node), type(node).__name__)


def _plural(items) -> str:
    return ", ".join(f"`{i}`" for i in items) or "none"


# --- module level ----------------------------------------------------------------

@dataclass
class _Module:
    """The declarations at module level: imports, State, loop parameters, functions."""
    src: _Source
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
        body = _Body(self, left, acc, elements)
        left_fn = Fn(self.inputs(elements), self.bounded(left, body.outputs()))
        right_fn = result_fn = result_type = None
        if "right" in self.functions:
            fn = self.functions["right"]
            outputs = _Body(self, fn, *self.right_signature(fn, elements)).outputs()
            right_fn = Fn(self.inputs(elements), self.bounded(fn, outputs))
        result_kind, result_names, result_class = "value", (), ""
        if "result" in self.functions:
            fn = self.functions["result"]
            acc, declared, shape = self.result_signature(fn)
            result_body = _Body(self, fn, acc, [], declared, shape)
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
                raise self.src.error(stmt, f"unsupported construct: {_describe(stmt)} at module level",
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
        raise self.src.error(node, f"unsupported type `{_snippet(node)}` for {what}", HINT_TYPE)

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
                    raise self.src.error(stmt, f"unsupported construct: {_describe(stmt)} in State",
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
                    raise self.src.error(stmt, f"unsupported construct: {_describe(stmt)} in {cls.name}",
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
            raise self.src.error(node, f"unsupported construct: {_describe(node)} as the default of `{name}`",
                                 HINT_DEFAULT)
        ok = {
            Type.REAL: not isinstance(value, bool),
            Type.INT: isinstance(value, int) and not isinstance(value, bool),
            Type.BOOL: isinstance(value, bool),
            Type.VEC: not isinstance(value, bool),
        }[type_]
        if not ok:
            raise self.src.error(node, f"the default {_snippet(node)} does not fit field `{name}: {type_.value}`",
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
            raise self.src.error(stmt, f"unsupported construct: annotated {_describe(stmt.target)} at module level",
                                 HINT_MODULE)
        name = stmt.target.id
        if stmt.value is not None:
            raise self.src.error(stmt, "unsupported construct: assignment with a value at module level",
                                 f"a loop parameter is declared without a value: `{name}: {_snippet(stmt.annotation)}`")
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


# --- function bodies -------------------------------------------------------------

@dataclass(frozen=True)
class _Unbound:
    """A local that may not be read: assigned in only one branch of an if."""
    why: str


class _Body(ast.NodeVisitor):
    """Symbolic execution of `left`, `right` or `result`.  Statements go through `run`;
    expressions through the `visit_*` methods, whose fallback rejects the construct."""

    def __init__(self, module: _Module, fn: ast.FunctionDef, acc: str, elements: list[ParamDecl],
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
        self.env: dict[str, Expr | _Unbound] = {}

    def error(self, node, message, hint=None) -> LoopError:
        return self.src.error(node, message, hint)

    def outputs(self) -> tuple[Expr, ...]:
        body = list(self.fn.body)
        match body:
            case [ast.Expr(value=ast.Constant(value=str())), *rest]:
                body = rest                      # the docstring
        env: dict[str, Expr | _Unbound] = dict(self.elements)
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
                             f"not {_plural(n.replace('acc.', self.acc + '.') for n in outside)}",
                             _plural([*self.elements, *self.params]))
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
                    raise self.error(s, f"unsupported construct: {_describe(s)}", HINT_STATEMENT)
            last = s
        if tail:
            raise self.error(last, f"`{self.fn.name}` can reach its end without a return",
                             "an else branch or a final return")
        return env

    def merge(self, s: ast.If, cond: Expr, then: dict, other: dict) -> dict:
        merged: dict[str, Expr | _Unbound] = {}
        for name in {**then, **other}:
            a, b = then.get(name), other.get(name)
            if a is b:
                merged[name] = a
            elif a is None or b is None or isinstance(a, _Unbound) or isinstance(b, _Unbound):
                merged[name] = _Unbound(f"`{name}` is assigned in only one branch of the if on line {s.lineno}")
            elif (a.type is Type.BOOL) != (b.type is Type.BOOL):
                merged[name] = _Unbound(f"`{name}` is Bool in one branch of the if on line {s.lineno} "
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
                raise self.error(target, f"unsupported construct: assignment to {_describe(target)}",
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
            raise self.error(call.args[len(names)], f"{name} has {len(names)} fields ({_plural(names)})",
                             f"{name}({', '.join(names)})")
        given = {n: arg for n, arg in zip(names, call.args)}
        for kw in call.keywords:
            if kw.arg is None or kw.arg not in fields or kw.arg in given:
                raise self.error(kw, f"{name} has no field `{kw.arg}`" if kw.arg not in fields or kw.arg is None
                                 else f"field `{kw.arg}` is given twice", _plural(names))
            given[kw.arg] = kw.value
        missing = [n for n in names if n not in given]
        if missing:
            raise self.error(call, f"{name}(...) is missing {_plural(missing)}", f"{name}({', '.join(names)})")
        return [self.fit(self.expr(given[n], env), fields[n], given[n], f"field `{n}` of {name}") for n in names]

    def state_call(self, call: ast.Call, env: dict) -> tuple[Expr, ...]:
        names = list(self.fields)
        given: dict[str, tuple[ast.expr, Expr]] = {}
        if len(call.args) > len(names):
            raise self.error(call.args[len(names)], f"State has {len(names)} fields ({_plural(names)}), "
                             f"this is argument {len(names) + 1}", f"State({', '.join(names)})")
        for name, arg in zip(names, call.args):
            given[name] = (arg, self.expr(arg, env))
        for kw in call.keywords:
            self.check_keyword(kw, given)
            given[kw.arg] = (kw.value, self.expr(kw.value, env))
        missing = [n for n in names if n not in given]
        if missing:
            raise self.error(call, f"State(...) is missing {_plural(missing)}",
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
            raise self.error(kw, f"State has no field `{kw.arg}`", _plural(self.fields))
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
        raise self.error(node, f"unsupported construct: {_describe(node)}", HINT_EXPRESSION)

    def visit_Constant(self, node: ast.Constant) -> Expr:
        match node.value:
            case bool() | int() | float() as value:
                return const(value)
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> Expr:
        name = node.id
        if name in self.env:
            value = self.env[name]
            if isinstance(value, _Unbound):
                raise self.error(node, value.why, "assign it before the if or in every branch")
            return value
        if name in self.params:
            return self.params[name]
        if name == self.acc:
            raise self.error(node, f"the state `{name}` can only be read by field",
                             _plural(f"{name}.{f}" for f in self.fields))
        if name == "inf":
            self.module.require_import(node, "inf")
            return const(math.inf)
        if name in TYPES or name == "Index":
            raise self.error(node, f"`{name}` is a type, not a value", HINT_EXPRESSION)
        if name in CALLS or name == "State":
            raise self.error(node, f"`{name}` can only be called", f"{name}(...)")
        locals_ = [n for n, v in self.env.items() if n not in self.elements and not isinstance(v, _Unbound)]
        known = [*locals_, *self.elements, *self.params, *(f"{self.acc}.{f}" for f in self.fields), "inf"]
        close = difflib.get_close_matches(name, known, n=1)
        groups = [("local names", locals_), ("element parameters", list(self.elements)),
                  ("loop parameters", list(self.params)),
                  ("state fields", [f"{self.acc}.{f}" for f in self.fields])]
        raise self.error(node, f"unknown name `{name}`" + (f" (did you mean `{close[0]}`?)" if close else ""),
                         "; ".join(f"{what} {_plural(names)}" for what, names in groups if names) + "; inf")

    def visit_Attribute(self, node: ast.Attribute) -> Expr:
        fields = _plural(f"{self.acc}.{f}" for f in self.fields)
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
                raise self.error(node, f"unsupported construct: call to `{_snippet(node.func)}`", HINT_CALL)
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


_OPERATORS = {ast.FloorDiv: "//", ast.Mod: "%", ast.MatMult: "@", ast.LShift: "<<", ast.RShift: ">>",
              ast.BitOr: "|", ast.BitAnd: "&", ast.BitXor: "^"}


def _operator(node: ast.AST) -> str:
    op = getattr(node, "op", None)
    return _OPERATORS.get(type(op), type(op).__name__)


def _compare_token(op: ast.cmpop) -> str:
    return {ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}.get(type(op), type(op).__name__)
