"""A law by cases on the reachable control: where a proved inductive invariant says that
some fields hold one of finitely many tuples of constants (the disjunction of the reachable
states of a finite control, `thm3.synth.finite.reachable_invariant`), each state operand
of a law is split over those tuples, the fields set to the constants.

Sound: every state the invariants admit satisfies the disjunction, so it satisfies one of
its disjuncts, and the law is shown on each.  With the control fields constants, the
combine's selections on them (`b.st_from1 if a.st == 1 else ...`) fold away, and what is
left on a case is the data: affine forms that the prover decides path by path.  A composed
combine of a 5-state framing automaton over 20 fields has no path split Z3 finishes
otherwise; split, it is a few hundred small cases (Mytkowicz, Musuvathi and Schulte,
ASPLOS 2014: the composition of a finite-state machine's transition functions, here with
the data's affine maps beside it)."""
from __future__ import annotations

import math

from thm3.ir import Expr, Op, Type, walk

MAX_CASES = 4096        # cases (disjuncts to the power of the operands) a law is split into at most


def disjuncts(inv: Expr) -> list[dict] | None:
    """The tuples an invariant `acc.f == c and ... or ...` (Bool fields as `acc.f` or `not
    acc.f`) allows, one {field: value} each over the same fields; None for any other form."""
    out = []
    for conj in _flat(inv, Op.OR):
        case = {}
        for atom in _flat(conj, Op.AND):
            got = _binding(atom)
            if got is None or got[0] in case:
                return None
            case[got[0]] = got[1]
        out.append(case)
    if len(out) < 2 or any(c.keys() != out[0].keys() for c in out):
        return None
    return out


def _flat(e: Expr, op: Op) -> list[Expr]:
    return [x for s in e.src for x in _flat(s, op)] if e.op is op else [e]


def _binding(atom: Expr):
    if atom.op is Op.VAR and atom.type is Type.BOOL and atom.arg.startswith("acc."):
        return atom.arg[4:], True
    if atom.op is Op.NOT and atom.src[0].op is Op.VAR and atom.src[0].type is Type.BOOL \
            and atom.src[0].arg.startswith("acc."):
        return atom.src[0].arg[4:], False
    if atom.op is Op.EQ and atom.src[0].op is Op.VAR and atom.src[0].arg.startswith("acc.") \
            and atom.src[1].op is Op.CONST and not isinstance(atom.src[1].arg, bool) \
            and math.isfinite(float(atom.src[1].arg)):
        return atom.src[0].arg[4:], atom.src[1].arg
    return None


def widest(invariants: list[Expr]) -> list[dict] | None:
    """The disjuncts of the invariant of that form over the most fields; None where none is."""
    return max((d for d in map(disjuncts, invariants) if d), key=lambda d: len(d[0]), default=None)


def control_cases(invariants: list[Expr], operands: int) -> list[dict] | None:
    """`widest`, where a law's split of `operands` operands stays within MAX_CASES; None else."""
    best = widest(invariants)
    if best is None or operands == 0 or len(best) ** operands > MAX_CASES:
        return None
    return best


def selects_on_first(combine, control: list[dict] | None) -> bool:
    """Whether the combine's selections read control fields of its first operand (a
    composed table: `b.st_from1 if a.st == 1 else ...`), so that a split of that operand
    folds them away."""
    return bool(control) and _selects_on(combine, set(control[0]))


def _selects_on(combine, fields: set[str]) -> bool:
    """Whether a condition of the combine's selections reads one of its first operand's `fields`."""
    names = {f"a.{g}" for g in fields}
    conds = [e.src[0] for e in walk(list(combine.outputs)) if e.op is Op.WHERE]
    return any(v.op is Op.VAR and v.arg in names for v in walk(conds))


MAX_VALUES = 64         # values an Int variable with constant bounds may take, to count as finite


def conjuncts(conds) -> list[Expr]:
    """The atoms of `conds`, each `and` taken apart."""
    out = []
    for c in conds:
        out += conjuncts(c.src) if c.op is Op.AND else [c]
    return out


def _bound(atom: Expr):
    """(name, op, constant) for `name op c` or `c op name` (flipped); None else."""
    flip = {Op.LT: Op.GT, Op.LE: Op.GE, Op.GT: Op.LT, Op.GE: Op.LE}
    if atom.op not in flip or len(atom.src) != 2:
        return None
    x, y = atom.src
    if x.op is Op.VAR and y.op is Op.CONST and not isinstance(y.arg, bool):
        return x.arg, atom.op, float(y.arg)
    if y.op is Op.VAR and x.op is Op.CONST and not isinstance(x.arg, bool):
        return y.arg, flip[atom.op], float(x.arg)
    return None


def constant_bounds(atoms) -> tuple[dict, dict]:
    """The tightest constant lower and upper bounds each variable has in `atoms`:
    {name: (bound, strict)} each."""
    lo: dict = {}
    hi: dict = {}
    for a in atoms:
        got = _bound(a)
        if got is None:
            continue
        name, op, c = got
        if op in (Op.GE, Op.GT):
            if name not in lo or c > lo[name][0] or c == lo[name][0] and op is Op.GT:
                lo[name] = (c, op is Op.GT)
        elif name not in hi or c < hi[name][0] or c == hi[name][0] and op is Op.LT:
            hi[name] = (c, op is Op.LT)
    return lo, hi


def int_values(lo, hi) -> list[int] | None:
    """The integers between the bounds (`constant_bounds`' entries), where both are finite
    and there are at most MAX_VALUES of them; None else."""
    if lo is None or hi is None or not math.isfinite(lo[0]) or not math.isfinite(hi[0]):
        return None
    a = math.floor(lo[0]) + 1 if lo[1] and lo[0] == math.floor(lo[0]) else math.ceil(lo[0])
    b = math.ceil(hi[0]) - 1 if hi[1] and hi[0] == math.ceil(hi[0]) else math.floor(hi[0])
    return list(range(a, b + 1)) if 0 <= b - a < MAX_VALUES else None


def finite_fields(loop, invariants: list[Expr]) -> set[str]:
    """The fields that take finitely many values on the states the invariants admit: Bool
    fields, and Int fields between constant bounds with at most MAX_VALUES integers
    (`0 <= phase`, `phase <= 1`: a box reached whole, which no disjunction lists)."""
    lo, hi = constant_bounds(conjuncts(invariants))
    return {f.name for f in loop.fields if f.type is Type.BOOL or f.type is Type.INT and int_values(
        lo.get(f"acc.{f.name}"), hi.get(f"acc.{f.name}")) is not None}


def selects_on_finite_first(combine, names: set[str]) -> bool:
    """Whether the combine's selections read a field of its first operand among `names`
    (the fields of finitely many values): a composed table over a control that no
    disjunction lists."""
    return bool(names) and _selects_on(combine, names)
