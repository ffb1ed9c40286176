"""Candidate auxiliary fields for the lifting search (`thm3.lift.search`): each built
from a subterm of the loop's `left` (sums, counts, flags, first and last elements,
prefix extrema, leading runs, powers of the factors that scale the state, the product
of a semiring-affine block's step matrices), deduplicated by their values on short
lists; and the loop with candidates added as fields (`with_fields`)."""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from thm3.ir import (COMPARISONS, Expr, FieldDecl, Fn, Loop, Op, Type, as_real, const, free_vars,
                     initial_state, promote, substitute, var, walk)
from thm3.ir.monoids import monoid
from thm3.ir.simplify import simplify
from thm3.syntax.loopfile import expression_text as to_text
from thm3.semantics.equality import close
from thm3.analysis.witness import ShortLists, element_domain, parameter_settings


@dataclass(frozen=True)
class Aux:
    """A candidate auxiliary field.  Its update reads "acc.<key>" for itself and for
    the candidates it needs, besides the original fields, elements and parameters.
    Candidates with the same `group` are taken together (the entries of a matrix)."""
    key: str
    hint: str           # the name it takes in the lifted file, if free
    type: Type
    default: object
    update: Expr
    comment: str        # the State comment: what the field holds
    why: str            # why a combine may need it
    rank: int           # preference: smaller first
    needs: tuple[str, ...] = ()
    group: str = ""
    route: str = ""     # the composition route it comes from ("finite", "semiring"), or ""


# --- candidates ------------------------------------------------------------------

_SUM, _POWER, _FLAG, _FIRST_INF, _HAS, _FIRST, _COUNT, _LEN, _LAST, _PREFIX, _EXTREMUM, _LEAD, _OTHER_SUM = range(13)
COMPOSED = -1      # the reduced composed map of a semiring-affine step: first among its size


class Candidates:
    """Candidate fields built from the subterms of `left`, deduplicated by their values
    on short lists (a candidate equal to an original field or to an earlier candidate,
    or constant, adds nothing)."""

    def __init__(self, loop: Loop, rng: np.random.Generator):
        self.loop = loop
        self.rng = rng
        self.elements = {d.name for d in loop.elements}
        self.params = {d.name for d in loop.params}
        self.serial = 0
        self.sums: list[tuple[Aux, Expr]] = []
        self.alls: list[Aux] = []
        self.alias: dict[str, str] = {}       # dropped candidate key -> the field it equals
        self.moduli: dict[str, set] = {}      # a factor's text -> the moduli its products are reduced by

    def build(self) -> list[Aux]:
        terms, predicates, factors = self.subterms()
        xs = [var(d.name, d.type) for d in self.loop.elements if not d.index and d.type is not Type.BOOL]
        base: list[Aux] = []
        base += [self.sum(x, _SUM) for x in xs]
        base += [self.power(b) for b in factors]
        # "some element has P" first: a predicate the loop tests reads best that way
        base += [self.flag(p, all_=False) for p in predicates]
        base += [self.flag(p, all_=True) for p in predicates]
        firsts = [self.first_inf(x) for x in xs if x.type is Type.REAL]
        base += firsts
        has = self.has()
        base += [has] + [self.first(x, has) for x in xs if x.type is not Type.VEC]
        # a predicate on the element and the state (x == acc.last): the first element has
        # no previous one, so "every element after the first" is the run's flag; the list
        # is empty while the first Real element is inf (the field the run's combine reads
        # anyway), else while `has` is False
        empty = firsts[0] if firsts else has
        base += [self.flag_after_first(p, empty) for p in predicates
                 if any(n.startswith("acc.") for n in free_vars([p]))]
        base += [self.count(p) for p in predicates]
        base.append(self.length())
        base += [self.last(x) for x in xs if x.type is not Type.VEC]
        base += self.restarts()
        base += [self.sum(e, _OTHER_SUM) for e in terms]
        base = self.dedupe(base)
        kept = {c.key for c in base}
        # Built on the survivors: prefix extrema of sums (over a candidate sum, or over
        # an original field that is one), extrema of terms, leading runs.
        more: list[Aux] = []
        for c, e in self.sums:
            if c.key in kept:
                total, needs = c.key, (c.key,)
            elif c.key in self.alias:
                total = self.alias[c.key]
                needs = () if total in self.loop.field_names else (total,)
            else:
                continue
            more += self.prefix_extrema(c.type, e, f"acc.{total}", needs)
        for e in terms + xs:
            if e.type in (Type.REAL, Type.INT):
                more += self.extrema(e)
        more += [self.lead(c) for c in self.alls if c.key in kept]
        more += [self.lead_sum(c, x) for c in self.alls if c.key in kept
                 for x in xs if x.type in (Type.REAL, Type.INT)]
        return base + self.dedupe(more, base) + self.step_matrix()

    def subterms(self) -> tuple[list[Expr], list[Expr], list[Expr]]:
        """Numeric terms and predicates over the element (and the loop parameters), and
        the factors that multiply the state."""
        loop = self.loop
        terms: list[Expr] = []
        preds: list[Expr] = []
        factors: list[Expr] = []
        initial = {f"acc.{f.name}": e for f, e in zip(loop.fields, initial_state(loop))
                   if f.type is not Type.VEC and math.isfinite(float(e.arg))}

        def over_x(e: Expr) -> bool:
            names = free_vars([e])
            return bool(names & self.elements) and names <= self.elements | self.params

        def reads_state(e: Expr) -> bool:
            return any(n.startswith("acc.") for n in free_vars([e]))

        def add(pool: list[Expr], e: Expr):
            if not any(e is p for p in pool):
                pool.append(e)

        # the modulus each product of Ints is reduced by, where it stands inside a `% m`
        under: dict[int, int] = {}
        for e in walk(loop.left.outputs):
            if e.op is Op.MOD and e.type is Type.INT and isinstance(e.arg, int) and e.arg > 0:
                for m in walk(list(e.src)):
                    if m.op is Op.MUL:
                        under.setdefault(id(m), e.arg)

        for e in walk(loop.left.outputs):
            if e.op in (Op.VAR, Op.CONST):
                continue
            if e.type is Type.BOOL and e.op in COMPARISONS + (Op.AND, Op.OR, Op.NOT):
                if over_x(e):
                    add(preds, e)
                elif free_vars([e]) & self.elements:
                    # the loop's own condition, read at the initial state, and as it
                    # stands: a flag or a run over "x > acc.last" reads the state it had
                    (g,) = substitute([e], initial)
                    g = simplify(g)
                    if over_x(g):
                        add(preds, g)
                    add(preds, e)
            elif e.type in (Type.REAL, Type.INT, Type.VEC) and over_x(e):
                add(terms, e)
            if e.op is Op.MUL:
                for s, t in (e.src, e.src[::-1]):
                    if (reads_state(s) and not reads_state(t) and t.type in (Type.REAL, Type.INT)
                            and not (t.op is Op.CONST and t.arg in (0, 1))):
                        add(factors, t)
                        key = to_text(t)
                        self.moduli.setdefault(key, set()).add(under.get(id(e)) if e.type is Type.INT else None)
        for d in loop.elements:
            if d.type is Type.BOOL:
                add(preds, var(d.name, d.type))
        return terms, preds, factors

    # --- one method a family

    def new(self, hint, type_, default, update_of, comment, why, rank, needs=()) -> Aux:
        self.serial += 1
        key = f"c{self.serial}_{hint}"
        update = update_of(var(f"acc.{key}", type_))
        return Aux(key, hint, type_, default, update, comment, why, rank, tuple(needs))

    def sum(self, e: Expr, rank: int) -> Aux:
        zero = 0.0 if e.type is Type.REAL else 0
        aux = self.new("s", e.type, zero, lambda me: _arith(Op.ADD, me, e),
                       f"sum of {to_text(e)} so far", f"the total of {to_text(e)}", rank)
        if e.type in (Type.REAL, Type.INT):
            self.sums.append((aux, e))
        return aux

    def power(self, b: Expr) -> Aux:
        type_ = Type.INT if b.type is Type.INT else Type.REAL
        text = to_text(b)
        if free_vars([b]) & self.elements:
            comment = f"product of {text} so far"
        else:
            base = text if b.op in (Op.VAR, Op.CONST) and not text.startswith("-") else f"({text})"
            comment = f"{base} ** (number of elements so far)"
        # where the state's products by b are all reduced by one `% m`, the power is too: the
        # lift stays bounded (an Int in [0, m)), and the combine needs it only mod m
        (m,) = self.moduli.get(text, {None}) if len(self.moduli.get(text, {None})) == 1 else (None,)
        if m is not None:
            comment += f" mod {m}"
            return self.new("pw", type_, 1 % m, lambda me: Expr(Op.MOD, Type.INT, (_arith(Op.MUL, me, b),), m),
                            comment, "the factor by which the later elements scale what came before them",
                            _POWER)
        return self.new("pw", type_, 1 if type_ is Type.INT else 1.0, lambda me: _arith(Op.MUL, me, b),
                        comment, "the factor by which the later elements scale what came before them",
                        _POWER)

    def flag(self, p: Expr, all_: bool) -> Aux:
        op, word = (Op.AND, "every") if all_ else (Op.OR, "some")
        aux = self.new(("all_" if all_ else "any_") + _pred_name(p), Type.BOOL, all_,
                       lambda me: Expr(op, Type.BOOL, (me, p)),
                       f"{word} element so far has {to_text(p)}", f"whether {word} element has {to_text(p)}",
                       _FLAG)
        if all_:
            self.alls.append(aux)
        return aux

    def flag_after_first(self, p: Expr, empty: Aux) -> Aux:
        """Every element after the first has p (the first has no previous element to
        compare with): True while the list is one run in `left`'s sense.  `empty` tells
        the empty list: a first element that is inf while empty, or `has`."""
        marker = var(f"acc.{empty.key}", empty.type)
        none_yet = Expr(Op.EQ, Type.BOOL, (marker, const(math.inf, Type.REAL))) if empty.type is Type.REAL else \
            Expr(Op.NOT, Type.BOOL, (marker,))
        ok = Expr(Op.OR, Type.BOOL, (p, none_yet))
        aux = self.new("all_after_first_" + _pred_name(p), Type.BOOL, True,
                       lambda me: Expr(Op.AND, Type.BOOL, (me, ok)),
                       f"every element after the first has {to_text(p)}",
                       f"whether the list is one run of {to_text(p)}", _FLAG, needs=(empty.key,))
        self.alls.append(aux)
        return aux

    def restarts(self) -> list[Aux]:
        """A Real field whose update reads no other field and clamps from both sides (max and
        min): the same update started at +inf and at -inf, where the clamp's bounds take it
        on the first element (a sum clipped to [L, U] started at U and at L): with the sum,
        what the list makes of any start (Morita et al., PLDI 2007, clipped sums)."""
        loop = self.loop
        out = []
        for f, e in zip(loop.fields, loop.left.outputs):
            reads = {n for n in free_vars([e]) if n.startswith("acc.")}
            ops = {s.op for s in walk([e])}
            if f.type is not Type.REAL or reads != {f"acc.{f.name}"} or not {Op.MAX, Op.MIN} <= ops:
                continue            # a clamp from both sides (one side: the prefix extrema do it)
            for sign, word in ((1, "inf"), (-1, "neg_inf")):
                out.append(self.new(f"{f.name}_from_{word}", Type.REAL, sign * math.inf,
                                    lambda me, e=e, f=f: substitute([e], {f"acc.{f.name}": me})[0],
                                    f"{f.name} as the list leaves it from {'+' if sign > 0 else '-'}inf",
                                    "what the list makes of a start above (below) every bound", _PREFIX))
        return out

    def first_inf(self, x: Expr) -> Aux:
        inf = const(math.inf, Type.REAL)
        return self.new("first", Type.REAL, math.inf,
                        lambda me: Expr(Op.WHERE, Type.REAL, (Expr(Op.EQ, Type.BOOL, (me, inf)), x, me)),
                        f"first {to_text(x)} (inf while empty)",
                        "the first element, which meets the left part's last one at the split", _FIRST_INF)

    def has(self) -> Aux:
        return self.new("has", Type.BOOL, False, lambda me: const(True), "the list is not empty",
                        "whether the list is empty", _HAS)

    def first(self, x: Expr, has: Aux) -> Aux:
        zero = False if x.type is Type.BOOL else (0.0 if x.type is Type.REAL else 0)
        flag = var(f"acc.{has.key}", Type.BOOL)
        return self.new("first", x.type, zero, lambda me: Expr(Op.WHERE, x.type, (flag, me, x)),
                        f"first {to_text(x)} (0 while empty)",
                        "the first element, which meets the left part's last one at the split", _FIRST,
                        needs=(has.key,))

    def count(self, p: Expr) -> Aux:
        return self.new("count", Type.INT, 0,
                        lambda me: Expr(Op.WHERE, Type.INT, (p, _arith(Op.ADD, me, const(1)), me)),
                        f"number of elements with {to_text(p)}", f"how many elements have {to_text(p)}",
                        _COUNT)

    def length(self) -> Aux:
        return self.new("n", Type.INT, 0, lambda me: _arith(Op.ADD, me, const(1)),
                        "number of elements so far", "the number of elements", _LEN)

    def last(self, x: Expr) -> Aux:
        return self.new("last", x.type, 0.0 if x.type is Type.REAL else 0, lambda me: x,
                        f"last {to_text(x)} (0 while empty)", "the last element", _LAST)

    def prefix_extrema(self, type_: Type, e: Expr, total: str, needs) -> list[Aux]:
        s = var(total, type_)
        zero = 0.0 if type_ is Type.REAL else 0
        out = []
        for op, hint, word, why in (
                (Op.MAX, "p", "largest", "the best prefix sum, which meets the left part's best tail"),
                (Op.MIN, "low", "smallest", "the lowest prefix sum, shifted by the left part's total")):
            out.append(self.new(hint, type_, zero,
                                lambda me, op=op: Expr(op, type_, (me, _arith(Op.ADD, s, e))),
                                f"{word} sum of {to_text(e)} over a prefix (the empty prefix counts)",
                                why, _PREFIX, needs=needs))
        return out

    def extrema(self, e: Expr) -> list[Aux]:
        out = []
        for op, hint, word in ((Op.MIN, "lo", "smallest"), (Op.MAX, "hi", "largest")):
            default = monoid(op).identity
            out.append(self.new(hint, Type.REAL, default,
                                lambda me, op=op: Expr(op, Type.REAL, (me, as_real(e))),
                                f"{word} {to_text(e)} so far", f"the {word} {to_text(e)}", _EXTREMUM))
        return out

    def lead(self, all_p: Aux) -> Aux:
        p = all_p.update.src[1]
        flag = var(f"acc.{all_p.key}", Type.BOOL)
        grow = Expr(Op.AND, Type.BOOL, (flag, p))
        return self.new("lead", Type.INT, 0,
                        lambda me: Expr(Op.WHERE, Type.INT, (grow, _arith(Op.ADD, me, const(1)), me)),
                        f"length of the leading run with {to_text(p)}",
                        "the leading run, which joins the left part's trailing run at the split", _LEAD,
                        needs=(all_p.key,) + tuple(all_p.needs))

    def lead_sum(self, all_p: Aux, x: Expr) -> Aux:
        p = all_p.update.src[1]
        flag = var(f"acc.{all_p.key}", Type.BOOL)
        grow = Expr(Op.AND, Type.BOOL, (flag, p))
        return self.new("lead_s", x.type, 0.0 if x.type is Type.REAL else 0,
                        lambda me: Expr(Op.WHERE, x.type, (grow, _arith(Op.ADD, me, x), me)),
                        f"sum of {to_text(x)} over the leading run with {to_text(p)}",
                        "the leading run's sum, which joins the left part's trailing run at the split",
                        _LEAD, needs=(all_p.key,) + tuple(all_p.needs))

    def step_matrix(self) -> list[Aux]:
        """Where `left` maps a block of fields affinely over a semiring, s' = A(x) (x) s
        (+) c(x) over (+, *), (+, *) mod m, (max, +), (min, +) or (or, and): the
        product of the step matrices so far, M' = A(x) (x) M from the identity, the
        factor by which the later elements carry the fields that came before them (a
        power c**n, a length, a companion matrix power).  Its reduced form first (the
        entries that are neither constant nor an original field, equal ones merged:
        `thm3.synth.semiring.lift_units`), ranked ahead of the other candidates of its
        size; then the full matrix.  Each a group, taken whole."""
        from thm3.synth.semiring import lift_units

        def key_of(row: str, column: str, full: bool) -> str:
            self.serial += 1
            return f"c{self.serial}_{'mf' if full else 'm'}_{row}_{column}"

        out = []
        for unit in lift_units(self.loop, key_of):
            self.serial += 1
            group = f"m{self.serial}"
            mine = set(unit.fields.values())
            how = unit.how or ("the full product of the step matrices" if unit.full else
                               "the composed map's entries that its fields do not hold already")
            for k in unit.keys:
                key, update = unit.fields[k], unit.updates[k]
                needs = tuple(sorted(n[4:] for n in free_vars([update])
                                     if n.startswith("acc.") and n[4:] in mine and n[4:] != key))
                out.append(Aux(key, unit.names[k], update.type, unit.defaults[k], update, unit.comments[k],
                                f"{how} over {unit.semiring.name}, by which the later elements carry the "
                                f"fields that came before them", _POWER if unit.full else COMPOSED,
                                needs=needs, group=group, route="semiring"))
        return out

    # --- deduplication by values

    def dedupe(self, cands: list[Aux], before: tuple | list = ()) -> list[Aux]:
        """`cands` less those equal to an original field, a candidate in `before` or an
        earlier one on short lists, or constant there; one dropped as equal to another
        field is recorded in `alias`.  (A flag opposite to another stays: the leading
        run needs its own "every element" flag.)"""
        loop = self.loop
        columns = self.columns(with_fields(loop, list(before) + list(cands)))
        k = len(loop.fields)
        kept: list[Aux] = []
        known = [(f.name, columns[i]) for i, f in enumerate(loop.fields)]
        known += [(c.key, columns[k + i]) for i, c in enumerate(before)]
        dropped: set[str] = set()
        for j, c in enumerate(cands):
            col = columns[k + len(before) + j]
            if any(n in dropped for n in c.needs) or np.all(_eq(col, col[:1])):
                dropped.add(c.key)
                continue
            twin = next((name for name, other in known
                         if other.shape == col.shape and np.all(_eq(col, other))), None)
            if twin is not None:
                self.alias[c.key] = twin
                dropped.add(c.key)
                continue
            kept.append(c)
            known.append((c.key, col))
        return kept

    def columns(self, mega: Loop) -> list[np.ndarray]:
        """Each field's values (rows of floats) on all short lists over the search
        domain, for two settings of the loop parameters."""
        blocks = []
        for params in parameter_settings(self.loop, 2, self.rng):
            elements = element_domain(self.loop, params, self.rng)
            if not elements:
                continue
            search = ShortLists(mega, params, elements, max_lists=3000, max_len=5)
            blocks.append([np.asarray(v, dtype=np.float64).reshape(search.n, -1) for v in search.states])
        return [np.concatenate([b[i] for b in blocks], axis=0) for i in range(len(mega.fields))]


# --- helpers -----------------------------------------------------------------------

def with_fields(loop: Loop, cands: list[Aux]) -> Loop:
    """`loop` with the candidates as extra fields (named by their keys); `left` updates
    them, `result` reads the original fields as before.  No right fold: the lifted
    loop gets the one its proved combine gives (`thm3.lift.derive`)."""
    fields = tuple(loop.fields) + tuple(FieldDecl(c.key, c.type, c.default, c.comment) for c in cands)
    state = tuple((f"acc.{f.name}", f.type) for f in fields)
    params = tuple((d.name, d.type) for d in loop.params)
    left = Fn(state + tuple((d.name, d.type) for d in loop.elements) + params,
              tuple(loop.left.outputs) + tuple(c.update for c in cands))
    result = None if loop.result is None else Fn(state + params, loop.result.outputs)
    return replace(loop, source="", fields=fields, left=left, right=None, result=result)


def _is_const(e: Expr, v: float) -> bool:
    return e.op is Op.CONST and not isinstance(e.arg, bool) and float(e.arg) == v


def _arith(op: Op, a: Expr, b: Expr) -> Expr:
    type_ = promote(a.type, b.type)
    if type_ is not Type.INT:
        a, b = as_real(a), as_real(b)
    return Expr(op, type_, (a, b))


def _eq(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Equal values, to round-off (infinities equal only to themselves, NaN to NaN)."""
    return close(a, b)


def _pred_name(p: Expr) -> str:
    """A short name for a predicate: `x == 1` -> "ones", `x > t` -> "x_gt_t"."""
    words = {Op.EQ: "eq", Op.NE: "ne", Op.LT: "lt", Op.LE: "le", Op.GT: "gt", Op.GE: "ge"}
    if p.op is Op.VAR:
        return p.arg
    if p.op in words and p.src[0].op is Op.VAR:
        a, b = p.src
        if p.op is Op.EQ and b.op is Op.CONST and b.arg in (0, 1):
            return "zeros" if b.arg == 0 else "ones"
        right = _name_part(b)
        if right:
            return f"{a.arg}_{words[p.op]}_{right}"
    return "p"


def _name_part(e: Expr) -> str:
    if e.op is Op.VAR:
        return e.arg.replace("acc.", "")
    if e.op is Op.CONST and not isinstance(e.arg, bool) and math.isfinite(float(e.arg)):
        v = float(e.arg)
        text = str(int(v)) if v == int(v) else str(v)
        return text.replace("-", "m").replace(".", "_")
    return ""


def default_text(c: Aux) -> str:
    v = c.default
    if isinstance(v, bool):
        return repr(v)
    if isinstance(v, float):
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return str(int(v)) if v == int(v) else repr(v)
    return repr(v)
