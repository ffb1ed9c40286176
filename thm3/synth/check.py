"""The services every synthesis route needs: `Checker`, which evaluates candidate terms
on the batched reachable samples and compares them with h(xs + ys), and
`guard_for_stability`, which spells a combine so that its identity makes no NaN.  The
sketch, the own-list, interpolation, transport, inverse and tidy routes use them; none
of them owns them."""
from __future__ import annotations

import functools

import numpy as np

from thm3.ir import Expr, Fn, Loop, Op, Type, const, walk
from thm3.semantics.equality import SAMPLED, close, rows_close
from thm3.semantics.evaluate import NUMPY, Memo, evaluate, quiet, rows
from thm3.semantics.samples import Triples, batch_combine


@functools.lru_cache(maxsize=None)
def fold_fn(op):
    """The NumPy function of a monoid fold `op(v, b.g)` (a pair (ADD, m): the sum modulo m)."""
    if isinstance(op, tuple):
        m = op[1]
        return lambda a, b: np.mod(np.add(a, b), m)
    return NUMPY[op]


def guard_for_stability(e: Expr, loop: Loop, memo: dict | None = None) -> Expr:
    """Spell the combine so the identity makes no NaN: exp(x - M) with M a max over x
    becomes `1 if x == M else exp(x - M)` (the side that holds the max takes the factor
    1 exactly, so -inf - -inf is never taken), and a division by a sum of counts that
    can be 0 is selected away when it is 0.  `memo` may be shared between calls so
    that equal inputs give the same output objects."""
    memo = {} if memo is None else memo

    def max_args(m: Expr) -> list[Expr]:
        if m.op is Op.MAX:
            return max_args(m.src[0]) + max_args(m.src[1])
        return [m]

    def guarded_already(x: Expr) -> bool:
        if x.op is not Op.WHERE or x.src[0].op is not Op.EQ:
            return False
        inner = x.src[2]
        return (inner.op is Op.DIV and inner.src[1] is x.src[0].src[0]) or \
            (inner.op in (Op.EXP, Op.EXP2) and inner.src[0].op is Op.SUB and inner.src[0].src[1] is x.src[0].src[1])

    def go(x: Expr) -> Expr:
        got = memo.get(id(x))
        if got is not None and got[0] is x:
            return got[1]
        if guarded_already(x):
            memo[id(x)] = (x, x)
            return x
        src = tuple(go(s) for s in x.src)
        out = x if all(a is b for a, b in zip(src, x.src)) else Expr(x.op, x.type, src, x.arg)
        if out.op in (Op.EXP, Op.EXP2) and out.src[0].op is Op.SUB:
            lhs, mx = out.src[0].src
            if mx.op is Op.MAX and any(lhs is t for t in max_args(mx)):
                one = const(1.0)
                out = Expr(Op.WHERE, out.type, (Expr(Op.EQ, Type.BOOL, (lhs, mx)), one, out))
        if out.op is Op.DIV and any(v.op is Op.VAR and v.arg[:2] in ("a.", "b.") for v in walk([out.src[1]])):
            den = out.src[1]
            zero = const(0.0) if den.type is not Type.INT else const(0)
            out = Expr(Op.WHERE, out.type, (Expr(Op.EQ, Type.BOOL, (den, zero)), const(0.0), out))
        memo[id(x)] = (x, out)
        return out

    return go(e)


class Checker:
    """Evaluates terms on the batched samples and compares with h(xs + ys)."""

    def __init__(self, names, triples: list[Triples], field: int, probe: bool = True):
        self.names, self.triples, self.field = names, triples, field
        # A few rows of every block of list lengths: most candidates fail there, cheaply.
        self.small = Checker(names, [_rows(t, slice(None, None, 12)) for t in triples], field,
                              probe=False) if probe else None

    def passes(self, e: Expr) -> bool:
        return self.small.agrees(self.small.values(e)) and self.agrees(self.values(e))

    def leaf(self, e: Expr) -> list:
        """Values of a small term (a field of b, a condition), computed once."""
        leaves = self.__dict__.setdefault("_leaves", {})
        got = leaves.get(id(e))
        if got is None or got[0] is not e:
            with quiet():
                got = leaves[id(e)] = (e, [evaluate([e], self._env(t), NUMPY)[0] for t in self.triples])
        return got[1]

    def _operands(self, folds, op, js, t_i: int, shape):
        """The operands b.g of the folds `js` (all of one op) on triple t_i, stacked on
        axis 1: the same for every candidate, so stacked once."""
        cache = self.__dict__.setdefault("_stacked", {})
        key = (id(folds), op, t_i)
        got = cache.get(key)
        if got is None or got[0] is not folds:
            got = cache[key] = (folds, np.stack([np.broadcast_to(self.leaf(folds[j][1])[t_i], shape)
                                                 for j in js], axis=1))
        return got[1]

    def fold_hits(self, vals, folds) -> list[int]:
        """Indices of the folds op(V, b.g) that agree, all operands of one op at once."""
        hits = []
        by_op: dict = {}
        for j, (op, bg) in enumerate(folds):
            by_op.setdefault(op, []).append(j)
        with quiet():
            for op, js in by_op.items():
                ok = np.ones(len(js), dtype=bool)
                for t_i, t in enumerate(self.triples):
                    v = np.asarray(vals[t_i])
                    want = t.c[self.field]
                    try:
                        ops = self._operands(folds, op, js, t_i, want.shape)
                        got = fold_fn(op)(np.broadcast_to(v, want.shape)[:, None], ops)
                        same = close(got, np.broadcast_to(want[:, None], got.shape), SAMPLED)
                    except (ValueError, TypeError):
                        ok[:] = False
                        break
                    ok &= same.reshape(same.shape[0], same.shape[1], -1).all(axis=(0, 2))
                    if not ok.any():
                        break
                hits += [j for j, good in zip(js, ok) if good]
        return sorted(hits)

    def _env(self, t: Triples) -> dict:
        k = len(t.a)
        return dict(zip((n for n, _ in self.names[:k]), t.a)) | \
            dict(zip((n for n, _ in self.names[k:2 * k]), t.b)) | t.params

    def values(self, e: Expr):
        if self.small is None:
            return self._values_memo(e)
        out = []
        with quiet():
            for t in self.triples:
                try:
                    out.append(evaluate([e], self._env(t), NUMPY)[0])
                except (ValueError, TypeError, OverflowError):
                    return None
        return out

    def _values_memo(self, e: Expr):
        """Values on every triple, remembering each node: candidates share most of their
        subterms, so a new candidate costs only its new nodes (the probe rows are few)."""
        if not hasattr(self, "_memo"):
            envs = [self._env(t) for t in self.triples]
            names = envs[0].keys() if envs else (n for n, _ in self.names)
            self._memo = Memo({n: [env[n] for env in envs] for n in names}, rows(NUMPY, len(envs)))
        with quiet():
            try:
                return self._memo.value(e)
            except (ValueError, TypeError, OverflowError):
                return None

    def apply(self, op: Op, vals, operand: Expr):
        if vals is None:
            return None
        with quiet():
            return [fold_fn(op)(v, w) for v, w in zip(vals, self.leaf(operand))]

    def select(self, cond: Expr, other: Expr, vals):
        if vals is None:
            return None
        with quiet():
            return [np.where(c, o, v) for v, c, o in zip(vals, self.leaf(cond), self.leaf(other))]

    def row_ok(self, vals) -> list | None:
        """Per triple, the rows on which `vals` equal h(xs + ys) (None: not comparable)."""
        if vals is None:
            return None
        out = []
        with quiet():
            for v, t in zip(vals, self.triples):
                want = t.c[self.field]
                try:
                    out.append(rows_close(np.broadcast_to(v, want.shape), want))
                except ValueError:
                    return None
        return out

    def guard_hits(self, guards):
        """A test of many pass-throughs `other if cond else V` at once, for one V: a
        function of V's values giving the indices k of the guards with which the
        selection agrees, the same answer as `agrees(select(cond, other, V))` for each.
        The selection agrees exactly when `other` agrees on the rows where cond holds
        and V on the others, so each guard's rows and its `other` are checked once;
        a guard whose `other` disagrees where its cond holds passes with no V.  None
        where the field is a vector (the selection then broadcasts otherwise)."""
        if any(t.c[self.field].shape[1:] not in ((), (1,)) for t in self.triples):
            return None
        live, conds = [], [[] for _ in self.triples]
        for k, (cond, other) in enumerate(guards):
            other_ok = self.row_ok(self.leaf(other))
            if other_ok is None:
                continue
            cs = []
            for t, c, o, ok in zip(self.triples, self.leaf(cond), self.leaf(other), other_ok):
                want = t.c[self.field]
                try:
                    if np.broadcast_shapes(np.shape(c), np.shape(o), want.shape) != want.shape:
                        break
                    cs.append(np.broadcast_to(np.asarray(c, dtype=bool), want.shape).reshape(want.shape[0]))
                except ValueError:
                    break
                if not bool(np.all(~cs[-1] | ok)):
                    break
            else:
                live.append(k)
                for j, c in enumerate(cs):
                    conds[j].append(c)
        if not live:
            return lambda row_oks: [[] for _ in row_oks]
        live_ = np.array(live)
        stacked = [np.stack(c) for c in conds]         # (live guards, rows) per triple

        def hits(row_oks: list) -> list[list[int]]:
            """For each V, given by its `row_ok` (None: no guard), the guards that pass."""
            out: list[list[int]] = [[] for _ in row_oks]
            ks = [i for i, r in enumerate(row_oks) if r is not None]
            if not ks:
                return out
            keep = np.ones((len(ks), len(live)), dtype=bool)
            for t_i, c in enumerate(stacked):
                rs = np.stack([row_oks[i][t_i] for i in ks])         # (Vs, rows)
                keep &= np.all(c[None, :, :] | rs[:, None, :], axis=2)
            for i, row in zip(ks, keep):
                out[i] = [int(k) for k in live_[row]]
            return out

        return hits

    def fold_rows(self, vals, folds) -> list:
        """For each fold op(V, b.g): the `row_ok` of `apply(op, vals, b.g)`, all
        operands of one op at once (None where they cannot be compared)."""
        out: list = [None] * len(folds)
        by_op: dict = {}
        for j, (op, bg) in enumerate(folds):
            by_op.setdefault(op, []).append(j)
        with quiet():
            for op, js in by_op.items():
                per: list = []
                for t_i, t in enumerate(self.triples):
                    want = t.c[self.field]
                    try:
                        ops = self._operands(folds, op, js, t_i, want.shape)
                        got = fold_fn(op)(np.broadcast_to(np.asarray(vals[t_i]), want.shape)[:, None], ops)
                        same = close(got, np.broadcast_to(want[:, None], got.shape), SAMPLED)
                    except (ValueError, TypeError):
                        break
                    per.append(same.reshape(same.shape[0], same.shape[1], -1).all(axis=2))   # (rows, folds)
                else:
                    for k, j in enumerate(js):
                        out[j] = [p[:, k] for p in per]
        return out

    def fold_hits_many(self, vals_list: list, folds) -> list[list[int]]:
        """`fold_hits` for many terms at once: the terms whose values have one dtype and
        shape on every triple are stacked and checked together (the same elementwise
        operations, so the same answers); the others one by one."""
        out: list = [None] * len(vals_list)
        groups: dict = {}
        for i, vals in enumerate(vals_list):
            try:
                key = tuple((np.asarray(v).dtype, _shaped(v, t.c[self.field].shape).shape)
                            for v, t in zip(vals, self.triples))
            except ValueError:
                out[i] = []                 # no fold of it has the field's shape
                continue
            groups.setdefault(key, []).append(i)
        by_op: dict = {}
        for j, (op, bg) in enumerate(folds):
            by_op.setdefault(op, []).append(j)
        for idx in groups.values():
            if len(idx) == 1:
                out[idx[0]] = self.fold_hits(vals_list[idx[0]], folds)
                continue
            hits: list[list[int]] = [[] for _ in idx]
            with quiet():
                for op, js in by_op.items():
                    ok = np.ones((len(idx), len(js)), dtype=bool)
                    for t_i, t in enumerate(self.triples):
                        want = t.c[self.field]
                        try:
                            vs = np.stack([_shaped(vals_list[i][t_i], want.shape) for i in idx])
                            ops = self._operands(folds, op, js, t_i, want.shape)
                            got = fold_fn(op)(vs[:, :, None], ops[None])
                            same = close(got, np.broadcast_to(want[None, :, None], got.shape), SAMPLED)
                        except (ValueError, TypeError):
                            ok[:] = False
                            break
                        ok &= same.reshape(len(idx), same.shape[1], same.shape[2], -1).all(axis=(1, 3))
                        if not ok.any():
                            break
                    for r, row in enumerate(ok):
                        hits[r] += [j for j, good in zip(js, row) if good]
            for r, i in enumerate(idx):
                out[i] = sorted(hits[r])
        return out

    def agrees_many(self, vals_list: list) -> list[bool]:
        """`agrees` for many terms at once: those whose values have one dtype and shape
        on every triple are stacked and compared together (the same elementwise
        comparison, so the same answers); the others one by one."""
        out = [False] * len(vals_list)
        groups: dict = {}
        for i, vals in enumerate(vals_list):
            if vals is None:
                continue
            groups.setdefault(tuple((np.asarray(v).dtype, np.shape(v)) for v in vals), []).append(i)
        for idx in groups.values():
            if len(idx) == 1:
                out[idx[0]] = self.agrees(vals_list[idx[0]])
                continue
            ok = np.ones(len(idx), dtype=bool)
            for t_i, t in enumerate(self.triples):
                want = t.c[self.field]
                try:
                    vs = np.stack([_shaped(vals_list[i][t_i], want.shape) for i in idx])
                except ValueError:
                    ok[:] = False
                    break
                same = close(vs, np.broadcast_to(want[None], vs.shape), SAMPLED)
                ok &= same.reshape(len(idx), -1).all(axis=1)
                if not ok.any():
                    break
            for i, good in zip(idx, ok):
                out[i] = bool(good)
        return out

    def agrees(self, vals) -> bool:
        if vals is None:
            return False
        for v, t in zip(vals, self.triples):
            want = t.c[self.field]
            try:
                if not bool(np.all(rows_close(np.broadcast_to(v, want.shape), want))):
                    return False
            except ValueError:
                return False
        return True


def _shaped(v, shape) -> np.ndarray:
    """v broadcast to `shape` (itself when it has that shape); ValueError if it cannot be."""
    a = np.asarray(v)
    return a if a.shape == shape else np.broadcast_to(a, shape)


def _rows(t: Triples, rows) -> Triples:
    return Triples(t.params, tuple(x[rows] for x in t.a), tuple(x[rows] for x in t.b),
                   tuple(x[rows] for x in t.c))


def _agrees(e: Expr, i: int, names, triples: list[Triples]) -> bool:
    fn = Fn(names, (e,))
    for t in triples:
        try:
            got = batch_combine(fn, t.a, t.b, t.params)[0]
        except (ValueError, TypeError, FloatingPointError, OverflowError):
            return False
        if not bool(np.all(rows_close(got, t.c[i]))):
            return False
    return True
