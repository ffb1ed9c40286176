"""The text of the module that `numba_tree` compiles with Numba: the IR rendered as plain
scalar Python (`left`, `combine`, `identity`), the chunk fold of LANES sub-runs stepped
together, `reduce` and `scan` over chunks, and the checks of the proof's cover.  Pure
text: nothing here imports Numba."""
from __future__ import annotations

from thm3.ir import Expr, Fn, Loop, Op, Type, initial_state
from thm3.ir.program import lower
from thm3.ir.rewrite import rewrite

LANES = 4            # contiguous sub-runs of a chunk folded side by side


_HEADER = '''"""Rendered by thm3 (thm3/backends/numba_tree.py) from the IR of the loop {name!r}.
Scalar code compiled by Numba; the loop file itself is never imported."""
import math

import numpy as np
from numba import njit, prange

JIT = dict(cache=True, error_model="numpy", nogil=True)


@njit(inline="always", **JIT)
def _max(a, b):
    return a if (a > b or a != a) else b      # NaN from either side; ties give b


@njit(inline="always", **JIT)
def _min(a, b):
    return a if (a < b or a != a) else b
'''

_SCALAR = {
    Op.NEG: "(-{0})", Op.NOT: "(not {0})", Op.ABS: "abs({0})",
    Op.EXP: "math.exp({0})", Op.EXP2: "np.exp2({0})", Op.LOG: "_log({0})",
    Op.LOG2: "_log2({0})", Op.SQRT: "_sqrt({0})",
    Op.ADD: "({0} + {1})", Op.SUB: "({0} - {1})", Op.MUL: "({0} * {1})",
    Op.DIV: "({0} / {1})", Op.POWN: "_pown({0}, {1})", Op.MAX: "_max({0}, {1})", Op.MIN: "_min({0}, {1})",
    Op.LT: "({0} < {1})", Op.LE: "({0} <= {1})", Op.GT: "({0} > {1})", Op.GE: "({0} >= {1})",
    Op.EQ: "({0} == {1})", Op.NE: "({0} != {1})",
    Op.AND: "({0} and {1})", Op.OR: "({0} or {1})",
    Op.WHERE: "({1} if {0} else {2})",
}

# Vec-valued nodes are NumPy arrays of length D inside the compiled code.
_VECTOR = {
    Op.NEG: "(-{0})", Op.ABS: "np.abs({0})", Op.EXP: "np.exp({0})", Op.EXP2: "np.exp2({0})",
    Op.LOG: "np.log({0})", Op.LOG2: "np.log2({0})", Op.SQRT: "np.sqrt({0})",
    Op.ADD: "({0} + {1})", Op.SUB: "({0} - {1})", Op.MUL: "({0} * {1})", Op.DIV: "({0} / {1})",
    Op.MAX: "np.maximum({0}, {1})", Op.MIN: "np.minimum({0}, {1})",
    Op.WHERE: "({1} if {0} else {2})",
}

_MATH = '''

@njit(inline="always", **JIT)
def _pown(a, n):
    return np.power(np.float64(a), np.float64(n))


@njit(inline="always", **JIT)
def _log(a):
    return math.log(a) if a > 0 else (-math.inf if a == 0 else math.nan)


@njit(inline="always", **JIT)
def _log2(a):
    return math.log2(a) if a > 0 else (-math.inf if a == 0 else math.nan)


@njit(inline="always", **JIT)
def _sqrt(a):
    return math.sqrt(a) if a >= 0 else math.nan
'''


def _literal(value, type_: Type) -> str:
    match type_:
        case Type.BOOL:
            return repr(bool(value))
        case Type.INT:
            return f"np.int64({int(value)})"
        case _:
            v = float(value)
            if v != v:
                return "math.nan"
            if v in (float("inf"), float("-inf")):
                return "math.inf" if v > 0 else "-math.inf"
            return repr(v)


_LEAST = "-9223372036854775808"


def _overflow_messages(fn_outputs, loop: Loop, combine: Fn, side: str) -> dict[Expr, str]:
    """For each Int operation of the outputs (of `left` or of the combine, `side`) that
    int64 can overflow (`overflow_checks`), the message naming the first field whose new
    value reads it."""
    from thm3.analysis.int_bounds import overflow_checks
    where = "left" if side == "left" else "the combine"
    names = [f.name for f in loop.fields]
    return {e: (f"{loop.name}: the Int field {names[k - 1]} overflows int64 in {where} "
                "(the Numba backend computes Ints in int64)")
            for e, k in overflow_checks(fn_outputs, loop, combine, side).items()}


class _Body:
    """Straight-line statements computing `outputs` from named inputs, one temporary a node.
    An Int operation is checked: where its exact value leaves int64 the code raises
    OverflowError (with `overflow`'s message) instead of wrapping around."""

    def __init__(self, names: dict[str, str], overflow=None):
        self.names = names
        self.lines: list[str] = []
        self.overflow = overflow        # outputs -> {node: message}, or None

    def render(self, fn_outputs, targets: list[tuple[str, Type]]) -> list[str]:
        program = lower(fn_outputs)
        self.messages = self.overflow(fn_outputs) if self.overflow else {}
        # each step's text, by position: a leaf's, or the name t{k} of its line
        slot = program.run(lambda k, step, args: self._node(step.node, k, args))
        for (target, t), e, k in zip(targets, fn_outputs, program.outputs):
            self.lines.append(f"{target} = {_convert(slot[k], e.type, t)}")
        return self.lines

    def _node(self, e: Expr, k: int, args: list[str]) -> str:
        match e.op:
            case Op.VAR:
                return self.names[e.arg]
            case Op.CONST:
                text = _literal(e.arg, e.type)
                return f"np.full(dim, {text})" if e.type is Type.VEC else text
        if e.type is Type.VEC and e.op is Op.WHERE:
            args = [args[0]] + [_convert(a, s.type, Type.VEC) for a, s in zip(args[1:], e.src[1:])]
        match e.op:
            case Op.POW:
                base = args[0] if e.src[0].type is Type.VEC or e.arg >= 0 else f"float({args[0]})"
                text = f"({base} ** {e.arg})"
                if e.arg < 0 and e.src[0].type is not Type.VEC:
                    text = f"_rpow({args[0]}, {e.arg})"
            case Op.MOD:
                text = f"({args[0]} % np.int64({e.arg}))"       # floored, as in Python
            case Op.DOT:
                text = f"np.sum({args[0]} * {args[1]})"
            case _ if e.type is Type.VEC:
                text = _VECTOR[e.op].format(*args)
            case _:
                text = _SCALAR[e.op].format(*args)
        name = f"t{k}"
        message = self.messages.get(e)
        if message is not None and e.op is Op.POW and e.arg >= 0:
            # a ** n as n - 1 checked products (n is a literal)
            prod = args[0]
            self.lines.append(f"{name} = np.int64(1)" if e.arg == 0 else f"{name} = {args[0]}")
            for j in range(max(e.arg - 1, 0)):
                self.lines.append(f"{name}_{j} = {name} * {prod}")
                self._check_mul(name, prod, f"{name}_{j}", message)
                self.lines.append(f"{name} = {name}_{j}")
            return name
        self.lines.append(f"{name} = {text}")
        if message is not None:
            a = args[0]
            b = args[1] if len(args) > 1 else None
            match e.op:
                case Op.ADD:
                    self.lines.append(f"if (({a} ^ {name}) & ({b} ^ {name})) < 0: raise OverflowError({message!r})")
                case Op.SUB:
                    self.lines.append(f"if (({a} ^ {b}) & ({a} ^ {name})) < 0: raise OverflowError({message!r})")
                case Op.MUL:
                    self._check_mul(a, b, name, message)
                case Op.NEG | Op.ABS:
                    self.lines.append(f"if {a} == {_LEAST}: raise OverflowError({message!r})")
        return name

    def _check_mul(self, a: str, b: str, r: str, message: str) -> None:
        # decided from a and b alone: LLVM may take the wrapped product's r // a == b as
        # given (a product that overflows is undefined to it), so r is not read
        self.lines.append(f"if _mul_overflows({a}, {b}): raise OverflowError({message!r})")


def _convert(text: str, have: Type, want: Type) -> str:
    """A value brought to a field's type, so that every state variable keeps one type."""
    match want:
        case Type.VEC:
            return text if have is Type.VEC else f"np.full(dim, float({text}))"
        case Type.REAL:
            return f"float({text})"
        case Type.INT:
            return f"np.int64({text})"
        case Type.BOOL:
            return f"bool({text})"
        case _:
            raise ValueError(f"no Numba conversion to {want}")


def render(loop: Loop, combine: Fn) -> str:
    """The module text: `left`, `combine`, the chunk fold, `reduce` and `scan`.  An Int
    literal beyond int64 is refused (a `LoopError` at its position)."""
    from thm3.syntax.frontend import wide_int_literal
    err = wide_int_literal(loop, "the Numba backend")
    if err is not None:
        raise err
    F = len(loop.fields)
    fields = [f"s{k}" for k in range(F)]
    data = [p for p in loop.elements if not p.index]
    xs = [f"x{k}" for k in range(len(data))]
    ps = [f"p{k}" for k in range(len(loop.params))]
    extra = ", ".join(xs + ps)
    tail = f", {extra}" if extra else ""
    param_names = {p.name: f"p{k}" for k, p in enumerate(loop.params)}
    elem_names, element_vars = {}, []
    data_iter = iter(range(len(data)))
    for k, p in enumerate(loop.elements):
        elem_names[p.name] = f"e{k}"
        element_vars.append((f"e{k}", None if p.index else f"x{next(data_iter)}"))
    out = [_HEADER.format(name=loop.name), _MATH]
    out.append('''

@njit(inline="always", **JIT)
def _mul_overflows(a, b):
    """Whether the exact a * b of two int64 leaves int64 (floored divisions of the bounds)."""
    if a > 0:
        return a > 9223372036854775807 // b if b > 0 else b < (-9223372036854775807 + a - 2) // a
    if b > 0:
        return a < (-9223372036854775807 + b - 2) // b
    if a == 0 or b == 0:
        return False
    if a == -9223372036854775807 - 1:
        return True
    return b < -(9223372036854775807 // -a)


@njit(inline="always", **JIT)
def _rpow(a, n):
    return float(a) ** n if a != 0 else (math.inf if n % 2 == 0 or a >= 0 else -math.inf)
''')
    # left(state, elements, params, dim)
    names = {f"acc.{f.name}": s for f, s in zip(loop.fields, fields)} | elem_names | param_names
    targets = [(f"n{k}", f.type) for k, f in enumerate(loop.fields)]
    body = _Body(names, lambda outs: _overflow_messages(outs, loop, combine, "left")).render(
        rewrite(loop.left.outputs), targets)
    pnames = ", ".join(ps)
    sig = ", ".join(fields + [v for v, _ in element_vars] + ps + ["dim"])
    out.append(_function("left", sig, body, [t for t, _ in targets]))
    # combine(a, b, params, dim)
    a_names = [f"a{k}" for k in range(F)]
    b_names = [f"b{k}" for k in range(F)]
    names = ({f"a.{f.name}": v for f, v in zip(loop.fields, a_names)}
             | {f"b.{f.name}": v for f, v in zip(loop.fields, b_names)} | param_names)
    body = _Body(names, lambda outs: _overflow_messages(outs, loop, combine, "combine")).render(
        rewrite(combine.outputs), targets)
    out.append(_function("combine", ", ".join(a_names + b_names + ps + ["dim"]), body,
                         [t for t, _ in targets]))
    # identity(dim)
    ident = [_convert(_literal(e.arg, f.type), f.type, f.type) if f.type is not Type.VEC
             else f"np.full(dim, {_literal(e.arg, Type.REAL)})" for f, e in zip(loop.fields, initial_state(loop))]
    out.append(_function("identity", "dim", [], ident))
    out.append(_loops(loop, fields, element_vars, tail, pnames))
    return "\n".join(out) + "\n"


def _function(name: str, signature: str, body: list[str], returns: list[str]) -> str:
    lines = ["\n\n@njit(inline=\"always\", **JIT)", f"def {name}({signature}):"]
    lines += [f"    {line}" for line in body]
    lines.append(f"    return ({', '.join(returns)},)")
    return "\n".join(lines)


def _loops(loop: Loop, fields, element_vars, tail: str, pnames: str) -> str:
    """fold (LANES sub-runs stepped together), reduce and scan, as text."""
    F = len(fields)
    ps = f", {pnames}" if pnames else ""
    S = ", ".join(fields)

    def lane(k):
        return [f"{s}_{k}" for s in fields]

    def step(k, index):
        reads = []
        for v, x in element_vars:
            reads.append(f"{v}_{k} = base + {index}" if x is None else f"{v}_{k} = {x}[{index}]")
        args = ", ".join(lane(k) + [f"{v}_{k}" for v, _ in element_vars]) + ps + ", dim"
        return reads + [f"{', '.join(lane(k))}, = left({args})"]

    L = LANES
    lines = ["\n\n@njit(**JIT)", f"def fold(begin, end, dim, base{tail}):",
             "    q = (end - begin) // %d" % L]
    for k in range(L):
        lines.append(f"    {', '.join(lane(k))}, = identity(dim)")
    lines.append("    for j in range(q):")
    for k in range(L):
        lines += [f"        {t}" for t in step(k, f"begin + {k} * q + j")]
    lines.append(f"    for i in range(begin + {L} * q, end):")     # the rest joins the last lane
    lines += [f"        {t}" for t in step(L - 1, "i")]
    # the lanes in order: ((0, 1), (2, 3)), as the tree pairs neighbours; where a lane or
    # a combine leaves the proof's cover (thm3/backends/guard.py), the chunk is folded
    # again in one lane, as the loop does
    level = [lane(k) for k in range(L)]
    watch = [_nan_text(loop, names) for names in level]
    counter = 0
    while len(level) > 1:
        nxt = []
        for a, b in zip(level[0::2], level[1::2]):
            target = [f"{s}_m{counter}" for s in fields]
            counter += 1
            lines.append(f"    {', '.join(target)}, = combine({', '.join(a + b)}{ps}, dim)")
            watch.append(_nan_text(loop, target))
            nxt.append(target)
        level = nxt
    lines.append(f"    if {' or '.join(watch)}:")
    lines.append(f"        {', '.join(lane(0))}, = identity(dim)")
    lines.append("        for i in range(begin, end):")
    lines += [f"            {t}" for t in step(0, "i")]
    lines.append(f"        return ({', '.join(lane(0))},)")
    lines.append(f"    return ({', '.join(level[0])},)")
    reduce_args = dict(tail=tail, ps=ps, S=S,
                       I=", ".join(f"i{k}" for k in range(F)),
                       alloc=_alloc(loop, fields, "count"),
                       store="\n        ".join(_store(loop, fields, "c", "st")),
                       load_a=", ".join(f"{s}[2 * k]" for s in fields),
                       load_b=", ".join(f"{s}[2 * k + 1]" for s in fields),
                       store_k="\n            ".join(_store(loop, fields, "k", "r")),
                       pad="\n            ".join(_store(loop, fields, "half - 1", "r")),
                       load_last=", ".join(f"{s}[m - 1]" for s in fields),
                       first=", ".join(f"{s}[0]" for s in fields))
    reduce_args.update(F=", ".join(f"f{k}" for k in range(F)),
                       nan_k=_nan_text(loop, [f"{s}[k]" for s in fields]),
                       nan_r=_nan_text(loop, [f"r[{k}]" for k in range(F)]))
    lines.append(_SPECIALS.format(tail=tail, **_special_checks(loop, element_vars)))
    for sfx, parallel in ("", True), ("_serial", False):
        lines.append(_REDUCE.format(sfx=sfx, parallel=parallel, **reduce_args))
    lines.append(_exclusive_text(loop, fields, tail, ps, step(0, "i"), lane(0)))
    lines += ["\n\n@njit(**JIT)", f"def sequential(n, dim, base{tail}):",
              '    """The plain left fold, element by element: the loop\'s meaning, compiled."""',
              f"    {', '.join(lane(0))}, = identity(dim)",
              "    for i in range(n):"]
    lines += [f"        {t}" for t in step(0, "i")]
    lines.append(f"    return ({', '.join(lane(0))},)")
    outs = ", ".join(f"o{k}" for k in range(F))
    record = "\n".join(f"            o{k}[{_row(f, 'i')}] = {s}_0"
                        for k, (s, f) in enumerate(zip(fields, loop.fields)))
    reads = "\n".join(f"            {v}_0 = base + i" if x is None else f"            {v}_0 = {x}[i]"
                      for v, x in element_vars)
    args = ", ".join(lane(0) + [f"{v}_0" for v, _ in element_vars]) + ps + ", dim"
    scan_args = dict(tail=tail, ps=ps, outs=outs, alloc=_alloc(loop, fields, "count"),
                     store="\n        ".join(_store(loop, fields, "c", "st")),
                     lane0=", ".join(lane(0)), reads=reads, args=args, record=record,
                     carry=", ".join(fields), starts=", ".join(f"g{k}" for k in range(F)),
                     finals=", ".join(f"f{k}" for k in range(F)),
                     load_c=", ".join(f"{s}[c]" for s in fields) + ",")
    for sfx, parallel in ("", True), ("_serial", False):
        lines.append(_SCAN.format(sfx=sfx, parallel=parallel, **scan_args))
    return "\n".join(lines)


def _alloc(loop: Loop, fields, count: str) -> str:
    kinds = {Type.REAL: "np.float64", Type.INT: "np.int64", Type.BOOL: "np.bool_", Type.VEC: "np.float64"}
    return "\n    ".join(f"{s} = np.empty(({count}, dim), dtype=np.float64)" if f.type is Type.VEC else
                         f"{s} = np.empty({count}, dtype={kinds[f.type]})"
                         for s, f in zip(fields, loop.fields))


def _row(f, at: str) -> str:
    return f"{at}, :" if f.type is Type.VEC else at


def _store(loop: Loop, fields, at: str, src: str) -> list[str]:
    return [f"{s}[{_row(f, at)}] = {src}[{k}]" for k, (s, f) in enumerate(zip(fields, loop.fields))]


_REDUCE = '''

@njit(parallel={parallel}, **JIT)
def _chunk_states{sfx}(n, chunk, dim, base{tail}):
    count = (n + chunk - 1) // chunk
    {alloc}
    special = np.zeros(count, dtype=np.bool_)
    every = _every(dim, base{tail})
    for c in prange(count):
        st = fold(c * chunk, min(n, (c + 1) * chunk), dim, base{tail})
        {store}
        special[c] = every or _special(c * chunk, min(n, (c + 1) * chunk), dim, base{tail})
    return ({S}, special,)


@njit(**JIT)
def reduce{sfx}(n, chunk, dim, base{tail}):
    """The final state: chunk folds in threads, then the tree of combines in order."""
    if n == 0:
        return identity(dim)
    {S}, special, = _chunk_states{sfx}(n, chunk, dim, base{tail})
    {I}, = identity(dim)
    bad = False                 # a state or element the proof does not cover (thm3/backends/guard.py)
    for k in range(len(s0)):
        bad = bad or special[k] or {nan_k}
    m = len(s0)
    while m > 1 and not bad:
        half = (m + 1) // 2
        for k in range(m // 2):
            r = combine({load_a}, {load_b}{ps}, dim)
            bad = bad or {nan_r}
            {store_k}
        if m % 2 == 1:
            r = combine({load_last}, {I}{ps}, dim)
            bad = bad or {nan_r}
            {pad}
        m = half
    if bad:                     # the chunks again, carried in order by _exclusive
        {S}, special, = _chunk_states{sfx}(n, chunk, dim, base{tail})
        {S}, {F}, = _exclusive({S}, {I}, special, n, chunk, dim, base{tail})
        return ({F},)
    return ({first},)
'''

_SPECIALS = '''

@njit(inline="always", **JIT)
def _every(dim, base{tail}):
    """Whether a Real or Vec parameter is NaN or infinite: no chunk is then covered by the
    proof over the reals (thm3/backends/guard.py)."""
    return {params}


@njit(inline="always", **JIT)
def _special(begin, end, dim, base{tail}):
    """Whether a Real or Vec input among elements begin .. end-1 is NaN or infinite."""
    for i in range(begin, end):
        if {elements}:
            return True
    return False
'''


def _special_checks(loop: Loop, element_vars) -> dict:
    """The Bool expressions of `_SPECIALS`: some Real or Vec parameter, or element i, is
    not finite."""
    params = [f"(not math.isfinite(p{k}))" if p.type is Type.REAL else f"np.any(~np.isfinite(p{k}))"
              for k, p in enumerate(loop.params) if p.type in (Type.REAL, Type.VEC)]
    elements = [f"(not math.isfinite({x}[i]))" if p.type is Type.REAL else f"np.any(~np.isfinite({x}[i]))"
                for p, (_, x) in zip(loop.elements, element_vars) if x is not None and p.type in (Type.REAL, Type.VEC)]
    return {"params": " or ".join(params) or "False", "elements": " or ".join(elements) or "False"}


_SCAN = '''

@njit(parallel={parallel}, **JIT)
def scan{sfx}(n, chunk, dim, base, {starts}, {outs}{tail}):
    """Every prefix state into o0, o1, ...: chunk totals in threads, their exclusive scan
    in order, then every chunk folded again from its carried prefix in threads."""
    if n == 0:
        return
    count = (n + chunk - 1) // chunk
    {alloc}
    special = np.zeros(count, dtype=np.bool_)
    every = _every(dim, base{tail})
    for c in prange(count):
        st = fold(c * chunk, min(n, (c + 1) * chunk), dim, base{tail})
        {store}
        special[c] = every or _special(c * chunk, min(n, (c + 1) * chunk), dim, base{tail})
    {carry}, {finals}, = _exclusive({carry}, {starts}, special, n, chunk, dim, base{tail})
    for c in prange(count):
        {lane0}, = {load_c}
        for i in range(c * chunk, min(n, (c + 1) * chunk)):
{reads}
            {lane0}, = left({args})
{record}
'''


def _nan_text(loop: Loop, names: list[str]) -> str:
    """A Bool expression: some Real or Vec value among `names` (one a field) is outside the
    proof's cover (thm3/backends/guard.py): NaN, or an infinity other than the field's
    identity value."""
    parts = []
    for v, f, e in zip(names, loop.fields, initial_state(loop)):
        ident = _literal(e.arg, Type.REAL)
        if f.type is Type.REAL:
            parts.append(f"(not math.isfinite({v}) and {v} != {ident})")
        elif f.type is Type.VEC:
            parts.append(f"np.any(~np.isfinite({v}) & ({v} != {ident}))")
    return f"({' or '.join(parts)})" if parts else "False"


def _exclusive_text(loop: Loop, fields, tail: str, ps: str, step: list[str], lane: list[str]) -> str:
    """States c -> the combine of the start state g and the chunk states 0 .. c-1, in
    order, in place; also returns the state after the last chunk.  Where the carried
    state, chunk c's state or their combine is outside the proof's cover (NaN, or an
    infinity other than the identity's: thm3/backends/guard.py), chunk c is folded
    element by element from the carried state instead."""
    F = len(fields)
    S = ", ".join(fields)
    rs = ", ".join(f"r{k}" for k in range(F))
    cs = ", ".join(f"c{k}" for k in range(F))
    qs = ", ".join(f"q{k}" for k in range(F))
    reads = ", ".join(f"{s}[c].copy()" if f.type is Type.VEC else f"{s}[c]"
                      for s, f in zip(fields, loop.fields))
    starts = ", ".join(f"g{k}" for k in range(F))
    first = ", ".join(f"g{k}.copy()" if f.type is Type.VEC else f"g{k}" for k, f in enumerate(loop.fields))
    bad = " or ".join(_nan_text(loop, [f"{v}{k}" for k in range(F)]) for v in "rcq")
    lines = ["\n\n@njit(**JIT)", f"def _exclusive({S}, {starts}, special, n, chunk, dim, base{tail}):",
             f"    {rs}, = {first},",
             "    for c in range(len(s0)):",
             f"        {cs}, = {reads},"]
    lines += [f"        {s}[{_row(f, 'c')}] = r{k}" for k, (s, f) in enumerate(zip(fields, loop.fields))]
    lines.append(f"        {qs}, = combine({rs}, {cs}{ps}, dim)")
    lines.append(f"        if special[c] or {bad}:")
    lines.append(f"            {', '.join(lane)}, = {rs},")
    lines.append("            for i in range(c * chunk, min(n, (c + 1) * chunk)):")
    lines += [f"                {t}" for t in step]
    lines.append(f"            {qs}, = {', '.join(lane)},")
    lines.append(f"        {rs}, = {qs},")
    lines.append(f"    return ({S}, {rs},)")
    return "\n".join(lines)
