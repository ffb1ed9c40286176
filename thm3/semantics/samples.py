"""Concrete lists for testing: element and parameter values that satisfy the loop's
preconditions, folds over them, and state comparison.  Used by the witness search,
the numeric filter of synthesis, the `tested` fallback of proofs and the lifting search."""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np

from thm3.semantics.evaluate import NUMPY, NUMPY_REALS, compiled, evaluate, quiet
from thm3.ir import Fn, Loop, Op, Type, initial_state
from thm3.errors import Thm3Error

# Small values first: ties, zeros and signs are where wrong combines show.
SMALL_REALS = (0.0, 1.0, -1.0, 2.0, -2.0, 3.0, 0.5, -0.5)
SMALL_INTS = (0, 1, -1, 2, -2, 3, 9)


@dataclass
class Domain:
    """How to draw one element (a tuple, one value per element parameter) and the
    loop parameters, honouring the `assert` preconditions by rejection, or, where that
    cannot meet them, from Z3's models of the asserts (`solver_models`)."""
    loop: Loop
    dim: int = 3
    deadline: float | None = None   # a `time.monotonic()` value: past it, the critical values found so far
    _rejection_futile: bool = field(default=False, init=False, repr=False)   # no element ever accepted
    _models: dict = field(default_factory=dict, init=False, repr=False)      # Z3's models: params, elements by params

    def _draw(self, type_: Type, rng: np.random.Generator, small: bool):
        match type_:
            case Type.BOOL:
                return bool(rng.integers(0, 2))
            case Type.INT:
                return int(rng.choice(SMALL_INTS)) if small else int(rng.integers(-20, 21))
            case Type.VEC:
                if small:
                    return rng.choice(SMALL_REALS, size=self.dim).astype(np.float64)
                return rng.normal(0, 3, size=self.dim)
            case _:
                if small:
                    return float(rng.choice(SMALL_REALS))
                return float(np.round(rng.normal(0, 3), 3)) if rng.random() < 0.5 else float(rng.normal(0, 3))

    def params(self, rng: np.random.Generator, small: bool = True) -> dict:
        """Loop parameters that meet the asserts on them (each conjunct of an assert that
        reads parameters only), by rejection, else from a model of all the asserts."""
        for i in range(0 if "params" in self._models else 200):
            p = {d.name: self._draw(d.type, rng, small and rng.random() < 0.7 or i >= 100) for d in self.loop.params}
            if self.precondition_holds(None, p, params_only=True):
                return p
        if "params" not in self._models:            # rejection failed: Z3's models, once
            self._models["params"] = [p for p, _ in solver_models(self.loop, {}, 8, rng)]
        models = self._models["params"]
        if models:
            return models[int(rng.integers(0, len(models)))]
        raise PreconditionsUnmet(f"{self.loop.path}: no loop parameters satisfying the preconditions were found, "
                                 "by sampling nor as a model of the asserts (Z3)")

    def element(self, rng: np.random.Generator, params: dict, small: bool = True, position: int = 0):
        return self.random_list(rng, params, 1, small, position)[0]

    def _draw_many(self, type_: Type, rng: np.random.Generator, small: bool, k: int) -> list:
        """k values as `_draw` draws one, in one call to the generator per kind."""
        match type_:
            case Type.BOOL:
                return [bool(v) for v in rng.integers(0, 2, size=k)]
            case Type.INT:
                return (rng.choice(SMALL_INTS, size=k) if small else rng.integers(-20, 21, size=k)).tolist()
            case Type.VEC:
                rows = rng.choice(SMALL_REALS, size=(k, self.dim)) if small else rng.normal(0, 3, size=(k, self.dim))
                return list(rows.astype(np.float64))
            case _:
                if small:
                    return rng.choice(SMALL_REALS, size=k).tolist()
                z = rng.normal(0, 3, size=k)
                return np.where(rng.random(k) < 0.5, np.round(z, 3), z).tolist()

    def _candidates(self, rng: np.random.Generator, k: int, small: bool) -> list[list]:
        cols = []
        for d in self.loop.elements:
            if d.index:
                cols.append([0] * k)
            elif d.type is Type.VEC:
                cols.append(self._draw_many(d.type, rng, small, k))
            elif small or d.type is Type.BOOL:
                pool = self._pool(d.type) + self._critical.get(d.name, ())
                cols.append([pool[i] for i in rng.integers(0, len(pool), size=k)])
            else:
                cols.append(self._draw_many(d.type, rng, False, k))
        return cols

    @functools.cached_property
    def _critical(self) -> dict[str, tuple]:
        """Per element, the values that make the loop's comparisons switch
        (`thm3.semantics.critical`), drawn among the small values."""
        from thm3.semantics import critical
        return {name: tuple(int(v) if type_ is Type.INT else v for v in vals
                            if type_ is not Type.INT or float(v).is_integer())
                for name, vals in critical.element_values(self.loop, deadline=self.deadline).items()
                for type_ in [next(d.type for d in self.loop.elements if d.name == name)]}

    def _pool(self, type_: Type) -> tuple:
        """Small values plus the constants the preconditions mention (bits, digits)."""
        if type_ is Type.BOOL:
            return (False, True)
        from thm3.ir import Op, walk
        consts = {e.arg for cond in self.loop.preconditions for e in walk([cond])
                  if e.op is Op.CONST and not isinstance(e.arg, bool) and math.isfinite(e.arg)}
        base = SMALL_INTS if type_ is Type.INT else SMALL_REALS
        extra = tuple(int(c) if type_ is Type.INT else float(c) for c in sorted(consts)
                      if type_ is not Type.INT or float(c).is_integer())
        return tuple(dict.fromkeys(base + extra))

    def random_list(self, rng: np.random.Generator, params: dict, n: int, small: bool = True,
                    start: int = 0) -> list:
        """n elements drawn with batched rejection against the preconditions."""
        return [tuple(start + i if d.index else v for d, v in zip(self.loop.elements, e))
                for i, e in enumerate(self._elements(rng, params, n, small))]

    def random_lists(self, rng: np.random.Generator, params: dict, count: int, n: int,
                     small: bool = True, start: int = 0) -> list[list]:
        """`count` lists of n elements each, drawn together (an Index counts from
        `start` in each list)."""
        pool = self._elements(rng, params, count * n, small)
        return [[tuple(start + i if d.index else v for d, v in zip(self.loop.elements, e))
                 for i, e in enumerate(pool[r * n:(r + 1) * n])] for r in range(count)]

    def _elements(self, rng: np.random.Generator, params: dict, n: int, small: bool) -> list[tuple]:
        out: list[tuple] = []
        tries = 0
        while len(out) < n and not self._rejection_futile:
            need = n - len(out)
            k = max(8, 4 * need) if self.loop.preconditions else need
            cols = self._candidates(rng, k, small if tries < 3 else True)
            ok = self._accept(cols, params)
            out += [e for e, good in zip(zip(*cols), ok) if good][:need]
            tries += 1
            if tries > 6 and len(out) < n:
                self._rejection_futile = not out     # not one element: go to the models at once next time
                break
        if len(out) < n:        # rejection cannot meet the asserts: draw from their models
            key = repr(sorted((k, plain(v)) for k, v in params.items()))
            if key not in self._models:
                self._models[key] = [e for _, e in solver_models(self.loop, params, 16, rng)]
            models = self._models[key]
            if not models and not out:
                raise PreconditionsUnmet(f"{self.loop.path}: could not draw elements satisfying the preconditions, "
                                         "by sampling nor as a model of the asserts (Z3)")
            pool = out + models
            out += [pool[i] for i in rng.integers(0, len(pool), size=n - len(out))]
        return out

    def _accept(self, cols: list[list], params: dict) -> np.ndarray:
        k = len(cols[0]) if cols else 0
        ok = np.ones(k, dtype=bool)
        if not self.loop.preconditions:
            return ok
        env = dict(params)
        for d, c in zip(self.loop.elements, cols):
            arr = np.asarray(c)
            env[d.name] = arr if d.type is Type.VEC else arr.reshape(-1, 1)
        with quiet():
            for cond in self.loop.preconditions:
                v = np.asarray(evaluate([cond], env, NUMPY)[0])
                ok &= np.broadcast_to(v.reshape(v.shape[0], -1).all(axis=1) if v.ndim else v, (k,))
        return ok

    def precondition_holds(self, element, params, params_only: bool = False) -> bool:
        if not self.loop.preconditions:
            return True
        env = dict(params)
        names = {d.name for d in self.loop.elements}
        if element is not None:
            env.update({d.name: v for d, v in zip(self.loop.elements, element)})
        conds = self.loop.preconditions
        if params_only:         # the conjuncts over the parameters alone (`assert x >= 0 and c > 0`)
            from thm3.ir import free_vars
            conds = [c for c in _conjuncts(conds) if not free_vars([c]) & names]
        with quiet():
            for cond in conds:
                if not bool(np.all(evaluate([cond], env, NUMPY)[0])):
                    return False
        return True


class PreconditionsUnmet(Thm3Error, ValueError):
    """No values meeting the `assert` preconditions were found: by rejection sampling nor
    as a model of the asserts."""


def _conjuncts(conds) -> list:
    out = []
    for c in conds:
        out += _conjuncts(c.src) if c.op is Op.AND else [c]
    return out


def solver_models(loop: Loop, fixed: dict, count: int, rng: np.random.Generator,
                  seconds: float = 2.0, exact: bool = False) -> list[tuple]:
    """Up to `count` distinct (parameters, element) pairs that satisfy every `assert` in
    Z3's exact reals, with the parameters in `fixed` held to their values: a blocking
    clause after each model, and a random bound on one value before each, spread them.
    Where a model is irrational (`assert x * x == 2`) its value is the nearest float, for
    the float tests only: the exact checks (a witness's) refuse it and the Bird search's
    precondition filter drops it (docs/loop-format.md, "assert").  With `exact`, each pair
    comes with the element's exact values as a third entry (ints, Fractions, and SymPy's
    exact real roots for an algebraic model, such as sqrt(2)), which the exact checks take
    in place of the floats (the Bird search's `hints`).  Empty where Z3 finds none in
    `seconds`, or for a loop with `Vec` values."""
    import time
    import z3
    from thm3.semantics.symbolic import Explorer, Symbols, SymbolicTable, as_z3_bool, constant
    if not loop.preconditions or any(d.type is Type.VEC for d in loop.elements + loop.params):
        return []
    from thm3.ir import walk
    deadline = time.monotonic() + seconds
    abstract = any(e.op in (Op.EXP, Op.EXP2, Op.LOG, Op.LOG2, Op.SQRT) for e in walk(list(loop.preconditions)))
    syms = Symbols()
    elems = {d.name: syms.real(f"e.{d.name}", d.type) for d in loop.elements}
    params = {d.name: constant(plain(fixed[d.name]), d.type) if d.name in fixed else syms.real(f"p.{d.name}", d.type)
              for d in loop.params}
    ex = Explorer([], deadline)
    cons = []
    try:
        with quiet():
            for pre in loop.preconditions:
                v = evaluate([pre], elems | params, SymbolicTable(ex, lazy=True))[0]
                if v is False:
                    return []
                if v is not True:
                    cons.append(as_z3_bool(v))
    except (TypeError, ValueError, NotImplementedError, RecursionError, z3.Z3Exception):
        return []
    unknowns = [(d, elems[d.name], True) for d in loop.elements] + [
        (d, params[d.name], False) for d in loop.params if d.name not in fixed]
    zs = [v if isinstance(v, z3.BoolRef) else v.z3 for _, v, _ in unknowns]
    for d, z in zip((d for d, _, _ in unknowns), zs):
        if d.index:
            cons.append(z >= 0)
    solver = z3.Solver()
    solver.set("timeout", 500)
    solver.add(*syms.hyps, *ex.side, *cons)
    numeric = [z for z in zs if not isinstance(z, z3.BoolRef)]
    out: list[tuple[dict, tuple]] = []
    for attempt in range(4 * count):
        if len(out) >= count or time.monotonic() > deadline:
            break
        solver.push()
        if out and numeric and attempt % 3:         # a random side of a random value: variety
            z, r = numeric[int(rng.integers(0, len(numeric)))], float(np.round(rng.normal(0, 3), 2))
            solver.add(z > r if rng.random() < 0.5 else z < r)
        try:
            got = solver.check()
            model = solver.model() if got == z3.sat else None
        except z3.Z3Exception:
            model = None
        solver.pop()
        if model is None:
            if not out and attempt == 0:
                break                               # no model at all (unsat, or Z3 gave up)
            continue
        vals = [model.eval(z, model_completion=True) for z in zs]
        row = [_model_value(v, d.type) for v, (d, _, _) in zip(vals, unknowns)]
        if any(r is None for r in row):
            break
        e = tuple(r for r, (_, _, is_elem) in zip(row, unknowns) if is_elem)
        p = dict(fixed) | {d.name: r for r, (d, _, is_elem) in zip(row, unknowns) if not is_elem}
        if not abstract or Domain(loop).precondition_holds(e, p):  # Z3's exp is a function it knows little of
            if exact:
                ex = tuple(_exact_model_value(v, d.type) for v, (d, _, is_elem) in zip(vals, unknowns) if is_elem)
                if all(x is not None for x in ex):
                    out.append((p, e, ex))
            else:
                out.append((p, e))
        solver.add(z3.Or([z != v for z, v in zip(zs, vals)]) if zs else z3.BoolVal(False))
    return out


def _model_value(v, type_: Type):
    """A Z3 model's value as the sample's Python value: a bool, an int, or the float
    nearest an exact rational or algebraic number."""
    import z3
    from fractions import Fraction
    if z3.is_true(v) or z3.is_false(v):
        return bool(z3.is_true(v))
    if z3.is_rational_value(v):
        q = Fraction(v.numerator_as_long(), v.denominator_as_long())
        return int(q) if type_ is Type.INT and q.denominator == 1 else float(q)
    if z3.is_algebraic_value(v):
        return float(v.approx(20).as_decimal(20).rstrip("?"))
    return None


def _exact_model_value(v, type_: Type):
    """A Z3 model's value exactly: a bool, an int, a Fraction, or the real root of the
    algebraic number's polynomial that Z3 names (SymPy's `real_roots`, ascending, as Z3
    counts them: radicals where SymPy writes them, else a `CRootOf`); None where it
    cannot be read."""
    import z3
    from fractions import Fraction
    if z3.is_true(v) or z3.is_false(v):
        return bool(z3.is_true(v))
    if z3.is_rational_value(v):
        q = Fraction(v.numerator_as_long(), v.denominator_as_long())
        return int(q) if type_ is Type.INT and q.denominator == 1 else q
    if z3.is_algebraic_value(v) and type_ is Type.REAL:
        import sympy as sp
        try:
            coeffs = [Fraction(c.numerator_as_long(), c.denominator_as_long()) for c in v.poly()]
            x = sp.Symbol("x")
            roots = sp.real_roots(sp.Poly([sp.Rational(c.numerator, c.denominator) for c in reversed(coeffs)], x))
            root = roots[v.index() - 1]
        except (z3.Z3Exception, AttributeError, IndexError, ValueError, TypeError):
            return None
        # the root Z3 meant: its float must be the model's own approximation
        return root if abs(float(root) - _model_value(v, type_)) <= 1e-9 * max(1.0, abs(float(root))) else None
    return None


def init_state(loop: Loop, dim: int = 3) -> tuple:
    """The initial state as NumPy values (a Vec as `dim` lanes of its default)."""
    return tuple(np.full(dim, float(e.arg)) if f.type is Type.VEC else NUMPY[Op.CONST](e.arg, e.type)
                 for f, e in zip(loop.fields, initial_state(loop)))


def step(fn: Fn, state: tuple, element: tuple, params: dict) -> tuple:
    names = [n for n, _ in fn.inputs]
    k, m = len(state), len(element)
    env = dict(zip(names[:k], state)) | dict(zip(names[k:k + m], element)) | params
    with quiet():
        return tuple(np.asarray(v)[()] if np.ndim(v) == 0 else np.asarray(v) for v in compiled(fn.outputs, NUMPY)(env))


def fold_left(loop: Loop, xs: list, params: dict, state: tuple | None = None, dim: int = 3) -> tuple:
    s = init_state(loop, dim) if state is None else state
    for e in xs:
        s = step(loop.left, s, e, params)
    return s


def fold_right(loop: Loop, xs: list, params: dict, dim: int = 3) -> tuple:
    s = init_state(loop, dim)
    for e in reversed(xs):
        s = step(loop.right, s, e, params)
    return s


def plain(value):
    """A JSON-ready Python value for an element, state field or result."""
    if isinstance(value, tuple):
        return [plain(v) for v in value]
    arr = np.asarray(value)
    if arr.ndim:
        return [plain(v) for v in arr]
    item = arr.item()
    return item


# -- batched folds: many lists at once, one vectorised step per position -----------

def stack_elements(loop: Loop, lists: list[list]) -> list[tuple]:
    """Lists of equal length L as L steps, each a tuple of batched element arrays
    (scalars as shape (R, 1), vectors as (R, D))."""
    if not lists or not lists[0]:
        return []
    steps = []
    for pos in range(len(lists[0])):
        cols = []
        for j, d in enumerate(loop.elements):
            vals = [xs[pos][j] for xs in lists]
            arr = np.asarray(vals)
            cols.append(arr if d.type is Type.VEC else arr.reshape(-1, 1))
        steps.append(tuple(cols))
    return steps


def batch_init(loop: Loop, rows: int, dim: int) -> tuple:
    """The initial state for `rows` lists at once: (rows, dim) for a Vec, else (rows, 1)."""
    return tuple(np.broadcast_to(v, (rows, dim)).copy() if f.type is Type.VEC else np.full((rows, 1), v)
                 for f, v in zip(loop.fields, init_state(loop, dim)))


def batch_step(fn: Fn, state: tuple, element: tuple, params: dict, table: dict = NUMPY) -> tuple:
    names = [n for n, _ in fn.inputs]
    k, m = len(state), len(element)
    env = dict(zip(names[:k], state)) | dict(zip(names[k:k + m], element)) | params
    with quiet():
        return tuple(np.broadcast_to(np.asarray(v), s.shape).copy() if np.ndim(v) < 2 else np.asarray(v)
                     for v, s in zip(compiled(fn.outputs, table)(env), state))


def batch_fold(loop: Loop, steps: list[tuple], params: dict, state: tuple, table: dict = NUMPY) -> tuple:
    """The states after `steps`; `table` NUMPY (IEEE) or NUMPY_REALS (the proofs'
    division: a list that divides by zero gets NaN, as in the proofs)."""
    for e in steps:
        state = batch_step(loop.left, state, e, params, table)
    return state


def batch_combine(combine: Fn, a: tuple, b: tuple, params: dict, outputs=None) -> list:
    names = [n for n, _ in combine.inputs]
    k = len(a)
    env = dict(zip(names[:k], a)) | dict(zip(names[k:2 * k], b)) | params
    with quiet():
        return evaluate(combine.outputs if outputs is None else outputs, env, NUMPY)


@dataclass
class Triples:
    """Reachable states A = h(xs), B = h(ys) and C = h(xs + ys), batched by rows, for one
    setting of the loop parameters."""
    params: dict
    a: tuple
    b: tuple
    c: tuple


def _concat(states: list[tuple]) -> tuple:
    return tuple(np.concatenate(cols, axis=0) for cols in zip(*states))


def make_triples(loop: Loop, *, seed: int = 0, rows: int = 24, max_len: int = 5,
                 param_sets: int = 3, dim: int = 3, table: dict = NUMPY_REALS) -> list[Triples]:
    """Pairs of lists of every length combination up to `max_len` (empty lists
    included), small integer-like values and general reals mixed.  An `Index`
    parameter is part of the element: ys keep their positions in xs + ys.  The folds
    use the proofs' division by default (x / 0 is NaN, as the laws read it; a
    candidate combine is held to the semantics it will be proved in); `table=NUMPY` gives
    IEEE states (stability, which is about the emitted code)."""
    from thm3.semantics.critical import counter_length
    rng = np.random.default_rng(seed)
    dom = Domain(loop, dim)
    out = []
    # lists long enough for a counter to reach the constant it is compared with
    long = counter_length(loop)
    lengths = [(la, lb) for la in range(max_len + 1) for lb in range(max_len + 1) if la + lb <= max_len + 2]
    if long > max_len:
        lengths += [(long, 0), (0, long), (long, 1), (1, long), (long // 2, long - long // 2), (long, long)]
    for p_i in range(param_sets):
        params = _signed(dom, dom.params(rng, small=p_i < 2), (1, -1, 1)[p_i % 3])
        params = {k: (np.asarray(v) if isinstance(v, np.ndarray) else v) for k, v in params.items()}
        parts_a, parts_b, parts_c = [], [], []
        for la, lb in lengths:
            small = (la + lb) % 2 == 0 or p_i == 0
            xs = dom.random_lists(rng, params, rows, la, small)
            ys = dom.random_lists(rng, params, rows, lb, small, start=la)
            init = batch_init(loop, rows, dim)
            a = batch_fold(loop, stack_elements(loop, xs), params, init, table)
            c = batch_fold(loop, stack_elements(loop, ys), params, a, table)
            b = batch_fold(loop, stack_elements(loop, ys), params, batch_init(loop, rows, dim), table)
            parts_a.append(a)
            parts_b.append(b)
            parts_c.append(c)
        out.append(Triples(params, _concat(parts_a), _concat(parts_b), _concat(parts_c)))
    return out


def _signed(dom: Domain, params: dict, sign: int) -> dict:
    """The drawn scalar loop parameters with the given sign (so that the settings see
    both sides of 0), where the preconditions allow it."""
    out = {k: (sign * abs(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v)
           for k, v in params.items()}
    return out if dom.precondition_holds(None, out, params_only=True) else params


def random_arrays(loop: Loop, n: int, dim: int, rng: np.random.Generator,
                  fixed: dict | None = None) -> tuple[list, dict]:
    """Arrays of n elements, one per element parameter (an Index is implicit), drawn
    honouring the preconditions, and loop parameters: inputs for the parallel forms.
    `fixed` gives some loop parameters their values; the others are drawn."""
    dom = Domain(loop, dim)
    params = dom.params(rng, small=False) | dict(fixed or {})
    pool = dom.random_list(rng, params, min(n, 4096), small=rng.random() < 0.5) if n else []
    picks = rng.integers(0, len(pool), size=n) if pool else np.zeros(0, dtype=int)
    arrays = []
    for j, d in enumerate(loop.elements):
        if d.index:
            continue
        if not pool:
            arrays.append(np.zeros((0, dim)) if d.type is Type.VEC else np.zeros(0))
            continue
        col = np.asarray([e[j] for e in pool])
        arrays.append(col[picks])
    return arrays, params
