"""Synthesis route "weak right inverse" (Morita, Morihata, Matsuzaki, Hu, Takeichi, PLDI
2007): a short list g(t) with h(g(t)) = t on reachable states t gives
combine(a, b) = foldl(left, a, g(b)), which is a combine whenever h is a homomorphism.

g's elements are searched among terms over t's fields (a field, its negation, the
difference of two fields, per element parameter of a compatible type), lists of length
k = 1 .. #fields + 1, shortest first; each list is folded from init on every sampled
reachable state t at once (prefixes shared) and kept if it gives back t.  The combine
is `left` unrolled over g(b) and spelled with the stability guards; the prover then
proves it like any other.  Where no list of the searched shape gives t back, the reason
names the shape (a field that k elements cannot reach, such as a softmax sum d >= 1,
leaves no bounded inverse)."""
from __future__ import annotations

import itertools
import time

import numpy as np

from thm3.ir import Expr, Fn, Loop, Op, Type, substitute, var
from thm3.semantics.evaluate import NUMPY, evaluate, quiet
from thm3.semantics.equality import rows_close
from thm3.semantics.samples import Triples, batch_init

MAX_SEQUENCES = 6000        # lists tried, over all lengths
PROBE_ROWS = 48


class Failed(Exception):
    """No weak right inverse of the searched shape; the message says why."""


def _terms(loop: Loop, type_: Type) -> list[Expr]:
    """Terms over t's fields that may stand for an element of this type."""
    fits = [f for f in loop.fields if (f.type is type_) or (type_ is Type.REAL and f.type is Type.INT)]
    if type_ is Type.BOOL:
        return [var(f"b.{f.name}", f.type) for f in fits] + [Expr(Op.CONST, Type.BOOL, (), v) for v in (True, False)]
    out = [var(f"b.{f.name}", f.type) for f in fits]
    if type_ in (Type.REAL, Type.VEC):
        out += [Expr(Op.NEG, t.type, (t,)) for t in out]
        reals = [var(f"b.{f.name}", f.type) for f in fits]
        out += [Expr(Op.SUB, type_, (x, y)) for x, y in itertools.permutations(reals, 2)]
    return out


def synthesize(loop: Loop, triples: list[Triples], deadline: float) -> tuple[Fn, str]:
    per_param = [_terms(loop, Type.INT if d.index else d.type) for d in loop.elements]
    if any(not t for t in per_param):
        raise Failed("an element parameter has no field of its type to be read from")
    elements = list(itertools.product(*per_param))
    k_max = len(loop.fields) + 1
    # rows: the sampled reachable states t = h(ys), with their loop parameters
    probes = [_Rows(loop, t, slice(0, PROBE_ROWS)) for t in triples]
    full = [_Rows(loop, t, slice(None)) for t in triples]
    tried = 0
    for k in range(1, k_max + 1):
        if len(elements) ** k + tried > MAX_SEQUENCES:
            raise Failed(f"no list of up to {k - 1} element(s) over the fields gives the state back; "
                         f"{len(elements)}^{k} lists of length {k} are more than searched")
        for seq in itertools.product(range(len(elements)), repeat=k):
            if time.monotonic() > deadline:
                raise Failed(f"out of time after {tried} lists")
            tried += 1
            g = [elements[j] for j in seq]
            if all(r.gives_back(g) for r in probes) and all(r.gives_back(g) for r in full):
                return _unrolled(loop, g), "weak right inverse g(t) = [" + ", ".join(
                    ("(" + ", ".join(map(repr, e)) + ")") if len(e) > 1 else repr(e[0]) for e in g) + "]"
    raise Failed(f"no list of up to {k_max} element(s) over the fields (a field, its negation, a difference) "
                 f"gives the state back on the samples ({tried} lists)")


class _Rows:
    """Sampled states t of one triple set, and folds from init over terms of t."""

    def __init__(self, loop: Loop, t: Triples, rows: slice):
        self.loop = loop
        self.t = tuple(x[rows] for x in t.b)
        self.params = t.params
        self.env = {f"b.{f.name}": v for f, v in zip(loop.fields, self.t)} | dict(t.params)
        n = self.t[0].shape[0]
        width = self.t[-1].shape[-1] if loop.fields[-1].type is Type.VEC else 3
        init = batch_init(loop, n, width)
        self.init = tuple(np.broadcast_to(i, x.shape).copy() for i, x in zip(init, self.t))
        self.cache: dict = {}
        self.term_values: dict = {}

    def _value(self, e: Expr):
        key = repr(e)
        got = self.term_values.get(key)
        if got is None:
            with quiet():
                got = self.term_values[key] = np.broadcast_to(evaluate([e], self.env, NUMPY)[0], self.t[0].shape[:1] + (1,)) \
                    if e.type is not Type.VEC else evaluate([e], self.env, NUMPY)[0]
        return got

    def fold(self, g) -> tuple:
        key = tuple(tuple(map(repr, e)) for e in g)
        got = self.cache.get(key)
        if got is not None:
            return got
        prev = self.init if len(g) == 1 else self.fold(g[:-1])
        names = [n for n, _ in self.loop.left.inputs]
        k = len(self.loop.fields)
        env = dict(zip(names[:k], prev)) | {d.name: self._value(x) for d, x in zip(self.loop.elements, g[-1])}
        env |= self.params
        with quiet():
            out = tuple(evaluate(self.loop.left.outputs, env, NUMPY))
        self.cache[key] = out
        return out

    def gives_back(self, g) -> bool:
        got = self.fold(g)
        for v, want in zip(got, self.t):
            if not bool(np.all(rows_close(np.broadcast_to(v, want.shape), want))):
                return False
        return True


def _unrolled(loop: Loop, g) -> Fn:
    """foldl(left, a, g(b)) as one term per field."""
    from thm3.ir.simplify import simplify
    from thm3.synth.sketch import guard_for_stability
    state = [var(f"a.{f.name}", f.type) for f in loop.fields]
    for e in g:
        mapping = {f"acc.{f.name}": s for f, s in zip(loop.fields, state)}
        mapping |= {d.name: x for d, x in zip(loop.elements, e)}
        state = list(substitute(loop.left.outputs, mapping))
    names = tuple((f"a.{f.name}", f.type) for f in loop.fields) + \
        tuple((f"b.{f.name}", f.type) for f in loop.fields) + tuple((d.name, d.type) for d in loop.params)
    g_memo, f_memo = {}, {}
    return Fn(names, tuple(simplify(guard_for_stability(s, loop, g_memo), arithmetic=False, memo=f_memo) for s in state))
