"""Synthesis route "weak right inverse" (Morita, Morihata, Matsuzaki, Hu, Takeichi, PLDI
2007): a short list g(t) with h(g(t)) = t on reachable states t gives
combine(a, b) = foldl(left, a, g(b)), which is a combine whenever h is a homomorphism.

g is constructed first: for k = 1 .. #fields + 1, h([e1 .. ek]) is evaluated
symbolically from init, one feasible path of `left`'s branches at a time (Z3 decides
the branches, under the elements' preconditions), and on each path the equations
h([e1 .. ek]) = t are solved for the elements with SymPy; each solution, an expression of
t's fields, is a candidate g.  Where none comes out, short lists of field terms (a field,
its negation, the difference of two fields) are searched.  Every candidate is folded
from init on every sampled reachable state t at once (prefixes shared) and kept only if
it gives t back.  The combine is `left` unrolled over g(b), spelled with the stability
guards; the prover then proves it like any other.  Where no list gives t back, the
reason says why: a field that k elements cannot reach (a softmax sum d reaches more
than k on the samples, but k elements give d <= k) leaves no bounded inverse."""
from __future__ import annotations

import itertools
import time

import numpy as np
import sympy as sp
import z3

from thm3.ir import Expr, Fn, Loop, Op, Type, substitute, var
from thm3.semantics.evaluate import NUMPY, evaluate, quiet
from thm3.semantics.equality import rows_close
from thm3.semantics.samples import Triples, batch_init
from thm3.semantics.sympy_table import to_ir
from thm3.errors import Thm3Error
from thm3.synth.check import guard_for_stability

MAX_SEQUENCES = 6000        # lists tried, over all lengths
PROBE_ROWS = 48


class Failed(Thm3Error):
    """No weak right inverse of the searched shape; the message says why."""


def _terms(loop: Loop, type_: Type) -> list[Expr]:
    """Terms over t's fields that may stand for an element of this type."""
    fits = [f for f in loop.fields if (f.type is type_) or (type_ is Type.REAL and f.type is Type.INT)]
    if type_ is Type.BOOL:
        return [var(f"b.{f.name}", f.type) for f in fits] + [Expr(Op.CONST, Type.BOOL, (), v) for v in (True, False)]
    out = [var(f"b.{f.name}", f.type) for f in fits]
    if type_ in (Type.REAL, Type.VEC):
        out += [Expr(Op.NEG, t.type, (t,)) for t in out]
        reals = [var(f"b.{f.name}", f.type) for f in fits]
        out += [Expr(Op.SUB, type_, (x, y)) for x, y in itertools.permutations(reals, 2)]
    return out


def own_list(loop: Loop, triples: list[Triples], deadline: float) -> tuple[Fn, str]:
    """The state as its own list: g(t) = t's fields of the element's type, in field order
    or reversed, where that gives every sampled state back.  The k smallest or largest
    (duplicates counted or not, as an if-chain or a min/max insertion network) and the
    last k elements are such states: one pass over the samples decides it, with no
    symbolic fold (a network of k min/max steps has more paths than those solve)."""
    orders = own_list_orders(loop)
    if not orders:
        raise Failed("the state is no list of the element's values (one element, no position, "
                     "two fields or more of its type, and nothing else)")
    probes = [_Rows(loop, t, slice(0, PROBE_ROWS)) for t in triples]
    full = [_Rows(loop, t, slice(None)) for t in triples]
    types = {f.name: f.type for f in loop.fields}
    for order in orders:
        if time.monotonic() > deadline:
            break
        g = [(var(f"b.{name}", types[name]),) for name in order]
        if all(r.gives_back(g) for r in probes) and all(r.gives_back(g) for r in full):
            return unrolled(loop, g), "weak right inverse g(t) = " + _show(g) + " (the state is its own list)"
    raise Failed("folding t's own fields (in order or reversed) does not give the sampled states back")


def counted_list(loop: Loop, triples: list[Triples], deadline: float) -> tuple[Fn, str]:
    """The state as its own list with multiplicities: k >= 2 value fields of the element's
    (Real) type and k Int count fields, paired in field order (the two largest distinct
    values with how often each came).  Folding b's value v_j c_j times into a is `left`
    once with v_j and then the count of the slot that holds v_j raised by c_j - 1 (a value
    held once: its repeats take the "equal" branch), nothing where c_j is 0; b's slots go
    in from the last to the first.  Kept only where it agrees with h(xs + ys) on the
    samples; the prover decides."""
    from thm3.ir import Expr, const
    from thm3.ir.simplify import simplify
    if len(loop.elements) != 1 or loop.elements[0].index or loop.elements[0].type is not Type.REAL:
        raise Failed("no list with multiplicities: one Real element is needed")
    values = [f for f in loop.fields if f.type is Type.REAL]
    counts = [f for f in loop.fields if f.type is Type.INT]
    if len(values) < 2 or len(values) != len(counts) or len(values) + len(counts) != len(loop.fields):
        raise Failed("no list with multiplicities: k >= 2 Real value fields and k Int count fields are needed")
    (d,) = loop.elements
    names = [f.name for f in loop.fields]
    state = {f.name: var(f"a.{f.name}", f.type) for f in loop.fields}
    memo: dict = {}
    for v_f, c_f in reversed(list(zip(values, counts))):
        if time.monotonic() > deadline:
            raise Failed("out of time in the list with multiplicities")
        v, c = var(f"b.{v_f.name}", Type.REAL), var(f"b.{c_f.name}", Type.INT)
        mapping = {f"acc.{n}": state[n] for n in names} | {d.name: v}
        once = dict(zip(names, substitute(loop.left.outputs, mapping)))
        more = Expr(Op.SUB, Type.INT, (c, const(1, Type.INT)))
        for vv, cc in zip(values, counts):
            held = Expr(Op.EQ, Type.BOOL, (once[vv.name], v))
            once[cc.name] = Expr(Op.WHERE, Type.INT, (held, Expr(Op.ADD, Type.INT, (once[cc.name], more)), once[cc.name]))
        empty = Expr(Op.EQ, Type.BOOL, (c, const(0, Type.INT)))
        state = {n: simplify(Expr(Op.WHERE, state[n].type if state[n].type is once[n].type else Type.REAL,
                                  (empty, state[n], once[n])), memo=memo) for n in names}
    inputs = tuple((f"a.{f.name}", f.type) for f in loop.fields) + \
        tuple((f"b.{f.name}", f.type) for f in loop.fields) + tuple((p.name, p.type) for p in loop.params)
    fn = Fn(inputs, tuple(state[n] for n in names))
    from thm3.synth import agrees
    if not agrees(loop, fn, triples):
        raise Failed("folding b's values with their counts into a disagrees with h(xs + ys) on the samples")
    pairs = ", ".join(f"({v.name}, {c.name})" for v, c in zip(values, counts))
    return fn, f"b's values folded into a with their counts {pairs} (the state is its own list with multiplicities)"


def own_list_orders(loop: Loop) -> list[list[str]]:
    """The field orders `own_list` tries: every field, in order and reversed, where the
    step reads one element (no position) and every field has the element's type."""
    if len(loop.elements) != 1 or loop.elements[0].index:
        return []
    (d,) = loop.elements
    if len(loop.fields) < 2 or any(f.type is not d.type for f in loop.fields):
        return []
    names = [f.name for f in loop.fields]
    return [names, names[::-1]]


def synthesize(loop: Loop, triples: list[Triples], deadline: float) -> tuple[Fn, str]:
    k_max = len(loop.fields) + 1
    # rows: the sampled reachable states t = h(ys), with their loop parameters
    probes = [_Rows(loop, t, slice(0, PROBE_ROWS)) for t in triples]
    full = [_Rows(loop, t, slice(None)) for t in triples]
    solved = _Constructive(loop, k_max, deadline)
    for g in solved.candidates():
        if time.monotonic() > deadline:
            break
        if _fits(loop, g, probes, full, triples):
            return unrolled(loop, g), "weak right inverse g(t) = " + _show(g) + \
                " (h([e1 .. ek]) = t solved on a path of left)"
    try:
        return _search(loop, deadline, probes, full, triples)
    except Failed as e:
        try:
            return _piecewise(loop, deadline, full)
        except Failed as e2:
            bound = solved.bound(full)
            why = f"{e}; {e2}"
            raise Failed(f"{bound}; {why}" if bound else f"h([e1 .. ek]) = t {solved.summary()}; {why}") from None


def _fits(loop: Loop, g, probes, full, triples) -> bool:
    """Whether folding g from init gives every sampled state back, and g's elements meet
    the loop's preconditions or else foldl(left, a, g(b)) agrees with h(xs + ys) on the
    samples: a g outside the preconditions may still give the combine (a capped sum's
    [t.n] with steps of 1 to 3; the largest logs' exp(-inf) = 0 at the initial state), or
    not (the recency list's [t.r2, t.r1] with r2 at its empty -1, folded into a full a)."""
    if not (all(r.gives_back(g) for r in probes) and all(r.gives_back(g) for r in full)):
        return False
    if all(r.meets_preconditions(g) for r in full):
        return True
    from thm3.synth import agrees
    return agrees(loop, unrolled(loop, g), triples)


MAX_PIECES = 6


def _piecewise(loop: Loop, deadline: float, full) -> tuple[Fn, str]:
    """g by cases on which fields still hold their initial value (the two most recent
    distinct values: none, one or two of them so far): for each such pattern among the
    sampled states, the shortest list over the fields that gives back those states (the
    empty list where every field is at its initial value), and the combine
    foldl(left, a, g(b)) chosen by b's pattern.  The last pattern found takes the other
    cases too; the prover decides the whole."""
    from thm3.ir import initial_state
    init = list(initial_state(loop))
    scalar = [i for i, f in enumerate(loop.fields) if f.type is not Type.VEC]
    masks = []                               # per triple set: row -> pattern
    for r in full:
        at = np.stack([np.all(rows_close(np.broadcast_to(np.asarray(init[i].arg, dtype=float), r.t[i].shape),
                                         r.t[i]).reshape(r.t[i].shape[0], -1), axis=1) for i in scalar], axis=1)
        masks.append(at)
    patterns = sorted({tuple(bool(v) for v in row) for m in masks for row in m}, key=lambda p: -sum(p))
    varies = [j for j in range(len(scalar)) if len({p[j] for p in patterns}) > 1]
    if len(patterns) < 2 or len(patterns) > MAX_PIECES or not varies:
        raise Failed(f"{len(patterns)} patterns of fields at their initial value on the samples: no inverse by cases")
    per_param = [_terms(loop, Type.INT if d.index else d.type) for d in loop.elements]
    elements = list(itertools.product(*per_param))
    k_max = len(loop.fields) + 1
    pieces = []
    for pat in patterns:
        rows = [np.all(m == np.array(pat), axis=1) for m in masks]
        if all(pat):
            pieces.append((pat, []))
            continue
        found = None
        for k in range(1, k_max + 1):
            if len(elements) ** k > MAX_SEQUENCES:
                break
            for seq in itertools.product(range(len(elements)), repeat=k):
                if time.monotonic() > deadline:
                    raise Failed("out of time in the inverse by cases")
                g = [elements[j] for j in seq]
                if all(r.gives_back(g, rows=m, preconditions=True) for r, m in zip(full, rows)):
                    found = g
                    break
            if found is not None:
                break
        if found is None:
            raise Failed(f"no list over the fields gives back the states with fields at init {pat}")
        pieces.append((pat, found))
    combines = [unrolled(loop, g) if g else None for _, g in pieces]
    names = tuple((f"a.{f.name}", f.type) for f in loop.fields) + \
        tuple((f"b.{f.name}", f.type) for f in loop.fields) + tuple((d.name, d.type) for d in loop.params)
    outs = []
    for i, f in enumerate(loop.fields):
        out = combines[-1].outputs[i] if combines[-1] is not None else var(f"a.{f.name}", f.type)
        for (pat, _), fn in zip(reversed(pieces[:-1]), reversed(combines[:-1])):
            conds = [Expr(Op.EQ if pat[j] else Op.NE, Type.BOOL,
                          (var(f"b.{loop.fields[scalar[j]].name}", loop.fields[scalar[j]].type), init[scalar[j]]))
                     for j in varies]
            cond = conds[0]
            for c in conds[1:]:
                cond = Expr(Op.AND, Type.BOOL, (cond, c))
            then = fn.outputs[i] if fn is not None else var(f"a.{f.name}", f.type)
            t = Type.REAL if Type.REAL in (then.type, out.type) else then.type
            out = Expr(Op.WHERE, t, (cond, then, out))
        outs.append(out)
    show = "; ".join(f"{_show(g) if g else '[]'} where " + ", ".join(
        f"{loop.fields[scalar[j]].name} {'==' if pat[j] else '!='} {init[scalar[j]]!r}" for j in varies)
        for pat, g in pieces)
    return Fn(names, tuple(outs)), "weak right inverse by cases on the fields at their initial value: " + show


def _show(g) -> str:
    return "[" + ", ".join(("(" + ", ".join(map(repr, e)) + ")") if len(e) > 1 else repr(e[0]) for e in g) + "]"


def _search(loop: Loop, deadline: float, probes, full, triples) -> tuple[Fn, str]:
    per_param = [_terms(loop, Type.INT if d.index else d.type) for d in loop.elements]
    if any(not t for t in per_param):
        raise Failed("an element parameter has no field of its type to be read from")
    elements = list(itertools.product(*per_param))
    k_max = len(loop.fields) + 1
    tried = 0
    for k in range(1, k_max + 1):
        if len(elements) ** k + tried > MAX_SEQUENCES:
            raise Failed(f"no list of up to {k - 1} element(s) over the fields gives the state back; "
                         f"{len(elements)}^{k} lists of length {k} are more than searched")
        for seq in itertools.product(range(len(elements)), repeat=k):
            if time.monotonic() > deadline:
                raise Failed(f"out of time after {tried} lists")
            tried += 1
            g = [elements[j] for j in seq]
            if _fits(loop, g, probes, full, triples):
                return unrolled(loop, g), "weak right inverse g(t) = " + _show(g)
    raise Failed(f"no list of up to {k_max} element(s) over the fields (a field, its negation, a difference) "
                 f"gives the state back on the samples ({tried} lists)")


class _Rows:
    """Sampled states t of one triple set, and folds from init over terms of t."""

    def __init__(self, loop: Loop, t: Triples, rows: slice):
        self.loop = loop
        self.t = tuple(x[rows] for x in t.b)
        self.params = t.params
        self.env = {f"b.{f.name}": v for f, v in zip(loop.fields, self.t)} | dict(t.params)
        n = self.t[0].shape[0]
        width = self.t[-1].shape[-1] if loop.fields[-1].type is Type.VEC else 3
        init = batch_init(loop, n, width)
        self.init = tuple(np.broadcast_to(i, x.shape).copy() for i, x in zip(init, self.t))
        self.cache: dict = {}
        self.term_values: dict = {}

    def _value(self, e: Expr):
        got = self.term_values.get(e)
        if got is None:
            with quiet():
                got = self.term_values[e] = np.broadcast_to(evaluate([e], self.env, NUMPY)[0], self.t[0].shape[:1] + (1,)) \
                    if e.type is not Type.VEC else evaluate([e], self.env, NUMPY)[0]
        return got

    def fold(self, g) -> tuple:
        key = tuple(tuple(map(repr, e)) for e in g)
        got = self.cache.get(key)
        if got is not None:
            return got
        prev = self.init if len(g) == 1 else self.fold(g[:-1])
        names = [n for n, _ in self.loop.left.inputs]
        k = len(self.loop.fields)
        env = dict(zip(names[:k], prev)) | {d.name: self._value(x) for d, x in zip(self.loop.elements, g[-1])}
        env |= self.params
        with quiet():
            out = tuple(evaluate(self.loop.left.outputs, env, NUMPY))
        self.cache[key] = out
        return out

    def meets_preconditions(self, g, rows=None) -> bool:
        """Every element of g meets the loop's preconditions (on `rows` where given): g(t)
        is a list the loop accepts, or h(g(a) + g(b)) says nothing of the combine."""
        n = self.t[0].shape[0]
        for e in g:
            env = {d.name: self._value(x) for d, x in zip(self.loop.elements, e)} | dict(self.params)
            with quiet():
                vals = evaluate(list(self.loop.preconditions), env, NUMPY)
            for v in vals:
                ok = np.broadcast_to(np.asarray(v, dtype=bool).reshape(-1, 1)[:, 0] if np.ndim(v) else
                                     np.asarray(v, dtype=bool), (n,))
                if not bool(np.all(ok if rows is None else ok[rows])):
                    return False
        return True

    def gives_back(self, g, rows=None, preconditions: bool = False) -> bool:
        """Whether folding g from init gives every sampled state back (those of `rows`, a
        mask, where given), with elements that meet the loop's preconditions where
        `preconditions` is set (the inverse by cases: its last piece takes every other
        case, so a piece must be a list the loop accepts)."""
        got = self.fold(g)
        if preconditions and self.loop.preconditions and not self.meets_preconditions(g, rows):
            return False
        for v, want in zip(got, self.t):
            ok = rows_close(np.broadcast_to(v, want.shape), want)
            if rows is not None:
                ok = np.asarray(ok).reshape(want.shape[0], -1)[rows]
            if not bool(np.all(ok)):
                return False
        return True


def unrolled(loop: Loop, g) -> Fn:
    """foldl(left, a, g(b)) as one term per field."""
    from thm3.ir.simplify import simplify
    state = [var(f"a.{f.name}", f.type) for f in loop.fields]
    for e in g:
        mapping = {f"acc.{f.name}": s for f, s in zip(loop.fields, state)}
        mapping |= {d.name: x for d, x in zip(loop.elements, e)}
        state = list(substitute(loop.left.outputs, mapping))
    names = tuple((f"a.{f.name}", f.type) for f in loop.fields) + \
        tuple((f"b.{f.name}", f.type) for f in loop.fields) + tuple((d.name, d.type) for d in loop.params)
    g_memo, f_memo = {}, {}
    state = [_log_exp(s, {}) for s in state]
    return Fn(names, tuple(simplify(guard_for_stability(s, loop, g_memo), arithmetic=False, memo=f_memo) for s in state))


def _log_exp(e: Expr, memo: dict) -> Expr:
    """log(exp(u)) is u (over the extended reals too: exp(-inf) = 0, log(0) = -inf): an
    element g solved as exp(t) that `left` reads through log."""
    got = memo.get(id(e))
    if got is not None:
        return got
    src = tuple(_log_exp(x, memo) for x in e.src)
    out = e if all(a is b for a, b in zip(src, e.src)) else Expr(e.op, e.type, src, e.arg)
    if out.op is Op.LOG and out.src[0].op is Op.EXP:
        out = out.src[0].src[0]
    memo[id(e)] = out
    return out


# -- the constructive inverse: h([e1 .. ek]) = t solved path by path -------------------

MAX_PATHS = 96              # paths of one symbolic fold
MAX_SOLVE_OPS = 400         # SymPy has no timeout: larger systems are not attempted


class _Constructive:
    """Symbolic folds h([e1 .. ek]) from init, their paths, and the solutions of
    h([e1 .. ek]) = t for the elements on each path."""

    def __init__(self, loop: Loop, k_max: int, deadline: float):
        self.loop = loop
        self.k_max = k_max
        self.deadline = deadline
        self.types = {f"b.{f.name}": f.type for f in loop.fields} | {d.name: d.type for d in loop.params}
        self.t = {f.name: sp.Symbol(f"t_{i}", real=True) for i, f in enumerate(loop.fields)}
        self.back = {s: var(f"b.{name}", next(f.type for f in loop.fields if f.name == name))
                     for name, s in self.t.items()}
        self.folds: dict[int, list] = {}      # k -> [(path conditions, symbolic state)]
        self.notes: list[str] = []
        self.facts: dict[int, list] = {}     # k -> the hypotheses and exp/log axioms of its fold

    def _fold(self, k: int) -> list:
        from thm3.errors import SolverTimeout
        from thm3.prove.laws import apply_fn, initial
        from thm3.semantics.symbolic import Explorer, SymbolicTable, Symbols
        loop = self.loop
        syms = Symbols()
        elems = [[syms.real(f"e{j}.{d.name}", d.type) for d in loop.elements] for j in range(k)]
        params = {d.name: syms.real(d.name, d.type) for d in loop.params}
        pre_ex = Explorer([], self.deadline)
        pre_table = SymbolicTable(pre_ex, lazy=True)
        hyps = list(syms.hyps)
        for j, e in enumerate(elems):
            env = {d.name: v for d, v in zip(loop.elements, e)} | params
            for pre in loop.preconditions:
                v = evaluate([pre], env, pre_table)[0]
                if v is False:
                    return []
                if not isinstance(v, bool):
                    hyps.append(v)
        ex = Explorer(hyps + pre_ex.side, self.deadline, check_ms=500)
        table = SymbolicTable(ex, lazy=False)
        out = []
        try:
            for _ in ex.paths():
                state = initial(loop)
                for e in elems:
                    state = apply_fn(table, loop.left, state + list(e), params)
                out.append((list(ex.path), state, elems))
                self.facts[k] = list(ex.base) + list(ex.side)
                if len(out) >= MAX_PATHS or time.monotonic() > self.deadline:
                    self.notes.append(f"k = {k}: more than {len(out)} paths, the rest not solved")
                    break
        except SolverTimeout:
            pass
        self.folds[k] = out
        return out

    def candidates(self):
        """Each distinct solution g of h([e1 .. ek]) = t (k = 1, 2, ...), as IR terms of b."""
        from thm3.semantics.symbolic import Fin, Inf
        seen: set[tuple] = set()
        for k in range(1, self.k_max + 1):
            if time.monotonic() > self.deadline:
                return
            for path, state, elems in self._fold(k):
                if time.monotonic() > self.deadline:
                    return
                # an Index is unknown too: b's positions are already those of the whole list;
                # a Bool element is no unknown of the algebra: its path decides it
                eqs, unknowns = [], [v.sp for e in elems for v in e if not isinstance(v, z3.BoolRef)]
                ok = True
                for f, v in zip(self.loop.fields, state):
                    if isinstance(v, Fin) and v.sp is not None:
                        eqs.append(sp.Eq(v.sp, self.t[f.name]))
                    elif isinstance(v, Inf) or isinstance(v, bool) or v is None:
                        continue                # a condition on t, not an equation
                    else:
                        ok = False              # NaN or a Z3-only term: no algebra here
                if not ok or not eqs or not unknowns:
                    continue
                if sum(sp.count_ops(q) for q in eqs) > MAX_SOLVE_OPS:
                    continue
                try:
                    sols = sp.solve(eqs, unknowns, dict=True)
                except (NotImplementedError, TypeError, ValueError, RecursionError):
                    continue
                for sol in sols:
                    g = self._as_list(sol, elems, path)
                    if g is None:
                        continue
                    key = tuple(g)          # tuples of interned nodes: equal lists are equal keys
                    if key not in seen:
                        seen.add(key)
                        yield g

    def _as_list(self, sol: dict, elems, path: list) -> list | None:
        """The elements of one solution as IR terms of b's fields (an element the
        equations leave free is 0; a Bool element the value its path forces, else
        False: the candidate is checked on the samples all the same)."""
        out = []
        free = {v.sp: sp.Integer(0) for e in elems for v in e if not isinstance(v, z3.BoolRef)}
        for e in elems:
            row = []
            for d, v in zip(self.loop.elements, e):
                if isinstance(v, z3.BoolRef):
                    row.append(Expr(Op.CONST, Type.BOOL, (), _forced(v, path)))
                    continue
                val = sp.sympify(sol.get(v.sp, v.sp)).subs(free)
                if not val.free_symbols <= set(self.t.values()) | {s for s in val.free_symbols
                                                                     if str(s) in self.types}:
                    return None
                try:
                    row.append(to_ir(val, self.types, back=self.back, want=Type.INT if d.index else d.type))
                except ValueError:
                    return None
            out.append(tuple(row))
        return out

    def bound(self, rows) -> str:
        """Why no bounded inverse exists, where a field is bounded by the number of
        elements on every path of h([e1 .. ek]) but the sampled states exceed it."""
        from thm3.semantics.symbolic import Fin
        k = self.k_max
        folds = self.folds.get(k)
        if not folds or any("more than" in n for n in self.notes):
            return ""
        for i, f in enumerate(self.loop.fields):
            if f.type not in (Type.REAL, Type.INT):
                continue
            top = max((float(np.nanmax(np.where(np.isfinite(r.t[i]), r.t[i], -np.inf))) for r in rows
                       if r.t[i].size), default=-np.inf)
            if not top > k:
                continue
            bounded = True
            for path, state, _ in folds:
                v = state[i]
                if not isinstance(v, Fin):
                    bounded = False
                    break
                s = z3.Solver()
                s.set("timeout", 500)
                s.add(*self.facts.get(k, []), *path, v.z3 > k)
                if s.check() != z3.unsat:
                    bounded = False
                    break
            if bounded:
                return (f"no bounded weak right inverse: {f.name} reaches {top:g} on sampled states "
                        f"but {k} elements give {f.name} <= {k}")
        return ""

    def summary(self) -> str:
        paths = sum(len(v) for v in self.folds.values())
        more = "; " + "; ".join(self.notes) if self.notes else ""
        return f"has no solution that gives the sampled states back ({paths} path(s) for k <= {self.k_max}{more})"


def _forced(b: z3.BoolRef, path: list) -> bool:
    """True where the path's conditions force the Bool element `b`, else False."""
    s = z3.Solver()
    s.set("timeout", 200)
    s.add(*path, z3.Not(b))
    return s.check() == z3.unsat
