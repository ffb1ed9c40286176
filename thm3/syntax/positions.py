"""Positions and errors of the frontend: `Source` turns a place in the loop file (an
`ast` node's line and byte offset) into a `LoopError` at path:line:col with the line and a
caret, and the hints here say, in each error, what the format allows instead."""
from __future__ import annotations

import ast
import io
import tokenize

from thm3.errors import LoopError
from thm3.ir import Type

TYPES = {"Real": Type.REAL, "Int": Type.INT, "Bool": Type.BOOL, "Vec": Type.VEC}
CALLS = ("max", "min", "abs", "exp", "exp2", "log", "log2", "sqrt", "where", "dot")

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


class Source:
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


def snippet(node: ast.AST, limit: int = 40) -> str:
    text = ast.unparse(node)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe(node: ast.AST) -> str:
    match node:
        case ast.Call(func=func):
            return f"call to `{snippet(func)}`"
        case ast.Attribute(attr=attr):
            return f"attribute access `.{attr}`"
        case ast.Constant(value=value):
            return f"{type(value).__name__} literal"
        case ast.Expr(value=value):
            return describe(value)
    return CONSTRUCTS.get(type(node), type(node).__name__)


def plural(items) -> str:
    return ", ".join(f"`{i}`" for i in items) or "none"
