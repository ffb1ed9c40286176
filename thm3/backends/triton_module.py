"""The combine as a Triton module: the text `thm3 emit --target triton` writes.  Pure
text: nothing here imports Triton.

The module holds `@triton.jit` functions over blocks of lanes:
- `step(acc..., x..., p...)`: `left`, lane by lane;
- `combine(a..., b...)`: the proved combine over the state's fields as a flat tuple (a's
  fields, then b's), the form `tl.reduce` and `tl.associative_scan` call;
- kernels: `reduce_kernel` and `reduce_states_kernel` (a block of elements, or of states,
  to one state), `scan_kernel` and `scan_states_kernel` (every prefix of a block, from
  the block's carried prefix), `rows_reduce_kernel` and `rows_scan_kernel` (one program
  a row, its blocks in order);
and the host functions `reduce`, `reduce_state`, `scan`, `reduce_rows`, `scan_rows` on
PyTorch CUDA tensors (Triton's launcher takes them).

A block becomes one state by `tl.reduce` only where commutativity is proved:
`tl.reduce` reassociates and reorders (triton-lang/triton#4962).  Otherwise by an
explicit tree in list order: the block is split into neighbours (2k, 2k + 1) with
`tl.reshape` and `tl.split`, the earlier on the left, level by level.  The scans use
`tl.associative_scan`, which keeps operands in order, and combine a block's carried
prefix on the left.  The module's docstring says which was chosen and why.

Loop parameters are carried through the tuple as extra lanes (the combine passes a's on),
as `tl.reduce` and `tl.associative_scan` give the combine nothing but the tuple.  An Int
operation that int64 can overflow sets a flag lane; the host raises OverflowError.
Vec values are refused: the CUDA and JAX targets take them.  The leaves are
left(init, x) of each element: where the loop's first step gives NaN on a special value
(log-sum-exp on -inf), the element's prefix is NaN where the sequential loop, started
earlier, may not be."""
from __future__ import annotations

from thm3.errors import UsageError
from thm3.ir import Fn, Loop, Op, Type, initial_state
from thm3.ir.lines import Dialect, scalar_literals, straight_lines, wrap_flags
from thm3.ir.rewrite import rewrite

BLOCK = 1024
_MIN64 = "-9223372036854775808"

TRITON_OPS = {
    Op.NEG: "(-{0})", Op.NOT: "(~{0})", Op.ABS: "tl.abs({0})",
    Op.EXP: "tl.exp({0})", Op.EXP2: "tl.exp2({0})", Op.LOG: "tl.log({0})", Op.LOG2: "tl.log2({0})",
    Op.SQRT: "tl.sqrt({0})", Op.ADD: "({0} + {1})", Op.SUB: "({0} - {1})", Op.MUL: "({0} * {1})",
    Op.DIV: "({0} / {1})", Op.MAX: "_max({0}, {1})", Op.MIN: "_min({0}, {1})",
    Op.POWN: "libdevice.pow({0}, {1})",
    Op.LT: "({0} < {1})", Op.LE: "({0} <= {1})", Op.GT: "({0} > {1})", Op.GE: "({0} >= {1})",
    Op.EQ: "({0} == {1})", Op.NE: "({0} != {1})", Op.AND: "({0} & {1})",
    Op.OR: "({0} | {1})", Op.WHERE: "tl.where({0}, {1}, {2})",
}

# Whether the int64 result r of an operation wrapped (Triton's // truncates, as C's).
TRITON_FLAGS = wrap_flags(_MIN64, "({r} // tl.where(({0}) == 0, 1, {0}))")

_literal = scalar_literals('float("nan")', 'float("inf")')


def _power(base: str, n: int) -> str:
    if n == 0:
        return "1"
    product = " * ".join([f"({base})"] * abs(n))
    return f"({product})" if n > 0 else f"(1.0 / ({product}))"


TRITON = Dialect("triton", TRITON_OPS, _literal, _power, "_mod({0}, {m})", flags=TRITON_FLAGS)

_KINDS = {Type.REAL: "REAL", Type.INT: "tl.int64", Type.BOOL: "tl.int1"}

_HELPERS = '''

@triton.jit
def _max(a, b):
    return tl.where((a > b) | (a != a), a, b)      # NaN from either side; a tie gives b


@triton.jit
def _min(a, b):
    return tl.where((a < b) | (a != a), a, b)


@triton.jit
def _mod(a, m):
    # the IR's remainder is floored (Python's, NumPy's); Triton's % truncates, as C's
    r = a % m
    return tl.where((r != 0) & ((r < 0) != (m < 0)), r + m, r)
'''


def render(loop: Loop, combine: Fn, *, commutativity: str = "unknown") -> str:
    """The module's text.  Vec values are refused (a UsageError), as is an Int literal
    beyond int64 (a LoopError at its position)."""
    from thm3.analysis.int_bounds import overflow_checks
    from thm3.syntax.frontend import wide_int_literal
    vec = [x.name for x in loop.fields + loop.elements + loop.params if x.type is Type.VEC]
    if vec:
        raise UsageError(f"{loop.name}: the Triton target takes scalar values; {', '.join(vec)} "
                         "are Vec (emit --target cuda or --target jax)")
    err = wide_int_literal(loop, "the Triton backend")
    if err is not None:
        raise err
    F = len(loop.fields)
    left_outputs, combine_outputs = rewrite(loop.left.outputs), rewrite(combine.outputs)
    left_checks = overflow_checks(left_outputs, loop, combine, "left")
    combine_checks = overflow_checks(combine_outputs, loop, combine, "combine")
    overflow = bool(left_checks or combine_checks)
    fields = [f.name for f in loop.fields]
    params = [p.name for p in loop.params]
    data = [p for p in loop.elements if not p.index]
    commutative = commutativity == "proved"
    # the lanes of the tuple: the fields, the overflow flag, the parameters
    lanes = [f"s{k}" for k in range(F)] + (["bad"] if overflow else []) + [f"q{k}" for k in range(len(params))]
    kinds = [_KINDS[f.type] for f in loop.fields] + (["tl.int1"] if overflow else []) \
        + [_KINDS[p.type] for p in loop.params]
    n_state = F + overflow                      # lanes stored as a state (fields and flag)

    def names(prefix):
        return [f"{prefix}{x}" for x in lanes]

    def tuple_text(items):
        return ", ".join(items) + ("," if len(items) == 1 else "")

    parts = []
    # step(acc..., [acc_bad], x..., i..., p...)
    env = {f"acc.{f}": f"acc_s{k}" for k, f in enumerate(fields)} | {p: f"p_q{k}" for k, p in enumerate(params)}
    element_args = []
    for k, p in enumerate(loop.elements):
        env[p.name] = f"x{k}"
        element_args.append(f"x{k}")
    lines, outs, flags = straight_lines(left_outputs, env, TRITON, indent="    ", checks=left_checks)
    acc = [f"acc_s{k}" for k in range(F)] + (["acc_bad"] if overflow else [])
    returns = [_cast(o, f"acc_s{k}", e) for k, (o, e) in enumerate(zip(outs, left_outputs))]
    if overflow:
        returns.append(" | ".join(["acc_bad"] + [f"({f})" for f in flags]))
    parts.append("\n".join([
        "", "", "", "@triton.jit",
        f"def step({', '.join(acc + element_args + [f'p_q{k}' for k in range(len(params))])}):",
        '    """left, lane by lane: the state after one element."""',
        *lines,
        f"    return {tuple_text(returns)}"]))

    # combine(a lanes..., b lanes...)
    env = {f"{side}.{f}": f"{side}_s{k}" for side in "ab" for k, f in enumerate(fields)} \
        | {p: f"a_q{k}" for k, p in enumerate(params)}
    lines, outs, flags = straight_lines(combine_outputs, env, TRITON, indent="    ", checks=combine_checks)
    returns = [_cast(o, f"a_s{k}", e) for k, (o, e) in enumerate(zip(outs, combine_outputs))]
    if overflow:
        returns.append(" | ".join(["a_bad", "b_bad"] + [f"({f})" for f in flags]))
    returns += [f"a_q{k}" for k in range(len(params))]
    parts.append("\n".join([
        "", "", "", "@triton.jit",
        f"def combine({', '.join(names('a_') + names('b_'))}):",
        '    """The combine over the state as a flat tuple (a\'s lanes, then b\'s); a is the earlier.',
        '    The parameters ride along as lanes (a\'s are passed on), the flag lane ORs."""',
        *lines,
        f"    return {tuple_text(returns)}"]))

    # the identity, the leaves, the block's state, the tree
    ident = [f"tl.full(shape, {_literal(e.arg, f.type)}, {_KINDS[f.type]})"
             for f, e in zip(loop.fields, initial_state(loop))]
    if overflow:
        ident.append("tl.full(shape, 0, tl.int1)")
    state_lanes = lanes[:n_state]
    v = [f"v_{x}" for x in lanes]
    loads = [f"    x{k} = tl.load(x{k}_ptr + offs, mask=mask, other=0)" if not p.index
             else f"    x{k} = offset + offs" for k, p in enumerate(loop.elements)]
    pfull = [f"    p_q{k} = tl.full([BLOCK], q{k}, {kinds[n_state + k]})" for k in range(len(params))]
    x_ptrs = [f"x{k}_ptr" for k, p in enumerate(loop.elements) if not p.index]
    qs = [f"q{k}" for k in range(len(params))]
    i = [f"i_{x}" for x in state_lanes]
    parts.append("\n".join([
        "", "", "", "@triton.jit",
        "def _identity(shape, REAL: tl.constexpr):",
        f"    return {tuple_text(ident)}",
        "", "", "@triton.jit",
        f"def _leaves({', '.join(x_ptrs + qs)}, start, count, offset, BLOCK: tl.constexpr, REAL: tl.constexpr):",
        '    """left(init, x) of elements start .. start + BLOCK - 1 (the lanes past `count`: the',
        '    identity), and the parameters as lanes."""',
        "    offs = start + tl.arange(0, BLOCK)",
        "    mask = offs < count",
        *loads, *pfull,
        f"    {tuple_text(i)} = _identity([BLOCK], REAL)",
        f"    {tuple_text(v[:n_state])} = step({', '.join(i + element_args + [f'p_q{k}' for k in range(len(params))])})",
        *[f"    {v[k]} = tl.where(mask, {v[k]}, {i[k]})" for k in range(n_state)],
        f"    return {tuple_text(v[:n_state] + [f'p_q{k}' for k in range(len(params))])}",
        "", "", "@triton.jit",
        f"def _states({', '.join(f'{x}_ptr' for x in state_lanes)}, {', '.join(qs + [''])}start, count, "
        "BLOCK: tl.constexpr, REAL: tl.constexpr):",
        '    """States start .. start + BLOCK - 1 (the identity past `count`), parameters as lanes."""',
        "    offs = start + tl.arange(0, BLOCK)",
        "    mask = offs < count",
        f"    {tuple_text(i)} = _identity([BLOCK], REAL)",
        *[f"    {v[k]} = tl.where(mask, tl.load({x}_ptr + offs, mask=mask, other=0), {i[k]})"
          for k, x in enumerate(state_lanes)],
        *pfull,
        f"    return {tuple_text(v[:n_state] + [f'p_q{k}' for k in range(len(params))])}"]))
    if commutative:
        block = [f"    return tl.reduce(({tuple_text(v)}), 0, combine)"]
        doc = "tl.reduce: commutativity is proved, so the order tl.reduce takes is safe"
    else:
        split = [f"        a_{x}, b_{x} = tl.split(tl.reshape({x}, ({x}.shape[0] // 2, 2)))" for x in v]
        block = ["    for level in tl.static_range(BLOCK.bit_length() - 1):",
                 *split,
                 f"        {tuple_text(v)} = combine({', '.join([f'a_{x}' for x in v] + [f'b_{x}' for x in v])})",
                 f"    return {tuple_text([f'tl.reshape({x}, ())' for x in v])}"]
        doc = (f"an explicit tree in list order (tl.reshape and tl.split into neighbours): commutativity is "
               f"{commutativity}, and tl.reduce may reorder operands")
    parts.append("\n".join([
        "", "", "", "@triton.jit",
        f"def _block({', '.join(v)}, BLOCK: tl.constexpr):",
        f'    """A block of lanes to one state: {doc}."""',
        *block]))

    # kernels
    outs = [f"out_{x}" for x in state_lanes]
    carried = [f"c_{x}" for x in state_lanes]
    r = [f"r_{x}" for x in lanes]
    store_one = [f"    tl.store({o}_ptr + pid, r_{x})" for o, x in zip(outs, state_lanes)]
    parts.append("\n".join([
        "", "", "", "@triton.jit",
        f"def reduce_kernel({', '.join(x_ptrs + qs + [o + '_ptr' for o in outs])}, n, offset, "
        "BLOCK: tl.constexpr, REAL: tl.constexpr):",
        '    """Each program: one block of elements to one state, stored at its block\'s place."""',
        "    pid = tl.program_id(0)",
        f"    {tuple_text(v)} = _leaves({', '.join(x_ptrs + qs)}, pid.to(tl.int64) * BLOCK, n, offset, BLOCK, REAL)",
        f"    {tuple_text(r)} = _block({', '.join(v)}, BLOCK)",
        *store_one,
        "", "", "@triton.jit",
        f"def reduce_states_kernel({', '.join([f'{x}_ptr' for x in state_lanes] + qs + [o + '_ptr' for o in outs])}, "
        "count, BLOCK: tl.constexpr, REAL: tl.constexpr):",
        '    """Each program: one block of states to one state."""',
        "    pid = tl.program_id(0)",
        f"    {tuple_text(v)} = _states({', '.join([f'{x}_ptr' for x in state_lanes] + qs)}, "
        "pid.to(tl.int64) * BLOCK, count, BLOCK, REAL)",
        f"    {tuple_text(r)} = _block({', '.join(v)}, BLOCK)",
        *store_one]))
    prefix = [
        f"    {tuple_text(r)} = tl.associative_scan(({tuple_text(v)}), 0, combine)",
        *[f"    {c} = tl.broadcast_to(tl.load({c}_ptr + pid), [BLOCK])" for c in carried],
        f"    {tuple_text(r)} = combine({', '.join(carried + v[n_state:] + r)})",
        *[f"    tl.store({o}_ptr + offs, r_{x}, mask=offs < count)" for o, x in zip(outs, state_lanes)],
    ]
    parts.append("\n".join([
        "", "", "", "@triton.jit",
        f"def scan_kernel({', '.join(x_ptrs + qs + [c + '_ptr' for c in carried] + [o + '_ptr' for o in outs])}, "
        "n, offset, BLOCK: tl.constexpr, REAL: tl.constexpr):",
        '    """Each program: every prefix of its block (tl.associative_scan keeps the order),',
        "    combined with the block's carried prefix on the left.\"\"\"",
        "    pid = tl.program_id(0)",
        "    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)",
        "    count = n",
        f"    {tuple_text(v)} = _leaves({', '.join(x_ptrs + qs)}, pid.to(tl.int64) * BLOCK, n, offset, BLOCK, REAL)",
        *prefix,
        "", "", "@triton.jit",
        f"def scan_states_kernel({', '.join([f'{x}_ptr' for x in state_lanes] + qs + [c + '_ptr' for c in carried] + [o + '_ptr' for o in outs])}, "
        "count, BLOCK: tl.constexpr, REAL: tl.constexpr):",
        '    """scan_kernel over states."""',
        "    pid = tl.program_id(0)",
        "    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)",
        f"    {tuple_text(v)} = _states({', '.join([f'{x}_ptr' for x in state_lanes] + qs)}, "
        "pid.to(tl.int64) * BLOCK, count, BLOCK, REAL)",
        *prefix]))

    # rows: one program a row, its blocks in order
    row_ptrs = [f"x{k}_ptr + row * stride{k}" for k, p in enumerate(loop.elements) if not p.index]
    strides = [f"stride{k}" for k, p in enumerate(loop.elements) if not p.index]
    t = [f"t_{x}" for x in lanes]
    # the running state starts as the identity: a block of no elements, so that its lanes
    # have the types the loop carries
    start_identity = [f"    {tuple_text(v)} = _leaves({', '.join(row_ptrs + qs)}, 0, 0, 0, BLOCK, REAL)",
                      f"    {tuple_text(r)} = _block({', '.join(v)}, BLOCK)"]
    parts.append("\n".join([
        "", "", "", "@triton.jit",
        f"def rows_reduce_kernel({', '.join(x_ptrs + strides + qs + [o + '_ptr' for o in outs])}, ncols, "
        "BLOCK: tl.constexpr, REAL: tl.constexpr):",
        '    """Each program: one row (elements at x + row * stride), block after block, each block\'s',
        "    state combined on the right of the running one.\"\"\"",
        "    row = tl.program_id(0).to(tl.int64)",
        *start_identity,
        "    for start in range(0, ncols, BLOCK):",
        f"        {tuple_text(v)} = _leaves({', '.join(row_ptrs + qs)}, start, ncols, 0, BLOCK, REAL)",
        f"        {tuple_text(t)} = _block({', '.join(v)}, BLOCK)",
        f"        {tuple_text(r)} = combine({', '.join(r + t)})",
        *[f"    tl.store({o}_ptr + row, r_{x})" for o, x in zip(outs, state_lanes)],
        "", "", "@triton.jit",
        f"def rows_scan_kernel({', '.join(x_ptrs + strides + qs + [o + '_ptr' for o in outs])}, ncols, "
        "BLOCK: tl.constexpr, REAL: tl.constexpr):",
        '    """Each program: every prefix of one row, block after block, from the running state."""',
        "    row = tl.program_id(0).to(tl.int64)",
        *start_identity,
        "    for start in range(0, ncols, BLOCK):",
        f"        {tuple_text(v)} = _leaves({', '.join(row_ptrs + qs)}, start, ncols, 0, BLOCK, REAL)",
        f"        {tuple_text(t)} = tl.associative_scan(({tuple_text(v)}), 0, combine)",
        *[f"        {c} = tl.broadcast_to(r_{x}, [BLOCK])" for c, x in zip([f"c_{x}" for x in lanes], lanes)],
        f"        {tuple_text(t)} = combine({', '.join([f'c_{x}' for x in lanes] + t)})",
        "        offs = start + tl.arange(0, BLOCK)",
        *[f"        tl.store({o}_ptr + row * ncols + offs, t_{x}, mask=offs < ncols)"
          for o, x in zip(outs, state_lanes)],
        f"        {tuple_text([f'u_{x}' for x in lanes])} = _block({', '.join(v)}, BLOCK)",
        f"        {tuple_text(r)} = combine({', '.join(r + [f'u_{x}' for x in lanes])})"]))

    head = _head(loop, commutativity, doc, fields, data, overflow, n_state, lanes, kinds)
    return head + _HELPERS + "".join(parts) + _host(loop, fields, data, params, overflow, n_state)


def _cast(text: str, like: str, e) -> str:
    """An output in its field's dtype (a literal as a full block of it)."""
    if e.op is Op.CONST:
        return f"tl.full({like}.shape, {text}, {like}.dtype)"
    return f"({text}).to({like}.dtype)"


def _head(loop: Loop, commutativity: str, doc: str, fields, data, overflow: bool, n_state: int,
          lanes, kinds) -> str:
    title = (loop.title or loop.name).replace("\\", "\\\\").replace('"""', "'''")
    idents = [e.arg for e in initial_state(loop)] + ([False] if overflow else [])
    return f'''"""{title}

The combine of the loop {loop.name!r} for Triton, rendered by thm3 from the loop's IR (see
thm3/backends/triton_module.py for the layout).  It needs triton, and PyTorch CUDA
tensors for the host functions:

    reduce_state(*arrays, **params)    the final state (one value a field)
    scan(*arrays, **params)            every prefix state (one tensor a field)
    reduce_rows(*arrays, **params)     the final state of every row of 2-D arrays
    scan_rows(*arrays, **params)       every prefix of every row

Arrays: {", ".join(f"{p.name} ({p.type.value})" for p in data) or "none (pass n)"}; parameters:
{", ".join(f"{p.name} ({p.type.value})" for p in loop.params) or "none"}.
Commutativity of the combine: {commutativity}.  A block of lanes becomes one state by
{doc}.  The scans use tl.associative_scan, which keeps operands in order.
"""
import triton
import triton.language as tl
from triton.language.extra import libdevice  # noqa: F401  (pow of a Real by an Int)

LOOP = {loop.name!r}
FIELDS = {tuple(fields)!r}
FIELD_TYPES = {tuple(f.type.value for f in loop.fields)!r}
ELEMENTS = {tuple(p.name for p in data)!r}
ELEMENT_TYPES = {tuple(p.type.value for p in data)!r}
ALL_ELEMENT_TYPES = {tuple("Int" if p.index else p.type.value for p in loop.elements)!r}   # x0, x1, ...: an Index too
PARAMS = {tuple(p.name for p in loop.params)!r}
PARAM_TYPES = {tuple(p.type.value for p in loop.params)!r}
COMMUTATIVITY = {commutativity!r}
BLOCK_REDUCTION = {"tl.reduce" if commutativity == "proved" else "tree in list order"!r}
OVERFLOW = {overflow}            # a flag lane after the fields: an Int operation wrapped
STATE_TYPES = FIELD_TYPES + {("Bool",) if overflow else ()!r}
IDENTITY = ({''.join(_py(v) + ', ' for v in idents)})
BLOCK = {BLOCK}
'''


def _py(v) -> str:
    """A value as Python source (inf and nan as float(...))."""
    if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
        return f"float({str(v)!r})"
    return repr(v)


def _host(loop: Loop, fields, data, params, overflow: bool, n_state: int) -> str:
    return '''

# --- host: PyTorch CUDA tensors --------------------------------------------------------

def _kind_dtype(kind, real):
    import torch
    return {"Real": real, "Int": torch.int64, "Bool": torch.bool}[kind]


def _as_input(a, kind, real):
    import torch
    a = torch.as_tensor(a, device="cuda")
    return a.to(_kind_dtype(kind, real)).contiguous()


def _real_of(arrays):
    import torch
    for a, kind in zip(arrays, ELEMENT_TYPES):
        if kind == "Real" and torch.as_tensor(a).dtype in (torch.float32, torch.float64):
            return torch.as_tensor(a).dtype
    return torch.float32


def _empty(count, kind, real, like):
    import torch
    return torch.empty(count, dtype=_kind_dtype(kind, real), device=like.device)


def _tl_real(real):
    return getattr(tl, str(real).replace("torch.", ""))


def _inputs(arrays, params, n):
    if len(arrays) != len(ELEMENTS):
        raise TypeError(f"expected {len(ELEMENTS)} arrays ({', '.join(ELEMENTS)}), got {len(arrays)}")
    missing = [p for p in PARAMS if p not in params]
    if missing:
        raise TypeError(f"missing loop parameters: {', '.join(missing)}")
    real = _real_of(arrays)
    xs = [_as_input(a, kind, real) for a, kind in zip(arrays, ELEMENT_TYPES)]
    shapes = {tuple(x.shape) for x in xs}
    if len(shapes) > 1:
        raise ValueError(f"element arrays of different shapes {sorted(shapes)}")
    if n is None and not xs:
        raise ValueError("only Index elements; pass n")
    cast = {"Real": float, "Int": int, "Bool": bool}
    qs = [cast[kind](params[p]) for p, kind in zip(PARAMS, PARAM_TYPES)]
    like = xs[0] if xs else _as_input([0.0], "Real", real)
    return xs, qs, real, like, shapes.pop() if shapes else (n,)


def _new_states(count, real, like):
    return [_empty(count, kind, real, like) for kind in STATE_TYPES]


def _checked(states):
    if OVERFLOW:
        if bool(states[-1].any()):
            raise OverflowError(f"{LOOP}: an Int field overflows int64 (Triton computes Ints in int64)")
        return states[:-1]
    return states


def reduce_state(*arrays, n=None, offset=0, **params):
    """The final state of the 1-D arrays (one value a field): each block of BLOCK elements
    to one state, then blocks of states, until one is left."""
    xs, qs, real, like, shape = _inputs(arrays, params, n)
    n = shape[0]
    if n == 0:
        return IDENTITY[:len(FIELDS)]
    blocks = triton.cdiv(n, BLOCK)
    outs = _new_states(blocks, real, like)
    reduce_kernel[(blocks,)](*xs, *qs, *outs, n, offset, BLOCK=BLOCK, REAL=_tl_real(real))
    while blocks > 1:
        count, blocks = blocks, triton.cdiv(blocks, BLOCK)
        ins, outs = outs, _new_states(blocks, real, like)
        reduce_states_kernel[(blocks,)](*ins, *qs, *outs, count, BLOCK=BLOCK, REAL=_tl_real(real))
    return tuple(o[0].item() for o in _checked(outs))


def _identity_states(count, real, like):
    out = _new_states(count, real, like)
    for o, v in zip(out, IDENTITY):
        o[:] = v
    return out


def _inclusive(states, count, qs, real, like):
    """Every prefix of `count` states: blocks scanned from their carried prefixes."""
    blocks = triton.cdiv(count, BLOCK)
    if blocks == 1:
        carried = _identity_states(1, real, like)
    else:
        totals = _new_states(blocks, real, like)
        reduce_states_kernel[(blocks,)](*states, *qs, *totals, count, BLOCK=BLOCK, REAL=_tl_real(real))
        carried = _exclusive(totals, blocks, qs, real, like)
    outs = _new_states(count, real, like)
    scan_states_kernel[(blocks,)](*states, *qs, *carried, *outs, count, BLOCK=BLOCK, REAL=_tl_real(real))
    return outs


def _exclusive(states, count, qs, real, like):
    """State i becomes the combine of states 0 .. i-1 (the identity for i = 0)."""
    inclusive = _inclusive(states, count, qs, real, like)
    out = _new_states(count, real, like)
    for o, i, v in zip(out, inclusive, IDENTITY):
        o[0] = v
        o[1:] = i[:-1]
    return out


def scan(*arrays, n=None, offset=0, **params):
    """Every prefix state of the 1-D arrays, inclusive and in list order: one tensor a field."""
    xs, qs, real, like, shape = _inputs(arrays, params, n)
    n = shape[0]
    if n == 0:
        return tuple(_new_states(0, real, like)[:len(FIELDS)])
    blocks = triton.cdiv(n, BLOCK)
    totals = _new_states(blocks, real, like)
    reduce_kernel[(blocks,)](*xs, *qs, *totals, n, offset, BLOCK=BLOCK, REAL=_tl_real(real))
    carried = _exclusive(totals, blocks, qs, real, like)
    outs = _new_states(n, real, like)
    scan_kernel[(blocks,)](*xs, *qs, *carried, *outs, n, offset, BLOCK=BLOCK, REAL=_tl_real(real))
    return tuple(_checked(outs))


def reduce_rows(*arrays, **params):
    """The final state of every row of the 2-D arrays (rows, ncols): one tensor a field."""
    xs, qs, real, like, shape = _inputs(arrays, params, None)
    rows, ncols = shape
    outs = _new_states(rows, real, like)
    if rows:
        rows_reduce_kernel[(rows,)](*xs, *[ncols] * len(xs), *qs, *outs, ncols, BLOCK=BLOCK, REAL=_tl_real(real))
    return tuple(_checked(outs))


def scan_rows(*arrays, **params):
    """Every prefix of every row of the 2-D arrays: one (rows, ncols) tensor a field."""
    xs, qs, real, like, shape = _inputs(arrays, params, None)
    rows, ncols = shape
    outs = _new_states(rows * ncols, real, like)
    if rows and ncols:
        rows_scan_kernel[(rows,)](*xs, *[ncols] * len(xs), *qs, *outs, ncols, BLOCK=BLOCK, REAL=_tl_real(real))
    return tuple(o.reshape(rows, ncols) for o in _checked(outs))
'''


__all__ = ["BLOCK", "TRITON", "TRITON_FLAGS", "TRITON_OPS", "render"]
