"""`Analysis.combine` on the user's values: two States of plain numbers (a Vec as a
NumPy array), or two batches of States whose fields are NumPy or CuPy arrays, combined
lane by lane.  A batch has a leading axis of n lanes on every field ((n,) for a scalar
field, (n, D) for a Vec; a plain number stands for every lane, and for every entry of a
Vec, as the identity's 0 does); anything else is refused with the shapes it got."""
from __future__ import annotations

import numpy as np

from thm3.errors import UsageError
from thm3.ir import Fn, Loop, Type
from thm3.semantics.evaluate import NUMPY, PYTHON, evaluate, numpy_value, quiet


def combine_states(loop: Loop, fn: Fn, a, b, params: dict, State):
    """combine(a, b) as a `State`: plain values for single States, arrays of n lanes for
    batches (one array module throughout: NumPy, or CuPy when the fields are CuPy)."""
    values = list(tuple(a)) + list(tuple(b))
    types = [f.type for f in loop.fields] * 2
    if len(values) != len(types):
        raise UsageError(f"{loop.name}: a State has {len(loop.fields)} fields "
                         f"({', '.join(loop.field_names)}); got {len(tuple(a))} and {len(tuple(b))}")
    lanes = _lanes(loop, values, types)
    if lanes is None:
        return _single(loop, fn, values, types, params, State)
    return _batch(loop, fn, values, types, params, State, lanes)


def _lanes(loop: Loop, values, types) -> int | None:
    """The batch size, or None for two single States."""
    sizes = set()
    for v, t, name in zip(values, types, [f.name for f in loop.fields] * 2):
        shape = v.shape if _is_cupy(v) else np.shape(v)
        if t is Type.VEC and not shape:
            continue                    # a number for a Vec (the identity's 0): every lane, every entry
        batch_ndim = len(shape) - (1 if t is Type.VEC else 0)
        if batch_ndim == 1:
            sizes.add(int(v.shape[0]))
        elif batch_ndim > 1 or batch_ndim < 0:
            want = "(n, D) or (D,)" if t is Type.VEC else "(n,) or a number"
            raise UsageError(f"{loop.name}: field {name} has shape {shape}; "
                             f"combine takes {want}")
    if len(sizes) > 1:
        raise UsageError(f"{loop.name}: batches of different sizes {sorted(sizes)}; "
                         "combine pairs lane i of a with lane i of b")
    return sizes.pop() if sizes else None


def _is_cupy(v) -> bool:
    return type(v).__module__.split(".")[0] == "cupy"


def _single(loop, fn, values, types, params, State):
    """Two single States on Python values (the PYTHON table): an Int is a Python int, so
    that Int fields are exact however large; a Vec a NumPy array."""
    env = {name: _python_value(v, t) for (name, _), v, t in zip(fn.inputs, values, types)}
    env.update({k: _python_value(v, None) for k, v in _params(params, np).items()})
    with quiet():
        out = evaluate(fn.outputs, env, PYTHON)
    return State(*(_plain_value(v, f.type) for v, f in zip(out, loop.fields)))


def _python_value(v, type_: Type | None):
    if type_ is Type.VEC or np.ndim(v):
        return numpy_value(v, Type.VEC)
    if isinstance(v, np.generic):
        v = v.item()
    match type_:
        case Type.INT:
            return int(v)
        case Type.BOOL:
            return bool(v)
        case Type.REAL:
            return float(v)
    return v


def _batch(loop, fn, values, types, params, State, lanes: int):
    if any(_is_cupy(v) for v in values):
        import cupy as xp
    else:
        xp = np
    kinds = {Type.REAL: np.float64, Type.VEC: np.float64, Type.INT: np.int64, Type.BOOL: np.bool_}
    env = {}
    for (name, _), v, t in zip(fn.inputs, values, types):
        v = xp.asarray(v, dtype=kinds[t])
        if t is Type.VEC:
            env[name] = v if v.ndim == 2 else xp.broadcast_to(v, (lanes,) + (v.shape or (1,)))
        else:
            env[name] = xp.broadcast_to(v.reshape(-1, 1) if v.ndim else v, (lanes, 1))
    env.update(_params(params, xp))
    with quiet():
        out = evaluate(fn.outputs, env, NUMPY)
    fields = []
    for v, f in zip(out, loop.fields):
        v = xp.asarray(v)
        if f.type is Type.VEC:
            fields.append(xp.ascontiguousarray(xp.broadcast_to(v, (lanes, v.shape[-1] if v.ndim else 1))
                                               .astype(np.float64)))
        else:
            v = v[:, 0] if v.ndim == 2 else v
            fields.append(xp.ascontiguousarray(xp.broadcast_to(v, (lanes,)).astype(kinds[f.type])))
    return State(*fields)


def _params(params: dict, xp) -> dict:
    return {k: xp.asarray(v, dtype=np.float64) if isinstance(v, (list, np.ndarray)) or _is_cupy(v) else v
            for k, v in params.items()}


def _plain_value(v, type_: Type):
    if type_ is Type.INT and isinstance(v, int):
        return int(v)                   # a Python int, exact beyond int64
    arr = np.asarray(v)
    if type_ is Type.VEC:
        return arr.astype(np.float64)
    item = arr.reshape(-1)[0].item() if arr.size else arr.item()
    if type_ is Type.BOOL:
        return bool(item)
    if type_ is Type.INT:
        return int(item)
    return float(item)
