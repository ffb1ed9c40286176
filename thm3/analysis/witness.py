"""The witness search: a proof that no combine over a loop's state exists.

h is a left fold, so h(xs1) == h(xs2) already gives h(xs1 + ys) == h(xs2 + ys); a
combine exists only if also h(ys + xs1) == h(ys + xs2).  Two short lists with equal
states that some prefix ys tells apart are therefore a witness (side "right") that
no combine over this State exists.  The search enumerates every short list over a
small domain (the loop's constants, 0, +-1, 2, ties: `witness_domain`), breadth first,
folding a whole level of lists at once through the NumPy table, groups the lists by
state, and tries the prefixes of length 1, then 2, on the groups with two or more lists.

The search runs in float64; a witness is kept only once folding its lists again in the
exact reals of the proofs (`thm3.semantics.reals`) confirms it.  Each element keeps the
exact value it stands for (the root -2/3 of `3 + 3 x == 1`, not the float
-0.6666666666666666, whose exact fold gives 1 + 2**-53; sqrt(2) for a root of
`x * x - 1 == 1`), and the witness carries those values: a float where the value is that
float exactly, else a `Fraction` or a SymPy number."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from thm3.semantics.evaluate import DTYPES, NUMPY_REALS, evaluate, numpy_value, quiet
from thm3.ir import Loop, Type
from thm3.semantics import critical, reals
from thm3.semantics.equality import ROUND_OFF_NO_NAN, apart, close
from thm3.semantics.samples import init_state
from thm3.analysis.witness_domain import SEARCH_DIM, critical_domain, element_domain, parameter_settings

# Two states "differ" only by a clear margin, never by round-off; they are "equal"
# when they agree to about nine digits (and, preferably, exactly).
_KEY_DIGITS = 9
# loop-parameter values a second witness search tries where the first (two) found none and
# no combine was found: all of the parameter Reals of `witness_domain`, so a negative
# value, 0 and 1 among them
WIDER_SETTINGS = 8


@dataclass(frozen=True)
class Witness:
    """h(xs1) == h(xs2) but h(ys + xs1) != h(ys + xs2) (side "right"), or the same
    with ys appended (side "left", impossible for a left fold).  Elements are written
    as in the spec: a number for one element parameter, else a list per parameter; each
    number exact (a float, or a `Fraction` or SymPy number where no float is the value).
    `params` holds the loop parameters the lists were folded with."""
    xs1: list
    xs2: list
    ys: list
    side: str = "right"
    params: dict = field(default_factory=dict)

    def describe(self) -> str:
        a, b = show(self.xs1), show(self.xs2)
        ys = show(self.ys)
        if self.side == "right":
            text = f"h({a}) == h({b}) but h({ys} + {a}) != h({ys} + {b})"
        else:
            text = f"h({a}) == h({b}) but h({a} + {ys}) != h({b} + {ys})"
        if self.params:
            text += " with " + ", ".join(f"{k} = {show(v)}" for k, v in self.params.items())
        return text


def find_witness(loop: Loop, *, timeout: float = 1.0, rng_seed=0, max_lists: int = 4000,
                 max_len: int = 6, prefix_len: int = 2, settings: int = 2,
                 reached: bool = False) -> Witness | None:
    """The shortest witness found on short lists, confirmed by folding them again, or
    None when the search finds nothing within `timeout` seconds.

    `max_lists` bounds how many lists of length <= `max_len` are enumerated (whole
    levels only), `prefix_len` the length of the prefixes ys, `settings` the number of
    loop-parameter values tried; `reached`: the third domain alone (`reachable_values`),
    in place of the first two."""
    found = find_witnesses(loop, timeout=timeout, rng_seed=rng_seed, max_lists=max_lists,
                           max_len=max_len, prefix_len=prefix_len, settings=settings, limit=1,
                           reached=reached)
    return found[0] if found else None


def find_witnesses(loop: Loop, *, timeout: float = 1.0, rng_seed=0, max_lists: int = 4000,
                   max_len: int = 6, prefix_len: int = 2, settings: int = 2,
                   limit: int = 1, reached: bool = False) -> list[Witness]:
    """Up to `limit` confirmed witnesses from different groups of equal states (the
    lifting search uses several at once to prune its candidates).  The lists are made of
    the first domain's values (`element_domain`), then the initial state's critical
    values (`critical_domain`); with `reached`, instead, of the values that switch a
    comparison at the states short lists reach (`reachable_values`): the analysis asks
    for these only where neither a combine nor a witness was found, as they cost a
    SymPy solve a state."""
    deadline = time.monotonic() + timeout
    rng = np.random.default_rng(rng_seed)
    out: list[Witness] = []
    for params in parameter_settings(loop, settings, rng):
        if time.monotonic() > deadline:
            break
        try:
            exact_values = critical.exact_element_values(loop, params, deadline)
        except (TypeError, ValueError, NotImplementedError, RecursionError):
            exact_values = {}
        if reached:
            # the values that switch a comparison at the states short lists reach (a
            # min(acc.v * c, x) whose threshold moves with the state: the witness needs an x
            # between two decayed values, which no value at the initial state is)
            values = reachable_values(loop, params, exact_values, deadline)
            domains = [(critical_domain(loop, params, critical.as_floats(values)), exact_hints(values))]
        else:
            hints = exact_hints(exact_values)
            domains = [(element_domain(loop, params, rng), hints),
                       (critical_domain(loop, params, critical.as_floats(exact_values)), hints)]
        for elements, hints in domains:
            if not elements or time.monotonic() > deadline:
                continue
            search = ShortLists(loop, params, elements, max_lists, max_len, hints)
            for w in search.witnesses(prefix_len, limit - len(out), deadline):
                out.append(w)
            if len(out) >= limit:
                return out
    return out


REACHED_STATES = 12     # states of short lists whose switching values the third domain takes
REACHED_DEPTH = 3       # their lengths, at most
# elements that carry the state far from its start (a floor at abs(x) + 2 decayed by 0.6
# switches only once v > 10/3), beside the critical values
_FAR = (5, 20)


def reachable_values(loop: Loop, params: dict, values: dict, deadline: float) -> dict[str, list]:
    """Per scalar element parameter: the values at which a comparison of `left` switches
    at the states that lists of up to REACHED_DEPTH elements reach (at most
    REACHED_STATES of them, other than the initial state), exactly, interleaved with
    `values` (the initial state's, with their sides and interiors).  The lists are made
    of the first critical values, the values found so far (so that a state two decays
    deep is reached) and two far values.  Empty where there are none new."""
    names = [d.name for d in loop.elements]
    if not names or any(d.type not in (Type.REAL, Type.INT) or d.index for d in loop.elements):
        return {}
    import sympy as sp
    base = {n: list(values.get(n) or []) for n in names}
    exact_params = {d.name: reals.exact(params[d.name], d.type) for d in loop.params if d.name in params}
    dim = SEARCH_DIM
    start = reals.initial(loop, dim)
    new: dict[str, list] = {n: [] for n in names}
    seen, frontier = [start], [start]
    for _ in range(REACHED_DEPTH):
        columns = [base[n][:3] + new[n][:2] + [sp.Integer(v) for v in _FAR] for n in names]
        pool = [tuple(col[k % len(col)] for col in columns) for k in range(max(len(c) for c in columns))]
        reached = []
        for s0 in frontier:
            for e in pool:
                if len(seen) > REACHED_STATES or time.monotonic() > deadline:
                    break
                try:
                    s = reals.fold(loop, [e], exact_params, dim, state=s0)
                except (TypeError, ValueError, ZeroDivisionError, RecursionError):
                    continue
                if isinstance(s, reals.Hole) or s in seen:
                    continue
                seen.append(s)
                reached.append(s)
                try:
                    roots = critical.exact_roots(loop, params, deadline, state=s)
                except (TypeError, ValueError, NotImplementedError, RecursionError):
                    continue
                for n, vals in roots.items():
                    new[n].extend(v for v in vals if v not in base[n] and v not in new[n])
        frontier = reached
    if not any(new.values()):
        return {}
    out = {}
    for n in names:         # new and old alternately: a witness reads both (x between two decays)
        a, b = new[n], base[n]
        mixed = [v for pair in zip(a, b) for v in pair] + a[len(b):] + b[len(a):]
        out[n] = list(dict.fromkeys(mixed))
    return out


def check_witness(loop: Loop, w: Witness) -> bool:
    """Whether `w` is a witness for `loop` in the exact reals of the proofs: the lists
    meet the preconditions, h(xs1) == h(xs2) exactly, and the extended lists have states
    (no division by zero) that differ.  A float in `w` is the binary number it is."""
    params = {d.name: reals.exact(w.params[d.name], d.type) for d in loop.params}
    xs1, xs2, ys = (exact_elements(loop, xs) for xs in (w.xs1, w.xs2, w.ys))
    dim = vec_dim(loop, xs1 + xs2 + ys, params)
    return confirm_exact(loop, xs1, xs2, ys, w.side, params, dim)


def confirm_exact(loop: Loop, xs1: list, xs2: list, ys: list, side: str, params: dict, dim: int) -> bool:
    """The witness check on exact element tuples (`thm3.semantics.reals`)."""
    if not all(reals.admits(loop, e, params) is True for e in xs1 + xs2 + ys):
        return False
    h1, h2 = reals.fold(loop, xs1, params, dim), reals.fold(loop, xs2, params, dim)
    if isinstance(h1, reals.Hole) or isinstance(h2, reals.Hole) or reals.same(h1, h2) is not True:
        return False
    if side == "right":
        g1, g2 = reals.fold(loop, ys + xs1, params, dim), reals.fold(loop, ys + xs2, params, dim)
    else:
        g1, g2 = reals.fold(loop, xs1 + ys, params, dim), reals.fold(loop, xs2 + ys, params, dim)
    if isinstance(g1, reals.Hole) or isinstance(g2, reals.Hole):
        return False
    return reals.same(g1, g2) is False


def exact_elements(loop: Loop, xs: list) -> list[tuple]:
    """Spec-style list elements (floats, Fractions, SymPy numbers) as tuples of exact
    values, one per element parameter."""
    if len(loop.elements) == 1:
        return [(reals.exact(x, loop.elements[0].type),) for x in xs]
    return [tuple(reals.exact(v, d.type) for v, d in zip(x, loop.elements, strict=True)) for x in xs]


def exact_hints(values: dict) -> dict[str, dict[float, object]]:
    """Per element parameter, the exact value each float of the search domains stands
    for: the critical values (`values`, from `critical.exact_element_values`: roots such
    as -2/3 or sqrt(2), their sides and interiors).  Other floats stand for the rational
    their decimal spelling denotes, as the loop's constants do in the proofs."""
    out: dict[str, dict[float, object]] = {}
    for name, vals in values.items():
        table = out.setdefault(name, {})
        for v in vals:
            x = reals.exact(v, Type.REAL)
            if not isinstance(x, reals.Hole):
                table.setdefault(float(v) + 0.0, x)
    return out


def exact_of(v, type_: Type, hints: dict[float, object] | None = None):
    """The exact value a search value stands for (see `exact_hints`)."""
    match type_:
        case Type.BOOL:
            return bool(v)
        case Type.VEC:
            return tuple(exact_of(x, Type.REAL) for x in np.asarray(v, dtype=np.float64).ravel())
        case Type.INT:
            return int(v)
    f = float(v) + 0.0
    if hints and f in hints:
        return hints[f]
    return reals.const(f, Type.REAL)


# The NumPy table with the proofs' division; every fold of the witness search uses it, so
# a candidate witness already leaves out the lists that divide by zero.
REALS = NUMPY_REALS


def fold(loop: Loop, xs: list, params: dict, dim: int = SEARCH_DIM) -> tuple:
    """h(xs) by `left`, one element (a tuple of parameter values) at a time."""
    s = init_state(loop, dim)
    names = [n for n, _ in loop.left.inputs]
    for e in xs:
        env = dict(zip(names, tuple(s) + tuple(e))) | dict(params)
        with quiet():
            s = tuple(np.asarray(v)[()] if np.ndim(v) == 0 else np.asarray(v)
                      for v in evaluate(loop.left.outputs, env, REALS))
    return s


def states_far(a: tuple, b: tuple) -> bool:
    """Whether two states differ by more than round-off in some field."""
    row_a = _row(a)
    row_b = _row(b)
    return bool(_far(row_a[None, :], row_b[None, :])[0])


def to_elements(loop: Loop, xs: list) -> list[tuple]:
    """Spec-style list elements back to tuples of values, one per element parameter."""
    if len(loop.elements) == 1:
        return [(from_plain(x, loop.elements[0].type),) for x in xs]
    return [tuple(from_plain(v, d.type) for v, d in zip(x, loop.elements, strict=True)) for x in xs]


# --- batched folds -----------------------------------------------------------------

def batch_step(loop: Loop, states: list, elements: list, params: dict, rows: int,
               dim: int = SEARCH_DIM) -> list:
    """One `left` step for `rows` lists at once: each state field and element parameter
    is an array with the lists on axis 0 and lanes on the last axis (width 1 for a
    scalar), so that the NumPy table broadcasts scalars against Vecs."""
    env = dict(params)
    for f, v in zip(loop.fields, states):
        env[f"acc.{f.name}"] = v
    for d, v in zip(loop.elements, elements):
        env[d.name] = v
    with quiet():
        out = evaluate(loop.left.outputs, env, REALS)
    result = []
    for f, v in zip(loop.fields, out):
        v = np.asarray(v)
        width = dim if f.type is Type.VEC else 1
        if v.shape != (rows, width):
            # constants and parameters come unbatched: (), (D,) or (1, w)
            v = np.broadcast_to(v.reshape(-1)[-width:] if v.ndim == 1 else v, (rows, width))
        result.append(v)
    return result


def batch_init(loop: Loop, rows: int, dim: int = SEARCH_DIM) -> list:
    return [np.broadcast_to(np.asarray(v, dtype=DTYPES[f.type]).reshape(1, -1),
                            (rows, dim if f.type is Type.VEC else 1))
            for f, v in zip(loop.fields, init_state(loop, dim))]


def batch_matrix(states: list) -> np.ndarray:
    """The fields side by side as one float matrix, a row per list."""
    return np.hstack([np.asarray(v, dtype=np.float64).reshape(v.shape[0], -1) for v in states])


def _far(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise: some column differs by a clear margin (NaN never counts)."""
    return np.any(apart(a, b), axis=-1)


def _close(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.all(close(a, b, ROUND_OFF_NO_NAN), axis=-1)


def _row(state: tuple) -> np.ndarray:
    return np.concatenate([np.atleast_1d(np.asarray(v, dtype=np.float64)).ravel() for v in state])


class ShortLists:
    """Every list of length <= L over `elements` (as many whole levels as `max_lists`
    allows), numbered level by level, with the states `left` folds them to."""

    def __init__(self, loop: Loop, params: dict, elements: list[tuple], max_lists: int, max_len: int,
                 hints: dict | None = None):
        self.loop = loop
        self.params = params
        self.elements = elements
        hints = hints or {}
        # the exact value each element and parameter stands for (see `exact_hints`)
        self.exact = [tuple(exact_of(v, d.type, hints.get(d.name)) for v, d in zip(e, loop.elements))
                      for e in elements]
        self.exact_params = {d.name: exact_of(params[d.name], d.type) for d in loop.params if d.name in params}
        d = len(elements)
        self.d = d
        # Element values as arrays indexed by element number.
        self.values = [np.stack([np.atleast_1d(np.asarray(e[j], dtype=DTYPES[p.type]))
                                 for e in elements])
                       for j, p in enumerate(loop.elements)]
        self.dim = max([v.shape[1] for v, p in zip(self.values, loop.elements) if p.type is Type.VEC]
                       + [np.size(v) for v in params.values() if np.ndim(v)] + [SEARCH_DIM])
        levels = 0
        total = 1
        while levels < max_len and total + d ** (levels + 1) <= max_lists:
            levels += 1
            total += d ** levels
        self.levels = levels
        # Global numbering: level by level; within a level, parent-major.
        self.start = [0]
        for k in range(1, levels + 1):
            self.start.append(self.start[-1] + d ** (k - 1))
        n = self.start[-1] + d ** levels if levels else 1
        self.n = n
        self.length = np.zeros(n, dtype=np.int64)
        self.parent = np.full(n, -1, dtype=np.int64)
        self.last = np.full(n, -1, dtype=np.int64)
        for k in range(1, levels + 1):
            lo = self.start[k]
            idx = np.arange(d ** k)
            self.length[lo:lo + d ** k] = k
            self.parent[lo:lo + d ** k] = self.start[k - 1] + idx // d
            self.last[lo:lo + d ** k] = idx % d
        self.states = self._fold_all(batch_init(loop, 1, self.dim), np.arange(n), rows_per_start=1)

    def _fold_all(self, start: list, idx: np.ndarray, rows_per_start: int) -> list:
        """States of the lists `idx` (closed under parents, sorted) for every start state
        (rows_per_start of them), as field arrays of shape (starts * len(idx), width),
        start-major."""
        Y = rows_per_start
        pos = np.full(self.n, -1, dtype=np.int64)
        level_of = self.length[idx]
        per_level = []
        for k in range(self.levels + 1):
            sel = idx[level_of == k]
            pos[sel] = np.arange(len(sel))
            per_level.append(sel)
        cur = [np.asarray(v) for v in start]          # level 0: the empty list, one row per start
        if len(per_level[0]) == 0:
            raise ValueError("the empty list must be among the lists folded")
        results = [cur]
        for k in range(1, self.levels + 1):
            sel = per_level[k]
            if len(sel) == 0:
                results.append(None)
                continue
            prev_n = len(per_level[k - 1])
            par = pos[self.parent[sel]]
            rows = (np.arange(Y)[:, None] * prev_n + par[None, :]).ravel()
            prev = results[k - 1]
            states = [v[rows] for v in prev]
            el = self.last[sel]
            elems = [np.tile(vals[el], (Y, 1)) for vals in self.values]
            results.append(batch_step(self.loop, states, elems, self.params, Y * len(sel), self.dim))
        # Reassemble in global order: for each start, levels in order.
        blocks = []
        for f in range(len(self.loop.fields)):
            parts = []
            for y in range(Y):
                for k in range(self.levels + 1):
                    if results[k] is None:
                        continue
                    m = len(per_level[k])
                    parts.append(np.asarray(results[k][f])[y * m:(y + 1) * m])
            blocks.append(np.concatenate(parts, axis=0))
        return blocks

    def witnesses(self, prefix_len: int, limit: int, deadline: float):
        matrix = batch_matrix(self.states)
        nan_rows = np.any(np.isnan(matrix), axis=1)
        with quiet():
            keys = np.round(matrix, _KEY_DIGITS) + 0.0
        keys[nan_rows] = np.nan
        _, first, inverse, counts = np.unique(keys, axis=0, return_index=True,
                                              return_inverse=True, return_counts=True)
        inverse = inverse.ravel()
        rep = first[inverse]
        members = np.nonzero((counts[inverse] >= 2) & (rep != np.arange(self.n)) & ~nan_rows)[0]
        if len(members) == 0:
            return
        exact = np.all(matrix[members] == matrix[rep[members]], axis=1)
        close = _close(matrix[members], matrix[rep[members]]) | exact
        members, exact = members[close], exact[close]
        if len(members) == 0:
            return
        # Lists to refold from each prefix's state: the group members, their
        # representatives, and all their prefixes.
        need = np.zeros(self.n, dtype=bool)
        need[members] = True
        need[rep[members]] = True
        for _ in range(self.levels):
            need[self.parent[need & (self.parent >= 0)]] = True
        need[0] = True
        idx = np.nonzero(need)[0]
        where = np.full(self.n, -1, dtype=np.int64)
        where[idx] = np.arange(len(idx))
        found = 0
        used_groups: set[int] = set()
        for k in range(1, prefix_len + 1):
            for prefixes in self._prefix_batches(k, len(idx)):
                if time.monotonic() > deadline:
                    return
                starts = self._start_states(prefixes)
                post = batch_matrix(self._fold_all(starts, idx, len(prefixes)))
                post = post.reshape(len(prefixes), len(idx), -1)
                a = post[:, where[members], :]
                b = post[:, where[rep[members]], :]
                far = _far(a, b)                              # (prefixes, members)
                for y in range(len(prefixes)):
                    hits = np.nonzero(far[y])[0]
                    if len(hits) == 0:
                        continue
                    # exact equality first, then the shortest pair
                    order = sorted(hits, key=lambda h: (not exact[h], self.length[members[h]]
                                                        + self.length[rep[members[h]]], members[h]))
                    for h in order:
                        g = int(inverse[members[h]])
                        if g in used_groups:
                            continue
                        w = self._confirm(int(rep[members[h]]), int(members[h]), prefixes[y])
                        if w is None:
                            continue
                        used_groups.add(g)
                        yield w
                        found += 1
                        if found >= limit:
                            return
                        break

    def _prefix_batches(self, k: int, n_lists: int):
        """All prefixes of length k, in batches that keep the refold arrays small."""
        d = self.d
        total = d ** k
        per = max(1, min(total, 400_000 // max(n_lists, 1)))
        for lo in range(0, total, per):
            batch = []
            for code in range(lo, min(total, lo + per)):
                ys = []
                for _ in range(k):
                    ys.append(code % d)
                    code //= d
                batch.append(ys[::-1])
            yield batch

    def _start_states(self, prefixes: list[list[int]]) -> list:
        rows = len(prefixes)
        states = batch_init(self.loop, rows, self.dim)
        for j in range(len(prefixes[0])):
            el = np.array([p[j] for p in prefixes])
            states = batch_step(self.loop, states, [vals[el] for vals in self.values], self.params, rows,
                                self.dim)
        return states

    def _confirm(self, i1: int, i2: int, prefix: list[int]) -> Witness | None:
        """The witness the float search proposes, once the exact fold confirms it."""
        xs1, xs2 = self.exact_list(i1), self.exact_list(i2)
        ys = [self.exact[j] for j in prefix]
        if not confirm_exact(self.loop, xs1, xs2, ys, "right", self.exact_params, self.dim):
            return None
        return Witness(exact_plain(self.loop, xs1), exact_plain(self.loop, xs2), exact_plain(self.loop, ys),
                       "right", {d.name: reals.plain(self.exact_params[d.name], d.type)
                                 for d in self.loop.params if d.name in self.exact_params})

    def exact_list(self, i: int) -> list[tuple]:
        """The exact elements of list i."""
        out = []
        while i > 0:
            out.append(self.exact[self.last[i]])
            i = self.parent[i]
        return out[::-1]


def exact_plain(loop: Loop, xs: list[tuple]) -> list:
    """Exact element tuples as spec-style list elements (`reals.plain`)."""
    if len(loop.elements) == 1:
        return [reals.plain(e[0], loop.elements[0].type) for e in xs]
    return [[reals.plain(v, d.type) for v, d in zip(e, loop.elements)] for e in xs]


# --- plain values ---------------------------------------------------------------------

def from_plain(v, type_: Type):
    """A spec-style plain value back to the NumPy value the interpreter uses."""
    return numpy_value(v, type_)


def vec_dim(loop: Loop, xs: list[tuple], params: dict) -> int:
    """The length of the Vec values among the elements and parameters (default 2)."""
    for e in xs:
        for v, d in zip(e, loop.elements):
            if d.type is Type.VEC:
                return int(np.size(v))
    for v in params.values():
        if np.ndim(v):
            return int(np.size(v))
    return SEARCH_DIM


def show(v) -> str:
    """A plain value as a witness prints it: whole floats without ".0", other exact
    values as p/q or SymPy's spelling (sqrt(2))."""
    if isinstance(v, list):
        return "[" + ", ".join(show(x) for x in v) + "]"
    if isinstance(v, float) and v == int(v) and math.isfinite(v):
        return str(int(v))
    if isinstance(v, (bool, int, float, np.generic)):
        return str(v)
    return reals.text(v)


def _numbers_mapped(v, leaf):
    """A witness (or its parameters) with every Real replaced by `leaf(Real)`: lists,
    tuples and dicts kept in shape; Bools, Ints, strings (the side) and None as they are."""
    if isinstance(v, (list, tuple)):
        return [_numbers_mapped(x, leaf) for x in v]
    if isinstance(v, dict):
        return {k: _numbers_mapped(x, leaf) for k, x in v.items()}
    if isinstance(v, (bool, str, int)) or v is None:
        return v
    return leaf(v)


def _nearest_float(v):
    f = float(v)
    return ("inf" if f > 0 else "-inf") if math.isinf(f) else f


def json_lists(v):
    """A witness (or its parameters) for JSON: every number as the nearest float (±inf
    as "inf"/"-inf"), the side as is."""
    return _numbers_mapped(v, _nearest_float)


def exact_lists(v):
    """A witness (or its parameters) for JSON, exactly: every Real as a string that
    denotes it ("-2/3", "1/2", "sqrt(2)"), Ints and Bools as they are, the side as is."""
    return _numbers_mapped(v, reals.text)
