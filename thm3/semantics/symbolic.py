"""Symbolic evaluation over the extended reals, one table keyed by `Op`.

A value is a Python bool, a Z3 boolean, `Inf(sign)`, `NAN`, or `Fin` (a finite real
carried both as a SymPy expression, for algebra with exp and log, and as a Z3 term,
for deciding orderings).  Where the value of an operation depends on an ordering
(max, a select, the sign of a factor of an infinity) the evaluator asks an
`Explorer` to decide it; the explorer enumerates the feasible decisions with Z3, so
one run of `evaluate` per path covers every case split.  This is how the laws with
max, min, conditionals, exp, log and -inf are proved (see `thm3/prove/laws.py`)."""
from __future__ import annotations

import time
from fractions import Fraction
from dataclasses import dataclass, field

import sympy as sp
import z3

from thm3.errors import SolverTimeout
from thm3.semantics.evaluate import COMPARE
from thm3.ir import Op, Type


@dataclass(frozen=True)
class Inf:
    sign: int

    def __repr__(self) -> str:
        return "inf" if self.sign > 0 else "-inf"


@dataclass(frozen=True)
class NaN:
    """Not a number; `cause` says where it came from ("division" by a possible 0, or
    "arithmetic" such as inf - inf)."""
    cause: str = "arithmetic"

    def __repr__(self) -> str:
        return "nan"


NAN = NaN()


def isnan(v) -> bool:
    return isinstance(v, NaN)


@dataclass(frozen=True, eq=False)
class Fin:
    sp: sp.Expr
    z3: z3.ArithRef

    def __repr__(self) -> str:
        return str(self.sp)


def is_bool(v) -> bool:
    return isinstance(v, bool) or isinstance(v, z3.BoolRef)


class Explorer:
    """Enumerates the feasible decision sequences of a symbolic run, depth first.

    `decide(c)` returns a branch for the Z3 condition `c`: the one the current path
    prescribes, or, at a new decision point, True first with the False side queued
    when both are feasible under the hypotheses and the path so far."""

    def __init__(self, hypotheses: list, deadline: float, check_ms: int = 2000, z3_form=None):
        self.base = list(hypotheses)
        self.deadline = deadline
        self.solver = z3.Solver()
        self.solver.set("timeout", check_ms)
        # what the solver is told: integer comparisons over Ints (one `IntegerForm` may
        # serve many explorers over the same hypotheses: a law's cases)
        self.z3_form = IntegerForm() if z3_form is None else z3_form
        self.solver.add(*map(self.z3_form, self.base))
        self.pending: list[list[bool]] = [[]]
        self.prefix: list[bool] = []
        self.pos = 0
        self.path: list = []
        self.side: list = []          # axioms about uninterpreted exp/log/sqrt instances
        self._side_ids: set = set()
        self.unknown = False          # some feasibility check timed out (then both sides kept)
        self._integers: set[str] | None = None     # read off the hypotheses on first use
        self._integral: dict[int, tuple] = {}     # id -> (term, answer): the term kept, so its id stays its own
        # The path's literals stay asserted on the solver, one scope each, while the path
        # grows (a check then adds one term, not the whole path again); `_asserted` of them
        # are.  Side axioms told the solver inside those scopes are told again at the base
        # once the scopes are popped.
        self._asserted = 0
        self._side_later: list = []
        self._decided: dict[int, tuple] = {}      # condition id -> (condition, branch) on this path

    def integral(self, t) -> bool:
        """Whether the term is an integer by its shape: integer numerals and variables,
        sums, differences, products and selections of such, and Z3's integer mod."""
        key = t.get_id()
        kept = self._integral.get(key)
        if kept is not None and kept[0].eq(t):
            return kept[1]
        if z3.is_rational_value(t):
            got = t.denominator_as_long() == 1
        elif z3.is_int(t) or z3.is_to_real(t):
            got = True
        elif z3.is_const(t):
            if self._integers is None:     # the variables the hypotheses say are integers
                self._integers = {h.arg(0).decl().name() for h in self.base
                                  if z3.is_eq(h) and z3.is_const(h.arg(0)) and z3.is_to_real(h.arg(1))}
            got = t.decl().name() in self._integers
        elif z3.is_add(t) or z3.is_sub(t) or z3.is_mul(t) or z3.is_app_of(t, z3.Z3_OP_UMINUS):
            got = all(self.integral(c) for c in t.children())
        elif z3.is_app_of(t, z3.Z3_OP_ITE):
            got = self.integral(t.arg(1)) and self.integral(t.arg(2))
        else:
            got = False
        self._integral[key] = (t, got)
        return got

    def _tick(self):
        if time.monotonic() > self.deadline:
            raise SolverTimeout()

    def _sync(self):
        """The solver's scopes made to hold exactly the current path's literals."""
        for c in self.path[self._asserted:]:
            self.solver.push()
            self.solver.add(self.z3_form(c))
        self._asserted = len(self.path)

    def _reset(self):
        if self._asserted:
            self.solver.pop(self._asserted)
            self._asserted = 0
        if self._side_later:
            self.solver.add(*map(self.z3_form, self._side_later))
            self._side_later = []

    def _check_with(self, extra):
        self._sync()
        self.solver.push()
        self.solver.add(self.z3_form(extra))
        r = self.solver.check()
        self.solver.pop()
        return r

    def feasible(self, extra) -> bool:
        self._tick()
        r = self._check_with(extra)
        if r == z3.unknown:
            self.unknown = True
            return True
        return r == z3.sat

    def valid(self, claim) -> bool | None:
        """True if `claim` holds on the current path; False if refuted; None if unknown."""
        self._tick()
        if isinstance(claim, bool):
            return claim
        r = self._check_with(z3.Not(claim))
        return True if r == z3.unsat else False if r == z3.sat else None

    def decide(self, c) -> bool:
        if isinstance(c, bool):
            return c
        c = z3.simplify(c)
        if z3.is_true(c):
            return True
        if z3.is_false(c):
            return False
        known = self._decided.get(c.get_id())
        if known is not None and known[0].eq(c):
            # decided earlier on this path (a shared subterm read twice): the same branch,
            # without two more checks; a replay of the path skips it alike
            return known[1]
        if self.pos < len(self.prefix):
            val = self.prefix[self.pos]
        else:
            t_ok = self.feasible(c)
            f_ok = self.feasible(z3.Not(c))
            if t_ok and f_ok:
                self.pending.append(self.prefix + [False])
                val = True
            else:
                val = t_ok
            self.prefix.append(val)
        self.pos += 1
        self.path.append(c if val else z3.Not(c))
        self._decided[c.get_id()] = (c, val)
        return val

    def paths(self):
        """Yield once per path; the caller evaluates inside the loop body."""
        while self.pending:
            self.prefix = self.pending.pop()
            self.pos = 0
            self.path = []
            self._decided = {}
            self._reset()
            yield self

    def add_side(self, fact):
        key = fact.get_id()
        if key not in self._side_ids:
            self._side_ids.add(key)
            self.side.append(fact)
            self.solver.add(self.z3_form(fact))     # an axiom: true on every path, asserted once
            if self._asserted:
                self._side_later.append(fact)       # (inside the path's scopes: again at the base)


_COMPARE = {z3.Z3_OP_EQ: lambda a, b: a == b, z3.Z3_OP_LE: lambda a, b: a <= b, z3.Z3_OP_LT: lambda a, b: a < b,
            z3.Z3_OP_GE: lambda a, b: a >= b, z3.Z3_OP_GT: lambda a, b: a > b}


class IntegerForm:
    """A formula with every comparison of integer-valued real terms (Int symbols as
    `ToReal(i)`, integer numerals, and their sums, differences, products and selections)
    stated over the Ints themselves.  The two are equivalent, since ToReal embeds the
    integers in the reals with their order, sums and products; Z3 decides the Int form
    at once where the mixed one stays "unknown" after its timeout (20 s against 7 ms on
    a law of near_max_count_int).  Terms with a real variable or a division stay as they
    are.  One instance memoises the terms it has rewritten (kept, so that ids stay theirs)."""

    LIMIT = 200_000          # terms memoised before the memo starts afresh

    def __init__(self):
        self._up: dict[int, tuple] = {}
        self._down: dict[int, tuple] = {}

    def __call__(self, t):
        if not isinstance(t, z3.ExprRef):
            return t
        key = t.get_id()
        kept = self._up.get(key)
        if kept is not None:
            return kept[1]
        if len(self._up) + len(self._down) > self.LIMIT:
            self._up.clear()
            self._down.clear()
        got = self._rewrite(t)
        self._up[key] = (t, got)
        return got

    def _rewrite(self, t):
        if z3.is_app(t) and t.num_args() == 2 and t.decl().kind() in _COMPARE and z3.is_real(t.arg(0)):
            a, b = self.down(t.arg(0)), self.down(t.arg(1))
            if a is not None and b is not None:
                return _COMPARE[t.decl().kind()](a, b)
        if z3.is_app_of(t, z3.Z3_OP_TO_INT):
            a = self.down(t.arg(0))
            if a is not None:
                return a
        if not z3.is_app(t) or t.num_args() == 0:
            return t
        kids = [self(c) for c in t.children()]
        if all(k.eq(c) for k, c in zip(kids, t.children())):
            return t
        return t.decl()(*kids)

    def down(self, t):
        """The Int term equal to the real term `t`, or None where it is not integral by shape."""
        key = t.get_id()
        kept = self._down.get(key)
        if kept is not None:
            return kept[1]
        got = None
        if z3.is_rational_value(t):
            got = z3.IntVal(t.numerator_as_long()) if t.denominator_as_long() == 1 else None
        elif z3.is_to_real(t):
            got = self(t.arg(0))
        elif z3.is_add(t) or z3.is_mul(t) or z3.is_sub(t) or z3.is_app_of(t, z3.Z3_OP_UMINUS):
            kids = [self.down(c) for c in t.children()]
            if all(k is not None for k in kids):
                if z3.is_app_of(t, z3.Z3_OP_UMINUS):
                    got = -kids[0]
                elif z3.is_sub(t):
                    got = kids[0] - z3.Sum(kids[1:]) if len(kids) > 2 else kids[0] - kids[1]
                elif z3.is_add(t):
                    got = z3.Sum(kids)
                else:
                    got = z3.Product(kids)
        elif z3.is_app_of(t, z3.Z3_OP_ITE):
            a, b = self.down(t.arg(1)), self.down(t.arg(2))
            if a is not None and b is not None:
                got = z3.If(self(t.arg(0)), a, b)
        self._down[key] = (t, got)
        return got


_SHARED_FORM = IntegerForm()


def shared_integer_form() -> IntegerForm:
    """One integer form for every law of the process.  The form of a term is a function of
    the term alone, and Z3 gives a term built again the id of the one the memo keeps, so
    the laws over the same hypotheses (Houdini's rounds: about 100 invariants each, 10
    rounds on a pretokenizer) rewrite each hypothesis once, not once a law.  Bounded by
    `IntegerForm.LIMIT`."""
    return _SHARED_FORM


def integer_hypothesis(z):
    """`z` (a Real constant) is an integer, told to Z3 as `z == ToReal(z!int)` over a
    fresh Int: its integer reasoning decides that form where `IsInt(z)` stays unknown."""
    return z == z3.ToReal(z3.Int(f"{z.decl().name()}!int"))


@dataclass
class Symbols:
    """Fresh symbols for state operands, elements and parameters, shared by SymPy and Z3."""
    sympy_of: dict = field(default_factory=dict)
    z3_of: dict = field(default_factory=dict)
    hyps: list = field(default_factory=list)

    def real(self, name: str, type_: Type):
        key = name.replace(".", "_")
        made = _SYMBOLS.get((key, type_))
        if made is None:
            if len(_SYMBOLS) >= MAX_SYMBOLS:
                _SYMBOLS.clear()
            made = _SYMBOLS[(key, type_)] = _symbol(key, type_)
        if type_ is Type.BOOL:
            self.z3_of[name] = made
            return made
        s, z = made
        self.sympy_of[name] = s
        self.z3_of[name] = z
        return Fin(s, z)


# (name, type) -> the SymPy and Z3 terms of a symbol: one name is one term in both (SymPy
# and Z3 intern them), so they are made once, not on each of a law's cases (4,096 cases of
# 27 symbols on a 12-field lift's step law: 11 s of making the same terms)
_SYMBOLS: dict = {}
MAX_SYMBOLS = 4096


def _symbol(key: str, type_: Type):
    if type_ is Type.BOOL:
        return z3.Bool(key)
    if type_ is Type.INT:
        # an Int is a Real term over an integer constant: the arithmetic stays in the
        # reals (no integer division), and Z3 reasons on the integer as an Int, where
        # `IsInt(Real)` left it "unknown" after 20 s on laws it decides in 7 ms
        return sp.Symbol(key, integer=True), z3.ToReal(z3.Int(key))
    return sp.Symbol(key, real=True), z3.Real(key)


_CONSTANTS: dict = {}       # (kind, repr) -> Fin: a number's SymPy and Z3 forms, made once
MAX_CONSTANTS = 4096


def constant(value, type_):
    if type_ is Type.BOOL or isinstance(value, bool):
        return bool(value)
    key = (type(value), repr(value))        # 0.0 and -0.0 apart, 1 and 1.0 apart
    got = _CONSTANTS.get(key)
    if got is None:
        got = _constant(value)
        if len(_CONSTANTS) >= MAX_CONSTANTS:
            _CONSTANTS.clear()
        _CONSTANTS[key] = got
    return got


def _constant(value):
    if isinstance(value, float):
        if value != value:
            return NAN
        if value in (float("inf"), float("-inf")):
            return Inf(1 if value > 0 else -1)
        q = sp.Rational(repr(value))
    else:
        q = sp.Integer(value)
    return Fin(q, z3.RealVal(str(q)))


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
