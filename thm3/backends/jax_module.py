"""The combine as a standalone JAX module: the text `thm3 emit --target jax` writes and
`backend="jax"` loads.  Pure text: nothing here imports JAX.

The module needs only `jax`.  A state is a tuple of arrays, one a field in the State's
order, every array batched along its first axis: a scalar field is (n, 1) inside the
module, a Vec field (n, D).  Its functions:
- `identity(n, dim, real)`: the identity state in n lanes;
- `step(acc, xs, params, index)`: `left` on a batch of states, one element each, and
  `leaf(columns, params, offset, n)`: left(init, x) for every element at once (an
  `Index` element reads offset + its position);
- `combine(a, b, params)`: the proved combine, lane by lane, a the earlier part;
- `fold_runs`: the elements cut into runs of consecutive elements, every run folded with
  `left`, all runs side by side (`jax.lax.scan` over the steps);
- `scan_states`: the runs' totals, their exclusive prefixes (`exclusive`: Hillis and
  Steele's doubling in a `jax.lax.fori_loop`), every run folded again from its prefix (the
  blocked scan of
  `backends/scan.py`: each prefix state is the loop's own fold inside its run, so NaN
  and inf go where the sequential loop puts them, but at a run's first element);
  `reduce_states`: a tree of combines over neighbours (2k, 2k + 1) in list order; both
  trace under `jax.jit`;
- `scan(*arrays, **params)`, `reduce(...)`, `reduce_state(...)`: the same on plain arrays,
  compiled with `jax.jit`, n = 0 included, with `result` applied where asked.
- `scan_leaves(leaf(...), params)`: the prefixes by `jax.lax.associative_scan` itself, for
  code that calls the primitive (exact but for the special values above).
No route reorders operands: every combine takes the earlier part on the left, so a
combine that is not commutative is safe in all.  `scan` does not call
`jax.lax.associative_scan`: it unrolls about 2 log2(n) combines into the program, and a
large combine then compiles slowly (12 s on this project's CPU for a 9-field semiring
combine at n = 1000, against 0.36 s with one combine in a `fori_loop`).

The functions print the IR through the shared straight-line printer (`thm3.ir.lines`,
the `JAX` dialect) after the shared rewrites (`thm3.ir.rewrite`).  max and min follow
thm3's tables (NaN from either side propagates, a tie gives the second operand).  An Int
operation that int64 can overflow (`overflow_checks`) sets a flag carried as one more
leaf of the state; `scan` and `reduce` raise OverflowError when it is set on concrete
values (traced code cannot raise: under an outer `jax.jit`, read the flag from
`scan_states`).  JAX computes in float32 and int32 unless `jax_enable_x64` is on;
`backend="jax"` turns it on around its calls, as the other backends compute in float64."""
from __future__ import annotations

from thm3.ir import Fn, Loop, Op, Type, initial_state
from thm3.ir.lines import Dialect, scalar_literals, straight_lines, wrap_flags
from thm3.ir.rewrite import rewrite

JAX_OPS = {
    Op.NEG: "jnp.negative({0})", Op.NOT: "jnp.logical_not({0})", Op.ABS: "jnp.abs({0})",
    Op.EXP: "jnp.exp({0})", Op.EXP2: "jnp.exp2({0})", Op.LOG: "jnp.log({0})", Op.LOG2: "jnp.log2({0})",
    Op.SQRT: "jnp.sqrt({0})", Op.ADD: "({0} + {1})", Op.SUB: "({0} - {1})", Op.MUL: "({0} * {1})",
    Op.DIV: "jnp.true_divide({0}, {1})", Op.MAX: "_max({0}, {1})", Op.MIN: "_min({0}, {1})",
    Op.POWN: "_pown({0}, {1})",
    Op.LT: "({0} < {1})", Op.LE: "({0} <= {1})", Op.GT: "({0} > {1})", Op.GE: "({0} >= {1})",
    Op.EQ: "({0} == {1})", Op.NE: "({0} != {1})", Op.AND: "jnp.logical_and({0}, {1})",
    Op.OR: "jnp.logical_or({0}, {1})", Op.WHERE: "jnp.where({0}, {1}, {2})",
    Op.DOT: "jnp.sum({0} * {1}, axis=-1, keepdims=True)",
}

# Whether the int64 (int32) result r of an operation wrapped, from its operands and r.
JAX_FLAGS = wrap_flags("jnp.iinfo({r}.dtype).min", "jnp.floor_divide({r}, jnp.where(({0}) == 0, 1, {0}))")

_literal = scalar_literals("jnp.nan", "jnp.inf")


def _power(base: str, n: int) -> str:
    # a negative power of an Int is Real, as in the IR; of a Real, IEEE (0 ** -1 is inf)
    return f"_fpow({base}, {n})" if n < 0 else f"({base} ** {n})"


JAX = Dialect("jax", JAX_OPS, _literal, _power, "jnp.mod({0}, {m})", flags=JAX_FLAGS)

_HELPERS = '''

def _max(a, b):
    return jnp.where((a > b) | (a != a), a, b)      # NaN from either side; a tie gives b


def _min(a, b):
    return jnp.where((a < b) | (a != a), a, b)


def _fpow(a, n):
    a = jnp.asarray(a)
    return jnp.power(a.astype(jnp.result_type(a.dtype, float)), n)


def _pown(a, n):
    a = jnp.asarray(a)
    real = jnp.result_type(a.dtype, float)
    return jnp.power(a.astype(real), jnp.asarray(n).astype(real))


def _like(x, ref):
    """x in ref's dtype and shape (a field keeps its type; a Vec field stays (n, D))."""
    return jnp.broadcast_to(jnp.asarray(x).astype(ref.dtype), ref.shape)
'''

_DRIVERS = '''


def _real(arrays):
    """The Real type: the first Real array's, else JAX's default float."""
    for a, kind in zip(arrays, ELEMENT_TYPES):
        if kind in ("Real", "Vec") and jnp.issubdtype(jnp.asarray(a).dtype, jnp.floating):
            return jnp.asarray(a).dtype
    return jnp.result_type(float)


def _params(params, real):
    missing = [p for p in PARAMS if p not in params]
    if missing:
        raise TypeError(f"missing loop parameters: {', '.join(missing)}")
    kinds = {"Real": real, "Vec": real, "Int": int, "Bool": bool}
    return {p: jnp.asarray(params[p]).astype(kinds[PARAM_TYPES[k]]) for k, p in enumerate(PARAMS)}


def _columns(arrays, real):
    kinds = {"Real": real, "Vec": real, "Int": int, "Bool": bool}
    if len(arrays) != len(ELEMENTS):
        raise TypeError(f"expected {len(ELEMENTS)} arrays ({', '.join(ELEMENTS)}), got {len(arrays)}")
    out = []
    for a, kind in zip(arrays, ELEMENT_TYPES):
        a = jnp.asarray(a).astype(kinds[kind])
        out.append(a if kind == "Vec" else a.reshape(-1, 1))
    return tuple(out)


def _dim(columns, params, dim):
    dims = {c.shape[1] for c, kind in zip(columns, ELEMENT_TYPES) if kind == "Vec"}
    dims |= {params[p].shape[-1] for k, p in enumerate(PARAMS) if PARAM_TYPES[k] == "Vec"}
    if dim is not None:
        dims.add(dim)
    if len(dims) > 1:
        raise ValueError(f"Vec values of different lengths {sorted(dims)}")
    if not dims and NEEDS_DIM:
        raise ValueError("the length of Vec values is unknown; pass dim")
    return dims.pop() if dims else 1


def _length(columns, n):
    lengths = {c.shape[0] for c in columns}
    if n is not None:
        lengths.add(n)
    if len(lengths) > 1:
        raise ValueError(f"element arrays of different lengths {sorted(lengths)}")
    if not lengths:
        raise ValueError("only Index elements; pass n")
    return lengths.pop()


def leaf(columns, params, offset, n, dim=1):
    """left(init, x) for each of the n elements: the leaf states."""
    return step(identity(n, dim, _real_of(columns, params)), columns, params,
                (offset + jnp.arange(n))[:, None])


def fold_runs(columns, params, offset, n, dim, length, start=None, keep=False):
    """The n elements cut into runs of `length` consecutive elements, every run folded
    with `left` (all runs side by side, `jax.lax.scan` over the steps), from `start` (one
    state a run; the identity by default).  The run totals, and with `keep` the state
    after every element, (n, ...) per field."""
    runs = -(-n // length)
    real = _real_of(columns, params)
    state = identity(runs, dim, real) if start is None else start
    cells = tuple(jnp.moveaxis(jnp.pad(c, [(0, runs * length - n)] + [(0, 0)] * (c.ndim - 1))
                               .reshape((runs, length) + c.shape[1:]), 1, 0) for c in columns)
    first = (jnp.arange(runs) * length)[:, None]

    def one(state, at):
        j, xs = at
        new = step(state, xs, params, offset + first + j)
        valid = first + j < n
        state = tuple(jnp.where(valid, u, s) for u, s in zip(new, state))
        return state, (state if keep else None)

    state, kept = jax.lax.scan(one, state, (jnp.arange(length), cells))
    if not keep:
        return state, None
    return state, tuple(jnp.moveaxis(k, 0, 1).reshape((runs * length,) + k.shape[2:])[:n] for k in kept)


def _state_real(states):
    """The Real type of a batch of states: its first Real field's, else JAX's default float."""
    return next((s.dtype for s, kind in zip(states, FIELD_TYPES) if kind in ("Real", "Vec")), jnp.result_type(float))


def scan_leaves(leaves, params):
    """Every prefix of a batch of states by jax.lax.associative_scan of the combine (the
    primitive as ML code calls it; it keeps operands in order).  It unrolls about
    2 log2(n) combines into the program, so a large combine compiles slowly: `scan`
    takes `exclusive` instead."""
    return jax.lax.associative_scan(lambda a, b: combine(a, b, params), leaves)


def _nan(states):
    """Whether a Real or Vec field of a batch of states is anywhere outside the proof's
    cover: NaN, or an infinity other than the field's identity value (max's -inf)."""
    ident = identity(1, 1, _state_real(states))
    flags = [jnp.any(~jnp.isfinite(s) & (s != i)) for s, i, kind in zip(states, ident, FIELD_TYPES)
             if kind in ("Real", "Vec")]
    return functools.reduce(jnp.logical_or, flags, jnp.zeros((), bool))


def exclusive(states, params, dim=1):
    """State r becomes the combine of states 0 .. r-1 (the identity for r = 0), in list
    order: Hillis and Steele's doubling, state r - d always on the left, in a
    jax.lax.fori_loop, so the program holds one combine however many states."""
    return _exclusive(states, params, dim)[0]


def _exclusive(states, params, dim):
    """`exclusive`, and whether a combine left the proof's cover (`_nan`)."""
    count = states[0].shape[0]
    real = _state_real(states)
    ident = identity(count, dim, real)
    place = jnp.arange(count)[:, None]

    def level(k, now):
        now, bad = now
        d = jnp.left_shift(1, k)
        earlier = tuple(jnp.where(place >= d, jnp.roll(s, d, axis=0), i) for s, i in zip(now, ident))
        merged = combine(earlier, now, params)
        return tuple(jnp.where(place >= d, m, s) for m, s in zip(merged, now)), bad | _nan(merged)

    inclusive, bad = jax.lax.fori_loop(0, max(count - 1, 0).bit_length(), level,
                                       (tuple(states), jnp.zeros((), bool)))
    return tuple(jnp.concatenate([i[:1], s[:-1]]) for i, s in zip(ident, inclusive)), bad


def scan_states(columns, params, offset, n, dim, lanes=LANES):
    """Every prefix state: the runs' totals, their exclusive prefixes (`exclusive`), then
    every run folded again from its prefix, keeping each state.  Where a run total or a
    combine holds a NaN or an infinity other than the identity's, which the proof over
    the reals does not cover (a log-sum-exp run that starts at -inf is (-inf, NaN) from
    the identity), the runs are joined in order instead (`_in_order`): the runs
    concerned are folded from their carried states, as the loop does."""
    length = -(-n // min(lanes, n))
    totals, _ = fold_runs(columns, params, offset, n, dim, length)
    carried, bad = _exclusive(totals, params, dim)
    special = _specials(columns, params, n, length)
    carried = jax.lax.cond(bad | _nan(totals) | jnp.any(special),
                           lambda: _in_order(totals, columns, params, offset, n, dim, length, special)[0],
                           lambda: carried)
    return fold_runs(columns, params, offset, n, dim, length, start=carried, keep=True)[1]


def _specials(columns, params, n, length):
    """One flag a run of `length` elements: a Real or Vec input in it is NaN or infinite
    (every run where a Real parameter is), which the proof over the reals does not cover
    (a loop can forget a NaN element that the combine would keep)."""
    runs = -(-n // length)
    flags = jnp.zeros(runs, bool)
    for c, kind in zip(columns, ELEMENT_TYPES):
        if kind in ("Real", "Vec"):
            odd = jnp.any(~jnp.isfinite(c).reshape(c.shape[0], -1), axis=1)
            flags = flags | jnp.pad(odd, (0, runs * length - n)).reshape(runs, length).any(axis=1)
    for k, p in enumerate(PARAMS):
        if PARAM_TYPES[k] in ("Real", "Vec"):
            flags = flags | jnp.any(~jnp.isfinite(params[p]))
    return flags


def _in_order(totals, columns, params, offset, n, dim, length, special):
    """(the state carried into each run, the state after the last), run after run: a
    run's total joins by the combine where its elements are finite (`special`) and the
    carried state, the total and their combine are covered (`_nan`), and the run is
    folded from the carried state otherwise."""
    runs = totals[0].shape[0]
    padded = tuple(jnp.pad(c, [(0, runs * length - n)] + [(0, 0)] * (c.ndim - 1)) for c in columns)

    def fold_run(state, r):
        cells = tuple(jax.lax.dynamic_slice_in_dim(c, r * length, length) for c in padded)

        def one(s, at):
            j, xs = at
            at_ = r * length + j
            new = step(s, tuple(x.reshape((1,) + x.shape) for x in xs), params, (offset + at_).reshape(1, 1))
            return tuple(jnp.where(at_ < n, u, v) for u, v in zip(new, s)), None
        return jax.lax.scan(one, state, (jnp.arange(length), cells))[0]

    def one_run(state, r):
        total = tuple(jax.lax.dynamic_slice_in_dim(s, r, 1) for s in totals)
        joined = combine(state, total, params)
        bad = special[r] | _nan(state) | _nan(total) | _nan(joined)
        return jax.lax.cond(bad, lambda: fold_run(state, r), lambda: joined), state

    final, carried = jax.lax.scan(one_run, identity(1, dim, _state_real(totals)), jnp.arange(runs))
    return tuple(c[:, 0] for c in carried), final


def reduce_states(states, params, dim=1):
    """The combine of a batch of states: neighbours (2k, 2k + 1), the earlier on the left,
    level by level, padded with the identity to a power of two (one combine in the
    program: the levels run in a jax.lax.fori_loop, each on arrays of one size)."""
    return _reduce_states(states, params, dim)[0]


def _reduce_states(states, params, dim):
    """`reduce_states`, and whether a combine left the proof's cover (`_nan`)."""
    count = states[0].shape[0]
    size = 1 << max(count - 1, 0).bit_length()
    real = _state_real(states)
    pad = identity(size - count, dim, real)
    half = identity(size // 2, dim, real) if size > 1 else None
    states = tuple(jnp.concatenate([s, p]) for s, p in zip(states, pad))

    def level(k, now):
        now, bad = now
        pairs = [s.reshape((size // 2, 2) + s.shape[1:]) for s in now]
        merged = combine(tuple(p[:, 0] for p in pairs), tuple(p[:, 1] for p in pairs), params)
        return tuple(jnp.concatenate([m, h]) for m, h in zip(merged, half)), bad | _nan(merged)

    bad = jnp.zeros((), bool)
    if size > 1:
        states, bad = jax.lax.fori_loop(0, (size - 1).bit_length(), level, (states, bad))
    return tuple(s[:1] for s in states), bad


@functools.partial(jax.jit, static_argnames=("n", "dim", "prefixes", "lanes"))
def _run(columns, params, offset, n, dim, prefixes, lanes):
    if n == 0:
        states = identity(1, dim, _real_of(columns, params))
        return tuple(s[:0] for s in states) if prefixes else states
    if prefixes:
        return scan_states(columns, params, offset, n, dim, lanes)
    length = -(-n // min(lanes, n))
    totals = fold_runs(columns, params, offset, n, dim, length)[0]
    state, bad = _reduce_states(totals, params, dim)
    # a state or element the proof does not cover (see `scan_states`): the runs joined in order
    special = _specials(columns, params, n, length)
    return jax.lax.cond(bad | _nan(totals) | jnp.any(special),
                        lambda: _in_order(totals, columns, params, offset, n, dim, length, special)[1],
                        lambda: state)


def _real_of(columns, params):
    for c, kind in zip(columns, ELEMENT_TYPES):
        if kind in ("Real", "Vec"):
            return c.dtype
    for k, p in enumerate(PARAMS):
        if PARAM_TYPES[k] in ("Real", "Vec"):
            return params[p].dtype
    return jnp.result_type(float)


def _checked(states):
    if OVERFLOW:
        flag = states[-1]
        if not isinstance(flag, jax.core.Tracer) and bool(jnp.any(flag)):
            raise OverflowError(f"{LOOP}: an Int field overflows {jnp.result_type(int)} (the JAX module computes "
                                "Ints in JAX's default int: int64 under jax_enable_x64)")
        states = states[:-1]
    return states


def _outside(states):
    """Fields as the caller sees them: a scalar field (n,), a Vec field (n, D)."""
    return tuple(s if kind == "Vec" else s[:, 0] for s, kind in zip(states, FIELD_TYPES))


def _call(arrays, params, n, dim, offset, prefixes, lanes):
    real = _real(arrays)
    columns = _columns(arrays, real)
    params = _params(params, real)
    n = _length(columns, n)
    return _checked(_run(columns, params, offset, n, _dim(columns, params, dim), prefixes, lanes)), params


def scan(*arrays, n=None, dim=None, offset=0, result=False, lanes=LANES, **params):
    """Every prefix state (inclusive, in list order), one array a field ((n,), or (n, D) for a
    Vec); with result=True, `result` of every prefix (the states where there is none)."""
    states, params = _call(arrays, params, n, dim, offset, True, lanes)
    if result and HAS_RESULT:
        return _outside_result(result_of(states, params))
    return _outside(states)


def reduce_state(*arrays, n=None, dim=None, offset=0, lanes=LANES, **params):
    """The final state: one value a field (a (D,) array for a Vec)."""
    states, params = _call(arrays, params, n, dim, offset, False, lanes)
    return tuple(s[0] for s in _outside(states))


def reduce(*arrays, n=None, dim=None, offset=0, lanes=LANES, **params):
    """The loop's answer: `result` of the final state, or the final state without one."""
    states, params = _call(arrays, params, n, dim, offset, False, lanes)
    if not HAS_RESULT:
        return tuple(s[0] for s in _outside(states))
    out = _outside_result(result_of(states, params))
    return tuple(o[0] for o in out) if isinstance(out, tuple) else out[0]


def _outside_result(values):
    kinds = RESULT_TYPES
    flat = tuple(v if k == "Vec" else v[:, 0] for v, k in zip(values, kinds))
    return flat if len(flat) > 1 else flat[0]
'''


def _py_name(prefix: str, name: str) -> str:
    return f"{prefix}_{name}"


def render(loop: Loop, combine: Fn, *, commutativity: str = "unknown") -> str:
    """The module's text.  An Int literal beyond int64 is refused (a `LoopError` at its
    position), as in the other backends that compute Ints in int64."""
    from thm3.analysis.int_bounds import overflow_checks
    from thm3.syntax.frontend import wide_int_literal
    err = wide_int_literal(loop, "the JAX backend")
    if err is not None:
        raise err
    fields = [f.name for f in loop.fields]
    left_outputs, combine_outputs = rewrite(loop.left.outputs), rewrite(combine.outputs)
    left_checks = overflow_checks(left_outputs, loop, combine, "left")
    combine_checks = overflow_checks(combine_outputs, loop, combine, "combine")
    overflow = bool(left_checks or combine_checks)
    param_names = {p.name: _py_name("p", p.name) for p in loop.params}
    unpack_params = [f"    {param_names[p.name]} = params[{p.name!r}]" for p in loop.params]

    # identity(n, dim, real)
    ident = []
    for f, e in zip(loop.fields, initial_state(loop)):
        shape = "(n, dim)" if f.type is Type.VEC else "(n, 1)"
        dtype = {Type.BOOL: "bool", Type.INT: "int"}.get(f.type, "real")
        ident.append(f"jnp.full({shape}, {_literal(e.arg, Type.REAL if f.type is Type.VEC else f.type)}, {dtype})")
    if overflow:
        ident.append("jnp.zeros((n, 1), bool)")
    parts = [f'''

def identity(n, dim=1, real=None):
    """The identity state in n lanes (Reals in `real`, JAX's default float by default)."""
    real = jnp.result_type(float) if real is None else real
    return ({", ".join(ident)},)''']

    # step(acc, xs, params, index): left on a batch of states and one element each
    names = {f"acc.{f}": _py_name("acc", f) for f in fields} | param_names
    unpack_elems = []
    k = 0
    for p in loop.elements:
        names[p.name] = _py_name("x", p.name)
        if p.index:
            unpack_elems.append(f"    {names[p.name]} = index")
        else:
            unpack_elems.append(f"    {names[p.name]} = xs[{k}]")
            k += 1
    lines, outs, flags = straight_lines(left_outputs, names, JAX, indent="    ", checks=left_checks)
    acc = ", ".join(_py_name("acc", f) for f in fields) + (", _bad" if overflow else "")
    acc += "," if len(fields) + overflow == 1 else ""
    returns = [f"_like({o}, {_py_name('acc', f)})" for o, f in zip(outs, fields)]
    if overflow:
        returns.append(f"_like({' | '.join(['_bad'] + [f'({f})' for f in flags])}, _bad)")
    parts.append("\n".join([
        "", "", "",
        "def step(acc, xs, params, index):",
        '    """left on a batch of states, one element each (xs: the data elements, (R, 1) or',
        '    (R, D); index: their positions, (R, 1))."""',
        *unpack_params, f"    {acc} = acc", *unpack_elems,
        *lines,
        f"    return ({', '.join(returns)},)"]))

    # combine(a, b, params)
    names = {f"{side}.{f}": _py_name(side, f) for side in "ab" for f in fields} | param_names
    lines, outs, flags = straight_lines(combine_outputs, names, JAX, indent="    ", checks=combine_checks)
    unpack = []
    for side in "ab":
        # the flag's name cannot be a field's: a NamedTuple field never starts with "_"
        vs = [_py_name(side, f) for f in fields] + ([f"{side}__bad"] if overflow else [])
        unpack.append(f"    {', '.join(vs)}{',' if len(vs) == 1 else ''} = {side}")
    returns = [f"_like({o}, {_py_name('a', f)})" for o, f in zip(outs, fields)]
    if overflow:
        returns.append(f"_like({' | '.join(['a__bad', 'b__bad'] + [f'({f})' for f in flags])}, a__bad)")
    parts.append("\n".join([
        "", "", "",
        "def combine(a, b, params):",
        '    """The combine of two batches of states, lane by lane; a is the earlier part."""',
        *unpack_params, *unpack,
        *lines,
        f"    return ({', '.join(returns)},)"]))

    # result_of(states, params)
    if loop.result is not None:
        names = {f"acc.{f}": _py_name("acc", f) for f in fields} | param_names
        lines, outs, _ = straight_lines(loop.result.outputs, names, JAX, indent="    ")
        refs = [_py_name("acc", f) for f in fields]
        shaped = [f"jnp.broadcast_to(jnp.asarray({o}), (({refs[0]}).shape[0], jnp.shape({o})[-1] if jnp.ndim({o}) else 1))"
                  if t is Type.VEC else f"jnp.broadcast_to(jnp.asarray({o}), (({refs[0]}).shape[0], 1))"
                  for o, t in zip(outs, loop.result_types)]
        parts.append("\n".join([
            "", "", "",
            "def result_of(states, params):",
            '    """`result` of every state of a batch: one array an output, (n, 1) or (n, D)."""',
            *unpack_params,
            f"    {', '.join(refs)}{',' if len(refs) == 1 else ''} = states[:{len(fields)}]",
            *lines,
            f"    return ({', '.join(shaped)},)"]))

    def kinds(items) -> str:
        return repr(tuple(t.value for t in items))

    data_elems = [p for p in loop.elements if not p.index]
    head = f'''"""{_doc_text(loop.title or loop.name)}

The combine of the loop {loop.name!r} for JAX, rendered by thm3 from the loop's IR (see
thm3/backends/jax_module.py for the layout).  It needs only jax.

    scan(*arrays, **params)      every prefix state (or result=True: every prefix's result)
    reduce(*arrays, **params)    the loop's answer; reduce_state: the final state
    combine(a, b, params)        the combine on batched states, a the earlier part
    step(acc, xs, params, index) left on batched states
    scan_states, reduce_states   the same, traceable under jax.jit

Arrays: {", ".join(f"{p.name} ({p.type.value})" for p in data_elems) or "none (pass n)"}; parameters:
{", ".join(f"{p.name} ({p.type.value})" for p in loop.params) or "none"}.
Commutativity of the combine: {commutativity} ({"any order" if commutativity == "proved" else "order-preserving only"}).
Both scan (runs folded in order, their totals scanned by doubling, the earlier on the left)
and reduce (a tree over neighbours in list order) keep the operands in list order, so they
are safe either way; scan_leaves hands the same combine to jax.lax.associative_scan.
JAX computes in float32 and int32 unless jax_enable_x64 is on.
"""
import functools

import jax
import jax.numpy as jnp

LOOP = {loop.name!r}
FIELDS = {tuple(fields)!r}
FIELD_TYPES = {kinds(f.type for f in loop.fields)}
ELEMENTS = {tuple(p.name for p in data_elems)!r}
ELEMENT_TYPES = {kinds(p.type for p in data_elems)}
PARAMS = {tuple(p.name for p in loop.params)!r}
PARAM_TYPES = {kinds(p.type for p in loop.params)}
RESULT_TYPES = {kinds(loop.result_types if loop.result is not None else ())}
HAS_RESULT = {loop.result is not None}
NEEDS_DIM = {any(t is Type.VEC for t in [f.type for f in loop.fields] + [p.type for p in loop.elements])}
OVERFLOW = {overflow}            # a last leaf of the state flags an Int overflow
COMMUTATIVITY = {commutativity!r}
LANES = 4096                    # runs folded side by side
'''
    return head + _HELPERS + "".join(parts) + _DRIVERS


def _doc_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"""', "'''")


__all__ = ["JAX", "JAX_FLAGS", "JAX_OPS", "render"]
