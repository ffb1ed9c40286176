"""The laws of a candidate combine: identity, associativity and the homomorphism law,
each proved by `thm3.prove.laws`, or where no proof is reached, checked on sampled
reachable states ("failed" with the violating states, or "tested"); `verdict_of` turns
the law statuses of a candidate into the verdict."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from thm3.ir import Fn, Loop, Type
from thm3.prove import laws as prove
from thm3.semantics.samples import batch_close, batch_combine, batch_init, plain
from thm3.status import Status, Verdict

LAWS = ("identity", "associativity", "homomorphism")


def prove_combine(loop, setting, combine, triples, deadline):
    statuses, details = {}, {}
    timed_out = False
    for law, fn in (("identity", prove.prove_identity), ("associativity", prove.prove_associativity),
                    ("homomorphism", prove.prove_homomorphism)):
        out = fn(setting, combine, deadline)
        if out.proved:
            statuses[law] = Status.PROVED
            details[law] = f"{out.paths} path(s), {out.seconds:.2f} s"
            continue
        timed_out |= out.status == Status.TIMEOUT
        bad = violation_on_samples(law, loop, combine, triples)
        statuses[law] = Status.FAILED if bad else Status.TESTED
        details[law] = bad or f"not proved ({out.detail}); holds on {sum(t.a[0].shape[0] for t in triples)} random cases"
    return statuses, details, timed_out


class Judgement(NamedTuple):
    """The verdict on one candidate combine, why (empty for a proved homomorphism), and
    whether the combine stays in the analysis."""
    verdict: Verdict
    reason: str
    keeps_combine: bool


def verdict_of(statuses: dict, details: dict, timed_out: bool) -> Judgement:
    """The verdict for a candidate whose laws got `statuses` (law -> Status), with
    `details` per law and `timed_out` when a prover ran out of time.

    A failed law drops the candidate; every law proved makes a homomorphism; a timeout
    leaves it unknown; laws only tested still make a homomorphism, saying so in the
    reason."""
    failed = [law for law, s in statuses.items() if s == Status.FAILED]
    if failed:
        return Judgement(Verdict.UNKNOWN, "the candidate combine failed a law: " +
                         "; ".join(f"{law}: {details[law]}" for law in failed), False)
    if all(s == Status.PROVED for s in statuses.values()):
        return Judgement(Verdict.HOMOMORPHISM, "", True)
    if timed_out:
        return Judgement(Verdict.UNKNOWN,
                         "solver time ran out before the laws were proved (they pass on random lists)", True)
    return Judgement(Verdict.HOMOMORPHISM, "laws " + ", ".join(law for law, s in statuses.items()
                                                               if s != Status.PROVED) +
                     " tested on random lists, not proved", True)


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
