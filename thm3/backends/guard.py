"""Where the proof stops.  The combine is proved equal to the fold over the reals, and a
parallel backend folds each run from the identity.  An element can make the state NaN
from the identity where the loop's own state, carried in from the elements before,
stays finite: log-sum-exp at -inf gives (m, d) = (-inf, 0 * e^NaN + e^NaN) = (-inf, NaN)
from the identity, but leaves a finite state unchanged.  A combine can give NaN from
operands that have none.  And the loop can meet -inf - -inf where the combine of two
states never does: a best rise, max(x - min so far), is NaN in the loop once the
minimum is -inf and x is -inf, and the combine makes it inf.

The elements too: the laws are proved for real elements, and a loop can forget a NaN
element (a select whose comparison with NaN is false) where the combine of the run's
total keeps the history before it.  So a run is covered where its elements are finite
and its state's Real fields are finite or hold their identity's value (max's -inf), and
every backend watches its inputs, run totals and combines.  Where one is not
covered, `carry` computes the states carried into the runs again, in list order: a
run's total is combined only where the carried state, the total and their combine are
all covered; otherwise the run is folded element by element from the carried state with
`left`, as the loop does (`Span`).  NaN and infinities then appear where the sequential
loop has them, and the cost is a fold of the runs they touch."""
from __future__ import annotations

import numpy as np

from thm3.ir import Loop, Type

# Runs the slow path cuts a list into: each needs one combine in Python, in order.
SLOW_RUNS = 1 << 12


def uncovered_lanes(loop: Loop, states: tuple) -> np.ndarray:
    """One flag a lane (states batched as (lanes, 1) or (lanes, D)): some Real or Vec field
    of the lane is not covered by the proof: NaN, or an infinity other than the field's
    identity value."""
    from thm3.ir import initial_state
    bad = np.zeros(len(states[0]), dtype=bool)
    for f, s, e in zip(loop.fields, states, initial_state(loop)):
        if f.type in (Type.REAL, Type.VEC):
            odd = ~np.isfinite(s)
            if odd.any():
                bad |= (odd & (s != float(e.arg))).any(axis=tuple(range(1, s.ndim)))
    return bad


def specials(loop: Loop, data) -> np.ndarray | None:
    """One flag an element (`numpy_tree.Inputs`): a Real or Vec input there is NaN or
    infinite, which the proof over the reals does not cover either (a loop can forget a
    NaN that the combine would keep); all of them where a Real parameter is; None where
    there is none."""
    if any(p.type in (Type.REAL, Type.VEC) and not np.isfinite(data.params[p.name]).all() for p in loop.params):
        return np.ones(data.n, dtype=bool)
    mask = None
    for p, a in zip(loop.elements, data.element_arrays):
        if a is not None and p.type in (Type.REAL, Type.VEC):
            odd = ~np.isfinite(a)
            if odd.ndim > 1:
                odd = odd.any(axis=tuple(range(1, odd.ndim)))
            mask = odd if mask is None else mask | odd
    return mask if mask is not None and mask.any() else None


def runs_with(mask: np.ndarray | None, bounds) -> np.ndarray | None:
    """One flag a run [bounds[r], bounds[r + 1]): some element of it is flagged in `mask`."""
    if mask is None:
        return None
    starts = np.asarray(bounds[:-1])
    sums = np.add.reduceat(mask.astype(np.int64), np.minimum(starts, len(mask) - 1)) if len(mask) else np.zeros(0)
    return (sums > 0) & (np.asarray(bounds[1:]) > starts)


def any_uncovered(loop: Loop, states: tuple) -> bool:
    """Whether some lane is not covered (`uncovered_lanes`)."""
    return bool(uncovered_lanes(loop, states).any())


class Span:
    """The left fold of the elements [begin, end) of the inputs (`numpy_tree.Inputs`) from a
    state of one lane, the loop's own step: Python's float arithmetic for float64 and
    float32 (`accuracy.fold_in`), NumPy's one lane at a time for any other dtype."""

    def __init__(self, loop: Loop, data, real, table, combine):
        self.loop, self.data, self.real = loop, data, np.dtype(real).type
        self.fast = self.real in (np.float64, np.float32)
        if self.fast:
            from thm3.accuracy import fold_in
            self.fold = fold_in(loop, self.real)
        else:
            from thm3.backends.numpy_tree import Plan
            self.plan = lambda length: Plan(loop, data, length, table, combine)
        self.params = {k: (v if np.ndim(v) else v.item()) for k, v in data.params.items()}

    def __call__(self, state: tuple, begin: int, end: int) -> tuple:
        if end <= begin:
            return state
        if not self.fast:
            return self.plan(end - begin).fold_runs(begin, end, start=state)
        values = [s[0] if f.type is Type.VEC else s[0, 0].item() for f, s in zip(self.loop.fields, state)]
        columns = [None if a is None else (a[begin:end] if a.ndim > 1 else a[begin:end].tolist())
                   for a in self.data.element_arrays]
        out = self.fold(values, columns, 0, end - begin, self.params, base=self.data.offset + begin)
        return tuple(self._lane(v, f, s) for v, f, s in zip(out, self.loop.fields, state))

    def _lane(self, v, f, like):
        if f.type is Type.INT and not -2 ** 63 <= int(v) < 2 ** 63:
            raise OverflowError(f"{self.loop.name}: the Int field {f.name} overflows int64 in left "
                                "(the NumPy backend computes Ints in int64)")
        return np.asarray(v, dtype=like.dtype).reshape(like.shape[1:])[None]


def carry(loop: Loop, tree, totals: tuple, bounds, span: Span, keep: bool = True,
          start: tuple | None = None, special: np.ndarray | None = None) -> tuple[tuple, tuple]:
    """(the state carried into each run, batched; the state after the last run, one lane)
    for runs r = [bounds[r], bounds[r + 1]) whose totals (folds from the identity) are
    `totals`: in list order, a total joins by the combine where the carried state, the
    total and the result are covered (`uncovered_lanes`), and the run is folded by `span`
    otherwise.  A stretch of covered totals joins at once: the carried state combined
    with the stretch's exclusive prefixes (`scan.exclusive_scan`; with keep=False only
    its total, `tree.reduce`), checked as a whole, and run by run where a check fails.
    The carried states are None with keep=False.  `start` (one lane; the identity by
    default) is the state carried into run 0; `special` flags the elements (`specials`)
    whose runs are folded whatever their totals."""
    from thm3.backends.numpy_tree import batched_identity
    if start is None:
        start = batched_identity(loop, 1, tree.data.dim, tree.real)
    state = tuple(np.ascontiguousarray(s) for s in start)
    bad = uncovered_lanes(loop, totals)
    if special is not None:
        bad |= runs_with(special, bounds)
    count = len(bounds) - 1
    carried = []
    r = 0
    while r < count:
        if bad[r] or any_uncovered(loop, state):
            carried.append(state)
            state = span(state, bounds[r], bounds[r + 1])
            r += 1
            continue
        end = r + 1 + int(np.argmax(np.append(bad[r + 1:], True)))      # the next uncovered total
        joined = _stretch(loop, tree, state, tuple(t[r:end] for t in totals), keep)
        if joined is None:                  # one run at a time: the combine or the fold
            for k in range(r, end):
                carried.append(state)
                step = None if any_uncovered(loop, state) else tree.pair(state, tuple(t[k:k + 1] for t in totals))
                state = step if step is not None and not any_uncovered(loop, step) else \
                    span(state, bounds[k], bounds[k + 1])
        else:
            into, state = joined
            carried.append(into)
        r = end
    if not keep:
        return None, state
    if not carried:
        return state, state
    return tuple(np.concatenate(fields) for fields in zip(*carried)), state


def _stretch(loop: Loop, tree, state: tuple, totals: tuple, keep: bool):
    """(the states carried into a stretch of covered runs, or None without keep; the state
    after it), or None where some combine on the way leaves the cover."""
    tree.uncovered = False
    if keep:
        from thm3.backends.scan import exclusive_scan
        lanes = len(totals[0])
        into = tree.pair(tuple(np.broadcast_to(s, (lanes,) + s.shape[1:]) for s in state),
                         exclusive_scan(tree, totals))
        after = tree.pair(tuple(s[-1:] for s in into), tuple(t[-1:] for t in totals))
    else:
        into, after = None, tree.pair(state, tree.reduce(totals))
    if tree.uncovered:
        return None
    return into, tuple(np.ascontiguousarray(s) for s in after)


def one_lane(loop: Loop, state, real) -> tuple:
    """A state outside the batch (scalars, (D,) arrays) as one lane: (1, 1) or (1, D)."""
    from thm3.backends.numpy_tree import field_dtype
    return tuple(np.asarray(v, dtype=field_dtype(f.type, real)).reshape(1, -1)
                 for v, f in zip(state, loop.fields))


__all__ = ["SLOW_RUNS", "Span", "any_uncovered", "carry", "one_lane", "runs_with", "specials", "uncovered_lanes"]
