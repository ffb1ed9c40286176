"""Proofs over all states: laws checked by symbolic evaluation on every feasible path.

A law is a list of equations between IR terms over symbolic state operands (each
satisfying the inductive invariants), elements (satisfying the preconditions) and
loop parameters.  Each real field that may be infinite is split into its finite and
infinite cases; each case is run through `thm3.semantics.symbolic` once per feasible ordering;
on each path the two sides must agree: by Z3 where the terms are piecewise polynomial
(If-terms, no splitting), else by SymPy algebra with Z3 deciding the case split.
A law is "proved" only when every path was discharged; otherwise the caller tests it."""
from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field, replace
from functools import partial

import sympy as sp
import sympy.physics.units  # noqa: F401  (SymPy imports these on its first sum and its
import sympy.tensor.tensor  # noqa: F401  first solve: a fixed cost, paid with the import)
import z3

from thm3.errors import SolverTimeout
from thm3.prove.modular import congruent_remainders
from thm3.prove.reachable import control_cases, finite_fields, selects_on_finite_first, selects_on_first, widest
from thm3.prove.rational import rational_is_zero
from thm3.semantics.evaluate import evaluate
from thm3.ir import WITH_ARG, Expr, Fn, Loop, Op, TRANSCENDENTAL, Type, initial_state, walk
from thm3.semantics.symbolic import (Explorer, Fin, Inf, SymbolicTable, Symbols, as_z3_bool, constant,
                                     integer_hypothesis, is_bool, isnan, shared_integer_form)


@dataclass
class Outcome:
    status: str                      # "proved" | "unproved" | "timeout"
    detail: str = ""
    seconds: float = 0.0
    paths: int = 0
    # on "unproved": symbol values where the sides differ, or a function giving them (a
    # counter-model costs a Z3 call of up to a second: it is found only where asked for,
    # and a first pass that a second one replaces never asks)
    found: object = None

    @property
    def proved(self) -> bool:
        return self.status == "proved"

    @property
    def model(self) -> dict:
        if callable(self.found):
            self.found = self.found()
        return self.found or {}

    @model.setter
    def model(self, value) -> None:
        self.found = value


@dataclass
class Setting:
    """What a law quantifies over: state operands with the invariants, elements with
    the preconditions, and the loop parameters."""
    loop: Loop
    invariants: list[Expr] = field(default_factory=list)

    def inf_options(self) -> dict[str, tuple]:
        """For each real field, the cases to consider: finite, and -inf/+inf unless an
        invariant excludes them."""
        excluded: dict[str, set] = {f.name: set() for f in self.loop.fields}
        for inv in self.invariants:
            if inv.op in (Op.GT, Op.NE, Op.LT) and inv.src[0].op is Op.VAR and inv.src[1].op is Op.CONST:
                name = inv.src[0].arg.removeprefix("acc.")
                v = inv.src[1].arg
                if name in excluded and v in (float("inf"), float("-inf")):
                    if inv.op is Op.GT and v < 0 or inv.op is Op.LT and v > 0:
                        excluded[name].add(v)
                    if inv.op is Op.NE:
                        excluded[name].add(v)
        out = {}
        for f in self.loop.fields:
            if f.type is Type.REAL:
                out[f.name] = ("fin",) + tuple(s for s in (-1, 1) if s * float("inf") not in excluded[f.name])
            else:
                out[f.name] = ("fin",)
        return out


def _uses_transcendental(exprs) -> bool:
    """exp/log/sqrt and division need SymPy's algebra, so their laws split every case."""
    return any(e.op in TRANSCENDENTAL or e.op is Op.DIV for e in walk(exprs))


CHECK_MS = 2000          # Z3's limit per check on a path (Explorer's default)
SPLIT_SHARE = 0.3        # of the time left, for a law's run before the split on the reachable control
SPLIT_MIN_SECONDS = 2.0  # that run's seconds at least
SPLIT_MAX_SECONDS = 3.0  # and at most, before the split (a 20-field lift: 34 s lost there, 6.6 s split)
SPLIT_DETAIL = "by cases on the {n} reachable control states of each operand (an inductive invariant)"
QUICK_CHECK_MS = 300     # the same on a first run that has the emptiness split to fall back on


@dataclass(frozen=True)
class Mode:
    """How one run of a law goes.  A retry is a run in another mode (a new value); the
    law itself never changes."""
    deadline: float
    ordered: bool                   # -inf and +inf as two end symbols, where the terms only compare them
    control: list | None = None     # the reachable control's tuples, where a run may split on them
    split_control: bool = False     # this run splits each operand over them
    check_ms: int = CHECK_MS        # Z3's limit per check on a path
    lazy: bool = True               # selects evaluated lazily, path by path
    empty: tuple | None = None      # (field, value, {field: value}) while split on emptiness


class Law:
    """Builds the symbolic inputs of one law and runs it over every case and path, in
    `mode` unless `run` is given another."""

    def __init__(self, setting: Setting, operands: list[str], elements: list[str],
                 deadline: float, exprs_for_mode=(), split: tuple = ()):
        self.setting = setting
        self.loop = setting.loop
        self.operands = operands
        self.elements = elements
        lazy = not _uses_transcendental(exprs_for_mode)
        # An invariant with a remainder (c % 1 == 0: the count is an integer) is assumed
        # only where the terms have one: elsewhere it would only burden Z3 with integers.
        with_mod = any(e.op is Op.MOD for e in walk(exprs_for_mode))
        self.invariants = [i for i in setting.invariants
                           if with_mod or not any(e.op is Op.MOD for e in walk([i]))]
        # `f % 1 == 0` is told to Z3 as f == ToReal(an Int), which its integer reasoning reads best
        self.integers = [i.src[0].src[0].arg[4:] for i in self.invariants
                         if i.op is Op.EQ and i.src[0].op is Op.MOD and i.src[0].arg == 1
                         and i.src[0].src[0].op is Op.VAR and i.src[1].op is Op.CONST and i.src[1].arg == 0]
        # A law that only compares and selects the fields that may be infinite needs no
        # split on their infinite cases: -inf and +inf are two symbols below and above
        # every other value (an order-preserving embedding of the extended reals).
        self.opts = setting.inf_options()
        self.terms = tuple(exprs_for_mode) + tuple(self.invariants) + tuple(self.loop.preconditions)
        ordered = order_only(self.opts, self.terms)
        # `split`: the operands whose control fields select the combine's branches; where an
        # invariant names the reachable control's tuples (`control`), a retry splits them
        # over those tuples (`thm3.prove.reachable`, `_run_split`)
        self.split = split
        control = control_cases(self.invariants, len(split)) if split else None
        self.field_types = {f.name: f.type for f in self.loop.fields}
        self.transcendental_facts = _uses_transcendental(self.invariants + list(self.loop.preconditions))
        self.mode = Mode(deadline, ordered, control, lazy=lazy)

    def _cases(self, mode: Mode):
        opts = self.opts
        if mode.ordered:
            opts = {f: ("ext",) if len(o) > 1 else o for f, o in opts.items()}
        per_operand = []
        for _ in self.operands:
            per_operand.append(list(itertools.product(*(opts[f.name] for f in self.loop.fields))))
        choices = [(None,)] * len(self.operands) if mode.empty is None else [(True, False)] * len(self.operands)
        controls = list(itertools.product(mode.control, repeat=len(self.split))) if mode.split_control else [None]
        for case in itertools.product(*per_operand):
            for c in itertools.product(*choices):
                yield from ((case, c, k) for k in controls) if mode.split_control else [(case, c, None)]

    def run(self, build, check, mode: Mode | None = None) -> Outcome:
        """`_run` with -inf and +inf as the two end symbols where the terms allow it; where
        that proves nothing (an arithmetic term compared with an end symbol may lie past it
        in Z3's models: sound, but weaker), once more with the infinite cases split."""
        mode = self.mode if mode is None else mode
        if mode.control is not None:
            return self._run_split(build, check, mode)
        out = self._run_modes(build, check, mode)
        if out.proved or not mode.ordered or time.monotonic() >= mode.deadline:
            return out
        again = self._run_modes(build, check, replace(mode, ordered=False))
        return again if again.proved or again.status == "unproved" else out

    def _run_split(self, build, check, mode: Mode) -> Outcome:
        """`run` on a share of the time, then, where that proves nothing, once more with
        each operand split over the reachable control's tuples; the first outcome where
        the split does not prove the law either (its counter-model is over all states)."""
        deadline, control = mode.deadline, mode.control
        now = time.monotonic()
        first = min(deadline, now + max(SPLIT_MIN_SECONDS, min(SPLIT_MAX_SECONDS, SPLIT_SHARE * (deadline - now))))
        out = self.run(build, check, replace(mode, deadline=first, control=None))
        if out.proved or time.monotonic() >= deadline:
            return out
        again = self._run_modes(build, check, replace(mode, split_control=True))
        if again.proved:
            again.detail = SPLIT_DETAIL.format(n=len(control))
            again.seconds += out.seconds
            return again
        if out.status == "timeout" and time.monotonic() < deadline:
            # the first run was cut at SPLIT_MAX_SECONDS: where the split did not prove the
            # law either, the run over all states gets the time left
            last = self.run(build, check, replace(mode, control=None))
            if last.proved or last.status != "timeout":
                last.seconds += out.seconds + again.seconds
                return last
        return out

    def _run_modes(self, build, check, mode: Mode) -> Outcome:
        """`build(table, env)` gives the terms to check on a path (evaluated there);
        `check(ex, values, eqs)` returns True/False/None for them on that path.

        Piecewise polynomial laws go to Z3 whole (If-terms) first; where Z3 does not
        decide them (nonlinear arithmetic under If), they are split into their feasible
        paths, on each of which the two sides are polynomials that SymPy decides.  Where
        that fails too and the invariants say what an operand is while a field holds its
        initial value (n == 0 implies mean == 0, m2 == 0, ...), each operand is split into
        that case, with those values substituted, and the other (n != 0): a moment update
        is an identity of rational functions only where every count is nonzero."""
        group = emptiness_group(self.setting)
        split = group is not None and bool(self.operands)
        # With the split to fall back on, the first run gives each Z3 check a short limit
        # (a path that needs the split costs a whole timeout per check otherwise); where the
        # split does not prove the law, that run is made again with the full limit.
        full = replace(mode, check_ms=CHECK_MS)
        out = self._run(build, check, replace(full, check_ms=QUICK_CHECK_MS if split else CHECK_MS))
        first = out
        if out.status == "unproved" and full.lazy and time.monotonic() < full.deadline:
            out = self._merge(self._run(build, check, replace(full, lazy=False)), out)
        if out.status == "unproved" and split and time.monotonic() < full.deadline:
            out = self._merge(self._run(build, check, replace(full, lazy=False, empty=group)), out)
            if not out.proved and first.status != "proved" and time.monotonic() < full.deadline:
                again = self._run(build, check, full)
                if again.proved:
                    out = again
        if out is not first:
            out.seconds += first.seconds
        return out

    @staticmethod
    def _merge(retry: Outcome, before: Outcome) -> Outcome:
        """The retry's outcome, unless it ran out of time; its counter-model, else the earlier one."""
        if retry.status == "timeout":
            return before
        if not retry.proved and not retry.model:
            retry.found = before.found
        return retry

    def _facts(self, conds, fenv: dict, table, key, cache: dict) -> list:
        """The values of the invariants (or preconditions) `conds` on one operand, with the
        side axioms they add; remembered under `key` (the operand, its infinite fields, its
        emptiness and control cases), which fixes them: the symbols of one name are one
        term on every case.  A law over two operands of a 12-field lift, each with 64
        infinite patterns, has 4,096 cases and made each operand's 93 facts on each (20 s
        of a 25 s analysis); they are made 64 times now."""
        if key is None or self.transcendental_facts:
            return evaluate(list(conds), fenv, table)
        got = cache.get(key)
        if got is None:
            before = len(table.ex.side)
            got = cache[key] = (evaluate(list(conds), fenv, table), table.ex.side[before:])
        else:
            table.ex.side.extend(got[1])
        return got[0]

    def _run(self, build, check, mode: Mode) -> Outcome:
        t0 = time.monotonic()
        npaths = 0
        z3_form = shared_integer_form()  # the hypotheses' integer form, shared by the cases and the laws
        cache: dict = {}                # an operand's facts on a case, where the cases repeat them
        dead: set = set()               # the operands' cases whose facts are false (`_facts`' keys)
        try:
            for case, empty, control in self._cases(mode):
                if time.monotonic() > mode.deadline:    # 2**18 cases of a wide state: most end
                    raise SolverTimeout()               # before any solver call, which ticks
                if dead and any((prefix, pattern, e, _control_key(self, control, prefix)) in dead
                                for prefix, pattern, e in zip(self.operands, case, empty)):
                    continue          # an operand's facts are false there (4,096 cases, 18 feasible)
                syms = Symbols()
                env: dict = {}
                extended: list = []           # (symbol, the cases it stands for)
                at_init: dict = {}
                for prefix, pattern, e in zip(self.operands, case, empty):
                    if e:
                        at_init |= {f"{prefix}.{g}": v for g, v in mode.empty[2].items()}
                    for f, opt in zip(self.loop.fields, pattern):
                        name = f"{prefix}.{f.name}"
                        if name in at_init:
                            env[name] = constant(at_init[name], f.type) if opt == "fin" else None
                        elif opt == "ext":
                            env[name] = syms.real(name, f.type)
                            extended.append((env[name], self.opts[f.name]))
                        else:
                            env[name] = syms.real(name, f.type) if opt == "fin" else Inf(opt)
                if control is not None:
                    for prefix, tuple_ in zip(self.split, control):
                        for g, v in tuple_.items():
                            name = f"{prefix}.{g}"
                            if name in at_init and at_init[name] != v:
                                env[name] = None
                            elif name in env and env[name] is not None:
                                env[name] = constant(v, self.field_types[g])
                if any(v is None for v in env.values()):
                    continue          # a field at its initial value is finite
                for prefix in self.elements:
                    for d in self.loop.elements:
                        name = f"{prefix}.{d.name}"
                        env[name] = syms.real(name, d.type)
                for d in self.loop.params:
                    env[d.name] = syms.real(d.name, d.type)
                hyps = list(syms.hyps)
                hyps += [integer_hypothesis(env[f"{prefix}.{name}"].z3) for prefix in self.operands
                         for name in self.integers if isinstance(env.get(f"{prefix}.{name}"), Fin)
                         and z3.is_const(env[f"{prefix}.{name}"].z3)]
                ends = _ends(hyps, extended, env, self.terms) if extended else None
                feasible = True
                pre_ex = Explorer([], mode.deadline)
                pre_table = SymbolicTable(pre_ex, lazy=True)
                pre_table.ends = ends
                params = {d.name: env[d.name] for d in self.loop.params}     # n <= cap
                facts = [({f"acc.{f.name}": env[f"{prefix}.{f.name}"] for f in self.loop.fields} | params,
                          self.invariants, (prefix, pattern, e, _control_key(self, control, prefix)))
                         for prefix, pattern, e in zip(self.operands, case, empty)]
                facts += [({d.name: env[f"{prefix}.{d.name}"] for d in self.loop.elements} | params,
                           self.loop.preconditions, (prefix,)) for prefix in self.elements]
                for fenv, conds, key in facts:
                    key = None if ends is not None else key
                    for v in self._facts(conds, fenv, pre_table, key, cache):
                        if v is False:
                            feasible = False
                            if key is not None and not self.transcendental_facts:
                                # a False is decided on constants, exactly: no state of the
                                # operand with this pattern meets the invariants, whatever
                                # the other operands are and however infinities are told
                                dead.add(key)
                        elif not isinstance(v, bool):
                            hyps.append(v)
                for prefix, e in zip(self.operands, empty):
                    if e is False:
                        v = env[f"{prefix}.{mode.empty[0]}"]
                        if isinstance(v, Fin):
                            hyps.append(v.z3 != constant(mode.empty[1], Type.REAL).z3)
                if not feasible:
                    continue
                ex = Explorer(hyps + pre_ex.side, mode.deadline, mode.check_ms, z3_form)
                if not ex.feasible(z3.BoolVal(True)):
                    continue
                table = SymbolicTable(ex, lazy=mode.lazy)
                table.ends = ends
                table.short_circuit = control is not None
                for _ in ex.paths():
                    values = build(table, env)
                    npaths += 1
                    verdict = check(ex, values, syms)
                    if verdict is not True:
                        where = ", ".join(f"{k}={v!r}" for k, v in env.items() if isinstance(v, Inf))
                        path = " and ".join(str(c) for c in ex.path) or "every ordering"
                        return Outcome("unproved", f"not shown on the case {where or 'all finite'}; "
                                                   f"path: {path}", time.monotonic() - t0, npaths,
                                       counter_model(ex, values, syms, env))
        except SolverTimeout:
            return Outcome("timeout", "solver time ran out", time.monotonic() - t0, npaths)
        return Outcome("proved", "", time.monotonic() - t0, npaths)


def _control_key(law: Law, control, prefix: str):
    """The control case of one operand, as `Law._facts` keys it (None where it is not split)."""
    return tuple(control[law.split.index(prefix)].items()) if control and prefix in law.split else None


# Ops that only compare or select their operands' values: an infinity passes through them
# as a value above (below) every finite one, and so does its stand-in symbol.
_ORDER_OPS = frozenset({Op.CONST, Op.VAR, Op.MAX, Op.MIN, Op.WHERE, Op.LT, Op.LE, Op.GT, Op.GE, Op.EQ, Op.NE,
                        Op.AND, Op.OR, Op.NOT})


def order_only(opts: dict, exprs) -> bool:
    """Whether every term only compares and selects the values that may be infinite (a
    field with an infinite case, an infinite constant): no arithmetic reads such a value.
    Then replacing -inf and +inf by two symbols below and above every other value keeps
    every comparison, selection and equality of the terms (the extended reals embed in
    the reals that way, order and all), and a law needs no split on infinite cases."""
    infinite = {name for name, o in opts.items() if len(o) > 1}
    if not infinite:
        return False
    may: dict[int, bool] = {}
    for e in walk(list(exprs)):
        op = e.op
        if op is Op.CONST:
            v = isinstance(e.arg, float) and e.arg in (math.inf, -math.inf)
        elif op is Op.VAR:
            head, dot, name = e.arg.partition(".")
            v = bool(dot) and name in infinite
        elif op in (Op.MAX, Op.MIN):
            v = may[id(e.src[0])] or may[id(e.src[1])]
        elif op is Op.WHERE:
            v = may[id(e.src[1])] or may[id(e.src[2])]
        elif op in _ORDER_OPS:
            v = False                   # a comparison or a connective: a Bool
        elif any(may[id(x)] for x in e.src):
            return False                # arithmetic on a value that may be infinite
        else:
            v = False
        may[id(e)] = v
    return True


def _ends(hyps: list, extended: list, env: dict, terms) -> tuple:
    """The symbols that stand for -inf and +inf (`order_only`), with their hypotheses in
    `hyps`: below and above every finite symbol and constant of the loop; a field that
    may be infinite lies between them, and reaches an end only where it may be that
    infinity."""
    lo, hi = Fin(sp.Symbol("neg_inf", real=True), z3.Real("neg_inf")), Fin(sp.Symbol("pos_inf", real=True),
                                                                           z3.Real("pos_inf"))
    hyps.append(lo.z3 < hi.z3)
    stand_ins = {id(v) for v, _ in extended}
    for v in env.values():
        if isinstance(v, Fin) and id(v) not in stand_ins:
            hyps += [lo.z3 < v.z3, v.z3 < hi.z3]
    for v, cases in extended:
        hyps.append(lo.z3 <= v.z3 if -1 in cases else lo.z3 < v.z3)
        hyps.append(v.z3 <= hi.z3 if 1 in cases else v.z3 < hi.z3)
    for c in {e.arg for e in walk(list(terms)) if e.op is Op.CONST and e.type is not Type.BOOL
              and not isinstance(e.arg, bool) and math.isfinite(float(e.arg))}:
        k = constant(c, Type.REAL).z3
        hyps += [lo.z3 < k, k < hi.z3]
    return lo, hi


def emptiness_group(setting: Setting) -> tuple | None:
    """From invariants "f == c implies g == d" (constants c, d): the field f with the
    most such consequences, as (f, c, {f: c, g: d, ...}); None when there is none."""
    groups: dict = {}
    for inv in setting.invariants:
        if not (inv.op is Op.OR and inv.src[0].op is Op.NOT):
            continue
        ante, cons = inv.src[0].src[0], inv.src[1]
        if not all(t.op is Op.EQ and t.src[0].op is Op.VAR and t.src[1].op is Op.CONST for t in (ante, cons)):
            continue
        f, c = ante.src[0].arg.removeprefix("acc."), ante.src[1].arg
        g, d = cons.src[0].arg.removeprefix("acc."), cons.src[1].arg
        if isinstance(c, bool) or isinstance(d, bool) or not all(map(_finite, (c, d))):
            continue
        groups.setdefault((f, c), {f: c})[g] = d
    if not groups:
        return None
    (f, c), values = max(groups.items(), key=lambda kv: len(kv[1]))
    return f, c, values


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and v == v and v not in (float("inf"), float("-inf"))


def counter_model(ex: Explorer, values, syms: Symbols, env: dict):
    """Where the values are pairs that should be equal: a function giving symbol values
    (plain floats and bools, by operand name such as "s.m" or "x.x") satisfying the path,
    the hypotheses and a disagreement of some pair; {} when Z3 finds none.  Infinite
    operands of the case are included as +-inf.  A hint for the refutation search, never a
    proof.  The path's formulas are taken now; Z3 is asked only when the function is called."""
    if not isinstance(values, list) or not all(isinstance(v, tuple) and len(v) == 2 for v in values):
        return {}
    differ = []
    for l, r in values:
        if isnan(l) or isnan(r) or isinstance(l, Inf) or isinstance(r, Inf):
            if not (isnan(l) and isnan(r)) and not (isinstance(l, Inf) and isinstance(r, Inf) and l.sign == r.sign):
                differ.append(z3.BoolVal(True))
        elif is_bool(l) or is_bool(r):
            if is_bool(l) and is_bool(r):
                differ.append(as_z3_bool(l) != as_z3_bool(r))
        else:
            differ.append(l.z3 != r.z3)
    if not differ:
        return {}
    forms = list(map(ex.z3_form, [*ex.base, *ex.side, *ex.path, z3.Or(*differ)]))
    return partial(_model_of, forms, syms, env)


def _model_of(forms: list, syms: Symbols, env: dict) -> dict:
    solver = z3.Solver()
    solver.set("timeout", 1000)
    solver.add(*forms)
    try:
        if solver.check() != z3.sat:
            return {}
        m = solver.model()
    except z3.Z3Exception:
        return {}
    out: dict = {name: float(v.sign) * float("inf") for name, v in env.items() if isinstance(v, Inf)}
    for name, z in syms.z3_of.items():
        v = m.eval(z, model_completion=True)
        if z3.is_true(v) or z3.is_false(v):
            out[name] = z3.is_true(v)
        elif z3.is_rational_value(v):
            out[name] = v.numerator_as_long() / v.denominator_as_long()
        elif z3.is_algebraic_value(v):
            out[name] = float(v.approx(12).as_decimal(12).rstrip("?"))
    return out


# -- equality on a path ---------------------------------------------------------

def _z3_to_sympy(t, by_name: dict):
    """Arithmetic Z3 terms back to SymPy (for path equalities); None if not arithmetic.
    `by_name` maps a Z3 constant's name to its SymPy symbol (`_sympy_names`)."""

    def go(t):
        if z3.is_rational_value(t):
            return sp.Rational(t.numerator_as_long(), t.denominator_as_long())
        if z3.is_const(t):
            got = by_name.get(t.decl().name())
            if got is not None:
                return got
        args = [go(a) for a in t.children()]
        if any(a is None for a in args):
            return None
        if z3.is_to_real(t):                # an Int symbol, as `Symbols.real` makes it
            return args[0]
        if z3.is_add(t):
            return sp.Add(*args)
        if z3.is_mul(t):
            return sp.Mul(*args)
        if z3.is_sub(t):
            return args[0] - sp.Add(*args[1:])
        if z3.is_div(t):
            return args[0] / args[1]
        if t.decl().kind() == z3.Z3_OP_UMINUS:
            return -args[0]
        if t.decl().kind() == z3.Z3_OP_UNINTERPRETED and len(args) == 1 and t.decl().name() in _UF_SYMPY:
            return _UF_SYMPY[t.decl().name()](args[0])     # exp, log, ... as symbolic.py names them
        return None

    return go(t)


def _sympy_names(syms: Symbols) -> dict:
    """Z3 constant names to SymPy symbols: both are named by the operand's name with
    "." as "_" (`Symbols.real`); Bool operands have no SymPy symbol."""
    return {name.replace(".", "_"): s for name, s in syms.sympy_of.items()}


_UF_SYMPY = {"exp": sp.exp, "log": sp.log, "exp2": lambda x: sp.Integer(2) ** x,
             "log2": lambda x: sp.log(x, 2), "sqrt": sp.sqrt}


def _path_equalities(ex: Explorer, syms: Symbols) -> list:
    """The arithmetic equalities among the explorer's hypotheses and the path's literals,
    as SymPy differences.  The hypotheses' part is read once per explorer and symbols
    (every path of a law shares them; reading back 50 invariants on each of 300 paths
    was most of a many-field law's time)."""
    by_name = _sympy_names(syms)
    cached = getattr(ex, "_base_equalities", None)
    if cached is None or cached[0] is not syms or cached[1] != len(ex.base):
        cached = ex._base_equalities = (syms, len(ex.base), _equalities(ex.base, by_name))
    return cached[2] + _equalities(ex.path, by_name)


def _equalities(constraints, by_name: dict) -> list:
    eqs = []
    for c in constraints:
        if z3.is_not(c) and z3.is_distinct(c.arg(0)):
            c = c.arg(0).arg(0) == c.arg(0).arg(1)
        if z3.is_eq(c) and not z3.is_bool(c.arg(0)):
            lhs, rhs = _z3_to_sympy(c.arg(0), by_name), _z3_to_sympy(c.arg(1), by_name)
            if lhs is not None and rhs is not None:
                eqs.append(lhs - rhs)
    return eqs


# SymPy has no timeout; terms beyond this size are not attempted, so a law over them is
# "tested" rather than a hang (the caller's deadline bounds everything else).
_MAX_OPS = 600


def _is_zero(d) -> bool:
    """Decides d == 0 for rational functions (numerator as a sparse polynomial); with
    exp/log it normalises exp(a)*exp(b) = exp(a + b) first and falls back to simplify.
    Only a True answer is used as a proof."""
    if d == 0:
        return True
    got = rational_is_zero(d)       # rational functions: sparse polynomials, no size limit needed
    if got is not None:
        return got
    if sp.count_ops(d) > _MAX_OPS:
        return False          # too big for SymPy in bounded time: the law is left unproved
    try:
        if d.has(sp.Mod) and not d.has(sp.exp, sp.log) and not any(
                isinstance(f, sp.Function) and not isinstance(f, sp.Mod) for f in d.atoms(sp.Function)):
            # remainders (`%`) as opaque atoms: zero as a polynomial in them and the symbols
            # is zero; anything else is left to `congruent_remainders` and Z3 (SymPy's
            # simplify spends a tenth of a second a term on such differences and decides none)
            return _zero_with_opaque_remainders(d)
        if not d.has(sp.exp, sp.log, sp.Function) and not any(
                isinstance(p, sp.Pow) and not p.exp.is_Integer for p in d.atoms(sp.Pow)):
            num, _ = sp.fraction(sp.together(d))
            return sp.Poly(num, *sorted(num.free_symbols, key=str)).is_zero if num.free_symbols else num == 0
        e = sp.expand(sp.powsimp(sp.expand(d), combine="exp"))
        if e == 0:
            return True
        num, _ = sp.fraction(sp.together(e))
        if sp.expand(sp.powsimp(sp.expand(num), combine="exp")) == 0:
            return True
        return sp.simplify(e) == 0
    except (TypeError, ValueError, RecursionError, sp.PolynomialError):
        return False


def _zero_with_opaque_remainders(d) -> bool:
    mods = list(d.atoms(sp.Mod))
    opaque = {m: sp.Dummy(f"mod{i}") for i, m in enumerate(mods)}
    e = sp.expand(d.xreplace(opaque))
    if e == 0:
        return True
    if any(isinstance(p, sp.Pow) and not p.exp.is_Integer for p in e.atoms(sp.Pow)):
        return False
    num, _ = sp.fraction(sp.together(e))
    return sp.Poly(num, *sorted(num.free_symbols, key=str)).is_zero if num.free_symbols else num == 0


def exp_equal(l, r) -> bool:
    """l == r for real l, r with logs, through exp(l) == exp(r) (exp is injective):
    exp of a sum is a product, exp(log(u)) is u, and exp(k·a + ...) is U^k·... in fresh
    positive symbols U = exp(a), so the difference is a rational function whose
    numerator is decided as a polynomial.  Only a True answer is used as a proof."""
    if sp.count_ops(l) + sp.count_ops(r) > _MAX_OPS // 2:
        return False
    try:
        d = sp.expand(sp.exp(l), power_exp=True, mul=False, multinomial=False) - \
            sp.expand(sp.exp(r), power_exp=True, mul=False, multinomial=False)
        atoms = {}

        def factor(term):
            if term.is_number:
                return sp.exp(term)
            coeff, rest = term.as_coeff_Mul()
            if not (rest.is_Symbol and coeff.is_Rational):
                raise ValueError(term)
            return atoms.setdefault(rest, sp.Symbol(f"exp_{rest}", positive=True)) ** coeff

        subs = {e: sp.Mul(*(factor(t) for t in sp.Add.make_args(sp.expand(e.args[0]))))
                for e in d.atoms(sp.exp)}
        q = d.xreplace(subs)
        if q.has(sp.exp, sp.log):
            return False
        num, _ = sp.fraction(sp.together(q))
        num = sp.expand(num)
        return num == 0 or (bool(num.free_symbols) and sp.Poly(num, *sorted(num.free_symbols, key=str)).is_zero)
    except (TypeError, ValueError, RecursionError, sp.PolynomialError, AttributeError):
        return False


def _on_path(terms: tuple, eqs: list) -> tuple | None:
    """The terms with the path's equalities solved for one symbol each and substituted;
    None when the equalities contradict each other (a nonzero number must be 0: the path
    is infeasible in the reals, which Z3 with uninterpreted log cannot see)."""
    eqs = list(eqs[:8])
    while eqs:
        eq = eqs.pop(0)
        if _undefined(eq):
            # x/0 inside a path equality (Z3's division is total, SymPy's gives zoo):
            # no information, and above all no contradiction
            continue
        if eq.is_number:
            if eq != 0 and eq.is_zero is False:
                return None
            continue
        for x in sorted(eq.free_symbols, key=str):
            form = _linear_form(eq, x)                  # eq = k·x + rest, rest free of x
            if form is None or not form[0].is_number:
                continue
            k, rest = form
            sol = -rest / k
            terms = tuple(t.subs(x, sol) for t in terms)
            eqs = [sp.expand(e.subs(x, sol)) for e in eqs]
            break
    return terms


def _undefined(e) -> bool:
    return isinstance(e, sp.Basic) and e.has(sp.zoo, sp.nan, sp.oo, -sp.oo)


def _linear_form(eq, x) -> tuple | None:
    """(k, rest) with eq = k·x + rest, k and rest free of x and k not 0; else None (x
    under a function, a power or a denominator: no substitution is valid everywhere)."""
    e = sp.expand(eq)
    k = e.coeff(x)
    if k == 0 or k.has(x):
        return None
    rest = sp.expand(e - k * x)
    if rest.has(x):
        return None
    return k, rest


def sympy_zero(d, eqs, tried: bool = False, case_k_zero=None) -> bool:
    """d == 0 on a path with equalities eqs (`tried`: d alone is known not to be 0).

    An equality eq = k·s + rest (linear in s) gives s = -rest / k, which holds on the
    path only where k != 0.  With k a nonzero number the substitution is exact.  With k
    a term, the path splits: where k != 0 the substitution decides, and the case k == 0
    must be proved apart by `case_k_zero(k)` (Z3 on the path and k == 0; vacuous where
    the path already gives k != 0); without it, or where it fails, the substitution
    proves nothing.  Equations that are not linear in s (s * s == t, exp(s) == t,
    t * s == t solved "s = 1" though s is free where t == 0) are never solved:
    `sp.solve` drops the solutions that vanish a denominator or a factor, and a root it
    gives need not be the real one."""
    if not tried and _is_zero(d):
        return True
    for eq in eqs[:8]:
        if _undefined(eq):
            continue
        free = sorted(eq.free_symbols, key=str)
        for s in free:
            form = _linear_form(eq, s)
            if form is None:
                continue
            k, rest = form
            if not (k.is_number or case_k_zero is not None and case_k_zero(k)):
                continue
            d = d.subs(s, -rest / k)
            if _is_zero(d):
                return True
            break
    return False


def _sympy_to_z3(e, by_key: dict):
    """A polynomial SymPy term (symbols, rationals, + * and integer powers) as a Z3 term
    over the path's constants (`by_key`: SymPy symbol name to Z3 constant); else None."""
    if e.is_Rational:
        return z3.RealVal(str(e))
    if e.is_Symbol:
        return by_key.get(e.name)
    if isinstance(e, sp.Pow) and e.exp.is_Integer and e.exp > 0:
        base = _sympy_to_z3(e.base, by_key)
        if base is None:
            return None
        out = base
        for _ in range(int(e.exp) - 1):
            out = out * base
        return out
    if isinstance(e, (sp.Add, sp.Mul)):
        args = [_sympy_to_z3(a, by_key) for a in e.args]
        if any(a is None for a in args):
            return None
        out = args[0]
        for a in args[1:]:
            out = out + a if isinstance(e, sp.Add) else out * a
        return out
    return None


def values_equal(ex: Explorer, l, r, syms: Symbols, eqs=None):
    """True if l == r holds on the path (NaN equals NaN, as the folds compare).
    `eqs`, where given, is a function giving the path's equalities (computed once for
    all the pairs of one path: the path does not change while they are checked)."""
    if isnan(l) or isnan(r):
        return isnan(l) and isnan(r)
    if isinstance(l, Inf) or isinstance(r, Inf):
        return isinstance(l, Inf) and isinstance(r, Inf) and l.sign == r.sign
    if is_bool(l) or is_bool(r):
        return ex.valid(as_z3_bool(l) == as_z3_bool(r)) is True
    if l.sp is not None and r.sp is not None:
        # the path's equalities only where a difference is not zero on its own (most are:
        # reading back a path's invariants costs more than the check that needs none)
        path_eqs = eqs if eqs is not None else _memo(lambda: _path_equalities(ex, syms))
        # logs first through exp of both sides (cheap), then SymPy's general route
        if l.sp.has(sp.log) or r.sp.has(sp.log):
            on_path = _on_path((l.sp, r.sp), path_eqs())
            if on_path is None or exp_equal(*on_path):
                return True
        if congruent_remainders(l.sp, r.sp):
            # two remainders by one modulus with congruent arguments (a rolling hash):
            # decided on the polynomials, before SymPy's general route spends seconds on
            # the difference of two remainders, which it cannot decide
            return True
        d = l.sp - r.sp
        if _is_zero(d):
            return True
        if path_eqs():
            # the path's linear equalities (invariants such as m_y_z == b * m_z_y) solved
            # for a symbol with a numeric coefficient and substituted: exact on the path
            on_path = _on_path((d,), path_eqs())
            if on_path is None or _is_zero(on_path[0]):
                return True
        def case_k_zero(k):
            # the other side of the split s = -rest / k: where k == 0 on the path, l == r
            # by Z3 (vacuous where the path gives k != 0)
            by_key = {name.replace(".", "_"): syms.z3_of[name] for name in syms.sympy_of}
            kz = _sympy_to_z3(k, by_key)
            return kz is not None and ex.valid(z3.Implies(kz == 0, l.z3 == r.z3)) is True

        if sympy_zero(d, path_eqs(), tried=True, case_k_zero=case_k_zero):
            return True
    return ex.valid(l.z3 == r.z3) is True


def _memo(fn):
    got: list = []

    def once():
        if not got:
            got.append(fn())
        return got[0]

    return once


def check_equal_pairs(ex, values, syms) -> bool:
    eqs = _memo(lambda: _path_equalities(ex, syms))
    return all(values_equal(ex, l, r, syms, eqs) for l, r in values)


# -- building the laws ----------------------------------------------------------

def state_of(env, prefix, loop):
    return [env[f"{prefix}.{f.name}"] for f in loop.fields]


def initial(loop: Loop) -> list:
    """The initial state as symbolic values."""
    return [constant(e.arg, e.type) for e in initial_state(loop)]


def apply_fn(table, fn: Fn, args: list, params: dict):
    if isinstance(table, SymbolicTable) and table.ends is not None:
        args = [table.extended(a) for a in args]
    env = {name: a for (name, _), a in zip(fn.inputs, args)}
    env.update(params)
    if isinstance(table, SymbolicTable) and not table.lazy:
        return guarded(fn.outputs, env, table)
    return evaluate(fn.outputs, env, table)


def guarded(exprs, env: dict, table: SymbolicTable) -> list:
    """The values of `exprs` on a path of the explorer, each selection's condition decided
    before its branches and only the branch taken evaluated: the path splits on the
    comparisons the terms perform, in their order, never on those of a branch not taken
    (an eager evaluation decides them all, and the paths multiply with every nested
    selection of a combine that folds several fields, as the k smallest's do)."""
    memo: dict[int, tuple] = {}

    def go(e):
        got = memo.get(id(e))
        if got is not None and got[0] is e:
            return got[1]
        op = e.op
        if op is Op.CONST:
            v = table[Op.CONST](e.arg, e.type)
        elif op is Op.VAR:
            v = env[e.arg]
        elif op is Op.WHERE:
            c = go(e.src[0])
            if not isinstance(c, bool):
                c = table.ex.decide(c)
            v = go(e.src[1] if c else e.src[2])
        elif op in WITH_ARG:
            v = table[op](go(e.src[0]), e.arg)
        else:
            v = table[op](*[go(x) for x in e.src])
        memo[id(e)] = (e, v)
        return v

    try:
        return [go(e) for e in exprs]
    except RecursionError:
        # the path has decided part of the terms: no other evaluation can take it over
        raise SolverTimeout("the terms are too deep for a guarded evaluation") from None


def element_of(env, prefix, loop):
    return [env[f"{prefix}.{d.name}"] for d in loop.elements]


def params_of(env, loop):
    return {d.name: env[d.name] for d in loop.params}


def prove_identity(setting: Setting, combine: Fn, deadline: float, sides: str = "both") -> Outcome:
    """combine(init, a) == a and combine(a, init) == a for states a satisfying the
    invariants; `sides` "right": only the second (with the step law it gives the first
    on reachable states, `prove_step_law`)."""
    loop = setting.loop

    def build(table, env):
        a, p = state_of(env, "a", loop), params_of(env, loop)
        right_id = apply_fn(table, combine, a + initial(loop), p)
        if sides == "right":
            return list(zip(right_id, a))
        left_id = apply_fn(table, combine, initial(loop) + a, p)
        return list(zip(left_id, a)) + list(zip(right_id, a))

    return Law(setting, ["a"], [], deadline, combine.outputs,
               split=_split(setting, combine, ["a"])).run(build, check_equal_pairs)


def _split(setting: Setting, combine: Fn, operands: list[str]) -> tuple:
    """The operands to split on the reachable control (`thm3.prove.reachable`): those given
    where the combine selects on its first operand's control fields, else none."""
    return tuple(operands) if selects_on_first(combine, widest(setting.invariants)) else ()


def composes_on_control(setting: Setting, combine: Fn) -> bool:
    """Whether `combine` selects on its first operand's control fields, of which a proved
    invariant lists the reachable tuples: the laws are then split on them."""
    return bool(_split(setting, combine, ["a"]))


def composes_on_finite(setting: Setting, combine: Fn) -> bool:
    """Whether `combine` selects on fields of its first operand that take finitely many
    values (Bool, or Int between constant bounds), where no invariant lists the reachable
    tuples (the box of a `% 2` phase is reached whole): a composed table all the same."""
    return selects_on_finite_first(combine, finite_fields(setting.loop, setting.invariants))


def prove_associativity(setting: Setting, combine: Fn, deadline: float) -> Outcome:
    loop = setting.loop

    def build(table, env):
        a, b, c = (state_of(env, x, loop) for x in "abc")
        p = params_of(env, loop)
        ab = apply_fn(table, combine, a + b, p)
        lhs = apply_fn(table, combine, ab + c, p)
        bc = apply_fn(table, combine, b + c, p)
        rhs = apply_fn(table, combine, a + bc, p)
        return list(zip(lhs, rhs))

    return Law(setting, ["a", "b", "c"], [], deadline, combine.outputs,
               split=_split(setting, combine, ["a", "b"])).run(build, check_equal_pairs)


def prove_commutativity(setting: Setting, combine: Fn, deadline: float) -> Outcome:
    """combine(a, b) == combine(b, a) for states a, b satisfying the invariants: what a
    reduction that reorders its partial states (Triton's `tl.reduce`, an atomic merge)
    needs besides associativity."""
    loop = setting.loop

    def build(table, env):
        a, b, p = state_of(env, "a", loop), state_of(env, "b", loop), params_of(env, loop)
        return list(zip(apply_fn(table, combine, a + b, p), apply_fn(table, combine, b + a, p)))

    return Law(setting, ["a", "b"], [], deadline, combine.outputs,
               split=_split(setting, combine, ["a", "b"])).run(build, check_equal_pairs)


def prove_step_law(setting: Setting, combine: Fn, deadline: float) -> Outcome:
    """combine(a, left(b, x)) == left(combine(a, b), x) for states a, b satisfying the
    invariants and any element x: one `left` step on the right operand commutes with
    the combine.  With the right identity combine(a, init) == a it gives, by induction
    on a list ys, combine(a, h(ys)) == foldl(left, a, ys) for every state a; so on
    reachable states combine(h(xs), h(ys)) == h(xs + ys), from which associativity,
    the left identity and the homomorphism law follow (`thm3.prove.combine`).  Two
    state operands and an element, where associativity quantifies over three states:
    the law that a combine of a big state (four smallest, a top-3 with indices) can be
    proved by."""
    loop = setting.loop

    def build(table, env):
        a, b, x, p = state_of(env, "a", loop), state_of(env, "b", loop), element_of(env, "x", loop), params_of(env, loop)
        lhs = apply_fn(table, combine, a + apply_fn(table, loop.left, b + x, p), p)
        rhs = apply_fn(table, loop.left, apply_fn(table, combine, a + b, p) + x, p)
        return list(zip(lhs, rhs))

    return Law(setting, ["a", "b"], ["x"], deadline, combine.outputs + loop.left.outputs,
               split=_split(setting, combine, ["a"])).run(build, check_equal_pairs)


def prove_homomorphism(setting: Setting, combine: Fn, deadline: float) -> Outcome:
    """combine(s, left(init, x)) == left(s, x) on reachable s."""
    loop = setting.loop

    def build(table, env):
        s, x, p = state_of(env, "s", loop), element_of(env, "x", loop), params_of(env, loop)
        single = apply_fn(table, loop.left, initial(loop) + x, p)
        lhs = apply_fn(table, combine, s + single, p)
        rhs = apply_fn(table, loop.left, s + x, p)
        return list(zip(lhs, rhs))

    return Law(setting, ["s"], ["x"], deadline, combine.outputs + loop.left.outputs,
               split=_split(setting, combine, ["s"])).run(build, check_equal_pairs)


def prove_bird(setting: Setting, deadline: float) -> Outcome:
    """left and right compute the same function: they agree on [x], and
    right(x, left(s, y)) == left(right(x, s), y) on reachable s."""
    from thm3.prove.forms import law_by_forms
    by_forms = law_by_forms(setting, None, "bird", deadline)
    if by_forms is not None:
        return by_forms
    loop = setting.loop
    right = loop.right

    def build(table, env):
        s, x, y, p = (state_of(env, "s", loop), element_of(env, "x", loop), element_of(env, "y", loop),
                      params_of(env, loop))
        base_l = apply_fn(table, loop.left, initial(loop) + x, p)
        base_r = apply_fn(table, right, initial(loop) + x, p)
        lhs = apply_fn(table, right, apply_fn(table, loop.left, s + y, p) + x, p)
        rhs = apply_fn(table, loop.left, apply_fn(table, right, s + x, p) + y, p)
        return list(zip(base_l, base_r)) + list(zip(lhs, rhs))

    return Law(setting, ["s"], ["x", "y"], deadline,
               loop.left.outputs + right.outputs).run(build, check_equal_pairs)


# right's Fn takes its inputs in the order (fields, elements, params) like left's, so
# `apply_fn` above passes the state first for both.


def preserved_atoms(setting: Setting, atoms: list[Expr], deadline: float) -> tuple[list[bool], bool]:
    """Which atoms hold after one `left` step from any state satisfying all
    current invariants (the setting's) and any element.  Returns (flags, timed_out)."""
    loop = setting.loop
    alive = [True] * len(atoms)

    def build(table, env):
        s, x, p = state_of(env, "s", loop), element_of(env, "x", loop), params_of(env, loop)
        new = apply_fn(table, loop.left, s + x, p)
        aenv = {f"acc.{f.name}": v for f, v in zip(loop.fields, new)}
        aenv.update(p)
        return evaluate(atoms, aenv, table)

    def check(ex, values, syms):
        for i, v in enumerate(values):
            if alive[i] and not (v is True or (not isinstance(v, bool) and ex.valid(v) is True)):
                alive[i] = False
        return True

    law = Law(setting, ["s"], ["x"], deadline, tuple(loop.left.outputs) + tuple(atoms))
    out = law.run(build, check)
    if not all(alive) and law.mode.ordered and out.status != "timeout" and time.monotonic() < deadline:
        # -inf and +inf as end symbols are sound but weaker: an arithmetic term (s + x from
        # a finite s) may lie past them in Z3's models, so `s > -inf` looks unpreserved.
        # Each mode proves only what holds, so an atom either mode keeps is preserved.
        first = list(alive)
        alive[:] = [True] * len(atoms)
        out = law._run_modes(build, check, replace(law.mode, ordered=False))
        alive[:] = [a or b for a, b in zip(first, alive)]
    return alive, out.status == "timeout"


# -- stability --------------------------------------------------------------------

def exp_arguments_nonpositive(setting: Setting, fn: Fn, operands: list[str], elements: list[str],
                              args_of, deadline: float, args: tuple | None = None) -> Outcome:
    """Every exp/exp2 argument in `fn` is <= 0 (or -inf) on every path; `args`, where
    given, are the terms to judge instead (each argument where its path is taken, else
    a value <= 0: `thm3.analysis.stability.guarded`)."""
    exps = [e for e in walk(fn.outputs) if e.op in (Op.EXP, Op.EXP2)]
    if not exps:
        return Outcome("skipped", "no exp")
    loop = setting.loop
    args = tuple(e.src[0] for e in exps) if args is None else tuple(args)
    probe = Fn(fn.inputs, args)

    def build(table, env):
        return apply_fn(table, probe, args_of(env), params_of(env, loop))

    def check(ex, values, syms):
        for v in values:
            if isnan(v):
                continue      # a guarded branch's argument; the select does not take it
            if isinstance(v, Inf):
                if v.sign > 0:
                    return False
                continue
            if ex.valid(v.z3 <= 0) is not True:
                return False
        return True

    return Law(setting, operands, elements, deadline, fn.outputs).run(build, check)


def no_nan_outputs(setting: Setting, fn: Fn, operands: list[str], elements: list[str],
                   args_of, deadline: float, cause: str | None = None) -> Outcome:
    """`fn`'s outputs are never NaN on any path (of the given cause, if one is named)."""
    loop = setting.loop

    def build(table, env):
        return apply_fn(table, fn, args_of(env), params_of(env, loop))

    def check(ex, values, syms):
        return not any(isnan(v) and (cause is None or v.cause == cause) for v in values)

    return Law(setting, operands, elements, deadline, fn.outputs).run(build, check)


def identity_nan_free(setting: Setting, combine: Fn, deadline: float) -> Outcome:
    """combine(init, a), combine(a, init) and combine(init, init) make no NaN from a
    state that has none."""
    loop = setting.loop

    def build(table, env):
        a, p = state_of(env, "a", loop), params_of(env, loop)
        return (apply_fn(table, combine, initial(loop) + a, p) + apply_fn(table, combine, a + initial(loop), p)
                + apply_fn(table, combine, initial(loop) + initial(loop), p))

    def check(ex, values, syms):
        return not any(isnan(v) for v in values)

    return Law(setting, ["a"], [], deadline, combine.outputs).run(build, check)
