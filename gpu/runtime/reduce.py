"""The runtime of an emitted reduction module: launchers of the in-order reduction and of
the inclusive scan (their NumPy twin, backend="numpy", is host.py).  `gpu/render/module.py`
copies this file verbatim, after `common.py` and `host.py`, below the loop's own part of
the module: its constants, its rendered sources and its NumPy functions (`_left`,
`_combine`, `_result`), which the annotations below name.  Imported on its own (as thm3 does to read it), it
defines the functions and nothing runs."""
from __future__ import annotations

import numpy as np

from .common import BackendUnavailable, _cupy, _device  # thm3: runtime import  # noqa: F401
from .host import _host_params, _params_not_finite, _reduce_numpy, _scan_numpy  # thm3: runtime import  # noqa: F401

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
# and the NumPy functions _left, _combine and _result (None without a result), and
# _left_py, left on Python scalars (None where a Vec takes part).  host.py, before this
# text, is backend="numpy" (`_reduce_numpy`, `_scan_numpy`).

MAX_BLOCKS = 4096       # cap on pass 1's grid: pass 2 combines that many partials
LENGTH_LIMIT = 2**56    # the longest list: thm3 proved its unchecked Int operations (a count) for it

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


# Where left or the combine meets an element or a state outside the proof over the reals
# (NaN, or an infinity other than a field's identity value), the kernels store 1 in the
# device global thm3_uncovered (a source whose loop has no Real has none): the launchers
# zero it, read it after the launch, and where it is set compute the list again on the host
# in list order (the NumPy path below, which folds such runs from the carried state).

def _cover_flag(source: str | None = None):
    """The device global thm3_uncovered of the source, zeroed; None where it has none."""
    source = SOURCE if source is None else source
    if "thm3_uncovered" not in source:
        return None
    cupy = _cupy()
    flag = cupy.ndarray((1,), dtype=cupy.int32, memptr=_module(source).get_global("thm3_uncovered"))
    flag.fill(0)
    return flag


def _met_uncovered(flag) -> bool:
    """Whether a launch since `_cover_flag` met a value outside the proof."""
    return flag is not None and int(flag.get()[0]) != 0


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


# --- the reduction --------------------------------------------------------------------------

def reduce_device(*arrays, **params) -> list:
    """Launch the reduction and return its outputs on the device without waiting: one
    CuPy array of length 1 per field (1 x DIM for a Vec), then the result's.  (An Int
    overflow is reported by `reduce` and `reduce_state`, which wait; so is a NaN or an
    infinity outside the proof, where they compute the list again on the host: these
    outputs are the kernels' own.)"""
    return _launch_reduce(arrays, params)[0]


def _launch_reduce(arrays, params) -> tuple[list, object]:
    """(the outputs on the device, the zeroed-then-launched thm3_uncovered flag)."""
    cupy = _cupy()
    xs, n = _length(arrays)
    ps = _params(params)
    _int_flag()
    cover = _cover_flag()
    blocks = _kernel("thm3_reduce_blocks")
    tiles = -(-n // (32 * ITEMS))
    grid = max(1, min(tiles, _grid_cap(blocks)))
    partial = cupy.empty(grid * STATE_BYTES, dtype=cupy.uint8)
    blocks((grid,), (BLOCK,), (*xs, np.int64(n), *ps, partial))
    outs = _outputs(1)
    _kernel("thm3_reduce_partials")((1,), (BLOCK,), (partial, np.int32(grid), *ps, *outs))
    return outs, cover


def _reduce(arrays, params, backend):
    match backend:
        case "cupy":
            if _params_not_finite(_host_params(params)):
                return _reduce_numpy(arrays, params)
            outs, cover = _launch_reduce(arrays, params)
            if _met_uncovered(cover):
                return _reduce_numpy(arrays, params)
            values = [o.get()[0] for o in outs]
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
        flag, cover = _int_flag(), _cover_flag()
        if not _params_not_finite(_host_params(params)):
            _kernel("thm3_reduce_rows")((rows,), (BLOCK,), (*xs, np.int64(n), *ps, *outs))
            if not _met_uncovered(cover):
                _check_ints(flag)
                return outs
        cupy = _cupy()                      # outside the proof: each row on the host, in list order
        host = [a.get() for a in xs]
        values = [_reduce_numpy([a[r] for a in host] or [n], params) for r in range(rows)]
        outs = [cupy.asarray(np.stack([v[k] for v in values])) for k in range(len(outs))]
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
    if _params_not_finite(_host_params(params)):
        return tuple(cupy.asarray(o) for o in _scan_numpy([a.get() for a in xs] or [n], params))
    flag, cover = _int_flag(SCAN_SOURCE), _cover_flag(SCAN_SOURCE)
    blocks = _kernel("thm3_scan_blocks", SCAN_SOURCE)
    grid = max(1, min(-(-n // SCAN_TILE), MAX_BLOCKS))
    partial = cupy.empty(grid * STATE_BYTES, dtype=cupy.uint8)
    blocks((grid,), (SCAN_BLOCK,), (*xs, np.int64(n), *ps, partial))
    _kernel("thm3_scan_partials", SCAN_SOURCE)((1,), (SCAN_BLOCK,), (partial, np.int32(grid), *ps))
    _kernel("thm3_scan_down", SCAN_SOURCE)((grid,), (SCAN_BLOCK,), (*xs, np.int64(n), *ps, partial, *outs))
    if _met_uncovered(cover):                # outside the proof: the host, in list order
        return tuple(cupy.asarray(o) for o in _scan_numpy([a.get() for a in xs] or [n], params))
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
        flag, cover = _int_flag(SCAN_SOURCE), _cover_flag(SCAN_SOURCE)
        if not _params_not_finite(_host_params(params)):
            _kernel("thm3_scan_rows", SCAN_SOURCE)((rows,), (SCAN_BLOCK,), (*xs, np.int64(n), *ps, *outs))
            if not _met_uncovered(cover):
                _check_ints(flag)
                return tuple(outs)
        cupy = _cupy()                      # outside the proof: each row on the host, in list order
        host = [a.get() for a in xs]
        per_row = [_scan_numpy([a[r] for a in host], params) for r in range(rows)]
        return tuple(cupy.asarray(np.stack([p[k] for p in per_row])) for k in range(len(FIELDS)))
    return tuple(outs)


__all__ = ["reduce", "reduce_state", "reduce_device", "reduce_rows", "reduce_rows_state",
           "scan", "scan_rows", "SOURCE", "SCAN_SOURCE", "BackendUnavailable"]
