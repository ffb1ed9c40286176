"""Finite control with linear data, the algebra (`thm3.synth.finite`): each data field's
update as an affine form in the data per control state and cell (a coefficient a float or
a data-free expression; an Int update read modulo m), the coefficient matrices and their
products along the monoid's words, and whether those are a function of the transition
function; the homogeneous part of an update, for a lift's slopes."""
from __future__ import annotations

import numpy as np

from thm3.ir import Expr, Op, Type, const, free_vars, initial_state, substitute
from thm3.ir.simplify import simplify
from thm3.synth.finite_machine import Failed, Machine
from thm3.synth.finite_recognise import replace_atoms
from thm3.synth.finite_tables import add


def affine_rows(m: Machine) -> dict:
    """Per (control state, cell): each data field's update as {data field index ->
    coefficient, "": the rest}, a coefficient a float or a data-free expression
    (`symbolic`); `Failed` where it is not affine in the data."""
    data_names = {f"acc.{m.loop.fields[i].name}": i for i in m.data}
    out = {}
    for key, exprs in data_steps(m).items():
        rows = []
        for e in exprs:
            lin = affine_form(e, data_names)
            if lin is None:
                raise Failed(f"recognised control ({', '.join(m.names(m.control))}); the update "
                             f"{e!r} is not affine in ({', '.join(m.names(m.data))})")
            rows.append(lin)
        out[key] = rows
    return out


def data_steps(m: Machine) -> dict:
    """Per (control state, cell): the data fields' updates with the control fields and the
    element's atoms replaced by their values there, simplified."""
    loop = m.loop
    fields = loop.fields
    outputs = list(replace_atoms(list(loop.left.outputs), m.atoms,
                                  [f"cell.{i}" for i in range(len(m.atoms))])) if m.atoms else list(loop.left.outputs)
    out = {}
    for q, s in enumerate(m.states):
        env = {f"acc.{fields[j].name}": const(v, fields[j].type) for j, v in zip(m.control, s)}
        for c, cell in enumerate(m.cells):
            out[(q, c)] = [simplify(e) for e in substitute([outputs[i] for i in m.data], env | cell)]
    return out


def affine_form(e: Expr, names: dict) -> dict | None:
    """`e` as sum of coefficient * data field plus a data-free rest: {index: coefficient,
    "": rest expression or None}.  A coefficient is a float, or a data-free expression (a
    parameter, the element: `lam * s`), which `symbolic` tells apart.  An Int update
    reduced mod a constant m at the top (`(3 * h + x) % 251`) carries MODULUS: m."""
    if not (free_vars([e]) & set(names)):
        return {"": e}
    match e.op:
        case Op.VAR:
            return {names[e.arg]: 1.0, "": None}
        case Op.ADD | Op.SUB:
            x, y = (affine_form(s, names) for s in e.src)
            if x is None or y is None or MODULUS in x or MODULUS in y:
                return None
            sign = 1.0 if e.op is Op.ADD else -1.0
            out = {k: v for k, v in x.items() if k != ""}
            for k, v in y.items():
                if k != "":
                    out[k] = _coef_add(out.get(k, 0.0), _coef_scale(sign, v))
            rest = [r for r in (x[""], y[""]) if r is not None]
            if len(rest) == 2:
                out[""] = Expr(e.op, e.type, tuple(rest))
            elif y[""] is not None and e.op is Op.SUB:
                out[""] = Expr(Op.NEG, y[""].type, (y[""],))
            else:
                out[""] = rest[0] if rest else None
            return out
        case Op.NEG:
            x = affine_form(e.src[0], names)
            if x is None or MODULUS in x:
                return None
            out = {k: _coef_scale(-1.0, v) for k, v in x.items() if k != ""}
            out[""] = None if x[""] is None else Expr(Op.NEG, x[""].type, (x[""],))
            return out
        case Op.MOD if e.type is Type.INT and isinstance(e.arg, int) and e.arg > 1:
            # an Int update reduced mod m: the affine form, read modulo m (`MODULUS`)
            x = affine_form(_unreduced(e.src[0], e.arg), names)
            if x is None or MODULUS in x:
                return None
            return x | {MODULUS: e.arg}
        case Op.MUL:
            for s, t in (e.src, e.src[::-1]):
                if not (free_vars([t]) & set(names)) and not (t.op is Op.CONST and isinstance(t.arg, bool)):
                    x = affine_form(s, names)
                    if x is None or MODULUS in x:
                        return None
                    k = float(t.arg) if t.op is Op.CONST else t
                    out = {j: _coef_mul(k, v) for j, v in x.items() if j != ""}
                    out[""] = None if x[""] is None else Expr(Op.MUL, e.type, (x[""], t))
                    return out
            return None
        case _:
            return None


MODULUS = "%"       # the key of an `affine_form` form read modulo m


def _unreduced(e: Expr, mod: int) -> Expr:
    """`e` with its inner `% mod` dropped through +, -, * (x mod m is a ring map: the
    outer `% mod` gives the same remainder): (s2 + (s1 + x) % m) % m reads s2 + s1 + x."""
    if e.op is Op.MOD and e.arg == mod:
        return _unreduced(e.src[0], mod)
    if e.op in (Op.ADD, Op.SUB, Op.NEG, Op.MUL) and e.type is Type.INT:
        src = tuple(_unreduced(s, mod) for s in e.src)
        return e if src == e.src else Expr(e.op, e.type, src, e.arg)
    return e


def symbolic(c) -> bool:
    """Whether an `affine_form` coefficient is an expression (a parameter, the element), not a float."""
    return isinstance(c, Expr)


def _coef_expr(c, type_: Type = Type.REAL) -> Expr:
    return c if symbolic(c) else const(int(c) if type_ is Type.INT and float(c).is_integer() else c, type_)


def _coef_type(*cs) -> Type:
    ints = all(c.type is Type.INT if symbolic(c) else float(c).is_integer() for c in cs)
    return Type.INT if ints else Type.REAL


def _coef_add(u, v):
    if not symbolic(u) and not symbolic(v):
        return u + v
    if not symbolic(u) and u == 0.0:
        return v
    if not symbolic(v) and v == 0.0:
        return u
    t = _coef_type(u, v)
    return Expr(Op.ADD, t, (_coef_expr(u, t), _coef_expr(v, t)))


def _coef_scale(k: float, v):
    if not symbolic(v):
        return k * v
    if k == 1.0:
        return v
    if k == -1.0:
        return Expr(Op.NEG, v.type, (v,))
    return Expr(Op.MUL, Type.REAL, (const(k), v)) if v.type is Type.REAL or not float(k).is_integer() else \
        Expr(Op.MUL, v.type, (const(int(k), v.type), v))


def _coef_mul(k, v):
    if not symbolic(k):
        return _coef_scale(k, v)
    if not symbolic(v):
        return _coef_scale(v, k)
    t = Type.INT if k.type is Type.INT and v.type is Type.INT else Type.REAL
    return Expr(Op.MUL, t, (k, v))


def _same_coefficients(x, y) -> bool:
    """Coefficient matrices equal up to rounding (NumPy's default tolerance, 1e-5, took a
    decay of 0.99999 a step for the identity: every word's coefficient then looked fixed)."""
    return bool(np.allclose(x, y, rtol=1e-12, atol=1e-12))


def coefficients_determined(m: Machine, rows: dict | None = None) -> bool:
    """Whether the data's coefficients from each control state are a function of the
    list's transition function (equal for every word of it: a count reset by the control),
    checked on the cells' generators; else they are the lift's slopes, read off b's data.
    A coefficient that is an expression (a parameter, the element) is taken as no such
    function: its products are slopes."""
    rows = affine_rows(m) if rows is None else rows
    if any(symbolic(c) for row in rows.values() for lin in row for k, c in lin.items() if k not in ("", MODULUS)):
        return False
    if any(moduli(m, rows).values()):
        return False                # products mod m: slopes, read modulo m
    step_matrix = step_matrices(m, rows)
    return composes(m, step_matrix, coefficient_products(m, step_matrix), np.eye(len(m.data)), _matmul)


def _matmul(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Matrix products over the last two axes, (+, *)."""
    return np.einsum("...ij,...jk->...ik", x, y)


def composes(m: Machine, step_matrix, coef: dict, eye: np.ndarray, product) -> bool:
    """Whether the coefficient matrices `coef` (of `coefficient_products`) are a function of the
    transition function: the product (`product`, over the semiring) of the step's matrix
    after each function's is the matrix of the function the step leads to."""
    # the empty list too: its function is the identity with the identity's coefficients, so
    # a nonempty list with the identity function (four steps of a phase mod 4) must have
    # them (a buffer flushed on the way has not), and one cell from it is that cell's step
    # (with the identity among the monoid's functions, the loop below checks each cell from it)
    if m.identity in coef:
        if not _same_coefficients(coef[m.identity], eye):
            return False
    elif any(tuple(row) not in coef or not _same_coefficients(step_matrix(q, c), coef[tuple(row)][q])
             for c, row in enumerate(m.table) for q in range(len(m.states))):
        return False
    # every function f and cell c at once: step(f(q), c) @ coef[f][q] == coef[f then c][q]
    funcs = list(m.monoid)
    index = {f: n for n, f in enumerate(funcs)}
    fa = np.array(funcs, dtype=np.int64)                            # (F, Q)
    mats = np.array([coef[f] for f in funcs])                        # (F, Q, d, d)
    steps = np.array([[step_matrix(q, c) for c in range(len(m.cells))] for q in range(len(m.states))])
    for c, row in enumerate(m.table):
        rowa = np.array(row, dtype=np.int64)
        then = [index.get(tuple(rowa[f])) for f in fa]
        if any(g is None for g in then):
            return False
        lhs = product(steps[fa, c], mats)
        if not _same_coefficients(lhs, mats[np.array(then)]):
            return False
    return True


def moduli(m: Machine, rows: dict) -> dict[int, int | None]:
    """Per data field (its place in `m.data`): the m its updates are reduced modulo, or
    None.  A field reduced in some steps must, in the others, be kept (its update the
    field itself) or set to a remainder: else `Failed`.  The data then stays a remainder
    from a remainder start, and the combine's leaves are reduced mod m too."""
    fields = m.loop.fields
    out: dict[int, int | None] = {}
    for k, i in enumerate(m.data):
        lins = [row[k] for row in rows.values()]
        ms = {lin[MODULUS] for lin in lins if MODULUS in lin}
        if not ms:
            out[k] = None
            continue
        if len(ms) > 1:
            raise Failed(f"recognised control ({', '.join(m.names(m.control))}); {fields[i].name} is reduced "
                         f"modulo {sorted(ms)}: one modulus a field")
        (mod,) = ms
        for lin in lins:
            if MODULUS in lin:
                continue
            others = [v for j, v in lin.items() if j not in ("", i)]
            zero = all(not symbolic(v) and v == 0.0 for v in others)
            own, rest = lin.get(i), lin[""]
            kept = zero and not symbolic(own) and own == 1.0 and rest is None
            remainder = zero and own is None and rest is not None and rest.op is Op.CONST and 0 <= rest.arg < mod
            if not (kept or remainder):
                raise Failed(f"recognised control ({', '.join(m.names(m.control))}); {fields[i].name} is reduced "
                             f"modulo {mod} in some steps but not kept or set to a remainder in the others")
        start = initial_state(m.loop)[i].arg
        if not 0 <= start < mod:
            raise Failed(f"recognised control ({', '.join(m.names(m.control))}); {fields[i].name} starts at "
                         f"{start}, not a remainder mod {mod}")
        out[k] = mod
    return out


def step_matrices(m: Machine, rows: dict):
    """(control state, cell) -> the data's coefficient matrix of one step."""
    nd = len(m.data)
    built: dict[tuple, np.ndarray] = {}

    def step_matrix(q, c):
        if (q, c) not in built:         # one a (state, cell): every word's product reads them
            built[(q, c)] = np.array([[rows[(q, c)][r].get(m.data[j], 0.0) for j in range(nd)] for r in range(nd)])
        return built[(q, c)]
    return step_matrix


def coefficient_products(m: Machine, step_matrix, product=None, unit: np.ndarray | None = None) -> dict:
    """Each transition function's product of the data's coefficient matrices along a
    shortest word of it, from each control state (breadth first: a word is its parent's
    with one cell more); over (+, *) unless `product` and its `unit` matrix say otherwise."""
    product = _matmul if product is None else product
    nq = len(m.states)
    steps = np.array([[step_matrix(q, c) for c in range(len(m.cells))] for q in range(nq)])
    eye = np.broadcast_to(np.eye(len(m.data)) if unit is None else unit, (nq, len(m.data), len(m.data)))
    by_word = {(): (np.arange(nq), eye)}       # word -> (states it leads each q to, products)
    coef: dict[tuple, tuple] = {}
    for f, word in sorted(m.monoid.items(), key=lambda kv: len(kv[1])):
        s, mat = by_word[word[:-1]]     # (`transition_monoid` writes each word as a shorter one's plus a cell)
        c = word[-1]
        out = product(steps[s, c], mat)
        by_word[word] = (np.array(m.table[c])[s], out)
        coef[f] = tuple(out)
    return coef


def homogeneous(e: Expr, data_index: dict, slope: dict) -> Expr | None:
    """The linear part of a data update `e` (its where-branches split on data-free
    conditions, each branch affine in the data with constant coefficients), with data
    field l read as `slope[l]`: the update of the product of the coefficients.  A branch
    inside the arithmetic (total + (buf + 1 if x else buf)) is hoisted first."""
    e = hoisted(e, set(data_index))
    if e is None:
        return None
    if e.op is Op.WHERE:
        c, x, y = e.src
        if free_vars([c]) & set(data_index):
            return None
        hx, hy = homogeneous(x, data_index, slope), homogeneous(y, data_index, slope)
        if hx is None or hy is None:
            return None
        t = Type.REAL if Type.REAL in (hx.type, hy.type) else hx.type
        return Expr(Op.WHERE, t, (c, hx, hy))
    lin = affine_form(e, data_index)
    if lin is None:
        return None
    out = None
    for ll, coefficient in lin.items():
        if ll in ("", MODULUS) or (not symbolic(coefficient) and coefficient == 0.0):
            continue
        s = slope[ll]
        if symbolic(coefficient):
            if s.type is Type.INT and coefficient.type is not Type.INT:
                return None             # a Real coefficient of an Int slope
            term = Expr(Op.MUL, s.type, (coefficient, s))
        else:
            term = s if coefficient == 1.0 else Expr(Op.MUL, s.type, (_coef_expr(coefficient, s.type), s))
        out = term if out is None else add(out, term)
    if out is None:
        t = next(iter(slope.values())).type
        return const(0 if t is Type.INT else 0.0, t)
    if MODULUS in lin:
        return Expr(Op.MOD, out.type, (out,), lin[MODULUS])
    return out


def hoisted(e: Expr, data: set, budget: list | None = None) -> Expr | None:
    """`e` with every where-branch on a data-free condition moved above the arithmetic
    around it: op(where(c, x, y), z) is where(c, op(x, z), op(y, z)).  None past
    HOIST_NODES built nodes (the branches multiply)."""
    budget = [HOIST_NODES] if budget is None else budget
    budget[0] -= 1
    if budget[0] < 0:
        return None
    if e.op is Op.WHERE:
        c, x, y = e.src
        hx, hy = hoisted(x, data, budget), hoisted(y, data, budget)
        return None if hx is None or hy is None else Expr(Op.WHERE, e.type, (c, hx, hy))
    if e.op not in (Op.ADD, Op.SUB, Op.MUL, Op.NEG, Op.MOD, Op.MAX, Op.MIN) or not (free_vars([e]) & data):
        return e
    src = [hoisted(a, data, budget) for a in e.src]
    if any(a is None for a in src):
        return None
    for n, a in enumerate(src):
        if a.op is Op.WHERE and not (free_vars([a.src[0]]) & data):
            c, x, y = a.src
            return hoisted(Expr(Op.WHERE, e.type, (c, Expr(e.op, e.type, tuple(src[:n] + [x] + src[n + 1:]), e.arg),
                                                  Expr(e.op, e.type, tuple(src[:n] + [y] + src[n + 1:]), e.arg))),
                            data, budget)
    return Expr(e.op, e.type, tuple(src), e.arg)


HOIST_NODES = 400
