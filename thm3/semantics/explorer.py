"""Deciding the orderings a symbolic run meets (`thm3.semantics.symbolic`): the `Explorer`
enumerates the feasible decisions with Z3, one path at a time, and `IntegerForm` tells Z3
the comparisons of integer-valued terms over the Ints, where it decides them at once."""
from __future__ import annotations

import time

import z3

from thm3.errors import SolverTimeout


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

