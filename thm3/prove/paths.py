"""Proofs over all states: laws checked by symbolic evaluation on every feasible path.

A law is a list of equations between IR terms over symbolic state operands (each
satisfying the inductive invariants), elements (satisfying the preconditions) and
loop parameters.  Each real field that may be infinite is split into its finite and
infinite cases; each case is run through `thm3.semantics.symbolic` once per feasible ordering;
on each path the two sides must agree (`thm3.prove.equal`).  This module runs a law
(`Law`); the laws themselves are stated in `thm3.prove.laws`."""
from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field, replace
from functools import partial

import sympy as sp
import z3

from thm3.errors import SolverTimeout
from thm3.prove.reachable import control_cases
from thm3.semantics.evaluate import evaluate
from thm3.ir import Expr, Loop, Op, TRANSCENDENTAL, Type, walk
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
