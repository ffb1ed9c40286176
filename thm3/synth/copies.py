"""The combine of a copies lift, by construction: function composition read group by group.

A copies lift (`thm3.synth.finite.lift_candidates`) holds, for each reachable control state
q of the original loop, the control state a list leads q to (its "image" of q) and, with
linear data, the data the list adds from q (from 0) and where needed the product of the
data's coefficients from q (the slopes).  For lists xs then ys, the image of q is ys's image
of r, where r is xs's image of q; the data from q is ys's slopes from r times xs's data from
q, plus ys's data from r; the slopes compose the same way.  So each field of the combine
selects on a's image of one state, among the |Q| reachable states, and reads b's fields for
the state selected: |Q| branches a field, however many transition functions the lists
have (a debounce over five readings: 80; its lifted loop's table of a's states against
b's has 6,561 rows, which the finite route's tree search does not finish).

The combine is a candidate like any other: the analysis of the lifted loop checks it on
samples and the prover decides its laws."""
from __future__ import annotations

from typing import Callable

from thm3.ir import Expr, Fn, Loop, Op, Type, const, substitute, var
from thm3.ir.simplify import simplify
from thm3.errors import Thm3Error


class Failed(Thm3Error):
    """The lift has no combine by construction (its coefficients are neither the identity
    nor held by slope fields)."""


def copies_combine(loop: Loop, lifted_fields, states, control: tuple[int, ...], data: tuple[int, ...],
                   roles: dict, control_expr: Callable[[int, int], Expr], data_expr: Callable[[int, int], Expr],
                   slope_expr: Callable[[int, int, int], Expr] | None, moduli: dict) -> Fn:
    """The combine over the lifted loop's fields (`lifted_fields`: the original ones, then
    the added ones under their keys), "a.<key>" and "b.<key>".

    `states`: the reachable control states (tuples over `control`, the initial one first);
    `roles`: added key -> ("control", q, k) | ("data", q, j) | ("slope", q, i, j), with k an
    index into `control` and i, j into `data`; `control_expr(q, k)`, `data_expr(q, j)` and
    `slope_expr(q, i, j)`: each as an expression over "acc." fields (a kept field, or what a
    dropped one equals), `slope_expr` None where every coefficient is 1 (no slopes);
    `moduli`: data index -> the m its updates are reduced modulo, or None."""
    fields = loop.fields
    types = {f"acc.{f.name}": f.type for f in lifted_fields}
    on = {side: {n: var(f"{side}.{n[4:]}", t) for n, t in types.items()} for side in "ab"}

    def side(e: Expr, s: str) -> Expr:
        return substitute([e], on[s])[0]

    nd = len(data)
    starts = [e.arg for e in _initial(loop)]
    d_init = [starts[i] for i in data]
    dtype = Type.INT if all(fields[i].type is Type.INT for i in data) else Type.REAL

    def slope(s: str, q: int, i: int, j: int) -> Expr:
        if slope_expr is None:
            return _num(1 if i == j else 0, dtype)
        return side(slope_expr(q, i, j), s)

    def data_of(s: str, q: int, j: int) -> Expr:
        return side(data_expr(q, j), s)

    def added_from(r: int, j: int) -> Expr:
        """What b's list adds to data j from control state r, starting at 0: for the initial
        state, b's own field less its start carried through b's slopes."""
        got = data_of("b", r, j)
        if r == 0:
            for ll in range(nd):
                if d_init[ll] != 0:
                    got = _sub(got, _mul(slope("b", 0, j, ll), _num(d_init[ll], dtype)))
        return got

    def image(q: int) -> list[Expr]:
        return [side(control_expr(q, k), "a") for k in range(len(control))]

    def select(q: int, leaf: Callable[[int], Expr], type_: Type) -> Expr:
        img = image(q)

        def go(rs: list[int], ks: list[int]) -> Expr:
            if len(rs) == 1:
                return leaf(rs[0])
            for n, k in enumerate(ks):
                seen = sorted({states[r][k] for r in rs}, key=lambda v: (str(type(v)), v))
                if len(seen) < 2:
                    continue
                rest = ks[:n] + ks[n + 1:]
                if img[k].type is Type.BOOL:
                    return _where(img[k], go([r for r in rs if states[r][k]], rest),
                                  go([r for r in rs if not states[r][k]], rest), type_)
                out = go([r for r in rs if states[r][k] == seen[-1]], rest)
                for v in reversed(seen[:-1]):
                    test = Expr(Op.EQ, Type.BOOL, (img[k], const(v, img[k].type)))
                    out = _where(test, go([r for r in rs if states[r][k] == v], rest), out, type_)
                return out
            raise Failed("two reachable states agree on every control field")
        return go(list(range(len(states))), list(range(len(control))))

    def control_out(q: int, k: int) -> Expr:
        t = fields[control[k]].type
        return select(q, lambda r: side(control_expr(r, k), "b"), t)

    def data_out(q: int, j: int) -> Expr:
        t = fields[data[j]].type

        def leaf(r: int) -> Expr:
            total = added_from(r, j)
            for ll in range(nd):
                total = _add(total, _mul(slope("b", r, j, ll), data_of("a", q, ll)))
            return _reduced(_typed(total, t), moduli.get(j))
        return select(q, leaf, t)

    def slope_out(q: int, i: int, j: int) -> Expr:
        def leaf(r: int) -> Expr:
            total = _num(0, dtype)
            for ll in range(nd):
                total = _add(total, _mul(slope("b", r, i, ll), slope("a", q, ll, j)))
            return _reduced(total, moduli.get(i))
        return select(q, leaf, dtype)

    outs = []
    for n, f in enumerate(lifted_fields):
        if n < len(fields):
            role = ("control", 0, control.index(n)) if n in control else ("data", 0, data.index(n))
        else:
            role = roles.get(f.name)
            if role is None:
                raise Failed(f"the added field {f.name} has no place in the transition function")
        kind, q, *rest = role
        e = (control_out(q, *rest) if kind == "control" else data_out(q, *rest) if kind == "data"
             else slope_out(q, *rest))
        outs.append(simplify(e))
    inputs = tuple((f"a.{f.name}", f.type) for f in lifted_fields) + \
        tuple((f"b.{f.name}", f.type) for f in lifted_fields) + tuple((d.name, d.type) for d in loop.params)
    return Fn(inputs, tuple(outs))


def _initial(loop: Loop):
    from thm3.ir import initial_state
    return initial_state(loop)


def _num(v, t: Type) -> Expr:
    return const(int(v) if t is Type.INT else float(v), t)


def _zero(e: Expr) -> bool:
    return e.op is Op.CONST and not isinstance(e.arg, bool) and float(e.arg) == 0.0


def _one(e: Expr) -> bool:
    return e.op is Op.CONST and not isinstance(e.arg, bool) and float(e.arg) == 1.0


def _wider(x: Expr, y: Expr) -> Type:
    return x.type if x.type is y.type else Type.REAL


def _add(x: Expr, y: Expr) -> Expr:
    if _zero(y):
        return x
    if _zero(x):
        return y
    return Expr(Op.ADD, _wider(x, y), (x, y))


def _sub(x: Expr, y: Expr) -> Expr:
    return x if _zero(y) else Expr(Op.SUB, _wider(x, y), (x, y))


def _mul(x: Expr, y: Expr) -> Expr:
    if _zero(x) or _zero(y):
        return _num(0, _wider(x, y))
    if _one(x):
        return y
    if _one(y):
        return x
    return Expr(Op.MUL, _wider(x, y), (x, y))


def _typed(e: Expr, t: Type) -> Expr:
    """An Int field's value stays Int (its terms are Int); a Real one takes any."""
    if t is Type.REAL and e.type is Type.INT:
        return Expr(Op.ADD, Type.REAL, (e, const(0.0))) if e.op is not Op.CONST else const(float(e.arg))
    return e


def _reduced(e: Expr, mod: int | None) -> Expr:
    return Expr(Op.MOD, e.type, (e,), mod) if mod else e


def _where(c: Expr, x: Expr, y: Expr, t: Type) -> Expr:
    if x == y:
        return x
    return Expr(Op.WHERE, t if t is not Type.INT or (x.type is Type.INT and y.type is Type.INT) else Type.REAL,
                (c, x, y))
