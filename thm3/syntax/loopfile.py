"""Rendering a loop file: IR declarations and expressions back to the text users write.

The lifter writes its lifted loop with `render_loop`; the text is what the frontend
reads (`parse_source(render_loop(...))` computes the same function), formatted as the
samples are: docstring, imports of exactly the names used, `class State` with aligned
comments, loop parameters, and `left` / `right` / `result` whose shared subterms are
bound to locals, as a person would write them."""
from __future__ import annotations

import io
import math
import tokenize

from thm3.ir import Expr, FieldDecl, Fn, Op, Type
from thm3.ir.printer import to_text
from thm3.ir.program import lower
from thm3.syntax.names import LANG_NAMES, TAKEN, fresh

_LINE = 88
_INDENT = "    "
# A local's name from what it computes, where it is no field's new value.
_LOCAL_NAMES = {
    Op.EXP: "e", Op.EXP2: "e", Op.LOG: "lg", Op.LOG2: "lg", Op.SQRT: "r",
    Op.MAX: "hi", Op.MIN: "lo", Op.ADD: "u", Op.SUB: "u", Op.MUL: "w", Op.DIV: "q",
    Op.NEG: "neg", Op.ABS: "mag", Op.POW: "pw", Op.POWN: "pw", Op.MOD: "r", Op.DOT: "dp", Op.WHERE: "v",
    Op.LT: "cond", Op.LE: "cond", Op.GT: "cond", Op.GE: "cond", Op.EQ: "cond", Op.NE: "cond",
    Op.AND: "cond", Op.OR: "cond", Op.NOT: "cond",
}


def render_loop(title: str, doc: str, fields, params, elements, left_outputs, right_outputs=None,
                result=None, preconditions=(), *, param_comments: dict | None = None,
                result_type: Type | None = None, result_kind: str = "value", result_names: tuple = (),
                result_class: str = "") -> str:
    """A complete loop file.

    `fields` are `FieldDecl`s (their comments become the State comments), `params` the
    loop parameters and `elements` the element parameters as `ParamDecl`s.  The
    expressions name their inputs as `left`'s do: "acc.<field>", element and loop
    parameters by name.  `left_outputs` and `right_outputs` hold one expression per
    field; `result` is one expression (or a `Fn`: one output, or several returned as a
    tuple or, with `result_kind` "namedtuple", as `result_class` with `result_names`) over
    "acc.<field>" and the loop parameters; `preconditions` become `assert` lines at the
    top of `left`."""
    fields = tuple(fields)
    params = tuple(params)
    elements = tuple(elements)
    param_comments = param_comments or {}
    taken = set(TAKEN) | {p.name for p in params} | {p.name for p in elements}
    results = None if result is None else list(result.outputs) if isinstance(result, Fn) else [result]

    code: list[str] = []
    if params:
        decls = [f"{p.name}: {p.type.value}" for p in params]
        code += [""] + _aligned(decls, [param_comments.get(p.name, "") for p in params], "")
    code += ["", "", "class State(NamedTuple):"]
    decls = [f"{f.name}: {f.type.value} = {_default(f)}" for f in fields]
    code += _aligned(decls, [f.comment for f in fields], _INDENT)
    if results is not None and result_kind == "namedtuple":
        code += ["", "", f"class {result_class}(NamedTuple):"]
        code += [f"{_INDENT}{n}: {e.type.value}" for n, e in zip(result_names, results)]

    names = [f.name for f in fields]
    element_args = ", ".join(f"{p.name}: {'Index' if p.index else p.type.value}" for p in elements)
    code += ["", "", f"def left(acc: State, {element_args}) -> State:"]
    code += [f"{_INDENT}assert {_condition(c)}" for c in preconditions]
    code += _state_body(list(left_outputs), names, taken)
    if right_outputs is not None:
        code += ["", "", f"def right({element_args}, acc: State) -> State:"]
        code += _state_body(list(right_outputs), names, taken)
    if results is not None:
        lines, texts = _bind_locals(results, [None] * len(results), taken - {p.name for p in elements})
        match result_kind:
            case "namedtuple":
                returns, value = result_class, f"{result_class}({', '.join(texts)})"
            case "tuple":
                returns = f"tuple[{', '.join(e.type.value for e in results)}]"
                value = f"({', '.join(texts)}{',' if len(texts) == 1 else ''})"
            case _:
                returns, value = (result_type or results[0].type).value, texts[0]
        code += ["", "", f"def result(acc: State) -> {returns}:"]
        code += [_INDENT + line for line in lines] + [f"{_INDENT}return {value}"]

    body = "\n".join(code) + "\n"
    used = sorted(_lang_names(body))
    header = [_docstring(title, doc), "from typing import NamedTuple"]
    if used:
        header.append(f"from thm3.lang import {', '.join(used)}")
    return "\n".join(header) + "\n" + body


# --- pieces ----------------------------------------------------------------------

def _docstring(title: str, doc: str) -> str:
    def clean(text: str) -> str:
        return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')

    title = clean(" ".join(title.split()))
    doc = clean(doc.strip("\n").rstrip())
    if not doc:
        return f'"""{title}"""'
    return f'"""{title}\n\n{doc}"""'


def _default(f: FieldDecl) -> str:
    value = f.default
    match f.type:
        case Type.VEC:
            return "0"
        case Type.BOOL:
            return repr(bool(value))
        case Type.INT:
            return repr(int(value))
    value = float(value)
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == int(value):
        return repr(int(value))
    return repr(value)


def _aligned(decls: list[str], comments: list[str], indent: str) -> list[str]:
    """Declarations with their comments in one column: at least two spaces past the
    longest, on a multiple of four."""
    column = -(-(max(len(d) for d in decls) + len(indent) + 2) // 4) * 4 - len(indent)
    lines = []
    for d, c in zip(decls, comments):
        c = " ".join(c.split())
        lines.append(f"{indent}{d.ljust(column)}# {c}" if c else f"{indent}{d}")
    return lines


def _state_body(outputs: list[Expr], names: list[str], taken: set[str]) -> list[str]:
    lines, texts = _bind_locals(outputs, names, taken)
    call = f"return State({', '.join(texts)})"
    body = [_INDENT + line for line in lines]
    if len(_INDENT + call) <= _LINE:
        return body + [_INDENT + call]
    return body + [f"{_INDENT}return State("] + [f"{_INDENT * 2}{t}," for t in texts] + [f"{_INDENT})"]


def _lang_names(code: str) -> set[str]:
    names = set()
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.NAME and tok.string in LANG_NAMES:
            names.add(tok.string)
    return names


# --- shared subterms as locals ----------------------------------------------------

def _worth_a_local(e: Expr) -> bool:
    if e.op in (Op.VAR, Op.CONST):
        return False
    # -x, not c, acc.n + 1 read as easily as a name would
    if e.op in (Op.NEG, Op.NOT) and e.src[0].op in (Op.VAR, Op.CONST):
        return False
    return True


def _bind_locals(outputs: list[Expr], names: list[str | None], taken: set[str]) -> tuple[list[str], list[str]]:
    """Assignment lines for the subterms used more than once, and the outputs' texts."""
    program = lower(outputs)
    as_output: dict[Expr, str] = {}
    for o, name in zip(outputs, names):
        if name is not None and o not in as_output and name not in taken:
            as_output[o] = name
    chosen: set[str] = set()
    bound: dict[Expr, Expr] = {}       # a subterm -> the VAR node standing for it
    lines: list[str] = []
    for step, uses in zip(program.steps, program.uses):
        e = step.node
        if uses < 2 or not _worth_a_local(e):
            continue
        name = as_output.get(e)
        if name is None or name in chosen:
            name = fresh(_LOCAL_NAMES.get(e.op, "v"), taken | chosen | set(as_output.values()))
        chosen.add(name)
        lines.append(f"{name} = {_text(_replaced(e, bound, top=True))}")
        bound[e] = Expr(Op.VAR, e.type, (), name)
    texts = [_text(_replaced(o, bound)) for o in outputs]
    return lines, texts


def expression_text(e: Expr) -> str:
    """An expression as it reads standing alone in a loop file (see `_text`)."""
    return _text(e)


def _text(e: Expr) -> str:
    """An expression standing alone (an assignment, a return, a call argument): the
    printer's parentheses around a top-level conditional expression are not needed,
    and a whole-number Real constant beside a Real term reads as `0`, not `0.0`."""
    return to_text(_int_literals(e), standalone=True)


_MIXED = (Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.MAX, Op.MIN, Op.LT, Op.LE, Op.GT, Op.GE, Op.EQ, Op.NE)


def _int_literals(e: Expr) -> Expr:
    """Real constants with whole values written as Int literals where the frontend reads
    them back as Reals: next to a Real operand that is not itself a constant."""
    memo: dict[int, Expr] = {}

    def whole(c: Expr) -> bool:
        return (c.op is Op.CONST and c.type is Type.REAL and math.isfinite(c.arg)
                and c.arg == int(c.arg) and abs(c.arg) < 1e15)

    def go(n: Expr) -> Expr:
        got = memo.get(id(n))
        if got is not None:
            return got
        src = tuple(go(s) for s in n.src)
        if n.op in _MIXED and len(src) == 2:
            a, b = src
            if whole(a) and b.op is not Op.CONST and b.type is Type.REAL:
                a = Expr(Op.CONST, Type.INT, (), int(a.arg))
            if whole(b) and a.op is not Op.CONST and a.type is Type.REAL:
                b = Expr(Op.CONST, Type.INT, (), int(b.arg))
            src = (a, b)
        out = n if all(x is y for x, y in zip(src, n.src)) else Expr(n.op, n.type, src, n.arg)
        memo[id(n)] = out
        return out

    return go(e)


def _condition(c: Expr) -> str:
    """A precondition, with `a < x and x < b` written as the chain `a < x < b`."""
    if c.op is Op.AND:
        a, b = c.src
        if (a.op in _COMPARE and b.op in _COMPARE and a.src[1].op is Op.VAR
                and b.src[0].op is Op.VAR and a.src[1].arg == b.src[0].arg):
            # b prints as "<name> <op> <rhs>": a's text continues with its tail
            return f"{_text(a)} {_text(b)[len(b.src[0].arg) + 1:]}"
    return _text(c)


_COMPARE = (Op.LT, Op.LE, Op.GT, Op.GE, Op.EQ, Op.NE)


def _replaced(e: Expr, bound: dict[Expr, Expr], top: bool = False) -> Expr:
    """`e` with its bound subterms (not itself when `top`) written as their locals."""
    if not top and e in bound:
        return bound[e]
    if not e.src:
        return e
    src = tuple(_replaced(s, bound) for s in e.src)
    if all(a is b for a, b in zip(src, e.src)):
        return e
    return Expr(e.op, e.type, src, e.arg)


def loop_text(loop) -> str:
    """The loop file of a `Loop` built as IR (a lifted loop): its title, docstring, the
    loop parameters' comments and every function it has."""
    return render_loop(loop.title, loop.doc, loop.fields, loop.params, loop.elements, loop.left.outputs,
                       loop.right.outputs if loop.right is not None else None, loop.result,
                       loop.preconditions, param_comments=loop.param_comments, result_type=loop.result_type,
                       result_kind=loop.result_kind, result_names=loop.result_names, result_class=loop.result_class)
