"""The laws of a candidate combine: identity, associativity and the homomorphism law,
each proved by `thm3.prove.laws`, or where no proof is reached, checked on sampled
reachable states ("failed" with the violating states, or "tested")."""
from __future__ import annotations

import numpy as np

from thm3.ir import Fn, Loop, Type
from thm3.prove import laws as prove
from thm3.semantics.samples import batch_close, batch_combine, batch_init, plain

LAWS = ("identity", "associativity", "homomorphism")


def prove_combine(loop, setting, combine, triples, deadline):
    statuses, details = {}, {}
    timed_out = False
    for law, fn in (("identity", prove.prove_identity), ("associativity", prove.prove_associativity),
                    ("homomorphism", prove.prove_homomorphism)):
        out = fn(setting, combine, deadline)
        if out.proved:
            statuses[law] = "proved"
            details[law] = f"{out.paths} path(s), {out.seconds:.2f} s"
            continue
        timed_out |= out.status == "timeout"
        bad = violation_on_samples(law, loop, combine, triples)
        statuses[law] = "failed" if bad else "tested"
        details[law] = bad or f"not proved ({out.detail}); holds on {sum(t.a[0].shape[0] for t in triples)} random cases"
    return statuses, details, timed_out


def violation_on_samples(law: str, loop: Loop, combine: Fn, triples) -> str:
    """A concrete violation of `law` on sampled reachable states, or ''."""
    for t in triples:
        rows = t.a[0].shape[0]
        init = batch_init(loop, rows, t.a[-1].shape[-1] if loop.fields[-1].type is Type.VEC else 3)
        init = tuple(np.broadcast_to(i, x.shape).copy() for i, x in zip(init, t.a))
        match law:
            case "identity":
                checks = [(batch_combine(combine, init, t.a, t.params), t.a),
                          (batch_combine(combine, t.a, init, t.params), t.a)]
            case "associativity":
                c = tuple(np.roll(x, 1, axis=0) for x in t.c)
                ab = tuple(batch_combine(combine, t.a, t.b, t.params))
                bc = tuple(batch_combine(combine, t.b, c, t.params))
                checks = [(batch_combine(combine, ab, c, t.params), batch_combine(combine, t.a, bc, t.params))]
            case _:
                checks = [(batch_combine(combine, t.a, t.b, t.params), t.c)]
        for got, want in checks:
            for i, (g, w) in enumerate(zip(got, want)):
                ok = batch_close(np.broadcast_to(g, np.shape(w)) if np.ndim(g) else g, w, rtol=1e-6, atol=1e-8)
                if not bool(np.all(ok)):
                    r = int(np.argmin(ok))
                    return (f"field {loop.fields[i].name}: {plain(np.asarray(g)[r] if np.ndim(g) else g)} != "
                            f"{plain(np.asarray(w)[r])} on a={plain(tuple(x[r] for x in t.a))}, "
                            f"b={plain(tuple(x[r] for x in t.b))}")
    return ""
