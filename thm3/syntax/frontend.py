"""The frontend: a loop file's text to a `Loop` whose `left`, `right` and `result` are
pure expression DAGs.

The file is read with Python's parser (`ast`) and never imported, compiled or run.  A
whitelist reads it: each construct the format allows has a case here, and everything
else ends in "unsupported construct" with its place in the file.  The three functions
are executed symbolically: locals hold `Expr`s, an `if` merges them with WHERE, and
returns inside branches become WHERE chains over the outputs.

The stages live beside this entry point: `positions` (places and errors), `declarations`
(the module level), `body` (statements) and `expressions`."""
from __future__ import annotations

import ast
from pathlib import Path

from thm3.errors import LoopError
from thm3.ir import Loop, Op, Type, walk
from thm3.syntax.declarations import MAX_SOURCE_BYTES, Module
from thm3.syntax.positions import Source


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
    source = Source(text, path)
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
        return Module(source, name).read(tree)
    except LoopError as err:
        raise err.with_traceback(None) from None
    except RecursionError:
        raise _too_deep(text, source, "thm3's frontend") from None


def _too_deep(text: str, source: Source, reader: str) -> LoopError:
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
    source = Source(loop.source, loop.path)
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
