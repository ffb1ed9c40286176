"""backend="numpy" of an emitted reduction module: the same order of combines as the
kernels on the CPU, without CuPy, and, where the proof over the reals does not cover a
run, the list joined in list order as the loop folds it.  `gpu/render/module.py` copies
this file verbatim, after `common.py` and before `reduce.py`, below the loop's own part
of the module (its constants and its NumPy functions `_left`, `_combine`, `_result` and
`_left_py`); reduce.py's launchers fall back on it where the kernels flag such a list.
Imported on its own (as thm3 does to read it), it defines the functions and nothing runs."""
from __future__ import annotations

import math
from array import array

import numpy as np

# The loop's part of the module defines NAME, DTYPE, DIM, FIELDS, ELEMENTS, PARAMS,
# DEFAULTS and the functions above; reduce.py, after this text, defines _real_type,
# _checked_length and _result_kinds.

RUN = 1024              # elements a run folds with left
SHORT = 32              # the runs of the join in list order, where some run is not covered

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
    host = {k: v.get() if hasattr(v, "get") else v for k, v in params.items()}
    return [np.asarray(host[name], dtype=DTYPE).reshape(DIM) if t == "Vec" else _real_type(t)(host[name])
            for name, t in PARAMS]


def _column(value, t, runs):
    """A field's value for `runs` states: (runs, 1), or (runs, DIM) for a Vec."""
    width = DIM if t == "Vec" else 1
    return np.full((runs, width), value, dtype=_real_type(t))


def _elements_at(xs, at) -> list:
    """The elements at positions `at`, one lane each: (lanes, 1), or (lanes, DIM) for a Vec."""
    elements, data = [], iter(xs)
    for name, t in ELEMENTS:
        if t == "Index":
            elements.append(at[:, None].astype(np.int64))
        else:
            a = next(data)
            elements.append(a[at] if t == "Vec" else a[at][:, None])
    return elements


def _fold_runs(xs, n, ps, size, local=None) -> list:
    """The state of each run of `size` elements folded with left from the identity, the
    runs side by side (one left step a column); `local`, (runs, size, width) arrays a
    field, receives every step."""
    runs = max(1, -(-n // size))
    state = [_column(v, t, runs) for v, (_, t) in zip(DEFAULTS, FIELDS)]
    for k in range(min(size, n)):
        at = np.arange(runs) * size + k
        valid = (at < n)[:, None]
        new = _stepped(state, _elements_at(xs, np.minimum(at, max(n - 1, 0))), valid, ps)
        state = [np.where(valid, np.broadcast_to(v, s.shape), s).astype(s.dtype) for v, s in zip(new, state)]
        if local is not None:
            for out, s in zip(local, state):
                out[:, k] = s
    return state


def _joined(a, b, ps) -> list:
    """_combine(a, b) in the fields' shapes and dtypes (lanes of b)."""
    merged = _combine(*a, *b, *ps)
    return [np.broadcast_to(v, s.shape).astype(s.dtype) for v, s in zip(merged, b)]


# --- where the proof stops (backend="numpy") ------------------------------------------------
# The combine is proved equal to the fold over the reals, and a run is folded from the
# identity: an element can make that state NaN where the loop's own state, carried in,
# stays finite (log-sum-exp at -inf: (-inf, NaN) from the identity), and a loop can forget
# a NaN element that the combine of the run's total keeps.  So a run is covered where its
# elements (and the Real parameters) are finite and its states' Real fields are finite or
# hold their identity's value.  Where a run or a combine is not, the list is cut again into
# runs of SHORT, joined in list order (`_carried`): a stretch of covered runs by the
# combine where the state carried in is covered, and a run not covered folded element by
# element with left from the carried state, as the loop does (thm3's own backends:
# thm3/backends/guard.py).

def _uncovered(state) -> np.ndarray:
    """One flag a lane: some Real or Vec field holds NaN, or an infinity other than the
    field's identity value."""
    bad = np.zeros(len(state[0]), dtype=bool)
    for s, d, (_, t) in zip(state, DEFAULTS, FIELDS):
        if t in ("Real", "Vec"):
            bad |= (~np.isfinite(s) & (s != d)).reshape(len(s), -1).any(axis=1)
    return bad


def _per_run(flags, n, size) -> np.ndarray:
    """One flag a run of `size`: some element's flag in it is set."""
    return np.add.reduceat(flags.astype(np.int64), np.arange(max(1, -(-n // size))) * size) > 0


def _params_not_finite(ps) -> bool:
    """A Real or Vec loop parameter (`_host_params`) is NaN or infinite: no run is covered."""
    return any(t in ("Real", "Vec") and not np.isfinite(p).all() for p, (_, t) in zip(ps, PARAMS))


def _not_covered(xs, n, ps, size) -> np.ndarray:
    """One flag a run of `size` elements: an element there, or a Real parameter, is NaN
    or infinite (the proof over the reals covers neither)."""
    runs = max(1, -(-n // size))
    if _params_not_finite(ps):
        return np.ones(runs, dtype=bool)
    flags = np.zeros(runs, dtype=bool)
    data = [t for _, t in ELEMENTS if t != "Index"]
    for a, t in zip(xs, data):
        if t in ("Real", "Vec") and n:
            flags |= _per_run((~np.isfinite(a)).reshape(n, -1).any(axis=1), n, size)
    return flags


def _fold_span(state, xs, begin, end, ps, out=None) -> list:
    """The state (one lane) folded with left over the elements [begin, end), in order;
    `out` (one (end - begin, width) array a field) receives the state after each.  On
    Python scalars (`_left_py`), about 1 µs a step; one lane of NumPy where a Vec takes
    part."""
    if _left_py is None:
        for i in range(begin, end):
            new = _left(*state, *_elements_at(xs, np.array([i])), *ps)
            state = [np.broadcast_to(v, s.shape).astype(s.dtype) for v, s in zip(new, state)]
            if out is not None:
                for o, s in zip(out, state):
                    o[i - begin] = s[0]
        return state
    values = [s[0, 0].item() for s in state]
    data = iter(xs)
    columns = [None if t == "Index" else next(data)[begin:end].tolist() for _, t in ELEMENTS]
    scalars = [p.item() if hasattr(p, "item") else p for p in ps]
    ints = [k for k, (_, t) in enumerate(FIELDS) if t == "Int"]
    for j in range(end - begin):
        values = _left_py(*values, *[begin + j if c is None else c[j] for c in columns], *scalars)
        for k in ints:
            if not _LEAST <= values[k] <= -1 - _LEAST:
                raise _int_overflow(k + 1, "left")
        if out is not None:
            for o, v in zip(out, values):
                o[j, 0] = v
    return [np.full((1, 1), v, dtype=s.dtype) for v, s in zip(values, state)]


# Python scalars where Python raises and NumPy does not (`_left_py`).
_SINGLE = array("f", [0.0])


def _r32(v):
    """v rounded to IEEE single (inf beyond its range)."""
    _SINGLE[0] = v
    return _SINGLE[0]


def _sexp(x):
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def _sexp2(x):
    try:
        return 2.0 ** x
    except OverflowError:
        return math.inf


def _slog(x):
    return math.log(x) if x > 0 else -math.inf if x == 0 else math.nan


def _slog2(x):
    return math.log2(x) if x > 0 else -math.inf if x == 0 else math.nan


def _ssqrt(x):
    return math.sqrt(x) if x >= 0 else math.nan


def _sdiv(a, b):
    try:
        return a / b
    except ZeroDivisionError:
        a = float(a)
        return math.nan if a != a or a == 0 else math.copysign(math.inf, a) * math.copysign(1.0, b)


def _smax(a, b):
    return a if a > b or a != a else b


def _smin(a, b):
    return a if a < b or a != a else b


def _spown(a, n):
    with np.errstate(all="ignore"):
        return float(np.power(np.float64(a), np.float64(n)))


def _spow(a, n):
    """a ** n, n a literal: a float for a Real base or a negative n (0 ** -1 is inf, as in
    NumPy), an exact Int otherwise."""
    try:
        return float(a) ** n if n < 0 or isinstance(a, float) else a ** n
    except (OverflowError, ZeroDivisionError):
        return _spown(a, n)


def _tree(totals, ps):
    """Neighbouring states combined, the earlier on the left, level by level (the
    kernels' order) down to one; None where a combine leaves the cover."""
    while totals[0].shape[0] > 1:
        pairs = totals[0].shape[0] // 2
        merged = _joined([s[0:2 * pairs:2] for s in totals], [s[1:2 * pairs:2] for s in totals], ps)
        if _uncovered(merged).any():
            return None
        totals = [np.concatenate([m, s[2 * pairs:]]) for m, s in zip(merged, totals)]
    return totals


def _stretch(state, totals, local, ps, first):
    """The state after a stretch of runs whose totals are `totals`, carried in from
    `state` (the identity where `first`: nothing to combine it with), or None where a
    combine on the way leaves the cover.  With `local` (the runs' prefixes from the
    identity), those prefixes become the list's: the totals scanned (Hillis-Steele,
    log2(runs) steps) and each run's prefixes combined on the right of the states before
    it; `local` is left as it was where None is returned."""
    if local is None:
        total = _tree(totals, ps)
        if total is None or first:
            return total
        joined = _joined(state, total, ps)
        return None if _uncovered(joined)[0] else joined
    runs, step = totals[0].shape[0], 1
    while step < runs:                      # inclusive scan of the runs' totals
        merged = _joined([s[:-step] for s in totals], [s[step:] for s in totals], ps)
        if _uncovered(merged).any():
            return None
        totals = [np.concatenate([s[:step], m]) for m, s in zip(merged, totals)]
        step *= 2
    if first:                               # run 0's prefixes stand; run r's follow runs 0..r-1
        before, after = [s[:-1] for s in totals], [x[1:] for x in local]
    else:
        before = [np.concatenate([a, b]) for a, b in
                  zip(state, _joined([np.broadcast_to(s, (runs - 1,) + s.shape[1:]) for s in state],
                                     [s[:-1] for s in totals], ps))]
        after = local
    if len(before[0]):
        size = local[0].shape[1]
        merged = _joined([np.repeat(s, size, axis=0) for s in before], [x.reshape(-1, x.shape[2]) for x in after], ps)
        if _uncovered(merged).any() or _uncovered(before).any():
            return None
        for x, m in zip(after, merged):
            x[...] = m.reshape(x.shape)
    return [x[-1, -1:] for x in local]


def _flagged(xs, n, ps, size, local=None):
    """(each run's total from the identity, one flag a run: not covered)."""
    totals = _fold_runs(xs, n, ps, size, local)
    bad = _not_covered(xs, n, ps, size)
    if local is None:
        return totals, bad | _uncovered(totals)
    runs = len(bad)
    return totals, bad | _per_run(_uncovered([x.reshape(runs * size, -1)[:n] for x in local]), n, size)


def _carried(xs, n, ps, size, local=None) -> list:
    """The state after the list, its runs of `size` joined in list order: a stretch of
    covered runs by the combine (`_stretch`) where the state carried in is covered and
    every combine on the way is, run by run where one is not, and a run not covered
    folded from the carried state with left (`_fold_span`).  With `local` ((runs, size,
    width) arrays a field), every prefix state too."""
    totals, bad = _flagged(xs, n, ps, size, local)
    state = [_column(v, t, 1) for v, (_, t) in zip(DEFAULTS, FIELDS)]

    def part(r, end):
        return [t[r:end] for t in totals], None if local is None else [x[r:end] for x in local]

    def fold(state, r):
        return _fold_span(state, xs, r * size, min(n, (r + 1) * size), ps, None if local is None else [x[r] for x in local])

    r, runs = 0, len(bad)
    while r < runs:
        if bad[r] or _uncovered(state)[0]:
            state, r = fold(state, r), r + 1
            continue
        end = r + 1 + int(np.argmax(np.append(bad[r + 1:], True)))     # the next run not covered
        joined = _stretch(state, *part(r, end), ps, r == 0)
        if joined is None:                  # one run at a time: the combine or the fold
            for k in range(r, end):
                joined = None if _uncovered(state)[0] else _stretch(state, *part(k, k + 1), ps, k == 0)
                state = fold(state, k) if joined is None else joined
        else:
            state = joined
        r = end
    return state


def _reduce_numpy(arrays, params) -> list:
    xs, n = _host_arrays(arrays)
    ps = _host_params(params)
    totals, bad = _flagged(xs, n, ps, RUN)
    state = None if bad.any() else _tree(totals, ps)
    if state is None:
        state = _carried(xs, n, ps, min(RUN, SHORT))
    values = [s[0] if t == "Vec" else s[0, 0] for s, (_, t) in zip(state, FIELDS)]
    if _result is not None:
        for r, (_, t) in zip(_result(*values, *ps), _result_kinds()):
            values.append(np.asarray(r, dtype=_real_type(t)) if t == "Vec" else _real_type(t)(r))
    return values


def _scan_numpy(arrays, params) -> tuple:
    """backend="numpy": every prefix State on the CPU.  Runs of RUN consecutive elements
    are scanned with left side by side (one left step a column, over every run at once),
    the runs' totals scanned with the combine (Hillis-Steele, log2(runs) steps), and each
    run's prefixes combined on the right of the states before the run; in list order
    where a run or a combine is not covered (`_carried`)."""
    xs, n = _host_arrays(arrays)
    ps = _host_params(params)
    widths = [DIM if t == "Vec" else 1 for _, t in FIELDS]
    if n == 0:
        return tuple(np.empty((0, DIM) if t == "Vec" else (0,), dtype=_real_type(t)) for _, t in FIELDS)
    local = _prefixes(n, RUN)
    totals, bad = _flagged(xs, n, ps, RUN, local)
    if bad.any() or _stretch(None, totals, local, ps, True) is None:
        local = _prefixes(n, min(RUN, SHORT))
        _carried(xs, n, ps, local[0].shape[1], local)
    return tuple(x.reshape(-1, w)[:n] if t == "Vec" else x.reshape(-1)[:n]
                 for x, w, (_, t) in zip(local, widths, FIELDS))


def _prefixes(n, size) -> list:
    """Room for every prefix state, runs of `size`: a (runs, size, width) array a field."""
    return [np.empty((max(1, -(-n // size)), size, DIM if t == "Vec" else 1), dtype=_real_type(t)) for _, t in FIELDS]
