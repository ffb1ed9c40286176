"""When a loop is attention: a softmax-weighted sum over (k, v) elements.

The attention kernel (`gpu/attention.py`) computes one K/V tile's state with two
matrix products and merges it with the derived combine.  That is valid exactly when
the analysis shows: the combine is carried by (m, d, o) ↦ (m, d·e^m, o·e^m) onto
(max, +, +) (a proved transport), a single element's state is (s, 1, v), and the
score s is scale·dot(q, k) (or dot(q, k)) with q a Vec loop parameter and k, v the
Vec elements.  This module checks those facts on the IR; it decides nothing by name."""
from __future__ import annotations

import math
from dataclasses import dataclass

from thm3.ir import Expr, Fn, Loop, Op, Type, walk


@dataclass(frozen=True)
class AttentionShape:
    max_field: str          # m
    sum_field: str          # d
    out_field: str          # o
    query: str              # the Vec loop parameter q
    key: str                # the Vec element k
    value: str              # the Vec element v
    scale: str | None       # the Real loop parameter multiplying the score, if any

    def describe(self) -> str:
        s = f"{self.scale}·dot({self.query}, {self.key})" if self.scale else f"dot({self.query}, {self.key})"
        return (f"softmax-weighted sum: score {s}, state ({self.max_field}, {self.sum_field}, "
                f"{self.out_field}) carried onto (max, +, +) by {self.sum_field}·e^{self.max_field}, "
                f"{self.out_field}·e^{self.max_field}")


def _var(e: Expr, name: str | None = None) -> bool:
    return e.op is Op.VAR and (name is None or e.arg == name)


def _score(e: Expr, loop: Loop):
    """(query, key, scale) when e is scale*dot(q, k), dot(q, k)*scale or dot(q, k)."""
    params = {d.name: d for d in loop.params}
    elems = {d.name: d for d in loop.elements}

    def dot_of(x):
        if x.op is Op.DOT:
            u, w = x.src
            if _var(u) and _var(w):
                if u.arg in params and w.arg in elems:
                    return u.arg, w.arg
                if w.arg in params and u.arg in elems:
                    return w.arg, u.arg
        return None

    if (qk := dot_of(e)) is not None:
        return qk + (None,)
    if e.op is Op.MUL:
        for x, y in (e.src, e.src[::-1]):
            qk = dot_of(y)
            if qk and _var(x) and x.arg in params and params[x.arg].type is Type.REAL:
                return qk + (x.arg,)
    return None


def recognize(loop: Loop, transport, deadline: float = float("inf")) -> AttentionShape | None:
    """The attention shape, when the analysis supports it (see the module docstring)."""
    if transport is None or transport.status != "proved" or len(loop.fields) != 3:
        return None
    ops = transport.ops
    if sorted(o.name for o in ops) != ["ADD", "ADD", "MAX"]:
        return None
    mi = ops.index(Op.MAX)
    m = loop.fields[mi]
    if m.type is not Type.REAL or m.default != -math.inf:
        return None
    others = [i for i in range(3) if i != mi]
    by_type = {loop.fields[i].type: i for i in others}
    if set(by_type) != {Type.REAL, Type.VEC}:
        return None
    di, oi = by_type[Type.REAL], by_type[Type.VEC]
    for i in (di, oi):
        psi = transport.maps[i]
        # ψ = f·e^m
        if not (psi.op is Op.MUL and _var(psi.src[0], f"acc.{loop.fields[i].name}")
                and psi.src[1].op is Op.EXP and _var(psi.src[1].src[0], f"acc.{m.name}")):
            return None
    # The score: left's update of m is max(acc.m, s) with s free of the state.
    upd = loop.left.outputs[mi]
    if upd.op is not Op.MAX:
        return None
    acc_m = f"acc.{m.name}"
    s_expr = upd.src[1] if _var(upd.src[0], acc_m) else upd.src[0] if _var(upd.src[1], acc_m) else None
    if s_expr is None or any(v.arg.startswith("acc.") for v in walk([s_expr]) if v.op is Op.VAR):
        return None
    score = _score(s_expr, loop)
    if score is None:
        return None
    q, k, scale = score
    vecs = [d.name for d in loop.elements if d.type is Type.VEC and d.name != k]
    if len(loop.elements) != 2 or len(vecs) != 1:
        return None
    if not _single_element_state(loop, s_expr, mi, di, oi, vecs[0], deadline):
        return None
    return AttentionShape(m.name, loop.fields[di].name, loop.fields[oi].name, q, k, vecs[0], scale)


def _single_element_state(loop, s_expr, mi, di, oi, value, deadline) -> bool:
    """Proved: left(init, (k, v)) == (s, 1, v)."""
    from thm3.prove.laws import Law, Setting, apply_fn, check_equal_pairs, initial
    from thm3.semantics.symbolic import constant
    score = Fn(loop.left.inputs, (s_expr,))

    def build(table, env):
        x = [env[f"x.{d.name}"] for d in loop.elements]
        p = {d.name: env[d.name] for d in loop.params}
        single = apply_fn(table, loop.left, initial(loop) + x, p)
        s_val = apply_fn(table, score, initial(loop) + x, p)[0]
        return [(single[mi], s_val), (single[di], constant(1.0, Type.REAL)),
                (single[oi], env[f"x.{value}"])]

    return Law(Setting(loop, []), [], ["x"], deadline, loop.left.outputs).run(build, check_equal_pairs).proved
