"""Combine synthesis by bottom-up enumeration: the fallback of `synthesize` for fields
whose combine is not shaped like `left` (blocks of ones: a.count + b.count, less one
where a run of ones crosses the cut).

Typed terms over a.<f>, b.<f>, the loop parameters, the combined values of fields
already synthesized and small constants are built by size, bottom-up.  A term's values
on the sampled pairs (h(xs), h(ys)) are computed once, from its children's stored
values with the NumPy table, many terms per call; only the first term of each distinct
value vector is kept per type (observational equivalence).  A term that equals field i
of h(xs + ys) on the samples, or equals it up to a residual (a.f + b.f + r, a.f + b.f - r),
is checked on every sample and returned, smallest first."""
from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field

import numpy as np

from thm3.semantics.evaluate import DTYPES, NUMPY, evaluate, quiet
from thm3.ir import UNARY, WITH_ARG, Expr, Loop, Op, Type, const, promote, var, walk
from thm3.ir.types import NUMBERS, result_type
from thm3.semantics.equality import rows_close
from thm3.semantics.samples import Triples

FIELD_SECONDS = 3.0         # at most this long for one field, when the caller allows more (the
                            # corpus's enumerated combine takes 0.4 s; a loop with none pays it all)
MAX_ROWS = 256              # rows the terms are enumerated on; the rest check hits (CEGIS)
CHUNK = 1 << 19             # values per batched call: bounds memory and deadline latency
BANK_VALUES = 3 * 10 ** 7   # stored values over all kept terms: bounds memory
BUCKET_TERMS = 60000        # kept terms of one type and size
PREFIX = 16                 # rows a target is compared on before all rows are
ROUNDS = 4                  # enumerations, each on the rows the last one's hits failed

# Always in the grammar, whatever the loop uses; GT and GE are LT and LE swapped.
BASE_OPS = (Op.ADD, Op.SUB, Op.MUL, Op.MAX, Op.MIN, Op.WHERE, Op.AND, Op.OR, Op.NOT,
            Op.EQ, Op.LT, Op.LE)
# In the grammar where the loop itself uses them.
LOOP_OPS = (Op.NEG, Op.ABS, Op.EXP, Op.EXP2, Op.LOG, Op.LOG2, Op.SQRT, Op.DIV, Op.POW,
            Op.NE, Op.DOT)
COMMUTATIVE = (Op.ADD, Op.MUL, Op.MAX, Op.MIN, Op.EQ, Op.NE, Op.AND, Op.OR)
_HALF = np.uint64(1 << 11)
_MASK = np.uint64(~((1 << 12) - 1) & (2 ** 64 - 1))


def fits(term: Type, field_type: Type) -> bool:
    """Whether a term of this type may be a field's combined value (as in synthesize)."""
    if term is Type.REAL:
        return field_type in (Type.REAL, Type.INT)
    return term is field_type


def value_bits(vals: np.ndarray) -> np.ndarray:
    """Values as integers that are equal for equal values: floats rounded to 40 bits of
    mantissa (sums in another order still meet), -0.0 as 0.0, one NaN."""
    match vals.dtype.kind:
        case "b":
            return vals.astype(np.uint64)
        case "i" | "u":
            return vals.astype(np.int64).view(np.uint64)
        case _:
            with quiet():
                v = vals.astype(np.float64) + 0.0
            v = np.where(v != v, np.nan, v)
            return (v.view(np.uint64) + _HALF) & _MASK


def _column(type_: Type, rows: int, width: int, v) -> np.ndarray:
    """A value as a (rows, W) column: scalars repeat down the rows, a Vec parameter too."""
    arr = np.asarray(v).astype(DTYPES[type_], copy=False)
    if arr.ndim < 2:
        arr = arr.reshape(1, -1) if type_ is Type.VEC else arr.reshape(-1, 1)
    return np.broadcast_to(arr, (rows, width if type_ is Type.VEC else 1))


@dataclass
class _Rows:
    """The combine's inputs and field i of h(xs + ys), stacked over all triples: a
    value per input name, shaped (rows, 1), or (rows, D) for a Vec."""
    env: dict[str, np.ndarray]
    chosen: dict[int, np.ndarray]
    target: np.ndarray

    @staticmethod
    def build(loop: Loop, i: int, triples: list[Triples], names, chosen: dict[int, Expr]) -> "_Rows":
        k = len(loop.fields)
        types = dict(names)
        parts: dict[str, list] = {n: [] for n, _ in names}
        chosen_parts: dict[int, list] = {j: [] for j in chosen}
        target = []
        for t in triples:
            rows = t.a[0].shape[0]
            width = max([x.shape[1] for x in t.a if x.ndim == 2] + [1])
            env = dict(zip((n for n, _ in names[:k]), t.a)) | dict(zip((n for n, _ in names[k:2 * k]), t.b))
            env |= {n: _column(types[n], rows, width, v) for n, v in t.params.items() if n in types}
            for n in parts:
                parts[n].append(_column(types[n], rows, width, env[n]))
            with quiet():
                got = evaluate(list(chosen.values()), env, NUMPY)
            for (j, e), v in zip(chosen.items(), got):
                chosen_parts[j].append(_column(e.type, rows, width, v))
            target.append(_column(loop.fields[i].type, rows, width, t.c[i]))
        cat = lambda xs: np.ascontiguousarray(np.concatenate(xs, axis=0))  # noqa: E731
        return _Rows({n: cat(p) for n, p in parts.items()}, {j: cat(p) for j, p in chosen_parts.items()},
                     cat(target))

    @property
    def count(self) -> int:
        return self.target.shape[0]

    def distinct(self) -> np.ndarray:
        """One row per distinct input (terms are functions of the inputs alone)."""
        cols = [value_bits(v) for v in self.env.values()] + [value_bits(v) for v in self.chosen.values()]
        if not cols:
            return np.arange(min(1, self.count))
        mat = np.ascontiguousarray(np.concatenate(cols, axis=1))
        _, first = np.unique(mat, axis=0, return_index=True)
        return np.sort(first)

    def failing(self, e: Expr) -> np.ndarray | None:
        """Rows where `e` differs from the target (None: it cannot be evaluated)."""
        try:
            with quiet():
                got = evaluate([e], self.env, NUMPY)[0]
                return ~rows_close(np.broadcast_to(got, self.target.shape), self.target)
        except (ValueError, TypeError, OverflowError):
            return None


@dataclass
class _Target:
    """Values a term must take, and how a matching term becomes the field's combine."""
    values: np.ndarray          # (rows, W) on the enumeration rows
    accepts: tuple[Type, ...]   # term types that may match
    base: Expr | None = None    # the combine is base + r (sign 1) or base - r (sign -1)
    sign: int = 0

    def wrap(self, r: Expr) -> Expr:
        if self.base is None:
            return r
        t = promote(self.base.type, r.type)
        return _node(Op.ADD if self.sign > 0 else Op.SUB, t, (self.base, r))


def _constant(vals: np.ndarray) -> bool:
    flat = value_bits(vals).reshape(-1)
    return bool(np.all(flat == flat[0]))


def _node(op: Op, type_: Type, src: tuple[Expr, ...], arg=None) -> Expr:
    """A node as the frontend spells it: Int literals among Reals become Real literals."""
    real = type_ in (Type.REAL, Type.VEC) or (
        op in (Op.LT, Op.LE, Op.EQ, Op.NE) and any(s.type is Type.REAL for s in src))
    if real:
        src = tuple(s if (op is Op.WHERE and j == 0) or s.op is not Op.CONST or s.type is not Type.INT
                    else const(float(s.arg), Type.REAL) for j, s in enumerate(src))
    return Expr(op, type_, src, arg)


def _compositions(total: int, parts: int):
    """Tuples of `parts` positive sizes that add up to `total`."""
    if parts == 1:
        yield (total,)
        return
    for first in range(1, total - parts + 2):
        for rest in _compositions(total - first, parts - 1):
            yield (first,) + rest


@dataclass
class _Bucket:
    """The kept terms of one type and size: stacked values (terms, rows, W) and how
    each term was built: ("leaf", Expr) or (op, arg, ((bucket key, index), ...))."""
    values: np.ndarray
    how: list
    plain: np.ndarray | None = None     # indices of the non-constant terms (conditions)


@dataclass
class _Hit:
    size: int
    expr: Expr
    residual: bool


@dataclass
class _Search:
    leaves: list[tuple[Expr, np.ndarray]]       # (leaf, values (rows, W))
    ops: list[tuple[Op, object]]
    targets: list[_Target]
    rows: _Rows
    deadline: float
    max_size: int
    limit: int
    buckets: dict[tuple[Type, int], _Bucket] = field(default_factory=dict)
    seen: dict[Type, set] = field(default_factory=dict)
    hits: list[_Hit] = field(default_factory=list)
    failed_rows: set = field(default_factory=set)
    stored: int = 0
    timed_out: bool = False

    def __post_init__(self):
        rng = np.random.default_rng(12345)
        width = max(v.size for _, v in self.leaves) if self.leaves else 1
        self.weights = rng.integers(1, 2 ** 63, size=width, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
        self.memo: dict[tuple, Expr] = {}

    # --- the search

    def run(self) -> None:
        self.add_leaves()
        for size in range(2, self.max_size + 1):
            # after a size that matched: done, or (matched on these rows only) start over
            if self.hits or self.failed_rows or self.out_of_time():
                return
            pending: dict[Type, tuple[list, list]] = {}
            for op, arg in self.ops:
                for combo in self.splits(op, size):
                    types = tuple(t for t, _ in combo)
                    out = result_type(op, arg, types)
                    if out is None:
                        continue
                    self.apply(op, arg, combo, out, size, pending)
                    if self.out_of_time() or len(self.hits) >= self.limit:
                        return
            self.keep(size, pending)

    def out_of_time(self) -> bool:
        if time.monotonic() > self.deadline:
            self.timed_out = True
        return self.timed_out

    def add_leaves(self) -> None:
        pending: dict[Type, tuple[list, list]] = {}
        for e, v in self.leaves:
            vals = v[None]
            self.check(e.type, 1, vals, lambda r, e=e: e)
            self.store(e.type, vals, [("leaf", e)], pending)
        self.keep(1, pending)

    def splits(self, op: Op, size: int):
        """Child buckets whose sizes add up to size - 1 (unordered for commutative ops)."""
        arity = 3 if op is Op.WHERE else 1 if op in UNARY or op in WITH_ARG else 2
        order = {k: n for n, k in enumerate(sorted(self.buckets, key=lambda k: (k[1], k[0].value)))}
        by_size: dict[int, list] = {}
        for key in order:
            by_size.setdefault(key[1], []).append(key)
        for sizes in _compositions(size - 1, arity):
            for combo in itertools.product(*(by_size.get(n, []) for n in sizes)):
                if op in COMMUTATIVE and order[combo[0]] > order[combo[1]]:
                    continue
                yield combo

    def apply(self, op, arg, combo, out: Type, size: int, pending) -> None:
        """Every term op(children) with children from these buckets: one child is
        batched, the others are looped over."""
        fn = NUMPY[op]
        pools = []
        for j, key in enumerate(combo):
            b = self.buckets[key]
            idx = b.plain if op is Op.WHERE and j == 0 else np.arange(len(b.how))
            pools.append(idx)
        if any(len(p) == 0 for p in pools):
            return
        same = op in COMMUTATIVE and combo[0] == combo[1]
        batch = 1 if same else int(np.argmax([len(p) for p in pools]))
        loops = [range(len(pools[j])) if j != batch else [None] for j in range(len(combo))]
        width = max(self.buckets[k].values.shape[2] for k in combo)
        step = max(1, CHUNK // max(1, self.rows_n * width))
        for pos in itertools.product(*loops):
            lo = pos[0] if same else 0
            batch_idx = pools[batch][lo:]
            for start in range(0, len(batch_idx), step):
                if self.out_of_time():
                    return
                part = batch_idx[start:start + step]
                args = []
                for j, key in enumerate(combo):
                    vals = self.buckets[key].values
                    args.append(vals[part] if j == batch else vals[pools[j][pos[j]]][None])
                with quiet():
                    got = fn(args[0], arg) if op in WITH_ARG else fn(*args)
                got = np.asarray(got)
                if got.shape[0] != len(part):
                    got = np.broadcast_to(got, (len(part),) + got.shape[1:])
                got = got.astype(DTYPES[out], copy=False)
                fixed = [None if j == batch else int(pools[j][pos[j]]) for j in range(len(combo))]

                def how(r, fixed=fixed, part=part):
                    kids = tuple((key, int(part[r]) if f is None else f) for key, f in zip(combo, fixed))
                    return (op, arg, kids)

                self.check(out, size, got, lambda r, how=how: self.build_how(out, how(r)))
                self.store(out, got, how, pending)

    # --- targets and observational equivalence

    def check(self, type_: Type, size: int, vals: np.ndarray, expr_of) -> None:
        for tg in self.targets:
            if type_ not in tg.accepts or vals.shape[2] not in (1, tg.values.shape[1]):
                continue
            head = np.nonzero(rows_close(vals[:, :PREFIX], tg.values[None, :PREFIX]))[0]
            if len(head) == 0:
                continue
            whole = head[rows_close(vals[head], tg.values[None])]
            for r in whole.tolist():
                if tg.base is not None and _constant(vals[r]):
                    continue        # base + c: a plain term, found as such
                e = tg.wrap(expr_of(r))
                bad = self.rows.failing(e)
                if bad is None:
                    continue
                if bad.any():
                    self.failed_rows.update(np.nonzero(bad)[0][:4].tolist())
                    continue
                if tg.base is None:
                    self.hits.append(_Hit(size, e, False))
                else:
                    self.hits.append(_Hit(size + len(walk([tg.base])) + 1, e, True))

    def store(self, type_: Type, vals: np.ndarray, how, pending) -> None:
        n = vals.shape[0]
        keys = (value_bits(vals).reshape(n, -1) * self.weights[:vals[0].size]).sum(axis=1)
        _, first = np.unique(keys, return_index=True)
        seen = self.seen.setdefault(type_, set())
        fresh = []
        for r in np.sort(first).tolist():
            k = int(keys[r])
            if k not in seen:
                seen.add(k)
                fresh.append(r)
        if not fresh:
            return
        vals_list, hows = pending.setdefault(type_, ([], []))
        room = min(BUCKET_TERMS - len(hows), (BANK_VALUES - self.stored) // max(1, vals[0].size))
        fresh = fresh[:max(0, room)]
        if not fresh:
            return
        vals_list.append(vals[fresh])
        hows.extend(how[r] if isinstance(how, list) else how(r) for r in fresh)
        self.stored += len(fresh) * vals[0].size

    def keep(self, size: int, pending) -> None:
        for type_, (vals_list, hows) in pending.items():
            if not hows:
                continue
            values = np.concatenate(vals_list, axis=0)
            plain = None
            if type_ is Type.BOOL:
                flat = values.reshape(len(hows), -1)
                plain = np.nonzero(flat.any(axis=1) & ~flat.all(axis=1))[0]
            self.buckets[(type_, size)] = _Bucket(values, hows, plain)

    @property
    def rows_n(self) -> int:
        return self.leaves[0][1].shape[0] if self.leaves else 1

    # --- terms back as IR

    def build(self, key, index: int) -> Expr:
        got = self.memo.get((key, index))
        if got is None:
            got = self.build_how(key[0], self.buckets[key].how[index])
            self.memo[(key, index)] = got
        return got

    def build_how(self, type_: Type, how) -> Expr:
        if how[0] == "leaf":
            return how[1]
        op, arg, kids = how
        return _node(op, type_, tuple(self.build(k, j) for k, j in kids), arg)


def _grammar(loop: Loop) -> list[tuple[Op, object]]:
    fns = [loop.left] + [f for f in (loop.right, loop.result) if f is not None]
    nodes = walk([e for f in fns for e in f.outputs] + list(loop.preconditions))
    used = {e.op for e in nodes}
    ops: list[tuple[Op, object]] = [(op, None) for op in BASE_OPS]
    ops += [(op, None) for op in LOOP_OPS if op in used and op not in WITH_ARG]
    ops += sorted({(e.op, e.arg) for e in nodes if e.op in WITH_ARG}, key=lambda p: (p[0].value, p[1]))
    return ops


def _constants(loop: Loop) -> list[Expr]:
    """0, 1, -1, True, False, the loop's own constants and the fields' defaults."""
    fns = [loop.left] + [f for f in (loop.right, loop.result) if f is not None]
    nodes = walk([e for f in fns for e in f.outputs] + list(loop.preconditions))
    values = [0, 1, -1] + [e.arg for e in nodes if e.op is Op.CONST and not isinstance(e.arg, bool)]
    values += [f.default for f in loop.fields if f.type is not Type.VEC and not isinstance(f.default, bool)]
    out: list[Expr] = [const(True), const(False)]
    seen: set = set()
    for v in values:
        v = float(v)
        if v in seen or math.isnan(v):
            continue
        seen.add(v)
        out.append(const(int(v)) if math.isfinite(v) and v.is_integer() else const(v, Type.REAL))
    return out


def _targets(loop: Loop, i: int, target: np.ndarray, rows_env: dict, bases: list[Expr]) -> list[_Target]:
    f = loop.fields[i]
    accepts = tuple(t for t in (Type.BOOL, Type.INT, Type.REAL, Type.VEC) if fits(t, f.type))
    out = [_Target(target, accepts)]
    if f.type is Type.BOOL:
        return out
    for base in bases:
        with quiet():
            b = np.broadcast_to(evaluate([base], rows_env, NUMPY)[0], target.shape)
            for sign, vals in ((1, target - b), (-1, b - target)):
                acc = tuple(t for t in NUMBERS if fits(promote(base.type, t), f.type))
                out.append(_Target(vals, acc, base, sign))
    return out


def enumerate_field(loop: Loop, i: int, triples: list[Triples], names, *, chosen: dict[int, Expr],
                    deadline: float, max_size: int = 11, limit: int = 3,
                    bases: tuple[Expr, ...] = (), fields: frozenset[str] | None = None) -> list[Expr]:
    """Up to `limit` smallest terms over the combine's inputs `names` (and the combined
    fields in `chosen`) whose values equal field i of h(xs + ys) on every triple.

    For a numeric field, a term r with a.f + b.f ± r equal to the target counts too,
    as do residuals of the extra `bases`.  `fields`, if given: the leaves a.f and b.f are
    those of these fields only (the parameters stay).  Returns what it has at `deadline`."""
    if time.monotonic() > deadline:
        return []
    f = loop.fields[i]
    full = _Rows.build(loop, i, triples, names, chosen)
    distinct = full.distinct()
    if len(distinct) > MAX_ROWS:
        pick = np.sort(np.random.default_rng(0).choice(len(distinct), MAX_ROWS, replace=False))
        rows = distinct[pick]
    else:
        rows = distinct
    kept = [(n, t) for n, t in names if fields is None or n[:2] not in ("a.", "b.") or n[2:] in fields]
    leaf_exprs = [var(n, t) for n, t in kept] + [chosen[j] for j in sorted(chosen)]
    leaf_cols = [full.env[n] for n, _ in kept] + [full.chosen[j] for j in sorted(chosen)]
    consts = _constants(loop)
    if not any(t in (Type.REAL, Type.VEC) for _, t in names):
        consts = [c for c in consts if c.type is not Type.REAL]
    base_terms = list(bases)
    if f.type in NUMBERS:
        af, bf = var(f"a.{f.name}", f.type), var(f"b.{f.name}", f.type)
        base_terms.insert(0, _node(Op.ADD, f.type, (af, bf)))
    ops = _grammar(loop)
    found: list[_Hit] = []
    for _ in range(ROUNDS):
        env = {n: v[rows] for n, v in full.env.items()}
        leaves = [(e, np.ascontiguousarray(c[rows])) for e, c in zip(leaf_exprs, leaf_cols)]
        for c in consts:
            v = NUMPY[Op.CONST](c.arg, c.type)
            leaves.append((c, np.full((len(rows), 1), v)))
        search = _Search(leaves, ops, _targets(loop, i, full.target[rows], env, base_terms), full,
                         deadline, max_size, limit)
        search.run()
        found = search.hits
        if found or search.timed_out or not search.failed_rows:
            break
        more = np.union1d(rows, np.array(sorted(search.failed_rows), dtype=np.int64))
        if len(more) == len(rows):
            break
        rows = more
    if any(h.residual is False for h in found):
        # a residual spelling (base + r) of a plain term: its rounding is worse
        found = [h for h in found if not h.residual]
    found.sort(key=lambda h: h.size)
    return list(dict.fromkeys(h.expr for h in found))[:limit]
