"""Transport of structure: a map ψ of the state onto a product of known monoids that
carries the combine over, ψ(a ⊙ b) = ψ(a) ⋆ ψ(b).

Online softmax and FlashAttention: (m, d, o) ↦ (m, d·e^m, o·e^m) onto (max, +, +);
Welford: (n, mean, M2) ↦ (n, n·mean, M2 + n·mean²) onto (+, +, +).  Candidates per
field come from a small grammar over the fields (f, f·e^g, f·g, f + g·h²); the first
that agrees on sampled states is proved per field with `thm3.prove`.  This names why
the combine is associative; the combine itself comes from synthesis."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from thm3.semantics.evaluate import NUMPY, evaluate, quiet
from thm3.ir import Expr, Fn, Loop, Op, Type, var
from thm3.ir.monoids import MONOIDS, monoids_over
from thm3.prove.laws import Law, Setting, apply_fn, check_equal_pairs
from thm3.semantics.equality import LAW, rows_close
from thm3.semantics.samples import Triples

# The monoids a field may be carried onto, by its type (the table's; a Vec only onto its
# sum: an elementwise max of maps of the state is not searched)
_OPS = {t: monoids_over(t) for t in (Type.REAL, Type.INT, Type.BOOL)} | {Type.VEC: (Op.ADD,)}
_NAMES = {m.op: m.symbol for m in MONOIDS}


@dataclass
class Transport:
    maps: list[Expr]          # ψ per field, over "acc.<field>"
    ops: list[Op]             # the monoid operation per field
    status: str               # "proved" | "tested"

    def describe(self, loop: Loop) -> str:
        from thm3.ir.printer import TRANSPORT, to_text
        fields = ", ".join(f.name for f in loop.fields)
        images = ", ".join(to_text(m, TRANSPORT) for m in self.maps)
        onto = ", ".join(_NAMES[o] for o in self.ops)
        return f"({fields}) ↦ ({images}) carries ⊙ onto ({onto}): {self.status}"

    @property
    def trivial(self) -> bool:
        return all(m.op is Op.VAR for m in self.maps)


def _candidates(loop: Loop, f) -> list[Expr]:
    x = var(f"acc.{f.name}", f.type)
    out = [x]
    if f.type is Type.BOOL:
        return out
    reals = [g for g in loop.fields if g.type is Type.REAL and g is not f]
    nums = [g for g in loop.fields if g.type in (Type.REAL, Type.INT) and g is not f]
    for g in reals:
        out.append(Expr(Op.MUL, f.type, (x, Expr(Op.EXP, Type.REAL, (var(f"acc.{g.name}", Type.REAL),)))))
    for g in nums:
        out.append(Expr(Op.MUL, f.type, (x, var(f"acc.{g.name}", g.type))))
    for g in nums:
        for h in nums:
            gh = Expr(Op.MUL, Type.REAL, (var(f"acc.{g.name}", g.type),
                                          Expr(Op.POW, h.type, (var(f"acc.{h.name}", h.type),), 2)))
            out.append(Expr(Op.ADD, f.type, (x, gh)))
    return out


def find(loop: Loop, combine: Fn, triples: list[Triples], setting: Setting, deadline: float) -> Transport | None:
    maps, ops = [], []
    for i, f in enumerate(loop.fields):
        hit = None
        for psi in _candidates(loop, f):
            for op in _OPS[f.type]:
                if _agrees(loop, psi, op, triples):
                    hit = (psi, op)
                    break
            if hit:
                break
        if hit is None:
            return None
        maps.append(hit[0])
        ops.append(hit[1])
    status = "proved" if _prove(loop, combine, maps, ops, setting, deadline) else "tested"
    return Transport(maps, ops, status)


def _psi(psi: Expr, state, params) -> np.ndarray:
    # ψ of a state with ±inf fields: e^(-inf)·0 is 0 (the empty state maps to the unit)
    env = {}
    for name, v in state.items():
        env[name] = v
    with quiet():
        v = evaluate([psi], env | params, NUMPY)[0]
        return np.nan_to_num(np.asarray(v, dtype=np.float64), nan=0.0, posinf=np.inf, neginf=-np.inf)


def _agrees(loop: Loop, psi: Expr, op: Op, triples: list[Triples]) -> bool:
    for t in triples:
        envs = [{f"acc.{f.name}": s[j] for j, f in enumerate(loop.fields)} for s in (t.a, t.b, t.c)]
        pa, pb, pc = (_psi(psi, e, t.params) for e in envs)
        with quiet():
            want = np.asarray(NUMPY[op](pa, pb), dtype=np.float64)
        if not bool(np.all(rows_close(np.broadcast_to(pc, np.broadcast(pc, want).shape),
                                       np.broadcast_to(want, np.broadcast(pc, want).shape), LAW))):
            return False
    return True


def _prove(loop: Loop, combine: Fn, maps, ops, setting: Setting, deadline: float) -> bool:
    """ψ(a ⊙ b) == ψ(a) ⋆ ψ(b) for every field, on reachable a, b."""
    field_inputs = tuple((f"acc.{f.name}", f.type) for f in loop.fields)
    psi = Fn(field_inputs + tuple((d.name, d.type) for d in loop.params), tuple(maps))

    def build(table, env):
        a = [env[f"a.{f.name}"] for f in loop.fields]
        b = [env[f"b.{f.name}"] for f in loop.fields]
        p = {d.name: env[d.name] for d in loop.params}
        ab = apply_fn(table, combine, a + b, p)
        lhs = apply_fn(table, psi, ab, p)
        pa, pb = apply_fn(table, psi, a, p), apply_fn(table, psi, b, p)
        rhs = [table[op](x, y) for op, x, y in zip(ops, pa, pb)]
        return list(zip(lhs, rhs))

    out = Law(setting, ["a", "b"], [], deadline, combine.outputs + tuple(maps)).run(build, check_equal_pairs)
    return out.proved
