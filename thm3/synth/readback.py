"""Named fields read back in a finite-state lift: a field with a name in place of copies.

The copies lift (`thm3.synth.finite.lift_candidates`) holds the state as other reachable
states would end: what the Myhill–Nerode construction on the transition monoid needs.
Often a field with a name tells the same transition functions apart: the length capped at
a constant K (min(n, K): a delay line, a count the step reads), the length modulo k (the
parity that decides a sign), the first element (or which of the step's predicates it
meets), the last element's predicates, a power c**n mod m of a factor the state is
multiplied by under `% m`.  Each is tried as an added field: the loop with it is
recognised again as a finite-state step, and it is a lift exactly when that state
determines its own transition function on every reachable state (every list, not only
the short ones: the check is on the lifted loop's monoid), so the composition route
gives its combine.  A named set of no more fields than the fewest copies comes first (a
reader knows `n_cap2` where `x_from2` must be explained); the prover decides each."""
from __future__ import annotations

import itertools
import time

from thm3.ir import Expr, Loop, Op, Type, const, var, walk
from thm3.synth.finite import Added, Failed, LiftSet, Machine, lift_candidates as copies_lifts, recognise, with_added
from thm3.syntax.loopfile import expression_text as to_text

MAX_CAP = 4             # min(n, K) for K = 1 .. MAX_CAP
MAX_MODULUS = 4         # n % k for k = 2 .. MAX_MODULUS
MAX_NAMED = 2           # named fields in one set


def lift_candidates(loop: Loop, deadline: float, limit: int = 3) -> list[LiftSet]:
    """The copies lifts of `thm3.synth.finite.lift_candidates`, with the named sets of no
    more fields than the fewest copies ahead of them (fewest fields first)."""
    copies = copies_lifts(loop, deadline, limit)
    if not copies:
        return copies
    try:
        m = recognise(loop, deadline)
    except Failed:
        return copies
    if m.data or m.determined()[1] is None:
        return copies           # data copies (a weighted automaton) have no named stand-in here
    most = min(len(s.fields) for s in copies)
    named = named_lifts(m, min(most, MAX_NAMED), deadline, limit)
    return named + copies


def named_lifts(m: Machine, most: int, deadline: float, limit: int) -> list[LiftSet]:
    """Sets of up to `most` named fields whose lifted loop's state determines its
    transition function: fewest first, in the grammar's order within a size."""
    grammar = named_fields(m)
    out: list[LiftSet] = []
    families: set = set()           # n_cap2 found: n_cap3 says nothing more
    for size in range(1, most + 1):
        for chosen in itertools.combinations(grammar, size):
            if time.monotonic() > deadline or len(out) >= limit:
                return out
            kinds = frozenset(a.hint.rstrip("0123456789") for a in chosen)
            if kinds in families:
                continue
            lifted = with_added(m.loop, chosen)
            try:
                m2 = recognise(lifted, deadline)
            except Failed:
                continue
            if m2.data or m2.determined()[1] is not None:
                continue
            families.add(kinds)
            names = ", ".join(a.comment for a in chosen)
            out.append(LiftSet(tuple(chosen), f"named fields read back in place of copies of the state: "
                                              f"{names}; with them {m2.describe()}, and the state determines "
                                              f"its transition function; {m.describe()}"))
        if out:
            return out
    return out


def named_fields(m: Machine) -> list[Added]:
    """The grammar: capped lengths, lengths modulo k, the first element (its value where
    the element takes finitely many, else which predicate of the step it meets), the last
    element's predicates, and powers of the factors reduced by `% m`."""
    loop = m.loop
    out: list[Added] = []

    def add(hint, type_, default, update_of, comment, why):
        key = f"rb{len(out)}_{hint}"
        out.append(Added(key, hint, type_, default, update_of(var(f"acc.{key}", type_)), comment, why))

    one = const(1)
    for k in range(1, MAX_CAP + 1):
        add(f"n_cap{k}", Type.INT, 0, lambda me, k=k: Expr(Op.MIN, Type.INT, (_add(me, one), const(k))),
            f"the number of elements, capped at {k}",
            f"the length up to {k}, which says how far the step's state from the start still shows")
    for k in range(2, MAX_MODULUS + 1):
        add(f"n_mod{k}", Type.INT, 0, lambda me, k=k: Expr(Op.MOD, Type.INT, (_add(me, one),), k),
            f"the number of elements mod {k}", f"the length mod {k}, which decides how the state turns")
    values = _element_values(m)
    for d in loop.elements:
        x = var(d.name, d.type)
        if d.name in values:
            empty = min(values[d.name]) - 1
            add(f"first_{d.name}", Type.INT, empty,
                lambda me, x=x, e=empty: Expr(Op.WHERE, Type.INT, (_eq(me, const(e)), x, me)),
                f"the first {d.name} ({empty} while empty)", "the first element, which the start's state meets")
    predicates = [p for p in m.atoms if p.type is Type.BOOL]     # (an Int term's values are not signs)
    for p in predicates:
        add("first_p", Type.INT, 0,
            lambda me, p=p: Expr(Op.WHERE, Type.INT, (_eq(me, const(0)),
                                                       Expr(Op.WHERE, Type.INT, (p, one, const(2))), me)),
            f"whether the first element has {to_text(p)} (1 yes, 2 no, 0 while empty)",
            "the first element's predicate, which the start's state meets")
    for p in predicates:
        add("last_p", Type.BOOL, False, lambda me, p=p: p, f"whether the last element has {to_text(p)}",
            "the last element's predicate, which the next state reads")
    for c, mod in _power_factors(loop):
        add("pw", Type.INT, 1 % mod, lambda me, c=c, mod=mod: Expr(Op.MOD, Type.INT, (Expr(Op.MUL, Type.INT, (me, const(c))),), mod),
            f"{c} ** (number of elements) mod {mod}", "the factor by which the later elements scale the state")
    return out


def _add(a: Expr, b: Expr) -> Expr:
    return Expr(Op.ADD, Type.INT, (a, b))


def _eq(a: Expr, b: Expr) -> Expr:
    return Expr(Op.EQ, Type.BOOL, (a, b))


def _element_values(m: Machine) -> dict[str, list[int]]:
    """The Int elements' values where each cell is one value of the element."""
    if m.atoms:
        return {}
    out: dict[str, list[int]] = {}
    for d in m.loop.elements:
        if d.type is Type.INT and all(d.name in cell for cell in m.cells):
            out[d.name] = sorted({int(cell[d.name].arg) for cell in m.cells})
    return out


def _power_factors(loop: Loop) -> list[tuple[int, int]]:
    """(c, m) for each Int constant c (not 0, 1 or -1) that multiplies a state field inside
    a `% m` of `left`."""
    out = []
    for e in walk(loop.left.outputs):
        if e.op is not Op.MOD or e.type is not Type.INT or not isinstance(e.arg, int) or e.arg <= 1:
            continue
        for t in walk(list(e.src)):
            if t.op is not Op.MUL:
                continue
            for a, b in (t.src, t.src[::-1]):
                reads = any(v.op is Op.VAR and v.arg.startswith("acc.") for v in walk([a]))
                if reads and b.op is Op.CONST and isinstance(b.arg, int) and not isinstance(b.arg, bool) \
                        and b.arg not in (0, 1, -1) and (b.arg, e.arg) not in out:
                    out.append((b.arg, e.arg))
    return out
