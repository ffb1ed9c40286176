"""The runtime of an emitted reduction module: launchers of the in-order reduction and of
the inclusive scan, and their NumPy twin (backend="numpy").  `gpu/render/module.py` copies
this file verbatim, after `common.py`, below the loop's own part of the module: its
constants, its rendered sources and its NumPy functions (`_left`, `_combine`, `_result`),
which the annotations below name.  Imported on its own (as thm3 does to read it), it
defines the functions and nothing runs."""
from __future__ import annotations

import numpy as np

from .common import BackendUnavailable, _cupy, _device  # thm3: runtime import  # noqa: F401

# The loop's part of the module, above this text, defines:
NAME: str               # the loop's name
DTYPE: type             # np.float32 or np.float64: Real
DIM: int | None         # the length of a Vec
FIELDS: tuple           # the State: (name, type) in order
ELEMENTS: tuple         # the elements, one array each in order (an Index is the position)
PARAMS: tuple           # the loop parameters, passed by keyword
RESULT: str | tuple | None   # the type of reduce's answer (None: the state itself; a tuple: several values)
RESULT_NAMES: tuple | None   # the names of several values, where `result` returns a NamedTuple
RESULT_CLASS: str | None     # ... and its name
BLOCK: int              # threads per block of the reduction
ITEMS: int              # consecutive elements per thread in a warp tile
STATE_BYTES: int        # sizeof(State) in the sources
DEFAULTS: tuple         # the identity, a value a field
SOURCE: str             # the reduction's CUDA source
SCAN_BLOCK: int         # threads per block of the scan
SCAN_TILE: int          # elements per tile of the scan
SCAN_SOURCE: str        # the scan's CUDA source
# and the NumPy functions _left, _combine and _result (None without a result)

MAX_BLOCKS = 4096       # cap on pass 1's grid: pass 2 combines that many partials
LENGTH_LIMIT = 2**56    # the longest list: thm3 proved its unchecked Int operations (a count) for it
RUN = 1024              # backend="numpy": elements a run folds with left

_modules: dict = {}


def _result_kinds() -> list:
    """The result's outputs, (name, type) each: one, or one per value of several."""
    if RESULT is None:
        return []
    if isinstance(RESULT, str):
        return [("result", RESULT)]
    return [(f"result{k}", t) for k, t in enumerate(RESULT)]


_result_class: list = []


def _shaped(values: list):
    """The result's values in the shape `result` returns: one value, a tuple, or the
    loop file's NamedTuple of named results."""
    if isinstance(RESULT, str):
        return values[0]
    if not RESULT_NAMES:
        return tuple(values)
    if not _result_class:
        from collections import namedtuple
        _result_class.append(namedtuple(RESULT_CLASS, RESULT_NAMES))
    return _result_class[0](*values)


def _module(source: str | None = None):
    """SOURCE (or `source`, e.g. SCAN_SOURCE) compiled, once a device."""
    cupy = _cupy()
    source = SOURCE if source is None else source
    key = (_device(cupy), source)
    module = _modules.get(key)
    if module is None:
        module = _modules[key] = cupy.RawModule(code=source)
    return module


def _kernel(name: str, source: str | None = None):
    """Kernel `name` of SOURCE (or of `source`, e.g. SCAN_SOURCE), compiled once a device."""
    return _module(source).get_function(name)


# An Int sum, difference, product, negation or power that leaves int64 in the kernels
# stores 1 + its field's index in the device global thm3_int_overflow (a source without
# such operations has none): zeroed before a launch, read after it.

def _int_flag(source: str | None = None, zero: bool = True):
    """The device global thm3_int_overflow of the source (zeroed, unless `zero` is
    False: to read it after a launch); None where the source has none."""
    source = SOURCE if source is None else source
    if "thm3_int_overflow" not in source:
        return None
    cupy = _cupy()
    flag = cupy.ndarray((1,), dtype=cupy.int32, memptr=_module(source).get_global("thm3_int_overflow"))
    if zero:
        flag.fill(0)
    return flag


def _check_ints(flag) -> None:
    """OverflowError naming the field, where a launch since `_int_flag` overflowed."""
    if flag is None:
        return
    code = int(flag.get()[0])
    if code:
        flag.fill(0)
        raise OverflowError(f"{NAME}: the Int field {FIELDS[code - 1][0]} overflows int64 in the CUDA kernels "
                            "(they compute Ints in int64)")


def _real_type(type_: str):
    return {"Real": DTYPE, "Vec": DTYPE, "Int": np.int64, "Bool": np.bool_}[type_]


def _arrays(arrays, lead: int):
    """The element arrays on the device, contiguous, in their dtypes; and their length.
    `lead` is 1 for reduce (shape (n,) or (n, DIM)) and 2 for reduce_rows."""
    cupy = _cupy()
    _device(cupy)
    data = [(name, t) for name, t in ELEMENTS if t != "Index"]
    if len(arrays) != len(data):
        names = ", ".join(name for name, _ in data)
        raise TypeError(f"{NAME}: expected {len(data)} arrays ({names}), got {len(arrays)}")
    out = []
    for a, (name, t) in zip(arrays, data):
        a = cupy.ascontiguousarray(cupy.asarray(a, dtype=_real_type(t)))
        want = lead + (1 if t == "Vec" else 0)
        if a.ndim != want or (t == "Vec" and a.shape[-1] != DIM):
            raise ValueError(f"{NAME}: {name} must have {want} dimensions"
                             + (f", the last of length {DIM}" if t == "Vec" else "")
                             + f"; got shape {a.shape}")
        out.append(a)
    shapes = {a.shape[:lead] for a in out}
    if len(shapes) > 1:
        raise ValueError(f"{NAME}: arrays of different lengths {sorted(shapes)}")
    return out, (shapes.pop() if shapes else None)


def _checked_length(n: int) -> int:
    if n > LENGTH_LIMIT:
        raise OverflowError(f"{NAME}: a list of {n} elements is longer than 2**56, the length for which "
                            "the unchecked Int operations (a count) are proved to stay in int64")
    return n


def _length(arrays) -> tuple[list, int]:
    """The device arrays and n for reduce and scan: the arrays, or n alone when every
    element is an Index."""
    if any(t != "Index" for _, t in ELEMENTS):
        xs, shape = _arrays(arrays, 1)
        return xs, shape[0]
    if len(arrays) == 1:
        return [], _checked_length(int(arrays[0]))
    raise TypeError(f"{NAME}: pass n, the number of elements")


def _params(params: dict) -> list:
    cupy = _cupy()
    missing = [name for name, _ in PARAMS if name not in params]
    extra = sorted(set(params) - {name for name, _ in PARAMS})
    if missing or extra:
        raise TypeError(f"{NAME}: loop parameters missing {missing}, unknown {extra}")
    out = []
    for name, t in PARAMS:
        if t == "Vec":
            v = cupy.ascontiguousarray(cupy.asarray(params[name], dtype=DTYPE)).reshape(-1)
            if v.shape != (DIM,):
                raise ValueError(f"{NAME}: parameter {name} must have length {DIM}")
            out.append(v)
        else:
            out.append(_real_type(t)(params[name]))
    return out


def _outputs(count: int) -> list:
    cupy = _cupy()
    kinds = list(FIELDS) + _result_kinds()
    return [cupy.empty((count, DIM) if t == "Vec" else (count,), dtype=_real_type(t)) for _, t in kinds]


def _grid_cap(kernel) -> int:
    """Blocks that fit on the device at once (a persistent grid, one wave); cached."""
    cupy = _cupy()
    device = cupy.cuda.Device()
    cap = _grid_caps.get(device.id)
    if cap is None:
        try:
            regs = -(-max(1, kernel.attributes["num_regs"]) // 8) * 8
            per_sm = min(2048 // BLOCK, 65536 // (regs * BLOCK))
        except Exception:     # attributes unavailable: a safe guess
            per_sm = 4
        sms = device.attributes["MultiProcessorCount"]
        cap = _grid_caps[device.id] = min(MAX_BLOCKS, sms * max(1, per_sm))
    return cap


_grid_caps: dict = {}


# --- backend="numpy": the same order of combines on the CPU, without CuPy ------------------
# Runs of RUN consecutive elements are folded with left side by side (one left step a
# column, over every run at once), then neighbouring states are combined, the earlier on
# the left, level by level, as the kernels do.  Reals are computed in DTYPE.

def _max(a, b):
    return np.where((a > b) | (a != a), a, b)


def _min(a, b):
    return np.where((a < b) | (a != a), a, b)


def _pown(a, n):
    # c ** n, n an Int: IEEE pow in the base's float type
    a = np.asarray(a)
    with np.errstate(all="ignore"):
        return np.power(a, np.asarray(n).astype(a.dtype if a.dtype.kind == "f" else np.float64))


# Int arithmetic in int64, checked, as the library's NumPy backend does: a sum, difference,
# product, negation, abs or power of Ints in `_left` or `_combine` that int64 can overflow
# is a call of one of these (`code`: 1 + the index of the field whose new value reads it),
# which raises OverflowError naming the field where the exact value leaves int64.

_LEAST = np.iinfo(np.int64).min


def _int_overflow(code: int, where: str) -> OverflowError:
    return OverflowError(f"{NAME}: the Int field {FIELDS[code - 1][0]} overflows int64 in {where} "
                         "(the emitted module's NumPy path computes Ints in int64; thm3's "
                         "a.combine and sequential fold compute them exactly)")


def _iadd(a, b, code, where):
    r = np.add(a, b)
    if np.any(((a ^ r) & (b ^ r)) < 0):
        raise _int_overflow(code, where)
    return r


def _isub(a, b, code, where):
    r = np.subtract(a, b)
    if np.any(((a ^ b) & (a ^ r)) < 0):
        raise _int_overflow(code, where)
    return r


def _imul(a, b, code, where):
    r = np.multiply(a, b)
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    nonzero = a != 0
    back = np.where(nonzero, r // np.where(nonzero, a, 1), b)
    if np.any(back != b) or np.any(((a == -1) & (b == _LEAST)) | ((b == -1) & (a == _LEAST))):
        raise _int_overflow(code, where)
    return r


def _ineg(a, code, where):
    if np.any(np.asarray(a) == _LEAST):
        raise _int_overflow(code, where)
    return np.negative(a)


def _iabs(a, code, where):
    if np.any(np.asarray(a) == _LEAST):
        raise _int_overflow(code, where)
    return np.abs(a)


def _ipow(a, n, code, where):
    r = np.ones_like(np.asarray(a))
    for _ in range(n):
        r = _imul(r, a, code, where)
    return r


def _stepped(state, elements, valid, ps):
    """`_left` on every lane; where it overflows, again on the lanes still in their run
    only (a lane past the end keeps its state, so its step must not raise)."""
    try:
        return _left(*state, *elements, *ps)
    except OverflowError:
        keep = valid[:, 0]
        if keep.all():
            raise
        new = _left(*[s[keep] for s in state], *[e[keep] for e in elements], *ps)
        out = [s.copy() for s in state]
        for o, v in zip(out, new):
            o[keep] = v
        return out


def _host_arrays(arrays):
    data = [(name, t) for name, t in ELEMENTS if t != "Index"]
    if not data:
        if len(arrays) != 1:
            raise TypeError(f"{NAME}: pass n, the number of elements")
        return [], _checked_length(int(arrays[0]))
    if len(arrays) != len(data):
        names = ", ".join(name for name, _ in data)
        raise TypeError(f"{NAME}: expected {len(data)} arrays ({names}), got {len(arrays)}")
    out = []
    for a, (name, t) in zip(arrays, data):
        a = np.asarray(a.get() if hasattr(a, "get") else a, dtype=_real_type(t))
        want = 2 if t == "Vec" else 1
        if a.ndim != want or (t == "Vec" and a.shape[-1] != DIM):
            raise ValueError(f"{NAME}: {name} must have {want} dimensions; got shape {a.shape}")
        out.append(a)
    if len({a.shape[0] for a in out}) > 1:
        raise ValueError(f"{NAME}: arrays of different lengths")
    return out, out[0].shape[0]


def _host_params(params: dict) -> list:
    missing = [name for name, _ in PARAMS if name not in params]
    extra = sorted(set(params) - {name for name, _ in PARAMS})
    if missing or extra:
        raise TypeError(f"{NAME}: loop parameters missing {missing}, unknown {extra}")
    return [np.asarray(params[name], dtype=DTYPE).reshape(DIM) if t == "Vec" else _real_type(t)(params[name])
            for name, t in PARAMS]


def _column(value, t, runs):
    """A field's value for `runs` states: (runs, 1), or (runs, DIM) for a Vec."""
    width = DIM if t == "Vec" else 1
    return np.full((runs, width), value, dtype=_real_type(t))


def _reduce_numpy(arrays, params) -> list:
    xs, n = _host_arrays(arrays)
    ps = _host_params(params)
    runs = max(1, -(-n // RUN))
    state = [_column(v, t, runs) for v, (_, t) in zip(DEFAULTS, FIELDS)]
    for k in range(min(RUN, n)):
        at = np.arange(runs) * RUN + k
        valid = (at < n)[:, None]
        at = np.minimum(at, max(n - 1, 0))
        elements, data = [], iter(xs)
        for name, t in ELEMENTS:
            if t == "Index":
                elements.append(at[:, None].astype(np.int64))
            else:
                a = next(data)
                elements.append(a[at] if t == "Vec" else a[at][:, None])
        new = _stepped(state, elements, valid, ps)
        state = [np.where(valid, np.broadcast_to(v, s.shape), s).astype(s.dtype)
                 for v, s in zip(new, state)]
    while state[0].shape[0] > 1:
        count = state[0].shape[0]
        pairs = count // 2
        merged = _combine(*[s[0:2 * pairs:2] for s in state], *[s[1:2 * pairs:2] for s in state], *ps)
        merged = [np.broadcast_to(v, (pairs, s.shape[1])).astype(s.dtype) for v, s in zip(merged, state)]
        state = [np.concatenate([m, s[2 * pairs:]]) for m, s in zip(merged, state)]
    values = [s[0] if t == "Vec" else s[0, 0] for s, (_, t) in zip(state, FIELDS)]
    if _result is not None:
        for r, (_, t) in zip(_result(*values, *ps), _result_kinds()):
            values.append(np.asarray(r, dtype=_real_type(t)) if t == "Vec" else _real_type(t)(r))
    return values


# --- the reduction --------------------------------------------------------------------------

def reduce_device(*arrays, **params) -> list:
    """Launch the reduction and return its outputs on the device without waiting: one
    CuPy array of length 1 per field (1 x DIM for a Vec), then the result's.  (An Int
    overflow is reported by `reduce` and `reduce_state`, which wait.)"""
    cupy = _cupy()
    xs, n = _length(arrays)
    ps = _params(params)
    _int_flag()
    blocks = _kernel("thm3_reduce_blocks")
    tiles = -(-n // (32 * ITEMS))
    grid = max(1, min(tiles, _grid_cap(blocks)))
    partial = cupy.empty(grid * STATE_BYTES, dtype=cupy.uint8)
    blocks((grid,), (BLOCK,), (*xs, np.int64(n), *ps, partial))
    outs = _outputs(1)
    _kernel("thm3_reduce_partials")((1,), (BLOCK,), (partial, np.int32(grid), *ps, *outs))
    return outs


def _reduce(arrays, params, backend):
    match backend:
        case "cupy":
            values = [o.get()[0] for o in reduce_device(*arrays, **params)]
            _check_ints(_int_flag(zero=False))
            return values
        case "numpy":
            return _reduce_numpy(arrays, params)
        case _:
            raise ValueError(f"backend must be 'cupy' or 'numpy', not {backend!r}")


def reduce_state(*arrays, backend: str = "cupy", **params) -> tuple:
    """The final State over the arrays, as a tuple of NumPy values, computed in list order
    on the GPU (backend="cupy") or, in the same order of combines, on the CPU
    (backend="numpy", no CuPy needed)."""
    return tuple(_reduce(arrays, params, backend)[:len(FIELDS)])


def reduce(*arrays, backend: str = "cupy", **params):
    """The loop's answer over the arrays (the result, or the final State); on the GPU, or
    on the CPU with backend="numpy"."""
    values = _reduce(arrays, params, backend)
    return _shaped(values[len(FIELDS):]) if RESULT else tuple(values)


def _reduce_rows(arrays, params):
    xs, shape = _arrays(arrays, 2)
    if shape is None:
        raise TypeError(f"{NAME}: reduce_rows needs element arrays")
    rows, n = shape
    ps = _params(params)
    outs = _outputs(rows)
    if rows:
        flag = _int_flag()
        _kernel("thm3_reduce_rows")((rows,), (BLOCK,), (*xs, np.int64(n), *ps, *outs))
        _check_ints(flag)
    return outs


def reduce_rows_state(*arrays, **params) -> tuple:
    """One reduction per row of (rows, n) arrays ((rows, n, DIM) for a Vec): the final
    States as a tuple of CuPy arrays, one per field, each of length rows."""
    return tuple(_reduce_rows(arrays, params)[:len(FIELDS)])


def reduce_rows(*arrays, **params):
    """One reduction per row of (rows, n) arrays ((rows, n, DIM) for a Vec): a CuPy array
    of the rows' results (no result: a tuple of per-field arrays)."""
    outs = _reduce_rows(arrays, params)
    return _shaped(outs[len(FIELDS):]) if RESULT else tuple(outs)


# --- the inclusive scan: every prefix state, in list order ---------------------------------

def _scan_outputs(shape) -> list:
    cupy = _cupy()
    return [cupy.empty(shape + ((DIM,) if t == "Vec" else ()), dtype=_real_type(t)) for _, t in FIELDS]


def _scan_numpy(arrays, params) -> tuple:
    """backend="numpy": every prefix State on the CPU.  Runs of RUN consecutive elements
    are scanned with left side by side (one left step a column, over every run at once),
    the runs' totals scanned with the combine (Hillis-Steele, log2(runs) steps), and each
    run's prefixes combined on the right of the states before the run."""
    xs, n = _host_arrays(arrays)
    ps = _host_params(params)
    widths = [DIM if t == "Vec" else 1 for _, t in FIELDS]
    if n == 0:
        return tuple(np.empty((0, DIM) if t == "Vec" else (0,), dtype=_real_type(t)) for _, t in FIELDS)
    runs = -(-n // RUN)
    state = [_column(v, t, runs) for v, (_, t) in zip(DEFAULTS, FIELDS)]
    local = [np.empty((runs, RUN, w), dtype=_real_type(t)) for w, (_, t) in zip(widths, FIELDS)]
    for k in range(min(RUN, n)):
        at = np.arange(runs) * RUN + k
        valid = (at < n)[:, None]
        at = np.minimum(at, n - 1)
        elements, data = [], iter(xs)
        for name, t in ELEMENTS:
            if t == "Index":
                elements.append(at[:, None].astype(np.int64))
            else:
                a = next(data)
                elements.append(a[at] if t == "Vec" else a[at][:, None])
        new = _stepped(state, elements, valid, ps)
        state = [np.where(valid, np.broadcast_to(v, s.shape), s).astype(s.dtype) for v, s in zip(new, state)]
        for out, s in zip(local, state):
            out[:, k] = s
    totals, step = state, 1                 # inclusive scan of the runs' totals
    while step < runs:
        merged = _combine(*[s[:-step] for s in totals], *[s[step:] for s in totals], *ps)
        totals = [np.concatenate([s[:step], np.broadcast_to(m, s[step:].shape).astype(s.dtype)])
                  for m, s in zip(merged, totals)]
        step *= 2
    if runs > 1:                            # run r's prefixes after the total of runs 0..r-1
        before = [np.repeat(s[:-1], RUN, axis=0) for s in totals]
        after = [x[1:].reshape(-1, x.shape[2]) for x in local]
        merged = _combine(*before, *after, *ps)
        for x, m in zip(local, merged):
            x[1:] = np.broadcast_to(m, (after[0].shape[0], x.shape[2])).reshape(x[1:].shape)
    return tuple(x.reshape(runs * RUN, w)[:n] if t == "Vec" else x.reshape(runs * RUN)[:n]
                 for x, w, (_, t) in zip(local, widths, FIELDS))


def scan(*arrays, backend: str = "cupy", **params) -> tuple:
    """Every prefix State (inclusive, in list order): a tuple of arrays, one per field, of
    length n (n x DIM for a Vec); CuPy arrays from the GPU, or NumPy arrays computed on
    the CPU with backend="numpy" (no CuPy needed).  On the GPU, three launches: the
    blocks' states, their exclusive prefixes, each block's tiles scanned again."""
    match backend:
        case "cupy":
            pass
        case "numpy":
            return _scan_numpy(arrays, params)
        case _:
            raise ValueError(f"backend must be 'cupy' or 'numpy', not {backend!r}")
    cupy = _cupy()
    xs, n = _length(arrays)
    ps = _params(params)
    outs = _scan_outputs((n,))
    if n == 0:
        return tuple(outs)
    flag = _int_flag(SCAN_SOURCE)
    blocks = _kernel("thm3_scan_blocks", SCAN_SOURCE)
    grid = max(1, min(-(-n // SCAN_TILE), MAX_BLOCKS))
    partial = cupy.empty(grid * STATE_BYTES, dtype=cupy.uint8)
    blocks((grid,), (SCAN_BLOCK,), (*xs, np.int64(n), *ps, partial))
    _kernel("thm3_scan_partials", SCAN_SOURCE)((1,), (SCAN_BLOCK,), (partial, np.int32(grid), *ps))
    _kernel("thm3_scan_down", SCAN_SOURCE)((grid,), (SCAN_BLOCK,), (*xs, np.int64(n), *ps, partial, *outs))
    _check_ints(flag)
    return tuple(outs)


def scan_rows(*arrays, **params) -> tuple:
    """One scan per row of (rows, n) arrays ((rows, n, DIM) for a Vec): a tuple of CuPy
    arrays, one per field, of shape (rows, n) ((rows, n, DIM) for a Vec)."""
    xs, shape = _arrays(arrays, 2)
    if shape is None:
        raise TypeError(f"{NAME}: scan_rows needs element arrays")
    rows, n = shape
    ps = _params(params)
    outs = _scan_outputs((rows, n))
    if rows and n:
        flag = _int_flag(SCAN_SOURCE)
        _kernel("thm3_scan_rows", SCAN_SOURCE)((rows,), (SCAN_BLOCK,), (*xs, np.int64(n), *ps, *outs))
        _check_ints(flag)
    return tuple(outs)


__all__ = ["reduce", "reduce_state", "reduce_device", "reduce_rows", "reduce_rows_state",
           "scan", "scan_rows", "SOURCE", "SCAN_SOURCE", "BackendUnavailable"]
