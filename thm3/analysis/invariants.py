"""Inductive invariants of the state (Houdini).

Candidate facts over the fields, the constants of the loop and the initial value are
kept if they hold on init, on sampled reachable states, and, as a whole set, are
preserved by one `left` step (proved with `thm3.prove`); facts that fail are dropped
until the set is inductive.  Besides the atoms built from the loop's shape, the
polynomial identities that exact interpolation finds on reachable states
(`thm3.synth.interpolation.equality_invariants`: n * mean == sum, a compensation that
stays 0, a step-matrix power that commutes with the step) are candidates too, and so are
the ranges that interval reasoning over the step gives (`thm3.analysis.intervals`: a
clamp's 0 <= s <= cap - 1) and, for a finite-state step, "the control fields hold one of the
reachable states" (`thm3.synth.finite.reachable_invariant`).  The proofs of the laws assume
the survivors."""
from __future__ import annotations

import math
import time

import numpy as np

from thm3.semantics.evaluate import NUMPY, evaluate, quiet
from thm3.ir import COMPARISONS, Expr, Loop, Op, Type, const, free_vars, initial_state, var, walk
from thm3.prove.laws import Setting, preserved_atoms
from thm3.analysis.intervals import range_candidates
from thm3.semantics.critical import arms
from thm3.semantics.samples import batch_init
from thm3.synth.finite import MAX_HINTED_STATES, MAX_LIFTED_STATES, reachable_invariant
from thm3.synth.interpolation import equality_invariants


def _cmp(op: Op, a: Expr, b: Expr) -> Expr:
    return Expr(op, Type.BOOL, (a, b))


def _or(a: Expr, b: Expr) -> Expr:
    return Expr(Op.OR, Type.BOOL, (a, b))


def _not(a: Expr) -> Expr:
    return Expr(Op.NOT, Type.BOOL, (a,))


def _field(f) -> Expr:
    return var(f"acc.{f.name}", Type.REAL if f.type is Type.VEC else f.type)


def candidates(loop: Loop) -> list[Expr]:
    numeric = [f for f in loop.fields if f.type in (Type.REAL, Type.INT)]
    zero = const(0)
    consts = sorted({float(e.arg) for e in walk(loop.left.outputs)
                     if e.op is Op.CONST and e.type in (Type.REAL, Type.INT)
                     and math.isfinite(float(e.arg)) and float(e.arg) != 0.0}
                    | {float(f.default) for f in numeric if math.isfinite(float(f.default))
                       and float(f.default) != 0.0})
    out: list[Expr] = []
    for f in numeric:
        x = _field(f)
        if f.type is Type.REAL:
            out.append(_cmp(Op.GT, x, const(-math.inf)))
            out.append(_cmp(Op.LT, x, const(math.inf)))
        for op in (Op.GE, Op.GT, Op.LE, Op.LT):
            out.append(_cmp(op, x, zero))
        for c in consts:
            out.append(_cmp(Op.GE, x, const(c)))
            out.append(_cmp(Op.LE, x, const(c)))
    for f in numeric:
        for g in numeric:
            if f is not g:
                out.append(_cmp(Op.GE, _field(f), _field(g)))
                out.append(_cmp(Op.GT, _field(f), _field(g)))
    # Facts tied to emptiness: while f still holds its initial value, g holds its own;
    # once f has moved, g is positive (online softmax: m > -inf implies d > 0).
    initial = dict(zip(loop.field_names, initial_state(loop)))
    for f in loop.fields:
        if f.type is Type.VEC:
            continue
        at_init = _cmp(Op.EQ, _field(f), initial[f.name])
        for g in loop.fields:
            if g is f:
                continue
            gx = _field(g)
            out.append(_or(_not(at_init), _cmp(Op.EQ, gx, initial[g.name] if g.type is not Type.VEC else zero)))
            if g.type in (Type.REAL, Type.INT):
                out.append(_or(at_init, _cmp(Op.GT, gx, zero)))
            if g.type is Type.BOOL:
                out.append(_or(at_init, gx))
    # Slots filled in order (the k smallest distinct values): once g has left its
    # infinite default, f is strictly on one side of it (f < g, not only f <= g).
    for g in numeric:
        if g.type is not Type.REAL or math.isfinite(float(g.default)):
            continue
        for f in numeric:
            if f is not g:
                for op in (Op.LT, Op.GT):
                    out.append(_or(_cmp(Op.EQ, _field(g), initial[g.name]), _cmp(op, _field(f), _field(g))))
    # Fields that never leave their default (over the reals: Kahan's compensation c == 0).
    for f in loop.fields:
        if f.type is not Type.VEC:
            out.append(_cmp(Op.EQ, _field(f), initial[f.name]))
    # A flag that says where a counter stands against a constant or a loop parameter
    # (reached == (n >= 9), has == (n > 0), a saturated counter's full == (c >= K)).
    for b in loop.fields:
        if b.type is not Type.BOOL:
            continue
        for f in numeric:
            bounds = [const(c if f.type is Type.REAL else int(c), f.type) for c in [0.0] + consts
                      if f.type is not Type.INT or c == int(c)]
            bounds += [var(d.name, d.type) for d in loop.params if d.type in (Type.REAL, Type.INT)]
            for bound in bounds:
                for op in (Op.GE, Op.GT, Op.LE, Op.LT):
                    out.append(_cmp(Op.EQ, _field(b), _cmp(op, _field(f), bound)))
    # Bounds by a loop parameter (a count capped by a parameter: n <= cap), also in the
    # weaker form "or still at the initial value" for parameters that may be negative.
    for f in numeric:
        for d in loop.params:
            if d.type not in (Type.REAL, Type.INT):
                continue
            p = var(d.name, d.type)
            for op in (Op.LE, Op.GE):
                out.append(_cmp(op, _field(f), p))
                out.append(_or(_cmp(Op.EQ, _field(f), initial[f.name]), _cmp(op, _field(f), p)))
    # Facts a flag carries: while every element so far passed a test, two counters
    # agree (longest run of ones: all ones implies the leading run is the whole list).
    for b in loop.fields:
        if b.type is not Type.BOOL:
            continue
        for f in numeric:
            for g in numeric:
                if f is not g and loop.fields.index(f) < loop.fields.index(g):
                    out.append(_or(_not(_field(b)), _cmp(Op.EQ, _field(f), _field(g))))
                    out.append(_or(_field(b), _cmp(Op.EQ, _field(f), _field(g))))
    # A field that is a remainder (k < 3), or keeps a remainder of another (odd == n % 2),
    # for the moduli `left` uses.
    for m in sorted({e.arg for e in walk(loop.left.outputs) if e.op is Op.MOD}):
        for f in numeric:
            out.append(_cmp(Op.LT, _field(f), const(m if f.type is Type.INT else float(m), f.type)))
            for g in numeric:
                if f is not g:
                    out.append(_cmp(Op.EQ, _field(f), Expr(Op.MOD, g.type, (_field(g),), m)))
    out += _comparison_facts(loop, numeric)
    # Ranges from interval reasoning over the step (0 <= s <= cap - 1 for a clamp).
    known = {_key(a) for a in out}
    out += [a for a in range_candidates(loop) if _key(a) not in known]
    # A finite-state step: its control fields hold one of the reachable states, up to
    # MAX_HINTED_STATES of them, MAX_LIFTED_STATES for a lifted loop with its combine (the
    # copies lift of a machine with 80 transition functions
    # has 81 lifted states, and its proofs split on them; the finite route reads such a
    # loop again past MAX_STATES), within 3 s for a lifted loop that came with its combine.
    hinted = loop.combine_hint is not None
    reachable = reachable_invariant(loop, time.monotonic() + (3.0 if hinted else 1.0),
                                    most=MAX_LIFTED_STATES if hinted else MAX_HINTED_STATES)
    if reachable is not None:
        if hinted:
            # a lifted loop with its combine by construction: the composition's laws read
            # the reachable control.  A fact over the reachable fields alone is implied by
            # it where it holds on every reachable tuple, and is no invariant where it fails
            # on one; of the rest, the facts of one field (a count's sign, a sum's
            # finiteness) are kept, the relations of two or more (quadratic and cubic in the
            # fields: 19,127 candidates for a 44-field lift, 590 of them held on samples,
            # 9.5 s) are not asked.  (A user's loop keeps them: the report shows them.)
            named = free_vars([reachable])
            out = [a for a in out if (not free_vars([a]) or not free_vars([a]) <= named)
                   and len({v for v in free_vars([a]) if v.startswith("acc.")}) <= 1]
        out.append(reachable)
    return out


def _key(a: Expr) -> str:
    """An atom's text with a constant bound as a float (acc.s >= 0 is acc.s >= 0.0)."""
    if a.op in COMPARISONS and a.src[1].op is Op.CONST and not isinstance(a.src[1].arg, bool):
        return f"{a.op.name} {a.src[0]!r} {float(a.src[1].arg)!r}"
    return repr(a)


def _comparison_facts(loop: Loop, numeric) -> list[Expr]:
    """Facts tied to an equality `left` tests between two fields (acc.lead == acc.n: the
    leading run is the whole list): while it holds, each other field equals one side
    (trail == n, best == n), and while it fails, differs from it."""
    fields = {f"acc.{f.name}" for f in numeric}
    out: list[Expr] = []
    for e in walk(loop.left.outputs):          # each (interned) node once
        if e.op is not Op.EQ or not all(s.op is Op.VAR and s.arg in fields for s in e.src):
            continue
        for f in numeric:
            h = _field(f)
            if any(h.arg == s.arg for s in e.src):
                continue
            for side in e.src:
                out.append(_or(_not(e), _cmp(Op.EQ, h, side)))
                out.append(_or(e, _not(_cmp(Op.EQ, h, side))))
    return out


def _holds(atoms: list[Expr], states: list[tuple], loop: Loop, params: dict) -> np.ndarray:
    """Which atoms hold on every given batched state (Vec fields: every lane)."""
    keep = np.ones(len(atoms), dtype=bool)
    for st in states:
        env = {}
        for f, v in zip(loop.fields, st):
            env[f"acc.{f.name}"] = v
        env.update(params)
        with quiet():
            vals = evaluate(atoms, env, NUMPY)
        for i, v in enumerate(vals):
            if keep[i] and not bool(np.all(v)):
                keep[i] = False
    return keep


def _nearly_zero(lhs: Expr, size: Expr, states: list[tuple], loop: Loop, params: dict) -> bool:
    """|lhs| <= 1e-9 * (1 + size) on every finite sampled state (NaN or inf: not)."""
    for st in states:
        env = {f"acc.{f.name}": v for f, v in zip(loop.fields, st)} | dict(params)
        with quiet():
            p, s = (np.asarray(v, dtype=np.float64) for v in evaluate([lhs, size], env, NUMPY))
            if not bool(np.all(np.abs(p) <= 1e-9 * (1.0 + s))):
                return False
    return True


def _round_off(atoms: list[Expr], states: list[tuple], loop: Loop) -> np.ndarray:
    """Which atoms "f == its default" hold on the states up to round-off: within 1e-9 of
    the largest field of the same row (a compensation that is 0 over the reals)."""
    names = [f"acc.{f.name}" for f in loop.fields]
    out = np.zeros(len(atoms), dtype=bool)
    for i, a in enumerate(atoms):
        if not (a.op is Op.EQ and a.src[0].op is Op.VAR and a.src[1].op is Op.CONST
                and a.src[0].type is Type.REAL and math.isfinite(a.src[1].arg)):
            continue
        ok = True
        for st in states:
            with quiet():
                rows = np.hstack([np.asarray(v, dtype=np.float64).reshape(len(v), -1) for v in st])
                scale = np.nanmax(np.where(np.isfinite(rows), np.abs(rows), 0.0), axis=1)
                v = np.asarray(st[names.index(a.src[0].arg)], dtype=np.float64).reshape(len(rows), -1)
                ok &= bool(np.all(np.abs(v - a.src[1].arg) <= 1e-9 * (1.0 + scale[:, None])))
        out[i] = ok
    return out


def infer(loop: Loop, triples, deadline: float) -> tuple[list[Expr], bool]:
    """The inductive invariants, and whether the proof search timed out (then the
    survivors are only those proved before the deadline; none are assumed unproved)."""
    atoms = candidates(loop)
    known = set(atoms)
    exact = [(e, size) for e, size in equality_invariants(loop) if e not in known]
    atoms += [e for e, _ in exact]
    states = [batch_init(loop, 1, 3)]
    for t in triples:
        states += [t.a, t.b, t.c]
    keep = _holds(atoms, states[:1], loop, triples[0].params if triples else {})
    # "f never leaves its default" may hold over the reals only (Kahan's c is round-off
    # in floats): the samples do not judge it, the inductive step does.
    # The identities of exact interpolation held on exact rational samples; in floats
    # they hold up to round-off: |P| <= 1e-9 (1 + the sum of its terms' magnitudes).
    first = len(atoms) - len(exact)
    for t in triples:
        keep &= _holds(atoms, [t.a, t.b, t.c], loop, t.params) | _round_off(atoms, [t.a, t.b, t.c], loop)
        for i, (e, size) in enumerate(exact):
            keep[first + i] = keep[first + i] or _nearly_zero(e.src[0], size, [t.a, t.b, t.c], loop, t.params)
    alive = [a for a, k in zip(atoms, keep) if k]
    alive = initially(loop, alive)
    base, timed_out = _houdini(loop, [], alive, deadline)
    if timed_out:
        return [], True
    # Integer counts kept in a Real (c % 1 == 0), with the survivors above assumed: a
    # separate round, so that no other invariant's proof carries integers.
    whole = _integer_counts(loop)
    whole = [a for a, k in zip(whole, _holds(whole, states, loop, triples[0].params if triples else {})) if k]
    counts, timed_out = _houdini(loop, base, whole, deadline) if whole else ([], False)
    return _prune(base) + ([] if timed_out else counts), False


def control_data_invariants(loop: Loop, assumed: list[Expr], deadline: float) -> list[Expr]:
    """The facts "at reachable control state s, data field f is the constant k"
    (`thm3.synth.finite.control_data_facts`) that hold at init and, with `assumed` (already
    inductive), are preserved by `left`: asked for only where a composed combine's step
    law fails without them (a warm-up phase's trend, a lift's slopes from the first
    phase), so that no other loop's proofs carry them.  Empty where none is inductive or
    the search runs out of time."""
    from thm3.synth.finite import control_data_facts
    atoms = control_data_facts(loop, deadline)
    known = set(assumed)
    atoms = [a for a in atoms if a not in known]
    if not atoms:
        return []
    atoms = [a for a, k in zip(atoms, _holds(atoms, [batch_init(loop, 1, 3)], loop, {})) if k]
    got, timed_out = _houdini(loop, assumed, atoms, deadline)
    return [] if timed_out else got


def initially(loop: Loop, atoms: list[Expr]) -> list[Expr]:
    """The atoms that hold at the initial state for every value of the loop parameters
    that the preconditions on them allow (Houdini's base case; the step is proved for
    every value).  One over the fields alone was checked on init exactly above; one that
    reads a parameter (s <= cap - 1, done == (k >= K)) held for the sampled values only,
    and is kept where Z3 proves it at init, over the parameters."""
    import z3
    from thm3.ir import substitute
    from thm3.ir.simplify import simplify
    from thm3.semantics.z3_plain import to_z3
    names = {d.name for d in loop.params}
    if not names:
        return atoms
    syms = {d.name: (z3.Int(d.name) if d.type is Type.INT else z3.Real(d.name) if d.type is Type.REAL
                     else z3.Bool(d.name)) for d in loop.params if d.type is not Type.VEC}
    elements = {d.name for d in loop.elements}
    hyps = []
    for c in loop.preconditions:
        if free_vars([c]) <= names and not free_vars([c]) & elements:
            t = to_z3(c, syms, create=False)
            if t is not None:
                hyps.append(t)
    at_init = {f"acc.{f.name}": e for f, e in zip(loop.fields, initial_state(loop))}
    out = []
    for a in atoms:
        if not free_vars([a]) & names:
            out.append(a)
            continue
        (e,) = substitute([a], at_init)
        e = simplify(e)
        if e.op is Op.CONST:
            if e.arg is True:
                out.append(a)
            continue
        t = to_z3(e, syms, create=False)
        if t is None:
            continue
        solver = z3.Solver()
        solver.set("timeout", 200)
        solver.add(*hyps, z3.Not(t))
        if solver.check() == z3.unsat:
            out.append(a)
    return out


def _houdini(loop: Loop, assumed: list[Expr], atoms: list[Expr], deadline: float) -> tuple[list[Expr], bool]:
    """The largest subset of `atoms` that, with `assumed` (already inductive), is preserved
    by one `left` step; and whether the search ran out of time.

    Bounds of one term by constants (n <= 3, n <= 4, n <= 32, ... from the loop's
    constants) die one a round on a count that grows: the tightest fails, the next holds
    while the tightest is assumed.  So where the tightest of such a chain fails, the next
    round keeps only its loosest: where that fails too, the chain is dead in 2 rounds, not
    one a bound (a pretokenizer: 10 rounds to 3).  Where it holds, the chain may have an
    inductive member, and the round is taken again from the survivors before it, that
    chain not cut again.  The result is then Houdini's; where the loosest fails only
    without a tighter bound assumed (a square: s <= 1 is inductive, s <= 3 is not), it is
    weaker, never unsound: every atom kept is proved preserved with the others."""
    alive = list(atoms)
    uncut: set = set()               # chains whose loosest held after a cut
    before = None                    # (the survivors before the cut, the chains cut)
    while alive:
        if time.monotonic() > deadline:
            return [], True
        flags, timed_out = preserved_atoms(Setting(loop, assumed + alive), alive, deadline)
        if timed_out:
            return [], True
        if before is not None:
            held = {key for key, loosest in before[1].items()
                    if any(ok and a is loosest for a, ok in zip(alive, flags))}
            if held:
                uncut |= held
                alive, before = before[0], None
                continue
            before = None
        if all(flags):
            return alive, False
        failed = [a for a, ok in zip(alive, flags) if not ok]
        alive = [a for a, ok in zip(alive, flags) if ok]
        cut = _chain_cuts(failed, alive, uncut)
        if cut:
            before = (alive, {key: loosest for key, (loosest, _) in cut.items()})
            dropped = {id(a) for _, members in cut.values() for a in members}
            alive = [a for a in alive if id(a) not in dropped]
    return [], False


def _chain_cuts(failed: list[Expr], alive: list[Expr], uncut: set) -> dict:
    """For each chain of constant bounds on one term (the same side: <= and <, or >= and
    >) of which a member just failed and that has two or more members left: key -> (its
    loosest member, the others, to drop for a round)."""
    def chain(a: Expr):
        if a.op not in (Op.LE, Op.LT, Op.GE, Op.GT) or not _finite_const(a.src[1]):
            return None
        upper = a.op in (Op.LE, Op.LT)
        # looser: a larger bound above (<= before < at the same bound), a smaller below
        strength = float(a.src[1].arg) if upper else -float(a.src[1].arg)
        return (upper, a.src[0]), (strength, a.op in (Op.LE, Op.GE))

    hit = {c[0] for c in map(chain, failed) if c is not None and c[0] not in uncut}
    members: dict = {}
    for a in alive:
        c = chain(a)
        if c is not None and c[0] in hit:
            members.setdefault(c[0], []).append((c[1], a))
    out = {}
    for key, ms in members.items():
        if len(ms) < 2:
            continue
        ms.sort(key=lambda t: t[0])
        out[key] = (ms[-1][1], [a for _, a in ms[:-1]])
    return out


def _integer_counts(loop: Loop) -> list[Expr]:
    """`f % 1 == 0` for each Real field that starts at an integer and whose new value is,
    on every branch, an integer or the field plus or minus an integer (a count kept in a
    Real): the parity of such a count is what a combine may read."""
    def integer(e: Expr) -> bool:
        return e.op is Op.CONST and e.type is not Type.BOOL and math.isfinite(float(e.arg)) \
            and float(e.arg) == int(float(e.arg))

    # Only where a combine may read a parity: `left` takes a remainder, or tests a
    # condition on the element alone (whose value on b's first element the sketch reads
    # off b's last one and the parity of a count); elsewhere the round costs a proof.
    elements = {d.name for d in loop.elements}
    nodes = walk(loop.left.outputs)
    if not any(e.op is Op.MOD or (e.op in COMPARISONS and (names := free_vars([e])) & elements
                                  and not any(n.startswith("acc.") for n in names)) for e in nodes):
        return []
    out = []
    for f, new in zip(loop.fields, loop.left.outputs):
        if f.type is not Type.REAL or not math.isfinite(float(f.default)) or float(f.default) != int(f.default):
            continue
        x = _field(f)

        def counts(arm: Expr) -> bool:
            if integer(arm) or (arm.op is Op.VAR and arm.arg == x.arg):
                return True
            return arm.op in (Op.ADD, Op.SUB) and any(s.op is Op.VAR and s.arg == x.arg for s in arm.src) \
                and all(integer(s) or (s.op is Op.VAR and s.arg == x.arg) for s in arm.src)
        branches = arms(new)
        if any(a.op is not Op.VAR for a in branches) and all(counts(a) for a in branches):
            out.append(_cmp(Op.EQ, Expr(Op.MOD, Type.REAL, (x,), 1), const(0.0)))
    return out


def _prune(atoms: list[Expr]) -> list[Expr]:
    """Drop facts that restate others (f > 0 makes f >= 0 redundant, f <= 1 makes f <= 4
    redundant, and so on): each is implied by one kept, so the proofs assume as much."""
    given = set(atoms)
    tightest: dict = {}             # (op, field) -> the tightest constant bound
    for a in atoms:
        if a.op in (Op.LE, Op.GE) and a.src[0].op is Op.VAR and _finite_const(a.src[1]):
            key, v = (a.op, a.src[0].arg), float(a.src[1].arg)
            old = tightest.get(key)
            tightest[key] = v if old is None else (min(old, v) if a.op is Op.LE else max(old, v))
    out = []
    for a in atoms:
        if a.op is Op.GE and _cmp(Op.GT, *a.src) in given:
            continue
        if a.op is Op.LE and _cmp(Op.LT, *a.src) in given:
            continue
        if a.op in (Op.LE, Op.GE) and a.src[0].op is Op.VAR and _finite_const(a.src[1]):
            bound = tightest[(a.op, a.src[0].arg)]
            if float(a.src[1].arg) != bound:
                continue
            tightest[(a.op, a.src[0].arg)] = None       # one copy of the tightest
        out.append(a)
    return out


def _finite_const(e: Expr) -> bool:
    return e.op is Op.CONST and not isinstance(e.arg, bool) and math.isfinite(float(e.arg))
