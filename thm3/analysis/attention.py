"""When a loop is attention: a softmax-weighted sum over (k, v) elements.

The attention kernel (`gpu/render/attention.py`, `gpu/render/templates/attention*.cu`) computes one K/V tile's state with two
matrix products and merges it with the derived combine.  That is valid exactly when
the analysis shows: the combine is carried by (m, d, o) ↦ (m, d·e^m, o·e^m) onto
(max, +, +) (a proved transport), a single element's state is (s, 1, v), and the
score s is scale·dot(q, k) (or dot(q, k)) with q a Vec loop parameter and k, v the
Vec elements.  The kernel also merges in a split form (`merge_form`): m from the two m's
alone, d and o linear in their two operands with coefficients that depend on m alone, so
that each lane may carry a partial d and a few lanes of o; that too is checked on the
combine's terms.  This module checks those facts on the IR; it decides nothing by name."""
from __future__ import annotations

import math
from dataclasses import dataclass

from thm3.ir import Expr, Fn, Loop, Op, Type, const, free_vars, walk


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


# --- the split form the kernel merges in --------------------------------------------------

@dataclass(frozen=True)
class MergeForm:
    """The combine as the kernel applies it: m' = m (an expression of a.m and b.m), d' = d
    (the combine's own), and o' = a.o * alpha_a + b.o * alpha_b, where d is linear in a.d
    and b.d and the alphas and d's coefficients read only a.m and b.m (and loop
    parameters).  So a lane may carry a partial d (the lanes' shares add up after the
    merges) and each lane of o costs one multiply and one FMA."""
    m: Expr
    d: Expr
    alpha_a: Expr
    alpha_b: Expr


def _linear(e: Expr, over: set[str], free: set[str]) -> bool:
    """Whether e is a sum of terms, each one variable of `over` times a factor that reads
    none of `over` or `free`: e = sum v * c_v.  Sound, not complete (a where over
    linear branches with a condition free of both sets counts; a constant term does not)."""
    def clean(x):
        return not (free_vars([x]) & (over | free))

    match e.op:
        case Op.VAR:
            return e.arg in over
        case Op.ADD | Op.SUB:
            return all(_linear(x, over, free) for x in e.src)
        case Op.NEG:
            return _linear(e.src[0], over, free)
        case Op.MUL:
            x, y = e.src
            return (_linear(x, over, free) and clean(y)) or (clean(x) and _linear(y, over, free))
        case Op.DIV:
            return _linear(e.src[0], over, free) and clean(e.src[1])
        case Op.WHERE:
            c, x, y = e.src
            return clean(c) and _linear(x, over, free) and _linear(y, over, free)
        case _:
            return False


def _coefficient(e: Expr, v: str, over: set[str]) -> Expr | None:
    """The factor of variable v in a linear e (see `_linear`); None where it is 0."""
    def mul(a, b):
        return a if b is None else b if a is None else Expr(Op.MUL, Type.REAL, (a, b))

    match e.op:
        case Op.VAR:
            return const(1.0, Type.REAL) if e.arg == v else None
        case Op.ADD | Op.SUB:
            x, y = (_coefficient(s, v, over) for s in e.src)
            if y is None:
                return x
            if e.op is Op.SUB:
                y = Expr(Op.NEG, Type.REAL, (y,))
            return y if x is None else Expr(Op.ADD, Type.REAL, (x, y))
        case Op.NEG:
            x = _coefficient(e.src[0], v, over)
            return None if x is None else Expr(Op.NEG, Type.REAL, (x,))
        case Op.MUL:
            x, y = e.src
            if free_vars([x]) & over:
                c = _coefficient(x, v, over)
                return None if c is None else _scalar_mul(c, y)
            c = _coefficient(y, v, over)
            return None if c is None else _scalar_mul(x, c)
        case Op.DIV:
            c = _coefficient(e.src[0], v, over)
            return None if c is None else Expr(Op.DIV, Type.REAL, (c, e.src[1]))
        case Op.WHERE:
            cond, x, y = e.src
            cx, cy = _coefficient(x, v, over), _coefficient(y, v, over)
            if cx is None and cy is None:
                return None
            zero = const(0.0, Type.REAL)
            return Expr(Op.WHERE, Type.REAL, (cond, cx or zero, cy or zero))
        case _:
            raise ValueError(f"not linear: {e.op}")


def _scalar_mul(a: Expr, b: Expr) -> Expr:
    if a.op is Op.CONST and a.arg == 1.0:
        return _real(b)
    if b.op is Op.CONST and b.arg == 1.0:
        return _real(a)
    return Expr(Op.MUL, Type.REAL, (_real(a), _real(b)))


def _real(e: Expr) -> Expr:
    return e if e.type is not Type.VEC else Expr(e.op, Type.REAL, e.src, e.arg)


def merge_form(loop: Loop, combine: Fn, shape: AttentionShape) -> MergeForm | None:
    """The combine in the kernel's split form, or None when its terms do not have it."""
    fields = [f.name for f in loop.fields]
    m_out, d_out, o_out = (combine.outputs[fields.index(n)]
                           for n in (shape.max_field, shape.sum_field, shape.out_field))
    ds = {f"a.{shape.sum_field}", f"b.{shape.sum_field}"}
    os = {f"a.{shape.out_field}", f"b.{shape.out_field}"}
    if free_vars([m_out]) & (ds | os):
        return None
    if not (_linear(d_out, ds, os) and _linear(o_out, os, ds)):
        return None
    alpha_a = _coefficient(o_out, f"a.{shape.out_field}", os)
    alpha_b = _coefficient(o_out, f"b.{shape.out_field}", os)
    zero = const(0.0, Type.REAL)
    return MergeForm(m_out, d_out, alpha_a or zero, alpha_b or zero)
