"""The Bird check: `left` and `right` compute the same function (Bird's precondition for
the Third Homomorphism Theorem), proved by induction over reachable states, else checked
on every short list of a small domain, else refuted by a list on which they differ."""
from __future__ import annotations

import itertools

import numpy as np

from thm3.prove import laws as prove
from thm3.ir import Loop, Type
from thm3.prove.laws import Setting
from thm3.semantics.equality import rows_close
from thm3.semantics.samples import (SMALL_INTS, SMALL_REALS, Domain, batch_fold, batch_init,
                                    batch_step, plain, stack_elements)


def bird_check(loop: Loop, setting: Setting, deadline: float) -> tuple[str, str]:
    """The Bird check's status ("proved", "bounded", "failed" or "skipped") and detail."""
    if loop.right is None:
        return "skipped", "no right fold given"
    out = prove.prove_bird(setting, deadline)
    if out.proved:
        return "proved", (f"left and right agree on [x], and right(x, left(s, y)) == left(right(x, s), y) "
                         f"on reachable s ({out.paths} paths, {out.seconds:.2f} s)")
    bad, checked = bounded_bird(loop)
    if bad is not None:
        return "failed", f"left and right differ on {bad[0]}: left gives {bad[1]}, right gives {bad[2]}"
    return "bounded", f"not proved by induction ({out.detail}); agree on all {checked} lists of the bounded domain"


def small_domain(loop: Loop, params: dict) -> list[tuple]:
    """Few elements, ties and signs, honouring the preconditions."""
    dom = Domain(loop)
    per = []
    for d in loop.elements:
        if d.index:
            per.append([None])
        elif d.type is Type.BOOL:
            per.append([False, True])
        elif d.type is Type.INT:
            per.append(list(SMALL_INTS[:5]))
        elif d.type is Type.VEC:
            per.append([np.array([1.0, 0.0, -1.0]), np.array([-2.0, 1.0, 0.5]), np.zeros(3)])
        else:
            per.append(list(SMALL_REALS[:6]))
    out = []
    for combo in itertools.product(*per):
        e = tuple(0 if c is None else c for c in combo)
        if dom.precondition_holds(e, params):
            out.append(combo)
    return out[:12]


def _row(loop: Loop, state: tuple, r: int) -> tuple:
    return tuple(plain(x[r]) if f.type is Type.VEC else plain(x[r][0]) for f, x in zip(loop.fields, state))


def bounded_bird(loop: Loop, max_lists: int = 4000):
    """Every list up to a length over the small domain: (list, left, right) on a
    difference, else None; and how many lists were checked."""
    rng = np.random.default_rng(1)
    params = Domain(loop).params(rng)
    elems = small_domain(loop, params)
    checked = 0
    for n in range(1, 6):
        if len(elems) ** n > max_lists:
            break
        # an Index element (None in the domain) is the element's position in the list
        lists = [[tuple(pos if v is None else v for v in e) for pos, e in enumerate(combo)]
                 for combo in itertools.product(elems, repeat=n)]
        steps = stack_elements(loop, lists)
        rows = len(lists)
        left_state = batch_fold(loop, steps, params, batch_init(loop, rows, 3))
        right_state = batch_init(loop, rows, 3)
        for e in reversed(steps):
            right_state = batch_step(loop.right, right_state, e, params)
        ok = np.ones(rows, dtype=bool)
        for x, y in zip(left_state, right_state):
            ok &= rows_close(x, y)
        checked += rows
        if not ok.all():
            r = int(np.argmin(ok))
            xs = [plain(e[0]) if len(e) == 1 else plain(e) for e in lists[r]]
            return (xs, _row(loop, left_state, r), _row(loop, right_state, r)), checked
    return None, checked
