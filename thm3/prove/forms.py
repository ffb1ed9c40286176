"""A law over a tropical semiring decided by normal forms: the control cases
enumerated, each side written as a tropical polynomial, and the two compared term by
term, with no solver.

Theorem.  On nonnegative finite reals, products distribute over max and over min
(p * max(s, t) == max(p * s, p * t) for p >= 0), max and min are associative,
commutative and idempotent, and products are associative and commutative.  So every
term built from nonnegative finite variables and constants with *, max (or min), and
division by a positive constant equals max (or min) over a finite set of monomials
c * v1**k1 * ... * vn**kn with c >= 0, with equal monomials merged (max(c*m, d*m) ==
max(c, d) * m); under max a monomial with c == 0 is 0, the identity of max on
nonnegatives, and is dropped; under min it is 0, which absorbs the rest.  Likewise over
(max, +) and (min, +): sums distribute over max and min (p + max(s, t) == max(p + s, p +
t)), and so does scaling by a constant c >= 0, so every term built with +, max (or min),
subtraction of a single affine form and scaling equals max (or min) of affine forms
c + k1 v1 + ... + kn vn, equal linear parts merged.  There a variable may also be the
semiring's zero (-inf under max, +inf under min: a lift's copy that a reset clears) where
every form gives it a coefficient > 0: such a form is then the zero, the identity of the
max, on both sides alike.  Two terms with the same normal form are equal at every such
value of the variables (the converse need not hold: a different normal form proves
nothing, and the law goes to the solver).

A law's selections must be decided by its finite variables: Bool fields, Int fields
between constant bounds (proved invariants), Bool elements and Int elements between
constant bounds (preconditions).  Each assignment of those in the law's terms is a case;
an assignment that an invariant or a precondition over those variables alone rules out
is skipped (no state or element has it), and on every other the two sides must have the
same normal form.  Over (max, *) and (min, *) the other variables (data fields, Real
elements, parameters) must be nonnegative and finite by an invariant or a precondition
(a field `>= 0` and `< inf`, an element or a parameter `>= 0`: the proofs' elements and
parameters are finite reals); over (max, +) a field must be `< inf` (and is finite where
it is `> -inf` too), over (min, +) `> -inf`.

This is what the solver cannot do for (max, *): on a path of orderings the two sides are
products compared under products (nonlinear real arithmetic), where a step law of a
5-field (max, *) lift under a delisting flag stays unproved past 60 s; the normal forms
decide it in milliseconds (the semiring's laws, as in Gondran and Minoux, "Graphs,
Dioids and Semirings", 2008, ch. 1)."""
from __future__ import annotations

import itertools
import math
import time
from fractions import Fraction

from thm3.ir import Expr, Fn, Loop, Op, Type, initial_state, substitute, var, walk
from thm3.prove.laws import Outcome, Setting
from thm3.prove.reachable import conjuncts, constant_bounds, int_values
from thm3.errors import Thm3Error

MAX_CASES = 4096        # assignments of the finite variables a law is split into at most
MAX_TERMS = 512         # monomials in one normal form at most
SHARE = 0.25            # of the time left, for the forms of one law (the solver gets the rest)
TIMES, PLUS = "*", "+"  # the semiring's product: a monomial's powers, or an affine form's coefficients
HOW = "by normal forms over ({op}, {algebra}){where}: {cases}both sides are the same {op} of {what}"
CASES = "on each of {n} case(s) of the finite control and elements, "


class NotForm(Thm3Error):
    """A term outside the class (an addition of products, a negative factor, an undecided
    selection)."""


class Form:
    """max (or min) over terms {key: constant}: under TIMES a key is a monomial's powers
    ((name, power), ...) and the constant its coefficient >= 0; under PLUS a key is an
    affine form's linear part ((name, coefficient), ...) and the constant its offset.
    `ends`: the variables that may be the semiring's zero, whose coefficients must stay
    positive (a negative one would make +inf of -inf, and a sum -inf + inf)."""
    __slots__ = ("kind", "algebra", "terms", "ends")

    def __init__(self, kind: Op, algebra: str, terms: dict, ends: frozenset = frozenset()):
        if algebra is TIMES:
            if kind is Op.MIN and any(c == 0 for c in terms.values()):
                terms = {(): Fraction(0)}           # 0 absorbs a min of nonnegatives
            elif kind is Op.MAX:
                terms = {m: c for m, c in terms.items() if c != 0}     # 0 is max's identity there
        elif ends and any(k <= 0 for m in terms for v, k in m if v in ends):
            raise NotForm("a variable that may be infinite with a coefficient <= 0")
        if len(terms) > MAX_TERMS:
            raise NotForm("too many terms")
        self.kind, self.algebra, self.terms, self.ends = kind, algebra, terms, ends

    def __eq__(self, other):
        return isinstance(other, Form) and self.terms == other.terms

    def _made(self, terms: dict) -> "Form":
        return Form(self.kind, self.algebra, terms, self.ends)

    def join(self, other: "Form") -> "Form":
        out = dict(self.terms)
        pick = max if self.kind is Op.MAX else min
        for m, c in other.terms.items():
            out[m] = pick(out[m], c) if m in out else c
        return self._made(out)

    def times(self, other: "Form") -> "Form":
        """The semiring's product: * of monomials, or + of affine forms."""
        if len(self.terms) * len(other.terms) > 8 * MAX_TERMS:
            raise NotForm("too many terms")
        pick = max if self.kind is Op.MAX else min
        out: dict = {}
        for (m1, c1), (m2, c2) in itertools.product(self.terms.items(), other.terms.items()):
            m = _key_sum(m1, m2)
            c = c1 * c2 if self.algebra is TIMES else c1 + c2
            out[m] = pick(out[m], c) if m in out else c
        return self._made(out)

    def scaled(self, k: Fraction) -> "Form":
        """k * self under PLUS: k >= 0 distributes over the max; k < 0 only on one term
        (it turns a max into a min); 0 times a variable that may be infinite is NaN."""
        if k < 0 and len(self.terms) != 1 or k == 0 and (self.ends or not self.terms):
            # (the empty form is the zero itself: 0 * -inf is NaN, -(-inf) no max)
            raise NotForm("a scaling that is no tropical map")
        out: dict = {}
        for m, c in self.terms.items():
            key = tuple((v, k * e) for v, e in m if k * e != 0)
            out[key] = k * c
        return self._made(out)


def _key_sum(m1: tuple, m2: tuple) -> tuple:
    powers = dict(m1)
    for v, k in m2:
        powers[v] = powers.get(v, 0) + k
    return tuple(sorted((v, k) for v, k in powers.items() if k != 0))


def _number(v) -> Fraction:
    if isinstance(v, bool):
        raise NotForm("a Bool as a number")
    if isinstance(v, float) and not math.isfinite(v):
        raise NotForm("an infinite constant")
    return Fraction(v)


class _Normaliser:
    """Evaluates terms to Python values (the finite variables, constants, and what is
    decided from them) or to `Form`s (anything reading a data variable)."""

    def __init__(self, kind: Op, algebra: str, env: dict, ends: frozenset, atoms=None):
        self.kind, self.algebra, self.env, self.ends, self.memo = kind, algebra, env, ends, {}
        self.atoms = atoms          # (element and parameter names, their asserted bounds), or None

    def form(self, v) -> Form:
        if isinstance(v, Form):
            return v
        if isinstance(v, _Zero):
            return Form(self.kind, self.algebra, {}, self.ends)
        c = _number(v)
        if self.algebra is TIMES and c < 0:
            raise NotForm("a negative constant in a product or a selection of data")
        return Form(self.kind, self.algebra, {(): c}, self.ends)

    def __call__(self, e: Expr):
        got = self.memo.get(id(e))
        if got is not None and got[0] is e:
            return got[1]
        try:
            v = self._eval(e)
        except NotForm:
            v = self._atom(e)
            if v is None:
                raise
        self.memo[id(e)] = (e, v)
        return v

    def _atom(self, e: Expr) -> Form | None:
        """A term of the elements and parameters alone that is no form (`1 - p`, `x * x`)
        as one variable of its own, where its value is a finite real (sums, differences,
        products, max, min and abs of finite reals) and, under a product, nonnegative by
        the asserted bounds (`1 - p` where `p <= 1` is asserted); None else."""
        if self.atoms is None:
            return None
        from thm3.synth.semiring import nonnegative
        names, known = self.atoms
        for x in walk([e]):
            if x.op not in _ATOM_OPS or x.op is Op.VAR and x.arg not in names or \
                    x.op is Op.CONST and (isinstance(x.arg, bool) or not math.isfinite(float(x.arg))):
                return None
        if self.algebra is TIMES and not nonnegative(e, known):
            return None
        key = ((f"({e!r})", 1),)
        return Form(self.kind, self.algebra, {key: Fraction(1) if self.algebra is TIMES else Fraction(0)},
                    self.ends)

    def _eval(self, e: Expr):
        op = e.op
        if op is Op.CONST:
            if e.type is Type.REAL and not math.isfinite(e.arg):
                # the semiring's zero under PLUS (-inf under max); any other infinity is
                # outside the class (+inf * 0 is NaN where the forms would say 0)
                zero = -math.inf if self.kind is Op.MAX else math.inf
                if self.algebra is PLUS and e.arg == zero:
                    return _ZERO
                raise NotForm("an infinite constant")
            return _number(e.arg) if e.type is Type.REAL else e.arg
        if op is Op.VAR:
            v = self.env.get(e.arg)
            if v is None or v is _ONLY_IN_ATOMS:
                raise NotForm(f"{e.arg} is unknown here")
            return v
        if op is Op.WHERE:
            c = self(e.src[0])
            if not isinstance(c, bool):
                raise NotForm("a selection on data")
            return self(e.src[1] if c else e.src[2])
        args = [self(s) for s in e.src]
        if not any(isinstance(a, (Form, _Zero)) for a in args):
            return _concrete(op, args, e)
        if op is self.kind:
            return self.form(args[0]).join(self.form(args[1]))
        if self.algebra is TIMES:
            return self._times(op, args, e)
        return self._plus(op, args, e)

    def _times(self, op: Op, args: list, e: Expr):
        if op is Op.MUL:
            return self.form(args[0]).times(self.form(args[1]))
        if op is Op.DIV and not isinstance(args[1], (Form, _Zero)) and _number(args[1]) > 0:
            return self.form(args[0]).times(self.form(1 / _number(args[1])))
        if op is Op.POW and isinstance(e.arg, int) and e.arg >= 0:
            out = self.form(Fraction(1))
            for _ in range(e.arg):
                out = out.times(self.form(args[0]))
            return out
        raise NotForm(f"{op.name.lower()} of data over a product")

    def _plus(self, op: Op, args: list, e: Expr):
        if op is Op.ADD:
            return self.form(args[0]).times(self.form(args[1]))
        if op is Op.SUB:
            return self.form(args[0]).times(self.form(args[1]).scaled(Fraction(-1)))
        if op is Op.NEG:
            return self.form(args[0]).scaled(Fraction(-1))
        if op is Op.MUL:
            x, y = args
            if isinstance(x, (Form, _Zero)) and isinstance(y, (Form, _Zero)):
                raise NotForm("a product of data over a sum")
            k, f = (y, x) if isinstance(x, (Form, _Zero)) else (x, y)
            return self.form(f).scaled(_number(k))
        if op is Op.DIV and not isinstance(args[1], (Form, _Zero)) and _number(args[1]) != 0:
            return self.form(args[0]).scaled(1 / _number(args[1]))
        raise NotForm(f"{op.name.lower()} of data over a sum")


_ONLY_IN_ATOMS = object()      # an element or parameter not shown nonnegative: read inside an atom only
_ATOM_OPS = frozenset({Op.CONST, Op.VAR, Op.ADD, Op.SUB, Op.MUL, Op.NEG, Op.ABS, Op.MAX, Op.MIN})


class _Zero:
    """The semiring's zero as a constant (-inf under (max, +)): the empty form."""
    __slots__ = ()


_ZERO = _Zero()


def _concrete(op: Op, args: list, e: Expr):
    """An operation on decided values (exact: Fractions for reals)."""
    a = args
    match op:
        case Op.NOT:
            return not a[0]
        case Op.AND:
            return bool(a[0]) and bool(a[1])
        case Op.OR:
            return bool(a[0]) or bool(a[1])
        case Op.EQ:
            return a[0] == a[1]
        case Op.NE:
            return a[0] != a[1]
        case Op.LT:
            return a[0] < a[1]
        case Op.LE:
            return a[0] <= a[1]
        case Op.GT:
            return a[0] > a[1]
        case Op.GE:
            return a[0] >= a[1]
        case Op.ADD:
            return a[0] + a[1]
        case Op.SUB:
            return a[0] - a[1]
        case Op.MUL:
            return a[0] * a[1]
        case Op.NEG:
            return -a[0]
        case Op.DIV:
            return Fraction(a[0]) / Fraction(a[1])
        case Op.MAX:
            return max(a[0], a[1])
        case Op.MIN:
            return min(a[0], a[1])
        case Op.ABS:
            return abs(a[0])
        case Op.MOD if isinstance(a[0], int) and isinstance(e.arg, int) and e.arg > 0:
            return a[0] % e.arg
    raise NotForm(f"{op.name.lower()} of decided values")


def _domains(loop: Loop, setting: Setting, operands: list[str], elements: list[str]):
    """The finite variables of a law with their values, and for every other variable its
    sign and ends: {name: (nonnegative, below +inf, above -inf)} (elements and parameters
    are finite reals in the proofs)."""
    inv = conjuncts(setting.invariants)
    pre = conjuncts(loop.preconditions)
    flo, fhi = constant_bounds(inv)
    plo, phi = constant_bounds(pre)
    finite: dict[str, list] = {}
    data: dict[str, tuple[bool, bool, bool]] = {}

    def facts(lo, hi, real_field: bool) -> tuple[bool, bool, bool]:
        nonneg = lo is not None and lo[0] >= 0
        # below +inf: a bound below it, or `< inf` itself; above -inf likewise
        below = not real_field or hi is not None and (hi[0] < math.inf or hi[1])
        above = not real_field or nonneg or lo is not None and (lo[0] > -math.inf or lo[1])
        return nonneg, below, above

    for f in loop.fields:
        name = f"acc.{f.name}"
        vals = [False, True] if f.type is Type.BOOL else \
            int_values(flo.get(name), fhi.get(name)) if f.type is Type.INT else None
        for p in operands:
            if vals is not None:
                finite[f"{p}.{f.name}"] = vals
            elif f.type in (Type.INT, Type.REAL):
                data[f"{p}.{f.name}"] = facts(flo.get(name), fhi.get(name), f.type is Type.REAL)
    for d in list(loop.elements) + list(loop.params):
        names = [f"{x}.{d.name}" for x in elements] if d in loop.elements else [d.name]
        vals = [False, True] if d.type is Type.BOOL else \
            int_values(plo.get(d.name), phi.get(d.name)) if d.type is Type.INT else None
        for n in names:
            if vals is not None:
                finite[n] = vals
            elif d.type in (Type.INT, Type.REAL):
                data[n] = facts(plo.get(d.name), phi.get(d.name), False)
    return finite, data, inv, pre


def _kind(exprs) -> Op | None:
    """The semiring's sum: the one of max and min that the terms use; None where they use
    both or neither (a sum or a product alone is the solver's: linear identities are its
    strength, and the detail names the method that proved a law)."""
    ops = {e.op for e in walk(list(exprs))}
    if (Op.MAX in ops) == (Op.MIN in ops):
        return None
    return Op.MIN if Op.MIN in ops else Op.MAX


def _variables(kind: Op, algebra: str, data: dict, atomic=frozenset()) -> tuple[dict, frozenset] | None:
    """Each data variable's form, and those that may be the zero; None where one is
    outside the semiring's values (an element or parameter in `atomic` is then read only
    inside an atom, `_Normaliser._atom`: `1 - p` with p <= 1 asserted, p of any sign)."""
    env, ends, inside = {}, set(), {}
    for n, (nonneg, below, above) in data.items():
        if algebra is TIMES:
            if not (nonneg and below):
                if n not in atomic:
                    return None
                inside[n] = _ONLY_IN_ATOMS
                continue
        else:
            finite_side, zero_side = (below, above) if kind is Op.MAX else (above, below)
            if not finite_side:
                return None
            if not zero_side:
                ends.add(n)
        env[n] = ((n, 1),)
    ends = frozenset(ends)
    return {n: Form(kind, algebra, {key: Fraction(1) if algebra is TIMES else Fraction(0)}, ends)
            for n, key in env.items()} | inside, ends


def prove_by_forms(setting: Setting, lhs: list[Expr], rhs: list[Expr], operands: list[str],
                   elements: list[str], deadline: float) -> Outcome | None:
    """lhs[i] == rhs[i] for every i, by normal forms on every case of the finite
    variables (terms over "<operand>.<field>", "<element>.<name>" and the parameters),
    over (max or min, *) and else over (max or min, +); "proved" where every case has
    equal forms, None where the terms are outside both or some case's forms differ (the
    solver decides then)."""
    loop = setting.loop
    kind = _kind(list(lhs) + list(rhs))
    if kind is None:
        return None
    finite, data, inv, pre = _domains(loop, setting, operands, elements)
    used = {e.arg for e in walk(list(lhs) + list(rhs)) if e.op is Op.VAR}
    if not used <= set(finite) | set(data):
        return None
    names = sorted(used & set(finite))
    if math.prod(len(finite[n]) for n in names) > MAX_CASES:
        return None
    # the facts that rule an assignment out: invariants per operand, preconditions per element
    facts = [substitute([a], {f"acc.{f.name}": var(f"{p}.{f.name}", f.type) for f in loop.fields})[0]
             for p in operands for a in inv]
    facts += [substitute([a], {d.name: var(f"{x}.{d.name}", d.type) for d in loop.elements})[0]
              for x in elements for a in pre]
    data = {n: v for n, v in data.items() if n in used}
    atoms = _atom_names(loop, elements, set(data))
    for algebra in (TIMES, PLUS):
        got = _by_cases(kind, algebra, data, finite, names, facts, lhs, rhs, deadline, atoms)
        if got is not None:
            return got
    return None


def _atom_names(loop: Loop, elements: list[str], data: set[str]):
    """The element and parameter variables of a law (elements as "<x>.<name>") among
    `data`, with their asserted bounds under those names: what an atom may read."""
    from thm3.synth.semiring import Asserted, asserted_nonnegative
    known = asserted_nonnegative(loop)
    rename = {d.name: [f"{x}.{d.name}" for x in elements] for d in loop.elements}
    rename |= {d.name: [d.name] for d in loop.params}

    def renamed(names):
        return {n2 for n in names for n2 in rename.get(n, ())}

    def bounds(d: dict) -> dict:
        return {n2: b for n, b in d.items() for n2 in rename.get(n, ())}
    names = {n for ns in rename.values() for n in ns} & data
    return names, Asserted(renamed(known), bounds(known.lower), bounds(known.upper))


def _by_cases(kind, algebra, data, finite, names, facts, lhs, rhs, deadline, atoms=None) -> Outcome | None:
    t0 = time.monotonic()
    got = _variables(kind, algebra, data, atoms[0] if atoms else frozenset())
    if got is None:
        return None
    data_env, ends = got
    cases = 0
    for values in itertools.product(*(finite[n] for n in names)):
        if time.monotonic() > deadline:
            return None
        env = dict(data_env)
        env.update(zip(names, values))
        norm = _Normaliser(kind, algebra, env, ends, atoms)
        if any(_decided(norm, a) is False for a in facts):
            continue
        try:
            for l, r in zip(lhs, rhs):
                lv, rv = norm(l), norm(r)
                if isinstance(lv, (Form, _Zero)) or isinstance(rv, (Form, _Zero)):
                    if norm.form(lv) != norm.form(rv):
                        return None
                elif lv != rv:
                    return None
        except (NotForm, ZeroDivisionError, TypeError):
            return None
        cases += 1
    op = "max" if kind is Op.MAX else "min"
    where = " on nonnegatives" if algebra is TIMES else ""
    what = "monomials" if algebra is TIMES else "affine forms"
    return Outcome("proved", HOW.format(op=op, algebra=algebra, where=where, what=what,
                                        cases=CASES.format(n=cases) if names else ""),
                   time.monotonic() - t0, cases)


def _decided(norm: _Normaliser, fact: Expr):
    """The fact's value where the finite variables decide it; None where it reads data."""
    try:
        v = norm(fact)
    except (NotForm, ZeroDivisionError, TypeError):
        return None
    return v if isinstance(v, bool) else None


def _law_terms(loop: Loop, combine: Fn | None, law: str) -> tuple[list, list, list[str], list[str]]:
    """The two sides of `law` as terms over "<operand>.<field>", "<element>.<name>" and
    the parameters, with the operands and the elements they read: "step" is combine(a,
    left(b, x)) == left(combine(a, b), x), "associativity" combine(combine(a, b), c) ==
    combine(a, combine(b, c)), "bird" left(init, x) == right(x, init) and right(x,
    left(s, y)) == left(right(x, s), y)."""
    fields = loop.fields

    def step(fn: Fn, state, x: str) -> list:
        m = {f"acc.{f.name}": s for f, s in zip(fields, state)}
        m |= {d.name: var(f"{x}.{d.name}", d.type) for d in loop.elements}
        return list(substitute(fn.outputs, m))

    def combine_of(a, b) -> list:
        m = {f"a.{f.name}": s for f, s in zip(fields, a)}
        m |= {f"b.{f.name}": s for f, s in zip(fields, b)}
        return list(substitute(combine.outputs, m))

    a, b, c, s = ([var(f"{p}.{f.name}", f.type) for f in fields] for p in "abcs")
    if law == "step":
        return combine_of(a, step(loop.left, b, "x")), step(loop.left, combine_of(a, b), "x"), ["a", "b"], ["x"]
    if law == "bird":
        init = list(initial_state(loop))
        lhs = step(loop.left, init, "x") + step(loop.right, step(loop.left, s, "y"), "x")
        rhs = step(loop.right, init, "x") + step(loop.left, step(loop.right, s, "x"), "y")
        return lhs, rhs, ["s"], ["x", "y"]
    return combine_of(combine_of(a, b), c), combine_of(a, combine_of(b, c)), ["a", "b", "c"], []


def law_by_forms(setting: Setting, combine: Fn | None, law: str, deadline: float) -> Outcome | None:
    """`law` ("step", "associativity" or "bird", `_law_terms`) by normal forms
    (`prove_by_forms`); None where they do not decide it."""
    loop = setting.loop
    fns = {"step": [combine, loop.left], "bird": [loop.left, loop.right]}.get(law, [combine])
    if _kind([e for fn in fns for e in fn.outputs]) is None:
        return None                 # no max or min, or both: before any term is built
    lhs, rhs, operands, elements = _law_terms(loop, combine, law)
    now = time.monotonic()
    return prove_by_forms(setting, lhs, rhs, operands, elements,
                          min(deadline, now + max(1.0, SHARE * (deadline - now))))


__all__ = ["HOW", "law_by_forms", "prove_by_forms"]
