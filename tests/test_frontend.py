"""The frontend: well-formed loops become IR with the file's meaning, everything else is
refused with its position, and nothing of the file is ever run.

Meaning is checked by folding the IR with a small evaluator kept here (independent of
thm3.semantics.evaluate) against the loop file itself imported as plain Python, which is what the
format promises a loop file is."""
from __future__ import annotations

import importlib.util
import math
import operator
import os
import pickle
import subprocess
import sys
import traceback
from pathlib import Path

import numpy as np
import pytest

from thm3 import LoopError, lang, parse_file, parse_source
from thm3.errors import format_error
from thm3.ir import Expr, Op, Type, const, var, walk
from thm3.ir.printer import SYNTAX, to_text

REPO = Path(__file__).resolve().parents[1]

# --- a tiny evaluator over floats and NumPy arrays ---------------------------------

TABLE = {
    Op.NEG: operator.neg, Op.NOT: np.logical_not, Op.ABS: np.abs, Op.EXP: np.exp,
    Op.EXP2: np.exp2, Op.LOG: np.log, Op.LOG2: np.log2, Op.SQRT: np.sqrt,
    Op.ADD: operator.add, Op.SUB: operator.sub, Op.MUL: operator.mul, Op.DIV: np.true_divide,
    Op.MAX: np.maximum, Op.MIN: np.minimum, Op.LT: operator.lt, Op.LE: operator.le,
    Op.GT: operator.gt, Op.GE: operator.ge, Op.EQ: operator.eq, Op.NE: operator.ne,
    Op.AND: np.logical_and, Op.OR: np.logical_or, Op.WHERE: np.where, Op.DOT: np.dot,
}


def evaluate(exprs, env):
    memo = {}
    for e in walk(exprs):
        match e.op:
            case Op.CONST:
                v = e.arg
            case Op.VAR:
                v = env[e.arg]
            case Op.POW:
                base = memo[id(e.src[0])]
                v = (base * 1.0) ** e.arg if e.arg < 0 else base ** e.arg
            case _:
                v = TABLE[e.op](*(memo[id(s)] for s in e.src))
        memo[id(e)] = v
    return [memo[id(e)] for e in exprs]


def call(fn, *values):
    env = {name: v for (name, _), v in zip(fn.inputs, values, strict=True)}
    with np.errstate(all="ignore"):
        return evaluate(fn.outputs, env)


def initial(loop, dim=3):
    return [np.zeros(dim) if f.type is Type.VEC else f.default for f in loop.fields]


def fold_left(loop, elements, params=()):
    state = initial(loop)
    for e in elements:
        state = call(loop.left, *state, *e, *params)
    return state


def fold_right(loop, elements, params=()):
    state = initial(loop)
    for e in reversed(elements):
        state = call(loop.right, *state, *e, *params)
    return state


def reference(tmp_path, name, text, elements, params):
    """The loop file imported as plain Python (only here, in the test) and folded."""
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"loopfile_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for key, value in params.items():
        setattr(module, key, value)
    state = module.State()
    for e in elements:
        state = module.left(state, *e)
    right = None
    if hasattr(module, "right"):
        right = module.State()
        for e in reversed(elements):
            right = module.right(*e, right)
    out = module.result(state) if hasattr(module, "result") else None
    return tuple(state), None if right is None else tuple(right), out


def close(a, b):
    if isinstance(a, (bool, np.bool_)) or isinstance(b, (bool, np.bool_)):
        return bool(a) == bool(b)
    return np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), equal_nan=True)


def check_against_python(tmp_path, name, text, elements, params=None):
    params = params or {}
    loop = parse_source(text, f"{name}.py")
    ordered = [params[p.name] for p in loop.params]
    want_left, want_right, want_result = reference(tmp_path, name, text, elements, params)
    got = fold_left(loop, elements, ordered)
    assert all(close(g, w) for g, w in zip(got, want_left, strict=True)), (got, want_left)
    if loop.right is not None:
        got_right = fold_right(loop, elements, ordered)
        assert all(close(g, w) for g, w in zip(got_right, want_right, strict=True)), (got_right, want_right)
    if loop.result is not None:
        assert close(call(loop.result, *got, *ordered)[0], want_result)
    return loop, got


# --- well-formed loops --------------------------------------------------------------

MPS = '''"""Maximum prefix sum: the largest sum of a prefix (the empty prefix counts)."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    s: Real = 0     # sum of the list so far
    m: Real = 0     # best prefix sum so far


def left(acc: State, x: Real) -> State:
    s = acc.s + x
    return State(s, max(acc.m, s))


def right(x: Real, acc: State) -> State:
    return State(x + acc.s, max(0, x + acc.m))


def result(acc: State) -> Real:
    return acc.m
'''

SOFTMAX = '''"""Online softmax normalizer: log of the sum of exp(x)."""
from typing import NamedTuple
from thm3.lang import Real, exp, log, inf


class State(NamedTuple):
    m: Real = -inf  # running maximum
    d: Real = 0     # sum of exp(x - m)


def left(acc: State, x: Real) -> State:
    m = max(acc.m, x)
    return State(m, acc.d * exp(acc.m - m) + exp(x - m))


def right(x: Real, acc: State) -> State:
    m = max(x, acc.m)
    return State(m, exp(x - m) + acc.d * exp(acc.m - m))


def result(acc: State) -> Real:
    return acc.m + log(acc.d) if acc.d > 0 else -inf
'''

FLASH = '''"""FlashAttention for one query row."""
from typing import NamedTuple
from thm3.lang import Real, Vec, dot, exp, inf

q: Vec          # the query row
scale: Real


class State(NamedTuple):
    m: Real = -inf
    l: Real = 0
    o: Vec = 0


def left(acc: State, k: Vec, v: Vec) -> State:
    s = dot(q, k) * scale
    m = max(acc.m, s)
    a, b = exp(acc.m - m), exp(s - m)
    return State(m, acc.l * a + b, acc.o * a + v * b)


def right(k: Vec, v: Vec, acc: State) -> State:
    s = scale * dot(k, q)
    m = max(s, acc.m)
    return State(m, exp(s - m) + acc.l * exp(acc.m - m), v * exp(s - m) + acc.o * exp(acc.m - m))


def result(acc: State) -> Vec:
    return acc.o / acc.l if acc.l > 0 else 0 * acc.o
'''

ARGMAX = '''"""Argmax: the first index of the largest element."""
from typing import NamedTuple
from thm3.lang import Index, Int, Real, inf


class State(NamedTuple):
    best: Real = -inf
    idx: Int = -1


def left(st: State, x: Real, i: Index) -> State:
    if x > st.best:
        return State(x, i)
    return st


def right(x: Real, i: Index, st: State) -> State:
    if x >= st.best:
        return st._replace(best=x, idx=i)
    else:
        return st


def result(st: State) -> Int:
    return st.idx
'''

SIGNS = '''"""Sign counts."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    pos: Int = 0
    neg: Int = 0
    zero: Int = 0


def left(acc: State, x: Real) -> State:
    """Count x under its sign."""
    if x > 0:
        return acc._replace(pos=acc.pos + 1)
    elif x < 0:
        return State(acc.pos, neg=acc.neg + 1, zero=acc.zero)
    else:
        pass
    return State(zero=acc.zero + 1, pos=acc.pos, neg=acc.neg)


def right(x: Real, acc: State) -> State:
    pos, neg, zero = acc.pos, acc.neg, acc.zero
    if x > 0:
        pos = pos + 1
    elif x == 0:
        zero += 1
    else:
        neg += 1
    return State(pos, neg, zero)
'''

KITCHEN = '''"""Kitchen sink: every statement and expression form.

More text that is not the title."""
from typing import NamedTuple
from thm3.lang import Bool, Int, Real, exp2, log2, sqrt, where, inf

alpha: Real
k: Int


class State(NamedTuple):
    """The state."""
    n: Int = 0          # elements seen
    s: Real = 0.5       # a mixed sum
    lo: Real = inf      # smallest
    hi: Real = -inf     # largest
    flag: Bool = False  # some element in (0, 1]
    t: Real = 0


def left(acc: State, x: Real, w: Real) -> State:
    assert w > 0
    assert 0 < alpha <= 1, "alpha is a rate"
    n = acc.n
    n += 1
    y = -x
    a, b = x, y
    a, b = b, a                      # swap: a == -x, b == x
    if x > 0 and not x > 1:
        flag = True
        z = x ** 2 + abs(y) / 2
    elif x == 0 or x < -10:
        flag = acc.flag
        z = sqrt(w) * exp2(-1) - log2(w + 1)
    else:
        flag = acc.flag
        z = where(a < b, a, b) ** 3
    s = acc.s * (1 - alpha) + alpha * z + n / k
    lo, hi = min(acc.lo, x, b), max(acc.hi, x, -a, 2 * x - x)
    t = acc.t if -1 <= x < 1 else acc.t + w * (x if x > 0 else -x)
    return State(n=n, s=s, lo=lo, hi=hi, flag=flag or acc.flag, t=t)


def result(acc: State) -> Real:
    if acc.n == 0:
        return 0
    return acc.s + acc.t / acc.n + (1 if acc.flag else 0)
'''

WELL_FORMED = {"mps": MPS, "softmax": SOFTMAX, "flash": FLASH, "argmax": ARGMAX,
               "signs": SIGNS, "kitchen": KITCHEN}

RNG = np.random.default_rng(7)
REALS = [0.0, 1.0, -1.0, 2.5, -3.0, 0.5, 1.0, -20.0, 0.25, 3.0]


def test_mps(tmp_path):
    loop, state = check_against_python(tmp_path, "mps", MPS, [(x,) for x in REALS])
    assert loop.name == "mps" and loop.title.startswith("Maximum prefix sum")
    assert [(f.name, f.type, f.default) for f in loop.fields] == [("s", Type.REAL, 0.0), ("m", Type.REAL, 0.0)]
    assert loop.fields[0].comment == "sum of the list so far"
    assert loop.left.inputs == (("acc.s", Type.REAL), ("acc.m", Type.REAL), ("x", Type.REAL))
    assert loop.right.inputs == loop.left.inputs
    assert loop.result.inputs == (("acc.s", Type.REAL), ("acc.m", Type.REAL))
    assert loop.result_type is Type.REAL and loop.source == MPS and loop.params == ()
    assert state[1] == max(0.0, *np.cumsum(REALS))
    # `s` is computed once and shared by both outputs
    assert loop.left.outputs[1].src[1] is loop.left.outputs[0]


def test_online_softmax_with_minus_inf_default(tmp_path):
    loop, state = check_against_python(tmp_path, "softmax", SOFTMAX, [(x,) for x in REALS])
    assert loop.fields[0].default == -math.inf and isinstance(loop.fields[0].default, float)
    out = call(loop.result, *state)[0]
    assert np.isclose(out, np.log(np.sum(np.exp(REALS))))
    # `-inf` is one constant, not NEG(inf)
    minus_inf = loop.result.outputs[0].src[2]
    assert minus_inf.op is Op.CONST and minus_inf.arg == -math.inf and minus_inf.type is Type.REAL
    assert call(loop.result, *initial(loop))[0] == -math.inf


def test_flash_attention_vec_loop(tmp_path):
    d, n = 3, 6
    q, K, V = RNG.normal(size=d), RNG.normal(size=(n, d)), RNG.normal(size=(n, d))
    params = {"q": q, "scale": 1 / math.sqrt(d)}
    elements = list(zip(K, V))
    loop, state = check_against_python(tmp_path, "flash", FLASH, elements, params)
    assert [(p.name, p.type) for p in loop.params] == [("q", Type.VEC), ("scale", Type.REAL)]
    assert [(p.name, p.type, p.index) for p in loop.elements] == [("k", Type.VEC, False), ("v", Type.VEC, False)]
    assert [n for n, _ in loop.left.inputs] == ["acc.m", "acc.l", "acc.o", "k", "v", "q", "scale"]
    assert [n for n, _ in loop.result.inputs] == ["acc.m", "acc.l", "acc.o", "q", "scale"]
    assert loop.fields[2].default == 0 and loop.result_type is Type.VEC
    assert [o.type for o in loop.left.outputs] == [Type.REAL, Type.REAL, Type.VEC]
    scores = K @ q * params["scale"]
    weights = np.exp(scores - scores.max())
    want = weights @ V / weights.sum()
    assert np.allclose(call(loop.result, *state, q, params["scale"])[0], want)


def test_argmax_with_index_and_any_state_name(tmp_path):
    xs = [1.0, 3.0, -2.0, 3.0, 0.0]
    elements = [(x, i) for i, x in enumerate(xs)]
    loop, state = check_against_python(tmp_path, "argmax", ARGMAX, elements)
    assert [(p.name, p.type, p.index) for p in loop.elements] == [("x", Type.REAL, False), ("i", Type.INT, True)]
    assert loop.left.inputs[:2] == (("acc.best", Type.REAL), ("acc.idx", Type.INT))
    assert state == [3.0, 1] and fold_right(loop, elements) == [3.0, 1]
    assert loop.result_type is Type.INT
    assert all(o.op is Op.WHERE for o in loop.left.outputs)


def test_if_elif_else_with_returns(tmp_path):
    loop, state = check_against_python(tmp_path, "signs", SIGNS, [(x,) for x in REALS])
    assert state == [6, 3, 1]
    assert all(o.op is Op.WHERE and o.type is Type.INT for o in loop.left.outputs)
    assert loop.result is None and loop.result_type is None


def test_kitchen_sink(tmp_path):
    xs = REALS + [0.75, -0.5]
    ws = [1.0, 2.0, 0.5, 3.0, 1.5, 2.0, 1.0, 0.25, 4.0, 1.0, 2.0, 3.0]
    elements = list(zip(xs, ws, strict=True))
    loop, state = check_against_python(tmp_path, "kitchen", KITCHEN, elements, {"alpha": 0.3, "k": 3})
    assert loop.title == "Kitchen sink: every statement and expression form."
    assert [f.default for f in loop.fields] == [0, 0.5, math.inf, -math.inf, False, 0.0]
    assert [type(f.default) for f in loop.fields] == [int, float, float, float, bool, float]
    assert loop.result_type is Type.REAL
    assert [to_text(p) for p in loop.preconditions] == ["w > 0.0", "0.0 < alpha and alpha <= 1.0"]
    assert [o.type for o in loop.left.outputs] == [Type.INT, Type.REAL, Type.REAL, Type.REAL, Type.BOOL, Type.REAL]
    ops = {e.op for e in walk(loop.left.outputs)}
    assert {Op.POW, Op.ABS, Op.SQRT, Op.EXP2, Op.LOG2, Op.WHERE, Op.NEG, Op.NOT, Op.AND, Op.OR,
            Op.MAX, Op.MIN, Op.DIV} <= ops
    # n / k with two Ints is Real; Int literals among Reals become Real literals
    div = next(e for e in walk(loop.left.outputs) if e.op is Op.DIV and e.src[0].type is Type.INT)
    assert div.type is Type.REAL
    one_minus = next(e for e in walk(loop.left.outputs) if e.op is Op.SUB and e.src[1].arg == "alpha")
    assert one_minus.src[0].type is Type.REAL and one_minus.src[0].arg == 1.0
    zero = loop.result.outputs[0].src[1]
    assert zero.op is Op.CONST and zero.type is Type.REAL and zero.arg == 0.0


def test_types_of_expressions():
    loop = parse_source(KITCHEN)
    pow_node = next(e for e in walk(loop.left.outputs) if e.op is Op.POW and e.arg == 2)
    assert pow_node.src[0].op is Op.VAR and pow_node.type is Type.REAL
    assert parse_source(KITCHEN).name == "loop"
    int_pow = parse_source(SIGNS.replace("acc.pos + 1)", "acc.pos ** 2)")).left.outputs[0]
    assert any(e.op is Op.POW and e.type is Type.INT for e in walk([int_pow]))


def test_parse_file_names_the_loop_by_its_stem(tmp_path):
    path = tmp_path / "my_loop.py"
    path.write_text(MPS)
    loop = parse_file(path)
    assert loop.name == "my_loop" and loop.path == str(path)
    no_doc = tmp_path / "plain.py"
    no_doc.write_text(MPS.split("\n", 1)[1])
    assert parse_file(no_doc).title == "plain"


def test_samples_parse():
    for path in sorted((REPO / "samples").glob("*.py")):
        loop = parse_file(path)
        assert loop.left.outputs and len(loop.left.outputs) == len(loop.fields), path


# --- the printer ----------------------------------------------------------------------

def test_printer_covers_every_op():
    assert set(SYNTAX) == set(Op)


X, Y, Z = var("x", Type.REAL), var("y", Type.REAL), var("acc.s", Type.REAL)
C = Expr(Op.LT, Type.BOOL, (X, Y))


@pytest.mark.parametrize("expr, text", [
    (const(-math.inf), "-inf"),
    (const(math.inf), "inf"),
    (const(True), "True"),
    (const(2), "2"),
    (const(2.5), "2.5"),
    (Expr(Op.MAX, Type.REAL, (X, Z)), "max(x, acc.s)"),
    (Expr(Op.WHERE, Type.REAL, (C, X, Y)), "(x if x < y else y)"),
    (Expr(Op.POW, Type.REAL, (X,), 2), "x ** 2"),
    (Expr(Op.POW, Type.REAL, (Expr(Op.NEG, Type.REAL, (X,)),), 2), "(-x) ** 2"),
    (Expr(Op.NEG, Type.REAL, (Expr(Op.POW, Type.REAL, (X,), 2),)), "-x ** 2"),
    (Expr(Op.POW, Type.REAL, (const(-2),), 3), "(-2) ** 3"),
    (Expr(Op.POW, Type.REAL, (X,), -1), "x ** -1"),
    (Expr(Op.NEG, Type.REAL, (Expr(Op.NEG, Type.REAL, (X,)),)), "-(-x)"),
    (Expr(Op.SUB, Type.REAL, (X, Expr(Op.SUB, Type.REAL, (Y, Z)))), "x - (y - acc.s)"),
    (Expr(Op.SUB, Type.REAL, (Expr(Op.SUB, Type.REAL, (X, Y)), Z)), "x - y - acc.s"),
    (Expr(Op.MUL, Type.REAL, (Expr(Op.ADD, Type.REAL, (X, Y)), Z)), "(x + y) * acc.s"),
    (Expr(Op.ADD, Type.REAL, (Expr(Op.MUL, Type.REAL, (X, Y)), Z)), "x * y + acc.s"),
    (Expr(Op.ADD, Type.REAL, (X, const(-1))), "x + -1"),
    (Expr(Op.EQ, Type.BOOL, (C, const(True))), "(x < y) == True"),
    (Expr(Op.NOT, Type.BOOL, (C,)), "not x < y"),
    (Expr(Op.AND, Type.BOOL, (C, Expr(Op.OR, Type.BOOL, (C, C)))), "x < y and (x < y or x < y)"),
    (Expr(Op.OR, Type.BOOL, (Expr(Op.AND, Type.BOOL, (C, C)), C)), "x < y and x < y or x < y"),
    (Expr(Op.DOT, Type.REAL, (var("u", Type.VEC), var("v", Type.VEC))), "dot(u, v)"),
])
def test_printer_text(expr, text):
    assert to_text(expr) == text == repr(expr)


def _reparse(loop, index, text, via_result=False):
    lines = ["from typing import NamedTuple", f"from thm3.lang import {', '.join(sorted(lang.__all__))}", ""]
    lines += [f"{p.name}: {p.type.value}" for p in loop.params]
    lines.append("class State(NamedTuple):")
    lines += [f"    {f.name}: {f.type.value} = {to_text(const(f.default, f.type))}" for f in loop.fields]
    elements = ", ".join(f"{e.name}: {'Index' if e.index else e.type.value}" for e in loop.elements)
    lines.append(f"def left(acc: State, {elements}) -> State:")
    lines.append("    return acc" if via_result else f"    return acc._replace({loop.fields[index].name}={text})")
    if via_result:
        lines += ["def result(acc: State):", f"    return {text}"]
        return parse_source("\n".join(lines)).result.outputs[0]
    return parse_source("\n".join(lines)).left.outputs[index]


@pytest.mark.parametrize("name", sorted(WELL_FORMED))
def test_printer_round_trips(name):
    loop = parse_source(WELL_FORMED[name])
    for fn in (loop.left, loop.right):
        for i, out in enumerate(fn.outputs if fn else ()):
            assert _reparse(loop, i, to_text(out)) is out, to_text(out)
    if loop.result:
        out = loop.result.outputs[0]
        assert _reparse(loop, 0, to_text(out), via_result=True) is out, to_text(out)


# --- rejected files -------------------------------------------------------------------

HEADER = '''from typing import NamedTuple
from thm3.lang import Bool, Index, Int, Real, Vec, dot, exp, inf, where


class State(NamedTuple):
    s: Real = 0
    m: Real = 0

'''                     # the next line is line 9
LEFT = "def left(acc: State, x: Real) -> State:\n"


def in_left(*lines: str) -> str:
    """HEADER, `def left` on line 9, and `lines` from line 10 at column 5."""
    return HEADER + LEFT + "".join(f"    {line}\n" for line in lines)


VEC_HEADER = '''from typing import NamedTuple
from thm3.lang import Real, Vec, dot


class State(NamedTuple):
    v: Vec = 0


def left(acc: State, x: Vec) -> State:
'''                     # the next line is line 10
RIGHT_AFTER = HEADER + LEFT + "    return acc\n\n\n"      # the next line is line 13

REJECTED = [
    # module level
    ("import_os", HEADER + "import os\n", "unsupported construct: import of `os`", 9, 1),
    ("import_from_os", HEADER + "from os import system\n", "unsupported construct: import from `os`", 9, 1),
    ("import_unknown_lang_name", HEADER + "from thm3.lang import np\n", "`thm3.lang` has no `np`", 9, 23),
    ("import_star", HEADER + "from thm3.lang import *\n", "unsupported construct: `import *`", 9, 23),
    ("import_as", HEADER + "from thm3.lang import exp as e\n", "import under another name", 9, 23),
    ("module_call", HEADER + "print('hi')\n", "unsupported construct: call to `print` at module level", 9, 1),
    ("module_assign", HEADER + "k = 3\n", "unsupported construct: assignment with a value at module level", 9, 1),
    ("module_annotated_value", HEADER + "k: Real = 3\n", "assignment with a value at module level", 9, 1),
    ("module_for", HEADER + "for i in range(3):\n    pass\n", "unsupported construct: for loop at module level", 9, 1),
    ("module_if", HEADER + "if __name__ == '__main__':\n    pass\n", "if statement at module level", 9, 1),
    ("other_class", HEADER + "class Other:\n    pass\n", "unsupported construct: class `Other`", 9, 1),
    ("other_function", HEADER + "def helper(x):\n    return x\n", "unsupported construct: function `helper`", 9, 1),
    ("async_def", HEADER + "async def left(acc: State, x: Real) -> State:\n    return acc\n",
     "async function definition at module level", 9, 1),
    ("decorator", HEADER + "@staticmethod\n" + LEFT + "    return acc\n", "unsupported construct: decorator", 9, 2),
    ("default_arg", HEADER + "def left(acc: State, x: Real = 0) -> State:\n    return acc\n",
     "unsupported construct: default argument value", 9, 32),
    ("varargs", HEADER + "def left(acc: State, *xs: Real) -> State:\n    return acc\n", "unsupported construct: *args", 9, 23),
    ("second_left", HEADER + LEFT + "    return acc\n" + LEFT + "    return acc\n", "a second `def left`", 11, 1),
    ("loop_param_index", HEADER + "i: Index\n", "`Index` is an element parameter type only", 9, 4),
    ("missing_state", "from thm3.lang import Real\n\n\ndef left(acc, x: Real):\n    return acc\n",
     "missing `class State(NamedTuple)`", 1, 1),
    ("missing_left", HEADER, "missing `def left", 1, 1),
    # State
    ("default_calls_function", HEADER.replace("s: Real = 0", "s: Real = abs(-1)") + LEFT + "    return acc\n",
     "unsupported construct: call to `abs` as the default of `s`", 6, 15),
    ("index_field", HEADER.replace("m: Real = 0", "m: Index = 0") + LEFT + "    return acc\n",
     "`Index` is an element parameter type only, not a State field", 7, 8),
    ("vec_default_bool", HEADER.replace("m: Real = 0", "m: Vec = True") + LEFT + "    return acc\n",
     "the default True does not fit field `m: Vec`", 7, 14),
    ("bool_default_in_real", HEADER.replace("m: Real = 0", "m: Real = True") + LEFT + "    return acc\n",
     "does not fit field `m: Real`", 7, 15),
    ("field_without_default", HEADER.replace("m: Real = 0", "m: Real") + LEFT + "    return acc\n",
     "field `m` needs a default", 7, 5),
    ("method_in_state", HEADER.replace("    m: Real = 0\n", "    m: Real = 0\n    def f(self):\n        return 1\n")
     + LEFT + "    return acc\n", "unsupported construct: function definition in State", 8, 5),
    # statements in functions
    ("lambda", in_left("f = lambda y: y", "return acc"), "unsupported construct: lambda", 10, 9),
    ("comprehension", in_left("s = [y for y in (x, x)]", "return acc"), "unsupported construct: list comprehension", 10, 9),
    ("for_loop", in_left("for y in (x, x):", "    pass", "return acc"), "unsupported construct: for loop", 10, 5),
    ("while_loop", in_left("while x > 0:", "    x = x - 1", "return acc"), "unsupported construct: while loop", 10, 5),
    ("print_statement", in_left("print(x)", "return acc"), "unsupported construct: call to `print`", 10, 5),
    ("global", in_left("global inf", "return acc"), "unsupported construct: global statement", 10, 5),
    ("try", in_left("try:", "    pass", "except Exception:", "    pass", "return acc"), "unsupported construct: try statement", 10, 5),
    ("with", in_left("with open('f') as f:", "    pass", "return acc"), "unsupported construct: with statement", 10, 5),
    ("del", in_left("del x", "return acc"), "unsupported construct: del statement", 10, 5),
    ("nested_def", in_left("def f(y):", "    return y", "return acc"), "unsupported construct: function definition", 10, 5),
    ("assert_not_first", in_left("s = x", "assert x > 0", "return acc"), "assert is allowed only as the first statements of left", 11, 5),
    ("assert_on_state", in_left("assert acc.s > 0", "return acc"), "an assert may mention only element and loop parameters", 10, 12),
    ("assert_in_right", RIGHT_AFTER + "def right(x: Real, acc: State) -> State:\n    assert x > 0\n    return acc\n",
     "assert is allowed only in left, first", 14, 5),
    ("missing_return_on_a_path", in_left("if x > 0:", "    return acc"), "`left` can reach its end without a return", 10, 5),
    ("missing_return_after_elif", in_left("if x > 0:", "    return acc", "elif x < 0:", "    return acc"),
     "`left` can reach its end without a return", 12, 5),
    ("no_return_at_all", in_left("s = x"), "`left` can reach its end without a return", 10, 5),
    ("unreachable", in_left("return acc", "s = x"), "unreachable statement after return", 11, 5),
    ("one_branch_only", in_left("if x > 0:", "    y = x", "return State(y, x)"), "`y` is assigned in only one branch of the if on line 10", 12, 18),
    ("assign_to_field", in_left("acc.s = x", "return acc"), "the state is immutable", 10, 5),
    ("augassign_to_field", in_left("acc.s += x", "return acc"), "the state is immutable", 10, 5),
    ("assign_to_state", in_left("acc = State(x, x)", "return acc"), "the state `acc` cannot be reassigned", 10, 5),
    ("unpack_mismatch", in_left("a, b = x, x, x", "return acc"), "unpacking 3 values into 2 names", 10, 12),
    ("return_tuple", in_left("return (acc.s, acc.m)"), "`left` must return the state", 10, 12),
    ("state_outside_return", in_left("t = State(x, x)", "return t"), "State(...) is allowed only directly in a return", 10, 9),
    ("result_returns_state", RIGHT_AFTER + "def result(acc: State) -> Real:\n    return acc\n", "`result` returns values, not the state", 14, 5),
    ("state_arity", in_left("return State(acc.s, acc.m, x)"), "State has 2 fields (`s`, `m`), this is argument 3", 10, 32),
    ("state_missing_field", in_left("return State(acc.s)"), "State(...) is missing `m`", 10, 12),
    ("state_duplicate_field", in_left("return State(acc.s, s=x)"), "field `s` is given twice", 10, 25),
    ("state_unknown_keyword", in_left("return State(s=x, q=x)"), "State has no field `q`", 10, 23),
    ("replace_unknown_field", in_left("return acc._replace(nope=x)"), "State has no field `nope`", 10, 25),
    ("real_into_int_field", HEADER.replace("m: Real = 0", "m: Int = 0") + LEFT + "    return State(x, x)\n",
     "field `m` is Int but this value is Real", 10, 21),
    ("vec_into_real_field", VEC_HEADER + "    return State(dot(acc.v, x))\n", "field `v` is Vec but this value is Real", 10, 18),
    # expressions
    ("call_eval", in_left("return State(eval('x'), x)"), "unknown function `eval`", 10, 18),
    ("call_open_method", in_left("return State(open('f').read(), x)"), "unsupported construct: call to `open('f').read`", 10, 18),
    ("recursion", in_left("s = left(acc, x)", "return acc"), "unknown function `left`", 10, 9),
    ("attribute_real", in_left("return State(acc.s.real, x)"), "unsupported construct: attribute access `.real`", 10, 24),
    ("attribute_os_path", in_left("return State(os.path, x)"), "unsupported construct: attribute access `.path`", 10, 21),
    ("unknown_field", in_left("return State(acc.nope, x)"), "State has no field `nope`", 10, 22),
    ("unknown_name", in_left("return State(y, x)"), "unknown name `y`", 10, 18),
    ("state_as_value", in_left("return State(acc, x)"), "the state `acc` can only be read by field", 10, 18),
    ("pow_variable_exponent", in_left("return State(x ** x, x)"), "`**` needs an integer exponent", 10, 23),
    ("pow_float_exponent", in_left("return State(x ** 0.5, x)"), "`**` needs an integer exponent", 10, 23),
    ("vec_comparison", VEC_HEADER + "    if acc.v < x:\n        return acc\n    return acc\n",
     "comparison of Vec values: comparisons are scalar only", 10, 8),
    ("bool_arithmetic", in_left("return State(acc.s + (x > 0), x)"), "arithmetic on Bool", 10, 18),
    ("dot_of_scalars", in_left("return State(dot(x, x), x)"), "`dot` takes two Vec values, this is Real", 10, 22),
    ("floor_division", in_left("return State(x // 2, x)"), "unsupported construct: operator `//`", 10, 18),
    ("modulo_by_a_field", in_left("return State(x % acc.s, x)"), "`%` needs a positive integer constant", 10, 22),
    ("modulo_by_zero", in_left("return State(x % 0, x)"), "`%` needs a positive integer constant", 10, 22),
    ("modulo_by_a_fraction", in_left("return State(x % 2.5, x)"), "`%` needs a positive integer constant", 10, 22),
    ("modulo_by_a_negative", in_left("return State(x % -3, x)"), "`%` needs a positive integer constant", 10, 22),
    ("modulo_of_a_bool", in_left("return State((x > 0) % 2, x)"), "`%` takes an Int or a Real on its left, not a Bool", 10, 18),
    ("subscript", in_left("return State(x[0], x)"), "unsupported construct: subscript", 10, 18),
    ("is_comparison", in_left("if x is None:", "    return acc", "return acc"), "unsupported construct: comparison `is`", 10, 8),
    ("walrus", in_left("return State((y := x), x)"), "unsupported construct: assignment expression (:=)", 10, 19),
    ("keyword_argument", in_left("return State(max(x, acc.m, key=abs), x)"), "unsupported construct: keyword argument", 10, 32),
    ("string_literal", in_left("return State('a', x)"), "unsupported construct: str literal", 10, 18),
    ("condition_not_bool", in_left("if acc.s:", "    return acc", "return acc"), "a condition must be Bool, this is Real", 10, 8),
    ("and_of_reals", in_left("if x and x > 0:", "    return acc", "return acc"), "`and` needs Bool operands, this is Real", 10, 8),
    ("where_condition", in_left("return State(where(x, x, x), x)"), "a condition must be Bool, this is Real", 10, 24),
    ("max_one_argument", in_left("return State(max(x), x)"), "`max` takes two or more arguments, got 1", 10, 18),
    ("not_imported", in_left("return State(log(x), x)"), "`log` is used but not imported", 10, 18),
    ("syntax_error", in_left("return State(x +, x)"), "invalid Python syntax", 10, 21),
    # right
    ("right_other_name", RIGHT_AFTER + "def right(y: Real, acc: State) -> State:\n    return acc\n",
     "`right` has parameter `y` where left has `x`", 13, 11),
    ("right_other_type", RIGHT_AFTER + "def right(x: Int, acc: State) -> State:\n    return acc\n", "`x` is Int here but Real in left", 13, 14),
    ("right_other_arity", RIGHT_AFTER + "def right(acc: State) -> State:\n    return acc\n",
     "`right` takes left's element parameters (x) and then the state", 13, 1),
]


@pytest.mark.parametrize("text, message, line, col", [case[1:] for case in REJECTED],
                         ids=[case[0] for case in REJECTED])
def test_rejected(text, message, line, col):
    with pytest.raises(LoopError) as info:
        parse_source(text, "bad.py")
    err = info.value
    assert message in err.message
    assert (err.path, err.line, err.col) == ("bad.py", line, col), str(err)
    assert err.source_line == text.split("\n")[line - 1]


def test_enough_rejections():
    assert len(REJECTED) >= 25
    assert len({case[0] for case in REJECTED}) == len(REJECTED)


def test_error_text_and_hidden_internals():
    with pytest.raises(LoopError) as info:
        parse_source(in_left("return State(acc.nope, x)"), "f.py")
    err = info.value
    assert str(err) == format_error(err) == (
        "f.py:10:22: State has no field `nope`\n"
        "    return State(acc.nope, x)\n"
        "                     ^\n"
        "allowed instead: `acc.s`, `acc.m`")
    assert err.__cause__ is None and err.__suppress_context__
    frames = [f for f in traceback.extract_tb(info.tb) if Path(f.filename).name == "frontend.py"]
    assert {f.name for f in frames} == {"parse_source"}


def test_error_without_hint_and_pickling():
    err = LoopError("bad thing", "a.py", 3, 5, "\tx = 1", None)
    assert str(err) == "a.py:3:5: bad thing\n\tx = 1\n\t   ^"
    back = pickle.loads(pickle.dumps(err))
    assert (back.path, back.line, back.col, back.message, back.hint) == ("a.py", 3, 5, "bad thing", None)


def test_column_counts_characters_not_bytes():
    with pytest.raises(LoopError) as info:
        parse_source(in_left("é = 1; return State(nope, x)"))
    assert info.value.col == 25


# --- hostile files: refused, and nothing of them runs --------------------------------

def _hostile(target: Path) -> dict[str, str]:
    write = f"open({str(target)!r}, 'w').write('pwned')"
    return {
        "module_level": HEADER + write + "\n" + LEFT + "    return acc\n",
        "state_default": HEADER.replace("s: Real = 0", f"s: Real = {write}") + LEFT + "    return acc\n",
        "loop_parameter_type": HEADER + f"q: {write}\n" + LEFT + "    return acc\n",
        "decorator": HEADER + f"@(lambda f: {write})\n" + LEFT + "    return acc\n",
        "argument_default": HEADER + f"def left(acc: State, x: Real = {write}) -> State:\n    return acc\n",
        "element_annotation": HEADER + f"def left(acc: State, x: {write}) -> State:\n    return acc\n",
        "function_body": in_left(write, "return acc"),
        "import_os": HEADER + f"import os\nos.system('touch {target}')\n" + LEFT + "    return acc\n",
        "dunder_import": in_left(f"__import__('os').system('touch {target}')", "return acc"),
    }


@pytest.mark.parametrize("where", sorted(_hostile(Path("x"))))
def test_hostile_file_is_refused_and_not_run(tmp_path, where):
    target = tmp_path / "pwned"
    path = tmp_path / "hostile.py"
    path.write_text(_hostile(target)[where])
    with pytest.raises(LoopError):
        parse_file(path)
    assert not target.exists()


def test_hostile_text_really_writes_when_run(tmp_path):
    # The check above means something: run as Python, the same text does write.
    target = tmp_path / "pwned"
    path = tmp_path / "hostile.py"
    path.write_text(_hostile(target)["module_level"])
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, str(path)], env=env, check=True, capture_output=True)
    assert target.read_text() == "pwned"


def test_frontend_never_runs_code():
    for module in ("frontend", "positions", "declarations", "body", "expressions"):
        text = (REPO / "thm3" / "syntax" / f"{module}.py").read_text()
        for word in ("exec(", "eval(", "compile(", "__import__", "importlib", "runpy"):
            assert word not in text


@pytest.mark.parametrize("spelling, value", [('float("-inf")', -math.inf), ("float('inf')", math.inf),
                                             ('-float("Infinity")', -math.inf), ('float("+inf")', math.inf)])
def test_float_infinity_reads_as_inf(spelling, value):
    loop = parse_source('"""m"""\nfrom typing import NamedTuple\nfrom thm3.lang import Real\n\n\n'
                        f'class State(NamedTuple):\n    m: Real = {spelling}\n\n\n'
                        f'def left(acc: State, x: Real) -> State:\n    return State(max(acc.m, x, {spelling}))\n')
    assert loop.fields[0].default == value
    assert any(e.op is Op.CONST and e.arg == value for e in walk(loop.left.outputs))


@pytest.mark.parametrize("spelling", ['float("nan")', 'float("1.5")', "float(x)", 'float("inf", 1)'])
def test_other_float_calls_are_refused(spelling):
    with pytest.raises(LoopError) as err:
        parse_source('"""m"""\nfrom typing import NamedTuple\nfrom thm3.lang import Real\n\n\n'
                     f'class State(NamedTuple):\n    m: Real = 0\n\n\n'
                     f'def left(acc: State, x: Real) -> State:\n    return State(acc.m + {spelling})\n')
    assert err.value.line == 11


def test_a_title_of_two_lines_is_one_title():
    """The title is the docstring's first paragraph, its lines joined; the doc is what
    follows the blank line, so a lifted loop renders the docstring as it was written
    (not with a blank line cut into the first sentence)."""
    from thm3.syntax.loopfile import loop_text
    src = ('"""Sign changes with the last element (the first sign\n'
           'follows from the parity of the count).\n\nSource: Parsynt."""\n'
           + "\n".join(KITCHEN.split('"""', 2)[2].splitlines()[1:]))
    loop = parse_source(src)
    assert loop.title == "Sign changes with the last element (the first sign follows from the parity of the count)."
    assert loop.doc == "Source: Parsynt."
    assert loop_text(loop).startswith('"""' + loop.title + "\n\nSource: Parsynt.")
