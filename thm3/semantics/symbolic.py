"""Symbolic evaluation over the extended reals, one table keyed by `Op`.

A value is a Python bool, a Z3 boolean, `Inf(sign)`, `NAN`, or `Fin` (a finite real
carried both as a SymPy expression, for algebra with exp and log, and as a Z3 term,
for deciding orderings).  Where the value of an operation depends on an ordering
(max, a select, the sign of a factor of an infinity) the evaluator asks an
`Explorer` to decide it; the explorer enumerates the feasible decisions with Z3, so
one run of `evaluate` per path covers every case split.  This is how the laws with
max, min, conditionals, exp, log and -inf are proved (see `thm3/prove/laws.py`).

The values and their symbols are `thm3.semantics.values`'s, the explorer
`thm3.semantics.explorer`'s; this module is the table."""
from __future__ import annotations

from fractions import Fraction

import sympy as sp
import z3

from thm3.semantics.evaluate import COMPARE
from thm3.ir import Op, Type
from thm3.semantics.explorer import Explorer, IntegerForm, integer_hypothesis, shared_integer_form
from thm3.semantics.values import NAN, Fin, Inf, NaN, Symbols, constant, is_bool, isnan


def _fin_num(x: Fin):
    """The number, when the finite value is a constant."""
    if x.sp is not None:
        return x.sp if x.sp.is_number else None
    t = z3.simplify(x.z3)
    if z3.is_rational_value(t):
        return sp.Rational(t.numerator_as_long(), t.denominator_as_long())
    return None


def _integer_linear(t):
    """(k0, [(x, k), ...]): t as k0 + sum k * x with integer k0 and k, x Real terms that
    are not sums (an Int variable, a product of two); t itself (k 1) where a
    coefficient is not an integer."""
    total, parts = _rational_linear(t)
    if total.denominator != 1 or any(Fraction(k).denominator != 1 for _, k in parts.values()):
        return 0, [(t, 1)]
    return int(total), [(x, int(k)) for x, k in parts.values() if k != 0]


def _linear_key(t):
    """t's rational linear form as a hashable key: (k0, ((atom id, k), ...)) sorted."""
    total, parts = _rational_linear(t)
    return total, frozenset((key, k) for key, (_, k) in parts.items() if k != 0)


def _rational_linear(t):
    """(k0, {atom id: (x, k)}): t as k0 + sum k * x with rational k0 and k."""
    parts: dict = {}
    total = [0]

    def go(u, k):
        u = u.arg(0) if z3.is_to_real(u) else u
        if z3.is_rational_value(u) or z3.is_int_value(u):
            v = Fraction(u.as_fraction()) if z3.is_rational_value(u) else Fraction(u.as_long())
            total[0] += k * v
        elif z3.is_add(u):
            for child in u.children():
                go(child, k)
        elif z3.is_sub(u):
            first, *rest = u.children()
            go(first, k)
            for child in rest:
                go(child, -k)
        elif u.decl().kind() == z3.Z3_OP_UMINUS:
            go(u.arg(0), -k)
        elif z3.is_mul(u) and u.num_args() == 2 and (z3.is_rational_value(u.arg(0)) or z3.is_int_value(u.arg(0))):
            v = u.arg(0)
            go(u.arg(1), k * (Fraction(v.as_fraction()) if z3.is_rational_value(v) else Fraction(v.as_long())))
        else:
            x = z3.ToReal(u) if u.sort() == z3.IntSort() else u
            key = x.get_id()
            parts[key] = (x, parts.get(key, (x, 0))[1] + k)
    go(t, Fraction(1))
    return total[0], parts


def S(f, *xs):
    """A SymPy result, or None in lazy (Z3-only) evaluation."""
    return None if any(x is None for x in xs) else f(*xs)


class SymbolicTable(dict):
    """The table for `evaluate`; holds the explorer it asks for decisions."""

    def __init__(self, explorer: Explorer, lazy: bool):
        super().__init__()
        self.ex = explorer
        self.lazy = lazy          # build Z3 If-terms instead of splitting (no transcendental ops)
        self.funcs: dict[str, z3.FuncDeclRef] = {}
        self.instances: dict[str, list] = {}
        self._axiomatised: set[tuple] = set()
        # (-inf, +inf) as two finite symbols below and above every other value, where a
        # law only compares and selects the values that may be infinite (`extended`)
        self.ends: tuple | None = None
        # a law split on constant control fields: selections on constants take one branch
        # (`evaluate.Memo._on_demand`)
        self.short_circuit = False
        for op in Op:
            if op not in (Op.VAR,):
                self[op] = getattr(self, "op_" + op.name.lower())

    # -- helpers -------------------------------------------------------------
    def _uf(self, name: str, arity: int = 1):
        if name not in self.funcs:
            self.funcs[name] = z3.Function(name, *([z3.RealSort()] * (arity + 1)))
        return self.funcs[name]

    def _select(self, c, a, b):
        if isinstance(c, bool):
            return a if c else b
        if self.lazy and isinstance(a, Fin) and isinstance(b, Fin):
            if a.sp is not None and a.sp == b.sp:
                return a
            return Fin(None, z3.If(c, a.z3, b.z3))
        if self.lazy and is_bool(a) and is_bool(b):
            return z3.If(c, as_z3_bool(a), as_z3_bool(b))
        return a if self.ex.decide(c) else b

    def extended(self, v):
        """`v` with an infinity as its end symbol, where the table has them."""
        if self.ends is not None and isinstance(v, Inf):
            return self.ends[v.sign > 0]
        return v

    # -- leaves --------------------------------------------------------------
    def op_const(self, value, type_):
        return self.extended(constant(value, type_))

    # -- arithmetic ------------------------------------------------------------
    def op_neg(self, a):
        if isnan(a):
            return a
        if isinstance(a, Inf):
            return Inf(-a.sign)
        return Fin(S(lambda x: -x, a.sp), -a.z3)

    def op_add(self, a, b):
        if isnan(a) or isnan(b):
            return a if isnan(a) else b
        if isinstance(a, Inf) and isinstance(b, Inf):
            return a if a.sign == b.sign else NAN
        if isinstance(a, Inf):
            return a
        if isinstance(b, Inf):
            return b
        return Fin(S(lambda x, y: x + y, a.sp, b.sp), a.z3 + b.z3)

    def op_sub(self, a, b):
        return self.op_add(a, self.op_neg(b))

    def _sign(self, x: Fin) -> int:
        n = _fin_num(x)
        if n is not None:
            # SymPy compares numbers to its own booleans (sympy.true), not Python's
            return int(bool(n > 0)) - int(bool(n < 0))
        if self.ex.decide(x.z3 > 0):
            return 1
        return -1 if self.ex.decide(x.z3 < 0) else 0

    def op_mul(self, a, b):
        if isnan(a) or isnan(b):
            return a if isnan(a) else b
        if isinstance(a, Inf) and isinstance(b, Inf):
            return Inf(a.sign * b.sign)
        if isinstance(b, Inf):
            a, b = b, a
        if isinstance(a, Inf):
            s = self._sign(b)
            return NAN if s == 0 else Inf(a.sign * s)
        return Fin(S(lambda x, y: x * y, a.sp, b.sp), a.z3 * b.z3)

    def op_div(self, a, b):
        if isnan(a) or isnan(b):
            return a if isnan(a) else b
        if isinstance(b, Inf):
            return NAN if isinstance(a, Inf) else constant(0.0, Type.REAL)
        if isinstance(a, Inf):
            s = self._sign(b)
            return NAN if s == 0 else Inf(a.sign * s)
        n = _fin_num(b)
        if n is not None and n == 0 or n is None and self.ex.decide(b.z3 == 0):
            # x/0 is inf or NaN; both poison the law, so one value stands for both.
            return NaN("division")
        return Fin(S(lambda x, y: x / y, a.sp, b.sp), a.z3 / b.z3)

    def op_pow(self, a, n):
        if isnan(a):
            return a
        if isinstance(a, Inf):
            if n == 0:
                return constant(1.0, Type.REAL)
            if n < 0:
                return constant(0.0, Type.REAL)
            return Inf(1 if n % 2 == 0 else a.sign)
        if n < 0:
            return self.op_div(constant(1.0, Type.REAL), self.op_pow(a, -n))
        z = z3.RealVal(1) if n == 0 else a.z3
        for _ in range(n - 1):
            z = z * a.z3
        return Fin(S(lambda x: x ** n, a.sp), z)

    def op_pown(self, a, n):
        """`c ** n` for an Int n.  A constant n is POW's; otherwise, for c != 0, the
        exponent is split into its integer linear form k0 + sum k_i x_i and the power is
        c ** k0 times the product of P(c, x_i) ** k_i, with P an uninterpreted function
        that holds what is true of every integer power (positive for c > 0, nonzero for
        c != 0, 1 at x = 0, c at x = 1, on the side of 1 that c and x say): so
        c ** (x + y) == c ** x * c ** y holds by construction, as for integers it does."""
        if isnan(a) or isnan(n):
            return a if isnan(a) else n
        k = _fin_num(n)
        if k is not None:
            return self.op_pow(a, int(k))
        sym = S(lambda x, y: x ** y, a.sp if isinstance(a, Fin) else None, n.sp)
        if isinstance(a, Inf):
            if self.ex.decide(n.z3 == 0):
                return constant(1.0, Type.REAL)
            if self.ex.decide(n.z3 < 0):
                return constant(0.0, Type.REAL)
            even = self.ex.decide(z3.ToInt(n.z3) % 2 == 0) if a.sign < 0 else True
            return Inf(1 if even else -1)
        c = _fin_num(a)
        if c is not None and c == 0 or c is None and self.ex.decide(a.z3 == 0):
            if self.ex.decide(n.z3 > 0):
                return constant(0.0, Type.REAL)
            if self.ex.decide(n.z3 == 0):
                return constant(1.0, Type.REAL)
            return NaN("division")
        k0, parts = _integer_linear(n.z3)
        z = self.op_pow(Fin(None, a.z3), k0).z3 if k0 else z3.RealVal(1)
        for x, kx in parts:
            t = self._power_instance(a.z3, x)
            for _ in range(abs(kx)):
                z = z * t if kx > 0 else z / t
        return Fin(sym, z)

    def _power_instance(self, c, x):
        t = self._uf("pown", 2)(c, x)
        key = ("pown", t.get_id())
        if key not in self._axiomatised:
            self._axiomatised.add(key)
            for fact in (z3.Implies(c > 0, t > 0), z3.Implies(c != 0, t != 0),
                         z3.Implies(x == 0, t == 1), z3.Implies(x == 1, t == c),
                         z3.Implies(z3.And(c > 0, c <= 1, x >= 0), t <= 1),
                         z3.Implies(z3.And(c > 0, c <= 1, x <= 0), t >= 1),
                         z3.Implies(z3.And(c >= 1, x >= 0), t >= 1),
                         z3.Implies(z3.And(c >= 1, x <= 0), t <= 1)):
                self.ex.add_side(fact)
        return t

    def op_mod(self, a, m):
        # the floored remainder a - m * floor(a / m), in [0, m); Z3's to_int is the floor
        if isnan(a) or isinstance(a, Inf):
            return NAN
        n = _fin_num(a)
        if n is not None:
            r = sp.Mod(n, m)
            return Fin(r, z3.RealVal(str(r))) if r.is_Rational else Fin(r, a.z3 - m * z3.ToReal(z3.ToInt(a.z3 / m)))
        if self.ex.integral(a.z3):
            z = z3.ToReal(z3.ToInt(a.z3) % m)       # an Int: Z3's integer mod, which it decides best
        else:
            z = a.z3 - m * z3.ToReal(z3.ToInt(a.z3 / m))
        return Fin(S(lambda x: sp.Mod(x, m), a.sp), z)

    def op_abs(self, a):
        if isnan(a):
            return a
        if isinstance(a, Inf):
            return Inf(1)
        if self.lazy:
            return Fin(None, z3.If(a.z3 >= 0, a.z3, -a.z3))
        return a if self.ex.decide(a.z3 >= 0) else self.op_neg(a)

    def _maxmin(self, a, b, want_max: bool):
        if isnan(a) or isnan(b):
            return a if isnan(a) else b
        big = 1 if want_max else -1
        for x, y in ((a, b), (b, a)):
            if isinstance(x, Inf):
                if x.sign == big:
                    return x
                return y
        if a.sp is not None and a.sp == b.sp:
            return a
        c = a.z3 >= b.z3 if want_max else a.z3 <= b.z3
        if self.lazy:
            return Fin(None, z3.If(c, a.z3, b.z3))
        return a if self.ex.decide(c) else b

    def op_max(self, a, b):
        return self._maxmin(a, b, True)

    def op_min(self, a, b):
        return self._maxmin(a, b, False)

    # -- transcendental: SymPy for algebra, uninterpreted functions in Z3 ---------
    def _exp_like(self, a, name: str, base):
        if isnan(a):
            return a
        if isinstance(a, Inf):
            return Inf(1) if a.sign > 0 else constant(0.0, Type.REAL)
        n = _fin_num(a)
        if n is not None and n == 0:
            return constant(1.0, Type.REAL)
        f = self._uf(name)
        t = f(a.z3)
        seen = self.instances.setdefault(name, [])
        key = (name, t.get_id())
        if key not in self._axiomatised:
            # Each instance once (every path evaluates the same terms again): positive,
            # on the side of 1 its argument's sign says, and strictly increasing against
            # every earlier instance, both ways.
            self._axiomatised.add(key)
            self.ex.add_side(t > 0)
            self.ex.add_side(z3.Implies(a.z3 <= 0, t <= 1))
            self.ex.add_side(z3.Implies(a.z3 >= 0, t >= 1))
            self.ex.add_side(z3.Implies(a.z3 < 0, t < 1))
            self.ex.add_side(z3.Implies(a.z3 > 0, t > 1))
            for other_arg, other in seen:
                self.ex.add_side(z3.Implies(a.z3 <= other_arg, t <= other))
                self.ex.add_side(z3.Implies(a.z3 >= other_arg, t >= other))
                self.ex.add_side(z3.Implies(a.z3 < other_arg, t < other))
                self.ex.add_side(z3.Implies(a.z3 > other_arg, t > other))
            self._exp_products(name, a.z3, t)
            seen.append((a.z3, t))
        return Fin(S(sp.exp if base is None else (lambda x: sp.Integer(2) ** x), a.sp), t)

    def _exp_products(self, name: str, u, t):
        """exp(u + v) == exp(u) * exp(v) between instances whose arguments' rational linear
        forms add up exactly (exp(-(s + r)) against exp(-s) and exp(-r): a decay over two
        lists' elapsed times), read off the forms, so only true equations are added, and
        few: one per such triple."""
        forms = self.instances.setdefault(name + "#forms", [])
        mine = _linear_key(u)

        def added(x, y):
            terms: dict = dict(x[1])
            for key, k in y[1]:
                terms[key] = terms.get(key, 0) + k
            return x[0] + y[0], frozenset((key, k) for key, k in terms.items() if k != 0)

        for i, (fi, ti) in enumerate(forms):
            for fj, tj in forms[i:]:
                if added(fi, fj) == mine:
                    self.ex.add_side(t == ti * tj)
            for fj, tj in forms:
                if added(mine, fj) == fi:
                    self.ex.add_side(ti == t * tj)
        forms.append((mine, t))

    def op_exp(self, a):
        return self._exp_like(a, "exp", None)

    def op_exp2(self, a):
        return self._exp_like(a, "exp2", 2)

    def _log_like(self, a, name: str, base):
        if isnan(a):
            return a
        if isinstance(a, Inf):
            return a if a.sign > 0 else NAN
        n = _fin_num(a)
        if n is not None:
            if n == 0:
                return Inf(-1)
            if n < 0:
                return NAN
        elif not self.lazy:
            if self.ex.decide(a.z3 == 0):
                return Inf(-1)
            if self.ex.decide(a.z3 < 0):
                return NAN
        t = self._uf(name)(a.z3)
        self.ex.add_side(z3.Implies(a.z3 >= 1, t >= 0))
        self.ex.add_side(z3.Implies(z3.And(a.z3 > 0, a.z3 <= 1), t <= 0))
        self.ex.add_side(z3.Implies(a.z3 > 1, t > 0))          # strictly increasing
        self.ex.add_side(z3.Implies(z3.And(a.z3 > 0, a.z3 < 1), t < 0))
        return Fin(S(sp.log if base is None else (lambda x: sp.log(x, 2)), a.sp), t)

    def op_log(self, a):
        return self._log_like(a, "log", None)

    def op_log2(self, a):
        return self._log_like(a, "log2", 2)

    def op_sqrt(self, a):
        if isnan(a):
            return a
        if isinstance(a, Inf):
            return a if a.sign > 0 else NAN
        if not self.lazy and _fin_num(a) is None and self.ex.decide(a.z3 < 0):
            return NAN
        t = self._uf("sqrt")(a.z3)
        self.ex.add_side(t >= 0)
        self.ex.add_side(z3.Implies(a.z3 >= 0, t * t == a.z3))
        return Fin(S(sp.sqrt, a.sp), t)

    def op_dot(self, u, v):
        if isnan(u) or isnan(v):
            return u if isnan(u) else v
        return Fin(S(sp.Function("dot"), u.sp, v.sp), self._uf("dot", 2)(u.z3, v.z3))

    # -- comparisons and logic ---------------------------------------------------
    def _compare(self, a, b, op):
        if isnan(a) or isnan(b):
            return op is Op.NE
        if isinstance(a, Inf) or isinstance(b, Inf):
            # Against an infinity any finite value decides the same way as 0.
            x = a.sign * float("inf") if isinstance(a, Inf) else 0.0
            y = b.sign * float("inf") if isinstance(b, Inf) else 0.0
            return COMPARE[op](x, y)
        na, nb = _fin_num(a), _fin_num(b)
        if na is not None and nb is not None:
            return bool(COMPARE[op](na, nb))
        return COMPARE[op](a.z3, b.z3)

    def op_lt(self, a, b):
        return self._compare(a, b, Op.LT)

    def op_le(self, a, b):
        return self._compare(a, b, Op.LE)

    def op_gt(self, a, b):
        return self._compare(a, b, Op.GT)

    def op_ge(self, a, b):
        return self._compare(a, b, Op.GE)

    def op_eq(self, a, b):
        if is_bool(a) and is_bool(b):
            if isinstance(a, bool) and isinstance(b, bool):
                return a == b
            return as_z3_bool(a) == as_z3_bool(b)
        return self._compare(a, b, Op.EQ)

    def op_ne(self, a, b):
        if is_bool(a) and is_bool(b):
            return self.op_not(self.op_eq(a, b))
        return self._compare(a, b, Op.NE)

    def op_not(self, a):
        return (not a) if isinstance(a, bool) else z3.Not(a)

    def op_and(self, a, b):
        if isinstance(a, bool):
            return b if a else False
        if isinstance(b, bool):
            return a if b else False
        return z3.And(a, b)

    def op_or(self, a, b):
        if isinstance(a, bool):
            return True if a else b
        if isinstance(b, bool):
            return True if b else a
        return z3.Or(a, b)

    def op_where(self, c, a, b):
        return self._select(c, a, b)


def as_z3_bool(b):
    return z3.BoolVal(b) if isinstance(b, bool) else b


__all__ = ["NAN", "Explorer", "Fin", "Inf", "IntegerForm", "NaN", "S", "SymbolicTable",
           "Symbols", "as_z3_bool", "constant", "integer_hypothesis", "is_bool", "isnan", "shared_integer_form"]
