"""The witness search's domain: the loop-parameter values it folds with and the
elements its short lists are made of, small values (the loop's constants, 0, +-1, 2,
ties) and the values that switch the loop's comparisons, each filtered by the
preconditions.  `thm3.analysis.witness` enumerates the lists over it."""
from __future__ import annotations

import math

import numpy as np

from thm3.semantics.evaluate import INT64_MAX, INT64_MIN, NUMPY, evaluate, quiet
from thm3.ir import Loop, Op, Type, free_vars, walk
from thm3.semantics.samples import Domain

SEARCH_DIM = 2      # length of Vec values in the search: small, enough for lanes to differ

_REALS = (0.0, 1.0, -1.0, 2.0, -2.0, 3.0)
_INTS = (0, 1, -1, 2, -2, 3)
_PARAM_REALS = (2.0, 0.5, 3.0, -1.0, 0.25, -2.0, 1.0, 0.0)
_PARAM_INTS = (2, 3, -1, 1, 0, -2)
_VECS = ((0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, -1.0), (2.0, 1.0), (-1.0, 0.0))
_PARAM_VECS = ((1.0, 0.5), (0.5, -1.0), (1.0, 1.0))


def loop_constants(loop: Loop) -> list[float]:
    """Finite numeric constants of `left` and the preconditions, in order of appearance."""
    out: list[float] = []
    for e in walk(tuple(loop.left.outputs) + tuple(loop.preconditions)):
        if e.op is Op.CONST and e.type in (Type.INT, Type.REAL) and not isinstance(e.arg, bool):
            v = float(e.arg)
            if math.isfinite(v) and v not in out:
                out.append(v)
    return out


def parameter_settings(loop: Loop, count: int, rng: np.random.Generator) -> list[dict]:
    """A few small values of the loop parameters that satisfy the preconditions on them
    (2 and 0.5 first: t = 1 would make Horner's rule a sum)."""
    if not loop.params:
        return [{}]
    consts = [c for c in loop_constants(loop) if c not in (0.0, 1.0)]
    options = []
    for d in loop.params:
        match d.type:
            case Type.BOOL:
                vals = [True, False]
            case Type.INT:
                vals = list(_PARAM_INTS) + [int(c) for c in consts if c == int(c)]
                vals = [np.int64(v) for v in dict.fromkeys(vals)]
            case Type.VEC:
                vals = [np.array(v) for v in _PARAM_VECS]
            case _:
                vals = [np.float64(v) for v in dict.fromkeys(list(_PARAM_REALS) + consts)]
        options.append(vals)
    settings: list[dict] = []
    tried = 0
    width = max(len(v) for v in options)
    for i in range(width * 3):
        p = {d.name: vals[(i + j * (i // width)) % len(vals)]
             for j, (d, vals) in enumerate(zip(loop.params, options))}
        tried += 1
        if _holds(loop, None, p) and not any(_same_params(p, q) for q in settings):
            settings.append(p)
        if len(settings) >= count:
            break
    dom = Domain(loop, dim=SEARCH_DIM)        # one domain: what it learns of the asserts is kept
    while len(settings) < count and tried < 200:
        p = dom.params(rng)
        tried += 1
        if _holds(loop, None, p) and not any(_same_params(p, q) for q in settings):
            settings.append(p)
    return settings or [dom.params(rng)]


def element_domain(loop: Loop, params: dict, rng: np.random.Generator) -> list[tuple]:
    """Candidate elements: small integer-valued values (sums stay exact), the loop's
    constants and parameter values with their neighbours, filtered by the
    preconditions; fewer values per parameter when an element has several."""
    consts = loop_constants(loop)
    for v in params.values():
        if np.ndim(v) == 0 and not isinstance(v, (bool, np.bool_)):
            consts.append(float(v))
    per = {1: 7, 2: 4}.get(len(loop.elements), 3)
    whole = [int(c) for c in consts if math.isfinite(c) and c == int(c)]
    ints = [0, 1, -1] + whole + [2] + [c + s for c in whole for s in (1, -1)] + list(_INTS)
    real_values = [0.0, 1.0, -1.0] + consts + [2.0]
    real_values += [c + s for c in consts for s in (1.0, -1.0)] + list(_REALS)
    # Preconditions on one parameter filter its own column first, so that a bits-only
    # element keeps exactly {0, 1} before the column is cut to size.
    tuples = _tuples(loop, params, per, [_column(d, max(per - 1, 3), per, ints, real_values)
                                          for d in loop.elements])
    if not tuples:
        draw = Domain(loop, dim=SEARCH_DIM)
        try:
            tuples = [draw.element(rng, params) for _ in range(6)]
        except ValueError:
            return []
        tuples = [tuple(np.asarray(v) if np.ndim(v) else v for v in t) for t in tuples]
    return tuples


def critical_domain(loop: Loop, params: dict, values: dict) -> list[tuple]:
    """A second domain, from the loop's own comparisons: for each scalar element the
    values that make a comparison or a field's value switch, a value on either side and
    two inside each interval (`thm3.semantics.critical`), a second one past each end,
    with 0 and 1; empty when the loop has no such values beyond the first domain's."""
    if not any(values.values()):
        return []
    per = {1: 10, 2: 6}.get(len(loop.elements), 4)
    columns = []
    for d in loop.elements:
        vals = values.get(d.name, [])
        # a second value past each end (two frames above a size limit that differ: with
        # one value there alone, which of them a full bucket dropped is invisible)
        outer = [max(vals) + 2, min(vals) - 2] if vals else []
        columns.append(_column(d, 3, min(per, 4), [int(v) for v in vals + [0, 1]] + [int(v) for v in outer],
                               vals + [0.0, 1.0] + outer))
    return _tuples(loop, params, per + 2, columns)


def _column(d, vecs: int, positions: int, ints: list, real_values: list) -> list:
    """The candidate values of element parameter `d`: both Bools, the first `vecs`
    vectors, positions 0 .. positions-1 for an `Index` (never negative at run time),
    else the given Int or Real values, each once, in order."""
    match d.type:
        case Type.BOOL:
            return [np.bool_(False), np.bool_(True)]
        case Type.VEC:
            return [np.array(v) for v in _VECS[:vecs]]
        case Type.INT if d.index:
            return [np.int64(v) for v in range(positions)]
        case Type.INT:      # an element is an int64 (a constant beyond it is no element)
            return [np.int64(v) for v in dict.fromkeys(ints) if INT64_MIN <= v <= INT64_MAX]
        case _:
            return [np.float64(v) for v in dict.fromkeys(real_values)]


def _tuples(loop: Loop, params: dict, per: int, columns: list) -> list[tuple]:
    """Every element tuple over the columns (each but a Bool's filtered by its own
    preconditions and cut to `per` values) that the preconditions admit."""
    columns = [vals if d.type is Type.BOOL else _filter_column(loop, i, vals, params)[:per]
               for i, (d, vals) in enumerate(zip(loop.elements, columns))]
    tuples = [()]
    for vals in columns:
        tuples = [t + (v,) for t in tuples for v in vals]
    return [t for t in tuples if _holds(loop, t, params)]


def _filter_column(loop: Loop, i: int, vals: list, params: dict) -> list:
    name = loop.elements[i].name
    others = {d.name for d in loop.elements} - {name}
    own = [c for c in loop.preconditions if not (free_vars([c]) & others)]
    if not own:
        return vals
    keep = []
    with quiet():
        for v in vals:
            env = dict(params)
            env[name] = v
            if all(bool(np.all(evaluate([c], env, NUMPY)[0])) for c in own):
                keep.append(v)
    return keep


def _holds(loop: Loop, element, params: dict) -> bool:
    names = {d.name for d in loop.elements}
    env = dict(params)
    if element is not None:
        env.update({d.name: v for d, v in zip(loop.elements, element)})
    with quiet():
        for cond in loop.preconditions:
            if element is None and free_vars([cond]) & names:
                continue
            try:
                if not bool(np.all(evaluate([cond], env, NUMPY)[0])):
                    return False
            except KeyError:
                continue
    return True


def _same_params(p: dict, q: dict) -> bool:
    return all(np.array_equal(np.asarray(p[k]), np.asarray(q[k])) for k in p)
