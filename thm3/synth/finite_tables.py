"""The combine's control part as a `where` chain (`thm3.synth.finite`): a table over pairs
of control states (a's, b's) split on one field at a time, the splits scored with NumPy,
with leaves that are constants or fields, or (`expr_tree`) the data's expressions; and the
small builders of linear forms the data's fits share."""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from thm3.ir import Expr, Op, Type, const, walk
from thm3.ir.simplify import simplify
from thm3.synth.finite_machine import Failed, Machine, plain_value


def table_tree(m: Machine, rows, values: dict, a: dict, b: dict, type_: Type, deadline: float | None = None) -> Expr:
    """A `where` chain over a's and b's control fields whose value on each row (a's
    state q, b's state r) is `values[(q, r)]`: split on one field at a time, with
    leaves that are constants or one of the fields (or its negation).  Both orders of
    the operands are tried; the smaller tree is kept."""
    ctrl = list(m.control)
    best = None
    for order in (("b", "a"), ("a", "b")):
        keys = [(side, k) for side in order for k in range(len(ctrl))]
        t = _split(m, rows, values, keys, a, b, type_, deadline)
        if best is None or _size(t) < _size(best):
            best = t
    return best


def _size(e: Expr) -> int:
    return len(walk([e]))


def _lookup(m: Machine, row, key):
    side, k = key
    q, r = row
    return m.states[q if side == "a" else r][k]


def _split(m: Machine, rows, values, keys, a, b, type_, deadline: float | None = None) -> Expr:
    """The tree of `table_tree` over `rows` (pairs (q, r) of state indices), split on `keys`,
    read off NumPy arrays of the rows' fields and values (a table of 111 states against
    111 is 12,321 rows)."""
    states = np.array([[float(v) for v in st] for st in m.states])
    q = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
    r = np.fromiter((row[1] for row in rows), dtype=np.int64, count=len(rows))
    v = np.array([float(values[row]) for row in rows])
    return _split_at(m, _Table(rows, values, states, q, r, v, {}), np.arange(len(rows)), keys, a, b, type_,
                     deadline)


@dataclass(frozen=True)
class _Table:
    rows: list          # (q, r) pairs
    values: dict        # (q, r) -> the value to table
    states: np.ndarray  # the control states' fields, as floats
    q: np.ndarray       # a's state index, a row
    r: np.ndarray       # b's state index, a row
    v: np.ndarray       # the value, a row, as a float
    memo: dict          # `simplify`'s, shared by the tree's `where`s: each branch is simplified once

    def column(self, key, idx: np.ndarray) -> np.ndarray:
        side, k = key
        return self.states[(self.q if side == "a" else self.r)[idx], k]


def _split_at(m: Machine, t: _Table, idx: np.ndarray, keys, a, b, type_, deadline) -> Expr:
    if deadline is not None and time.monotonic() > deadline:
        raise Failed("time ran out tabling the combine")
    v = t.v[idx]
    if np.all(v == v[0]):
        return const(plain_value(t.values[t.rows[idx[0]]], type_), type_)
    fields = m.loop.fields
    for key in keys:
        ref = (a if key[0] == "a" else b)[m.control[key[1]]]
        if ref.type is not type_:
            continue
        col = t.column(key, idx)
        if np.all(col == v):
            return ref
        if type_ is Type.BOOL and np.all(col != v):
            return Expr(Op.NOT, Type.BOOL, (ref,))
    for n, key in _gains(m, t, idx, keys, type_):
        col = t.column(key, idx)
        ref = (a if key[0] == "a" else b)[m.control[key[1]]]
        rest = keys[:n] + keys[n + 1:]
        if ref.type is Type.BOOL:
            return where(ref, _split_at(m, t, idx[col != 0], rest, a, b, type_, deadline),
                          _split_at(m, t, idx[col == 0], rest, a, b, type_, deadline), t.memo)
        seen = np.unique(col)
        plain = [plain_value(int(x) if fields[m.control[key[1]]].type is Type.INT else float(x), ref.type)
                 for x in seen]
        out = _split_at(m, t, idx[col == seen[-1]], rest, a, b, type_, deadline)
        for x, p in zip(reversed(seen[:-1]), reversed(plain[:-1])):
            test = Expr(Op.EQ, Type.BOOL, (ref, const(p, ref.type)))
            out = where(test, _split_at(m, t, idx[col == x], rest, a, b, type_, deadline), out, t.memo)
        return out
    raise Failed("the table is not a function of the control fields")


def _gains(m: Machine, t: _Table, idx: np.ndarray, keys, type_):
    """`_by_gain` on the rows `idx` of the table `t`."""
    codes, val = np.unique(t.v[idx], return_inverse=True)
    cols = {key: t.column(key, idx) for key in keys}
    return _scored(m, cols, val, len(codes), t.v[idx], keys, type_)


def _by_gain(m: Machine, rows, values, keys, a, b, type_):
    """The keys to split on, best first: the split whose parts are most often a leaf
    (a constant or a field), then the fewest distinct values left in the parts.  Scored
    with NumPy over the rows (a table of 111 states against 111 has 12,321 rows, and
    every key is scored at every node of the tree)."""
    states = np.array([[float(v) for v in st] for st in m.states])
    q = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    r_ = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows))
    codes: dict = {}
    val = np.fromiter((codes.setdefault(values[row], len(codes)) for row in rows), dtype=np.int64, count=len(rows))
    numeric = all(isinstance(v, (bool, int, float, np.bool_, np.integer, np.floating)) for v in codes)
    rawf = np.array([float(values[row]) for row in rows]) if numeric else None
    cols = {key: states[q if key[0] == "a" else r_, key[1]] for key in keys}
    return _scored(m, cols, val, max(len(codes), 1), rawf, keys, type_)


def _scored(m: Machine, cols: dict, val: np.ndarray, nv: int, rawf: np.ndarray | None, keys, type_):
    """The keys by the score `_by_gain` gives, from each key's column over the rows, the
    rows' value codes `val` (of `nv`) and their values as floats (None where they are
    not numbers: no field is then a leaf)."""
    fields = m.loop.fields
    scored = []
    for n, key in enumerate(keys):
        parts, inv = np.unique(cols[key], return_inverse=True)
        if len(parts) < 2:
            continue
        pairs = np.unique(inv * nv + val)
        nvals = np.bincount(pairs // nv, minlength=len(parts))
        open_ = nvals > 1
        if rawf is not None and open_.any():
            for other in keys[:n] + keys[n + 1:]:
                if fields[m.control[other[1]]].type is not type_:
                    continue
                col = cols[other]
                leaf = np.bincount(inv, weights=(col != rawf), minlength=len(parts)) == 0
                if type_ is Type.BOOL:
                    leaf |= np.bincount(inv, weights=(col == rawf), minlength=len(parts)) == 0
                open_ &= ~leaf
                if not open_.any():
                    break
        scored.append(((int(open_.sum()), int(nvals[open_].sum()), n), n, key))
    scored.sort(key=lambda t: t[0])
    return [(n, key) for _, n, key in scored]


def where(c: Expr, x: Expr, y: Expr, memo: dict | None = None) -> Expr:
    """where(c, x, y), simplified (`memo`: shared by the calls that build one tree, whose
    branches are earlier calls' results, so each subterm is simplified once)."""
    return simplify(Expr(Op.WHERE, x.type if x.type is y.type else Type.REAL, (c, x, y)), memo=memo)


def linear_expr(coefs, terms, type_: Type) -> Expr:
    out = None
    for cf, t in zip(coefs, terms + [None]):
        if abs(cf) < 1e-12:
            continue
        c = int(cf) if float(cf).is_integer() else cf
        if t is None:
            piece = const(c if type_ is Type.INT and isinstance(c, int) else float(c), type_ if isinstance(c, int) else Type.REAL)
        elif c == 1:
            piece = t
        elif c == -1:
            piece = Expr(Op.NEG, t.type, (t,))
        else:
            piece = Expr(Op.MUL, t.type if isinstance(c, int) else Type.REAL, (const(c), t))
        out = piece if out is None else add(out, piece)
    return out if out is not None else const(0 if type_ is Type.INT else 0.0, type_)


def add(x: Expr, y: Expr) -> Expr:
    if y.op is Op.CONST and not isinstance(y.arg, bool) and float(y.arg) == 0.0:
        return x
    if x.op is Op.CONST and not isinstance(x.arg, bool) and float(x.arg) == 0.0:
        return y
    if y.op is Op.NEG:
        return Expr(Op.SUB, x.type if x.type is y.type else Type.REAL, (x, y.src[0]))
    return Expr(Op.ADD, x.type if x.type is y.type else Type.REAL, (x, y))


def _split_offset(e: Expr) -> tuple[Expr | None, object]:
    """`e` as (the rest, a constant added to it): (None, c) for a constant."""
    if e.op is Op.CONST and not isinstance(e.arg, bool):
        return None, e.arg
    if e.op is Op.ADD:
        x, y = e.src
        if y.op is Op.CONST and not isinstance(y.arg, bool):
            return x, y.arg
        if x.op is Op.CONST and not isinstance(x.arg, bool):
            return y, x.arg
    return e, 0


def expr_tree(m: Machine, rows, leaves: dict, a, b, deadline: float | None = None) -> Expr:
    """A `where` chain over the control fields with expression leaves.  Where every
    leaf is one expression plus a constant (a count of runs joined across the blocks:
    a.long + b.long, less 1 where both ends counted the run they share), that
    expression plus the constants' own tree (`table_tree`): the offsets are a few values
    over many rows, and the tree splits on the fields that decide them."""
    memo: dict = {}
    text = dict(leaves)         # each leaf by its interned node: equal leaves are one
    parts = {r: _split_offset(e) for r, e in leaves.items()}
    rests = {rest for rest, _ in parts.values()}
    types = {e.type for e in leaves.values()}
    if len(rests) == 1 and len({text[r] for r in rows}) > 1 and len(types) == 1:
        rest = parts[rows[0]][0]
        type_ = types.pop()
        offsets = {r: (int(c) if type_ is Type.INT else float(c)) for r, (_, c) in parts.items()}
        tree = table_tree(m, rows, offsets, a, b, type_, deadline)
        return tree if rest is None else simplify(Expr(Op.ADD, type_, (rest, tree)), memo=memo)

    def go(rows, keys):
        if deadline is not None and time.monotonic() > deadline:
            raise Failed("time ran out tabling the data's combine")
        texts = {text[r] for r in rows}
        if len(texts) == 1:
            return leaves[rows[0]]
        for n, key in _by_gain(m, rows, text, keys, a, b, None):
            seen = sorted({_lookup(m, r, key) for r in rows}, key=lambda v: (str(type(v)), v))
            ref = (a if key[0] == "a" else b)[m.control[key[1]]]
            rest = keys[:n] + keys[n + 1:]
            if ref.type is Type.BOOL:
                return where(ref, go([r for r in rows if _lookup(m, r, key)], rest),
                              go([r for r in rows if not _lookup(m, r, key)], rest), memo)
            out = go([r for r in rows if _lookup(m, r, key) == seen[-1]], rest)
            for v in reversed(seen[:-1]):
                test = Expr(Op.EQ, Type.BOOL, (ref, const(v, ref.type)))
                out = where(test, go([r for r in rows if _lookup(m, r, key) == v], rest), out, memo)
            return out
        raise Failed("the data's combine is not a function of the control fields")

    best = None
    for order in (("a", "b"), ("b", "a")):
        keys = [(side, k) for side in order for k in range(len(m.control))]
        t = go(rows, keys)
        if best is None or _size(t) < _size(best):
            best = t
    return best
