"""The Bird check: `left` and `right` compute the same function (Bird's precondition for
the Third Homomorphism Theorem), proved by induction over reachable states, else refuted
by a list on which they differ, else "bounded": a search for such a list failed.

The search is aimed where a wrong right fold hides: the failed induction's model (its
elements, state values and parameters), the constants of both folds and their
neighbours, the values where their comparisons switch, lists longer than every count
they compare with a constant, and parameters at and beyond the constants they are
compared with.  Every list is folded both ways in floats to rank the suspects, and
compared in the exact reals of the proofs (`thm3.semantics.reals`): a difference is a
difference however small, and round-off is none."""
from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field, replace

import numpy as np
import sympy as sp

from thm3.analysis.witness import exact_hints, exact_of, show
from thm3.ir import COMPARISONS, TRANSCENDENTAL, Loop, Op, Type, free_vars, walk
from thm3.prove import laws as prove
from thm3.prove.laws import Setting
from thm3.semantics import critical, reals
from thm3.semantics.equality import apart
from thm3.semantics.evaluate import NUMPY_REALS, quiet
from thm3.semantics.samples import (SMALL_INTS, SMALL_REALS, Domain, batch_fold, batch_init, solver_models,
                                    batch_step, fold_left, fold_right, plain, stack_elements)

_DIM = 3                # the length of Vec values in the search
_SEARCH_SECONDS = 6.0   # at most this long, within the analysis' deadline
_EXACT_SECONDS = 3.0    # of which exact folds of lists the floats call equal
_MAX_PARAMS = 12        # parameter settings searched
_MAX_EXTRA = 24         # elements beyond the small domain, per setting


def bird_check(loop: Loop, setting: Setting, deadline: float) -> tuple[str, str]:
    """The Bird check's status ("proved", "bounded", "failed", "unproved" where no list
    could be compared, or "skipped") and detail."""
    if loop.right is None:
        return "skipped", "no right fold given"
    out = prove.prove_bird(setting, deadline)
    if out.proved:
        return "proved", (f"left and right agree on [x], and right(x, left(s, y)) == left(right(x, s), y) "
                         f"on reachable s ({out.paths} paths, {out.seconds:.2f} s)")
    found = search_difference(loop, out.model, min(deadline, time.monotonic() + _SEARCH_SECONDS))
    if found.difference is not None:
        return "failed", found.difference.describe()
    if found.longest == 0:          # no element met the asserts: a search of nothing is no bound
        return "unproved", (f"not proved by induction ({out.detail}); no element the search drew meets the "
                            f"asserts, so no list was compared ({found.summary()})")
    return "bounded", f"not proved by induction ({out.detail}); {found.summary()}"


@dataclass
class Difference:
    """A list (spec-style elements), the parameters, and the two states it folds to."""
    xs: list
    params: dict
    left: tuple
    right: tuple
    exact: bool = True          # False: exactness undecided, the floats are far apart

    def describe(self) -> str:
        with_params = (" with " + ", ".join(f"{k} = {show(v)}" for k, v in self.params.items())
                       if self.params else "")
        how = "" if self.exact else " (in floats; not decided exactly)"
        return (f"left and right differ on {show(self.xs)}{with_params}: left gives "
                f"({', '.join(map(show, self.left))}), right gives ({', '.join(map(show, self.right))}){how}")


@dataclass
class Search:
    """What the search for a difference did: lists folded, how many exactly, and the
    longest list and parameter settings it took."""
    difference: Difference | None = None
    lists: int = 0
    exact: int = 0
    undecided: int = 0
    near: int = 0               # lists whose floats differ within round-off
    longest: int = 0
    settings: int = 0
    seconds: float = 0.0
    sources: list = field(default_factory=list)

    def summary(self) -> str:
        also = f", {self.undecided} undecided exactly" if self.undecided else ""
        rest = self.lists - self.exact - self.undecided
        floats = (f", {rest} more equal in floats or within round-off (of all, {self.near} not bit for bit)"
                  if rest > 0 else "")
        return (f"no difference found on {self.lists} lists (up to length {self.longest}, "
                f"{self.settings} parameter setting{'s' if self.settings != 1 else ''}; "
                f"{self.exact} compared exactly{also}{floats}; from {', '.join(self.sources)})")


def search_difference(loop: Loop, model: dict, deadline: float) -> Search:
    """A list on which `left` and `right` differ exactly, searched as the module says."""
    t0 = time.monotonic()
    right_loop = replace(loop, left=loop.right)
    out = Search(sources=["the small domain"])
    if model:
        out.sources.append("the induction's counter-model")
    rng = np.random.default_rng(1)
    settings = parameter_settings(loop, model, rng)
    out.settings = len(settings)
    exact_budget = time.monotonic() + _EXACT_SECONDS
    length = max(critical.counter_length(loop), critical.counter_length(right_loop))
    if length > 5:
        out.sources.append(f"lists to length {length}")
    rational = not any(e.op in TRANSCENDENTAL for e in walk(tuple(loop.left.outputs) + tuple(loop.right.outputs)))
    # Every list in floats first (cheap), sorted into those far apart, those within
    # round-off and those the same; then exact folds within the budget in that order,
    # the same lists only where the folds are rational (SymPy is slow on exp).
    far, near, equal = [], [], []
    for params in settings:
        if time.monotonic() > deadline:
            break
        base = small_domain(loop, params)
        extra, hints = extra_elements(loop, right_loop, params, model, base)
        drawn = model_elements(loop, params, base + extra, hints, rng)
        if drawn and "models of the asserts" not in out.sources:
            out.sources.append("models of the asserts")
        extra = extra + drawn
        lists = candidate_lists(loop, base, extra, length, rng)
        out.lists += len(lists)
        out.longest = max([out.longest] + [len(xs) for xs in lists])
        setting = (params, {d.name: exact_of(params[d.name], d.type) for d in loop.params}, hints)
        for _, group in _by_length(lists):
            for kind, rows in zip((far, near, equal), _float_screen(loop, group, params)):
                kind += [(group[r], setting) for r in rows]
    out.near = len(near)
    for kind, floats_apart in ((far, True), (near, False), (equal if rational else [], False)):
        for xs, (params, exact_params, hints) in kind:
            if time.monotonic() > deadline:
                break
            if time.monotonic() > exact_budget:
                d = _float_difference(loop, xs, params) if floats_apart else None
            else:
                d = _compare_exactly(loop, right_loop, xs, params, exact_params, hints, out, floats_apart)
            if d is not None:
                out.difference = d
                out.seconds = time.monotonic() - t0
                return out
    if len(settings) > 1:
        out.sources.append("parameters at and beyond the constants they are compared with")
    out.sources.append("the folds' constants and critical values")
    out.seconds = time.monotonic() - t0
    return out


# -- the parameters ----------------------------------------------------------------------

def parameter_settings(loop: Loop, model: dict, rng: np.random.Generator) -> list[dict]:
    """Loop-parameter settings that meet the asserts on them: a random small draw, the
    failed induction's model, each parameter at, around and beyond every constant it is
    compared with (the others as drawn), and a large draw."""
    if not loop.params:
        return [{}]
    dom = Domain(loop, dim=_DIM)
    first = dom.params(rng)
    candidates = [first]
    if all(d.name in model for d in loop.params):
        candidates.append({d.name: _param_value(model[d.name], d.type) for d in loop.params})
    for d in loop.params:
        for v in _compared_values(loop, d):
            candidates.append(first | {d.name: _param_value(v, d.type)})
    candidates.append(dom.params(rng, small=False))
    out: list[dict] = []
    for p in candidates:
        if dom.precondition_holds(None, p, params_only=True) and not any(_same(p, q) for q in out):
            out.append(p)
        if len(out) >= _MAX_PARAMS:
            break
    return out or [first]


def _param_value(v, type_: Type):
    match type_:
        case Type.BOOL:
            return bool(v)
        case Type.INT:
            return int(v)
        case Type.VEC:
            return np.asarray(v, dtype=np.float64)
    return float(v)


def _compared_values(loop: Loop, d) -> list:
    """The values at and around each constant that parameter `d` is compared with (in
    either fold or an assert), and beyond them by an order of magnitude."""
    if d.type not in (Type.INT, Type.REAL):
        return [True, False] if d.type is Type.BOOL else []
    consts: list[float] = []
    for e in walk(tuple(loop.left.outputs) + tuple(loop.right.outputs) + tuple(loop.preconditions)):
        if e.op in COMPARISONS + (Op.MAX, Op.MIN) and d.name in free_vars(list(e.src)):
            for s in walk(list(e.src)):
                if s.op is Op.CONST and not isinstance(s.arg, bool) and math.isfinite(float(s.arg)):
                    consts.append(float(s.arg))
    step = 1.0 if d.type is Type.INT else 0.5
    out: list[float] = []
    for c in dict.fromkeys(consts):
        far = 10 * abs(c) + 10
        out += [c, c + step, c - step, far, -far]
    return list(dict.fromkeys(out))


def _same(p: dict, q: dict) -> bool:
    return all(np.array_equal(np.asarray(p[k]), np.asarray(q[k])) for k in p)


# -- the elements and lists ----------------------------------------------------------------

def small_domain(loop: Loop, params: dict) -> list[tuple]:
    """Few elements, ties and signs, honouring the preconditions (None: an Index, the
    element's position in the list)."""
    dom = Domain(loop, dim=_DIM)
    per = []
    for d in loop.elements:
        if d.index:
            per.append([None])
        elif d.type is Type.BOOL:
            per.append([False, True])
        elif d.type is Type.INT:
            per.append(list(SMALL_INTS[:5]))
        elif d.type is Type.VEC:
            per.append([np.array([1.0, 0.0, -1.0]), np.array([-2.0, 1.0, 0.5]), np.zeros(3)])
        else:
            per.append(list(SMALL_REALS[:6]))
    out = []
    for combo in itertools.product(*per):
        e = tuple(0 if c is None else c for c in combo)
        if dom.precondition_holds(e, params):
            out.append(combo)
    return out[:12]


def extra_elements(loop: Loop, right_loop: Loop, params: dict, model: dict,
                   base: list[tuple]) -> tuple[list[tuple], dict]:
    """Elements beyond the small domain, each scalar element parameter varied alone from
    the first small elements: the counter-model's element and state values, the folds'
    constants with their neighbours, and the values where their comparisons switch; and
    the exact value each float stands for (`exact_hints`)."""
    values: dict[str, list] = {d.name: [] for d in loop.elements}
    exact: dict[str, list] = {d.name: [] for d in loop.elements}
    scalar_fields = [f.name for f in loop.fields if f.type in (Type.INT, Type.REAL)]
    for d in loop.elements:
        if d.index or d.type not in (Type.INT, Type.REAL):
            continue
        vals = values[d.name]
        vals += [model[k] for k in (f"x.{d.name}", f"y.{d.name}") if k in model]
        vals += [model[f"s.{f}"] for f in scalar_fields if f"s.{f}" in model]
        for c in _constants(loop):
            vals += [c, c + 1, c - 1] + ([c + 0.5, c - 0.5] if d.type is Type.REAL else [])
        for view in (loop, right_loop):
            try:
                crit = critical.exact_element_values(view, params)
            except (TypeError, ValueError, ZeroDivisionError):
                crit = {}
            exact[d.name] += crit.get(d.name, [])
            vals += [float(v) for v in crit.get(d.name, [])]
    hints = exact_hints(exact)
    dom = Domain(loop, dim=_DIM)
    out: list[tuple] = []
    seen = {_key(e) for e in base}
    for j, d in enumerate(loop.elements):
        for v in values[d.name]:
            v = float(v)
            if not math.isfinite(v) or (d.type is Type.INT and v != int(v)):
                continue
            v = int(v) if d.type is Type.INT else v + 0.0
            for b in base[:2] or [tuple(None if e.index else 0 for e in loop.elements)]:
                e = b[:j] + (v,) + b[j + 1:]
                if _key(e) in seen:
                    continue
                if dom.precondition_holds(tuple(0 if c is None else c for c in e), params):
                    seen.add(_key(e))
                    out.append(e)
    return out[:_MAX_EXTRA], hints


_MODELS = 6             # elements drawn from models of the asserts, per setting


def model_elements(loop: Loop, params: dict, have: list[tuple], hints: dict, rng) -> list[tuple]:
    """Elements from Z3's models of the asserts (parameters held), where the asserts
    restrict the element and the domains above hold few elements that meet them
    (`assert x * x == 2`: none in floats).  An irrational model enters `hints` with its
    exact value, so the exact folds compare sqrt(2), not the float beside it."""
    names = {d.name for d in loop.elements}
    if len(have) >= 4 or not any(free_vars([p]) & names for p in loop.preconditions) or any(
            d.type is Type.VEC for d in loop.elements):
        return []
    out, seen = [], {_key(e) for e in have}
    for _, e, ex in solver_models(loop, params, _MODELS, rng, seconds=1.0, exact=True):
        e = tuple(None if d.index else v for v, d in zip(e, loop.elements))
        if _key(e) in seen:
            continue
        seen.add(_key(e))
        out.append(e)
        for v, x, d in zip(e, ex, loop.elements):
            if d.type is Type.REAL and v is not None:
                hints.setdefault(d.name, {})[float(v) + 0.0] = reals.exact(x, Type.REAL) if not isinstance(
                    x, (int, float)) else x
    return out


def _constants(loop: Loop) -> list[float]:
    """Finite numeric constants of both folds and the preconditions, each once."""
    out: list[float] = []
    for e in walk(tuple(loop.left.outputs) + tuple(loop.right.outputs) + tuple(loop.preconditions)):
        if e.op is Op.CONST and e.type in (Type.INT, Type.REAL) and not isinstance(e.arg, bool):
            v = float(e.arg)
            if math.isfinite(v) and v not in out:
                out.append(v)
    return out


def _key(e: tuple) -> tuple:
    return tuple(tuple(np.asarray(v).ravel().tolist()) if np.ndim(v) else v for v in e)


def candidate_lists(loop: Loop, base: list[tuple], extra: list[tuple], length: int,
                    rng: np.random.Generator, max_lists: int = 4000) -> list[list[tuple]]:
    """Every short list over the small domain (as many lengths as `max_lists` allows);
    each extra element alone, twice, thrice and beside the small ones; and lists of every
    length past 5 up to `length`: each element repeated, and random ones."""
    lists: list[list[tuple]] = []
    for n in range(1, 6):
        if not base or len(base) ** n > max_lists:
            break
        lists += [list(c) for c in itertools.product(base, repeat=n)]
    for e in extra:
        lists += [[e], [e, e], [e, e, e]]
        for b in base[:6]:
            lists += [[e, b], [b, e]]
    for a, b in itertools.combinations(extra[:8], 2):
        lists += [[a, b], [b, a]]
    pool = base + extra
    for n in range(6, length + 1):
        lists += [[e] * n for e in pool[:8]]
        lists += [[pool[i] for i in rng.integers(0, len(pool), size=n)] for _ in range(6)] if pool else []
    # an Index element (None) is the element's position in the list
    return [[tuple(pos if v is None else v for v in e) for pos, e in enumerate(xs)] for xs in lists]


def _by_length(lists: list[list[tuple]]):
    groups: dict[int, list] = {}
    for xs in lists:
        groups.setdefault(len(xs), []).append(xs)
    return sorted(groups.items())


# -- folding both ways ------------------------------------------------------------------------

def _float_screen(loop: Loop, lists: list[list[tuple]], params: dict) -> list[list[int]]:
    """Fold lists of one length both ways in floats: the rows whose states are far apart,
    those that differ within round-off, and those that are the same floats."""
    steps = stack_elements(loop, lists)
    rows = len(lists)
    with quiet():
        left = batch_fold(loop, steps, params, batch_init(loop, rows, _DIM), NUMPY_REALS)
        right = batch_init(loop, rows, _DIM)
        for e in reversed(steps):
            right = batch_step(loop.right, right, e, params, NUMPY_REALS)
        same = np.ones(rows, dtype=bool)
        far = np.zeros(rows, dtype=bool)
        for x, y in zip(left, right):
            x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
            eq = (x == y) | (np.isnan(x) & np.isnan(y))
            same &= eq.reshape(rows, -1).all(axis=1)
            far |= apart(x, y).reshape(rows, -1).any(axis=1)
    return [[int(r) for r in np.flatnonzero(rows)] for rows in (~same & far, ~same & ~far, same)]


def _compare_exactly(loop: Loop, right_loop: Loop, xs: list[tuple], params: dict, exact_params: dict,
                     hints: dict, out: Search, floats_apart: bool) -> Difference | None:
    """The difference on `xs` in the exact reals, if there is one; where exactness is
    undecided, the float one if the floats are far apart."""
    exs = [tuple(int(v) if d.index else exact_of(v, d.type, hints.get(d.name)) for v, d in zip(e, loop.elements))
           for e in xs]
    dim = _DIM
    left = reals.fold(loop, exs, exact_params, dim)
    right = reals.fold(right_loop, exs[::-1], exact_params, dim)
    # an irrational element (a model of `assert x * x == 2`) shown as the number it is
    shown = [[reals.text(x) if isinstance(x, sp.Basic) else plain(v) for v, x in zip(e, ex)] for e, ex in zip(xs, exs)]
    shown = [e[0] if len(e) == 1 else e for e in shown]
    if isinstance(left, reals.Hole) or isinstance(right, reals.Hole):
        if left is reals.UNDEFINED and right is reals.UNDEFINED:
            out.exact += 1
            return None
        if reals.UNDECIDED in (left, right) or not floats_apart:
            out.undecided += 1
            return _float_difference(loop, xs, params, shown) if floats_apart else None
        # one fold divides by zero where the other has a state, and the floats disagree
        out.exact += 1
        return Difference(shown, _shown_params(params), _shown_state(loop, left), _shown_state(loop, right))
    same = reals.same(left, right)
    if same is True:
        out.exact += 1
        return None
    if same is False:
        out.exact += 1
        return Difference(shown, _shown_params(params), _shown_state(loop, left), _shown_state(loop, right))
    out.undecided += 1
    return _float_difference(loop, xs, params, shown) if floats_apart else None


def _float_difference(loop: Loop, xs: list[tuple], params: dict, shown: list | None = None) -> Difference | None:
    """The difference on `xs` (`shown` as the user reads them, by default as the floats
    they are) in floats, where the floats are far apart."""
    with quiet():
        left, right = fold_left(loop, xs, params, dim=_DIM), fold_right(loop, xs, params, dim=_DIM)
    if not any(bool(np.any(apart(x, y))) for x, y in zip(left, right)):
        return None
    if shown is None:
        shown = [[plain(v) for v in e] for e in xs]
        shown = [e[0] if len(e) == 1 else e for e in shown]
    return Difference(shown, _shown_params(params), tuple(plain(v) for v in left),
                      tuple(plain(v) for v in right), exact=False)


def _shown_state(loop: Loop, s) -> tuple:
    if isinstance(s, reals.Hole):
        return ("no state: " + s.why,)
    return tuple(reals.plain(v, f.type) for v, f in zip(s, loop.fields))


def _shown_params(params: dict) -> dict:
    return {k: plain(v) for k, v in params.items()}
