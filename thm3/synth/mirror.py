"""The reversal of a state: a field map pi with h(reverse(xs)).f == h(xs).pi(f) on sampled
lists (a run's lead and trail, a list's first and last, swapped; its length and longest
run kept).  Where it exists, h(xs + ys) = R(h(rev ys + rev xs)), so field f of the combine
is field pi(f) of the combine with the operands swapped and read through pi:

    combine(a, b).f == combine(R b, R a).pi(f),  (R s).g == s.pi(g)

A field the sketch cannot complete (a trail, whose step never reads "the whole list is
one run", as the combine must) takes its mirror's completion (the lead's) that way.  Only
a candidate: it is checked on the samples and proved like any other."""
from __future__ import annotations

import numpy as np

from thm3.ir import Expr, Loop, Op, Type, transform, var
from thm3.semantics.equality import rows_close
from thm3.semantics.samples import Domain, PreconditionsUnmet, batch_fold, batch_init, stack_elements

ROWS = 24
LENGTHS = (1, 2, 3, 4, 6)


def reversal(loop: Loop, seed: int = 0) -> dict[int, int]:
    """pi as {field: field} for the fields whose reversed value some field gives on every
    sampled list (its own field first); {} where the step reads a position, a Vec or a
    loop parameter, or no lists can be drawn."""
    if loop.params or any(d.index or d.type is Type.VEC for d in loop.elements) or \
            any(f.type is Type.VEC for f in loop.fields):
        return {}
    rng = np.random.default_rng(seed)
    dom = Domain(loop, 3)
    fwd, rev = [], []
    try:
        for n in LENGTHS:
            for small in (True, False):
                xs = dom.random_lists(rng, {}, ROWS, n, small)
                init = batch_init(loop, ROWS, 3)
                fwd.append(batch_fold(loop, stack_elements(loop, xs), {}, init))
                rev.append(batch_fold(loop, stack_elements(loop, [x[::-1] for x in xs]), {}, init))
    except (PreconditionsUnmet, ValueError):
        return {}
    out: dict[int, int] = {}
    k = len(loop.fields)
    for i in range(k):
        for j in [i] + [j for j in range(k) if j != i]:
            if loop.fields[j].type is loop.fields[i].type and all(
                    bool(np.all(rows_close(r[i], f[j]))) for f, r in zip(fwd, rev)):
                out[i] = j
                break
    return out


def mirrored(loop: Loop, pi: dict[int, int], term: Expr) -> Expr | None:
    """`term`, a combine's field over a.* and b.*, with the operands swapped and read
    through pi (a.g becomes b.pi(g), b.g becomes a.pi(g)); None where a field it reads
    has no image."""
    names = {f.name: i for i, f in enumerate(loop.fields)}
    missing = []

    def go(e, rec):
        if e.op is not Op.VAR:
            return None
        side, dot, name = e.arg.partition(".")
        if not dot or side not in ("a", "b") or name not in names:
            return None
        j = pi.get(names[name])
        if j is None:
            missing.append(name)
            return e
        f = loop.fields[j]
        return var(f"{'b' if side == 'a' else 'a'}.{f.name}", f.type)

    out = transform([term], go)[0]
    return None if missing else out
