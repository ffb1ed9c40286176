"""Critical values: the element values at which the loop's comparisons and equalities
switch, and the list lengths at which its counters reach the constants they are
compared with.  Samples, the witness search and the refutation of unproved laws draw
them, so that a branch taken at one value only (`x == 7`, `x >= 10`, `x + 3` returning
the identity at x = -3, a count reaching 9) is reached at all.

The values come from the loop's own terms, with the state at its initial value and the
loop parameters at the values given: the roots of each comparison (lhs - rhs = 0, max
and min included), the roots of each arm of a field's new value against the field's
initial value, each constant compared against, a value on either side of each root and
two inside each interval the roots bound.  The values are exact (SymPy numbers: -2/3,
sqrt(2)), so that a witness built on a root folds exactly to the state it claims;
`element_values` gives them as floats for the samples."""
from __future__ import annotations

import math
import time
from collections import defaultdict
from fractions import Fraction

import sympy as sp

from thm3.ir import COMPARISONS, Expr, Loop, Op, Type, const, initial_state, transform, walk
from thm3.semantics.evaluate import Memo
from thm3.semantics.sympy_table import SYMPY, sympy_const

# Terms beyond this size are not solved (SymPy has no timeout).
_MAX_OPS = 80
_MAX_ROOTS = 12


def _values(loop: Loop, params: dict, state: tuple | None = None) -> tuple[Memo, dict]:
    """SymPy values of every node of `left` at the initial state (or at `state`, exact
    field values as `thm3.semantics.reals` folds them), with the element parameters as
    symbols; and those symbols by name."""
    symbols = {d.name: sp.Symbol(d.name, real=True) for d in loop.elements}
    if state is None:
        env = {f"acc.{f.name}": (sympy_const(e.arg, f.type) if f.type is not Type.VEC else None)
               for f, e in zip(loop.fields, initial_state(loop))}
    else:
        env = {f"acc.{f.name}": _sympy_value(v, f.type) for f, v in zip(loop.fields, state)}
    env.update(symbols)
    for d in loop.params:
        v = params.get(d.name)
        env[d.name] = (sp.Symbol(d.name, real=True) if v is None or getattr(v, "ndim", 0)
                       else sympy_const(float(v), Type.REAL))
    memo = Memo(defaultdict(lambda: None, env), SYMPY if state is None else _DECIDING)
    memo.values(tuple(loop.left.outputs) + tuple(loop.preconditions))
    return memo, symbols


def _decided(test):
    """A comparison of two numbers (no symbol in either) as a Python Bool, else None."""
    def f(a, b):
        if isinstance(a, sp.Basic) and isinstance(b, sp.Basic) and a.is_number and b.is_number:
            try:
                return bool(test(a, b))
            except TypeError:
                return None
        return None
    return f


# At a reached state, whatever the element does not decide is decided: the control
# (`acc.q == 0` at q = 1) picks its branch, so a threshold that the state moves is solved.
_DECIDING = SYMPY | {
    Op.LT: _decided(lambda a, b: a < b), Op.LE: _decided(lambda a, b: a <= b),
    Op.GT: _decided(lambda a, b: a > b), Op.GE: _decided(lambda a, b: a >= b),
    Op.EQ: _decided(lambda a, b: sp.simplify(a - b) == 0), Op.NE: _decided(lambda a, b: sp.simplify(a - b) != 0),
    Op.WHERE: lambda c, a, b: (a if c else b) if isinstance(c, bool) else None,
    Op.NOT: lambda a: (not a) if isinstance(a, bool) else None,
    Op.AND: lambda a, b: (a and b) if isinstance(a, bool) and isinstance(b, bool) else None,
    Op.OR: lambda a, b: (a or b) if isinstance(a, bool) and isinstance(b, bool) else None,
}


def _sympy_value(v, type_: Type):
    """An exact field value (a Fraction, an int, a Bool, ±inf, a SymPy number) for SymPy;
    None for a Vec or a value SymPy has no number for."""
    if type_ is Type.VEC:
        return None
    if isinstance(v, sp.Basic):
        return v
    if isinstance(v, Fraction):
        return sp.Rational(v.numerator, v.denominator)
    if isinstance(v, (bool, int, float)):
        return sympy_const(v, type_)
    return None


def _switches(loop: Loop, memo: Memo, deadline: float | None = None, arms_too: bool = True) -> list:
    """Differences whose zeros switch something: comparison sides, max/min operands,
    and each arm of a new field value against the field's initial value; past `deadline`
    no more arms (a lexer's 16 nested phases: 2 ** 16 rewrites a field, a lifted loop
    with 40 such fields took 13 s)."""
    out = []
    for e in walk(tuple(loop.left.outputs) + tuple(loop.preconditions)):
        if e.op in COMPARISONS + (Op.MAX, Op.MIN) and len(e.src) == 2:
            a, b = memo.value(e.src[0]), memo.value(e.src[1])
            if a is not None and b is not None:
                out.append(a - b)
    if not arms_too:
        return out
    for f, out_e, e in zip(loop.fields, loop.left.outputs, initial_state(loop)):
        init = sympy_const(e.arg, f.type) if f.type in (Type.REAL, Type.INT) else None
        if init is None:
            continue
        if deadline is not None and time.monotonic() > deadline:
            break
        for arm in dict.fromkeys([out_e] + arms(out_e, deadline)):     # out_e once (it is its own arm)
            v = memo.value(arm)
            if v is not None:
                out.append(v - init)
    return out


_SELECTIONS = (Op.WHERE, Op.MAX, Op.MIN, Op.ABS, Op.MOD)
_MAX_ARMS = 16


def arms(e, deadline: float | None = None) -> list:
    """The terms that `e` equals on some inputs: each selection inside it (WHERE, MAX,
    MIN, ABS, at any depth: `min(x, 0) + 3` is `x + 3` or `3`) replaced by one of its
    operands, and a remainder `t % m` by t - k m for small k, at most `_MAX_ARMS` of them;
    past `deadline` (a `time.monotonic()` value), those found so far."""
    sel = next((x for x in walk([e]) if x.op in _SELECTIONS), None)
    if sel is None:
        return [e]
    match sel.op:
        case Op.WHERE:
            options = [sel.src[1], sel.src[2]]
        case Op.ABS:
            options = [sel.src[0], Expr(Op.NEG, sel.type, (sel.src[0],))]
        case Op.MOD:
            t = sel.src[0]
            options = [t] + [Expr(Op.SUB, sel.type, (t, const(k * sel.arg if sel.type is Type.INT
                                                              else float(k * sel.arg), sel.type)))
                             for k in (1, -1, 2)]
        case _:
            options = list(sel.src)
    out: list = []
    for o in options:
        replaced = transform([e], lambda x, go, _s=sel, _o=o: _o if x is _s else None)[0]
        out += arms(replaced, deadline)
        if len(out) >= _MAX_ARMS or (deadline is not None and time.monotonic() > deadline):
            break
    return list(dict.fromkeys(out))[:_MAX_ARMS]


def _roots(d, x) -> list:
    """The real roots of d in x, exactly (SymPy numbers: rationals, surds)."""
    if not isinstance(d, sp.Expr) or x not in d.free_symbols or d.has(sp.oo, -sp.oo, sp.zoo, sp.nan, sp.Mod):
        return []
    if sp.count_ops(d) > _MAX_OPS or len(d.free_symbols) > 1:
        return []
    try:
        sols = sp.solve(d, x)
    except (NotImplementedError, TypeError, ValueError, AttributeError):
        return []
    out = []
    for s in sols[:_MAX_ROOTS] if isinstance(sols, list) else []:
        try:
            v = complex(s)
        except (TypeError, ValueError):
            continue
        if abs(v.imag) < 1e-12 and math.isfinite(v.real):
            # an exact real root where SymPy says it is real, else its float's rational
            out.append(s if s.is_real else sp.Rational(float(v.real)))
    return out


def _constants_compared(loop: Loop) -> list[float]:
    """Finite constants that are an operand of a comparison, max or min."""
    out = []
    for e in walk(tuple(loop.left.outputs) + tuple(loop.preconditions)):
        if e.op in COMPARISONS + (Op.MAX, Op.MIN):
            for s in e.src:
                if s.op is Op.CONST and not isinstance(s.arg, bool) and math.isfinite(float(s.arg)):
                    out.append(float(s.arg))
    return out


def exact_roots(loop: Loop, params: dict | None = None, deadline: float | None = None,
                state: tuple | None = None) -> dict[str, list]:
    """Per scalar element parameter, the values at which a comparison switches or a
    field's new value equals its initial value, exactly (SymPy numbers), in order of
    appearance; the compared constants as the rationals they denote.  Past `deadline`
    (a `time.monotonic()` value) no more differences are solved: the roots found so far.
    With `state` (exact field values), the values at which a comparison switches when
    `left` steps from that state instead."""
    memo, symbols = _values(loop, params or {}, state)
    diffs = list(dict.fromkeys(_switches(loop, memo, deadline, arms_too=state is None)))
    out: dict[str, list] = {}
    for d in loop.elements:
        if d.type not in (Type.REAL, Type.INT) or d.index:
            continue
        vals: list = []
        for diff in diffs:
            if deadline is not None and time.monotonic() > deadline:
                break
            for r in _roots(diff, symbols[d.name]):
                if d.type is Type.INT:
                    vals += [sp.floor(r), sp.ceiling(r)]
                else:
                    vals.append(r)
        vals += [sympy_const(c, Type.REAL) for c in _constants_compared(loop)]
        out[d.name] = list(dict.fromkeys(vals))
    return out


def around_exact(values: list, integer: bool) -> list:
    """The values, one on either side of each, and two inside each interval they bound
    (integers where the element is an Int), exactly."""
    if not values:
        return []
    step = sp.Integer(1) if integer else sp.Rational(1, 2)
    out = list(values)
    for v in values:
        out += [v - step, v + step]
    ordered = sorted(set(values), key=lambda v: (float(v), sp.default_sort_key(v)))
    for lo, hi in zip(ordered, ordered[1:]):
        mid = (lo + hi) / 2
        out.append(sp.floor(mid) if integer else sp.radsimp(mid))
    # a second value inside each interval, after all the others: one value alone in an
    # interval such as 0 < alpha < 1 makes alpha**n a function of n, so a state that
    # keeps only the length looks as good as one that keeps the product
    for lo, hi in zip(ordered, ordered[1:]):
        quarter = lo + (hi - lo) / 4
        if not integer:
            out.append(sp.radsimp(quarter))
        elif hi - lo > 2:
            out.append(sp.floor(quarter))
    return list(dict.fromkeys(out))


def exact_element_values(loop: Loop, params: dict | None = None, deadline: float | None = None) -> dict[str, list]:
    """Per scalar element parameter: the roots first, then their sides and interiors,
    exactly (SymPy numbers); past `deadline`, from the roots found so far."""
    by_name = exact_roots(loop, params, deadline)
    types = {d.name: d.type for d in loop.elements}
    return {name: around_exact(vals, types[name] is Type.INT) for name, vals in by_name.items()}


def element_values(loop: Loop, params: dict | None = None, deadline: float | None = None) -> dict[str, list[float]]:
    """`exact_element_values` as floats."""
    return as_floats(exact_element_values(loop, params, deadline))


def as_floats(values: dict[str, list]) -> dict[str, list[float]]:
    """Exact critical values (per element parameter) as floats, each once, in order."""
    return {name: list(dict.fromkeys(float(v) + 0.0 for v in vals)) for name, vals in values.items()}


def counter_length(loop: Loop) -> int:
    """A list length that lets counters reach the integer constants they are compared
    with (`n >= 9` needs 9 steps of a count; 0 when nothing is compared)."""
    longest = 0
    for e in walk(tuple(loop.left.outputs) + tuple(loop.right.outputs if loop.right else ())):
        if e.op in COMPARISONS + (Op.MAX, Op.MIN):
            reads_state = any(s.op is Op.VAR and s.arg.startswith("acc.") for s in walk(list(e.src)))
            for s in e.src:
                if reads_state and s.op is Op.CONST and not isinstance(s.arg, bool) \
                        and math.isfinite(float(s.arg)) and float(s.arg) == int(s.arg):
                    longest = max(longest, abs(int(s.arg)) + 2)
    return min(longest, 64)


def division_guards(loop: Loop) -> list[str]:
    """Preconditions the loop may be missing: `assert d != 0` for each denominator of
    `left` that reads only elements (and loop parameters) and is not asserted nonzero.
    In the reals of the proofs a list that divides by zero has no state, so such a loop
    is analysed on the lists it is defined on only once the precondition says so."""
    from thm3.ir import free_vars
    from thm3.ir.printer import to_text
    elements = {d.name for d in loop.elements} | {d.name for d in loop.params}
    asserted = {to_text(c) for c in loop.preconditions}
    out = []
    for e in walk(tuple(loop.left.outputs)):
        if e.op is Op.DIV:
            den = e.src[1]
            names = free_vars([den])
            text = f"{to_text(den)} != 0"
            if names and names <= elements and text not in asserted and text not in out \
                    and not any(n in to_text(c) for c in loop.preconditions for n in names):
                out.append(text)
    return out
