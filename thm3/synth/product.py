"""Products of independent states: where `left` updates groups of fields that never read
each other (Welford's (n, mean, m2) beside a min, a max and a sum), each group is a loop
of its own, and the state's combine is the product of the groups' combines.

The groups are the connected components of "the update of f reads g".  A combine whose
outputs for each group read only that group's fields of a and b (and the parameters)
satisfies a law on the whole state exactly where it satisfies it on every group: the
laws are equations field by field, the groups' fields are disjoint, and a reachable
state of the whole is a tuple of reachable states of the groups (each group's fold reads
the same elements and nothing of the others).  So the route synthesizes each group with
the other routes, and `by_components` proves a combine group by group, each with the
invariants of its own loop."""
from __future__ import annotations

import time
from dataclasses import replace

from thm3.ir import Fn, Loop, free_vars
from thm3.errors import Thm3Error

MAX_GROUPS = 8


def components(loop: Loop) -> list[tuple[str, ...]]:
    """The groups of fields (in field order) that `left`'s updates connect."""
    names = list(loop.field_names)
    parent = {f: f for f in names}

    def find(f):
        while parent[f] != f:
            parent[f] = parent[parent[f]]
            f = parent[f]
        return f

    for f, e in zip(names, loop.left.outputs):
        for v in free_vars([e]):
            if v.startswith("acc.") and v[4:] in parent:
                parent[find(v[4:])] = find(f)
    groups: dict[str, list[str]] = {}
    for f in names:
        groups.setdefault(find(f), []).append(f)
    return [tuple(g) for g in groups.values()]


def sub_loop(loop: Loop, names: tuple[str, ...]) -> Loop:
    """The loop of one group of fields: the same elements, parameters and preconditions."""
    keep = set(names)
    fields = tuple(f for f in loop.fields if f.name in keep)
    outputs = tuple(e for f, e in zip(loop.field_names, loop.left.outputs) if f in keep)
    inputs = tuple((n, t) for n, t in loop.left.inputs if not n.startswith("acc.") or n[4:] in keep)
    return replace(loop, name=f"{loop.name}[{', '.join(names)}]", fields=fields, left=Fn(inputs, outputs),
                   right=None, result=None, result_type=None, result_kind="value", result_names=(),
                   result_class="")


def split_combine(loop: Loop, combine: Fn, groups) -> list[Fn] | None:
    """The combine's outputs group by group as combines of the groups' loops, or None
    where an output reads a field of another group."""
    index = {f: i for i, f in enumerate(loop.field_names)}
    params = tuple((d.name, d.type) for d in loop.params)
    out = []
    for g in groups:
        allowed = {f"{p}.{f}" for p in "ab" for f in g} | {d.name for d in loop.params}
        outs = tuple(combine.outputs[index[f]] for f in g)
        if not free_vars(list(outs)) <= allowed:
            return None
        types = {f.name: f.type for f in loop.fields}
        inputs = tuple((f"a.{f}", types[f]) for f in g) + tuple((f"b.{f}", types[f]) for f in g) + params
        out.append(Fn(inputs, outs))
    return out


def by_components(loop: Loop, combine: Fn, deadline: float):
    """(statuses, details) with every law proved group by group, or None where the state
    is one group, the combine mixes groups, or some group's law is not proved."""
    from thm3.analysis.invariants import infer
    from thm3.prove.combine import LAWS, prove_combine
    from thm3.prove.laws import Setting
    from thm3.semantics.samples import make_triples
    from thm3.status import Status
    groups = components(loop)
    if not 2 <= len(groups) <= MAX_GROUPS:
        return None
    parts = split_combine(loop, combine, groups)
    if parts is None:
        return None
    details: dict = {k: [] for k in LAWS}
    for g, fn in zip(groups, parts):
        if time.monotonic() >= deadline:
            return None
        sub = sub_loop(loop, g)
        triples = make_triples(sub)
        inv, timed_out = infer(sub, triples, min(deadline, time.monotonic() + 0.3 * (deadline - time.monotonic())))
        if timed_out:
            return None
        statuses, got, _ = prove_combine(sub, Setting(sub, inv), fn, triples, deadline)
        if not all(statuses.get(k) == Status.PROVED for k in LAWS):
            return None
        for k in LAWS:
            details[k].append(f"({', '.join(g)}): {got[k]}")
    return ({k: Status.PROVED for k in LAWS},
            {k: "by components, each proved on its own loop: " + "; ".join(v) for k, v in details.items()})


def synthesize(loop: Loop, deadline: float, routes) -> tuple[Fn, str]:
    """The product of the groups' combines, each synthesized and proved on its own loop by
    `routes`; raises `Failed` where the state is one group or a group has no proved combine."""
    from thm3.analysis.invariants import infer
    from thm3.prove.combine import LAWS, prove_combine
    from thm3.prove.laws import Setting
    from thm3.semantics.samples import make_triples
    from thm3.synth import synthesize as run
    groups = components(loop)
    if len(groups) < 2:
        raise Failed("the state is one group: every field's update reads the others, directly or not")
    if len(groups) > MAX_GROUPS:
        raise Failed(f"{len(groups)} groups of fields, more than {MAX_GROUPS}")
    from thm3.analysis.witness import find_witness
    for g in groups:
        # a group that is no homomorphism on its own fields (a matrix state's column, which
        # needs b's other columns) has no combine of its own: the product route declines
        # at once, before any group's synthesis
        w = find_witness(sub_loop(loop, g), timeout=min(0.5, max(0.05, deadline - time.monotonic())))
        if w is not None:
            raise Failed(f"group ({', '.join(g)}) is no homomorphism on its own fields: {w.describe()}")
    outputs: dict = {}
    hows = []
    for i, g in enumerate(groups):
        now = time.monotonic()
        if now >= deadline:
            raise Failed(f"out of time before group ({', '.join(g)})")
        until = now + (deadline - now) / (len(groups) - i)
        sub = sub_loop(loop, g)
        triples = make_triples(sub)
        inv, _ = infer(sub, triples, min(until, time.monotonic() + 0.3 * (until - time.monotonic())))
        setting = Setting(sub, inv)
        got = run(sub, triples, deadline=until, routes=routes,
                  prove=lambda c, sub=sub, setting=setting, triples=triples: prove_combine(
                      sub, setting, c, triples, until))
        if got.combine is None or not all(got.statuses.get(k) == "proved" for k in LAWS):
            raise Failed(f"group ({', '.join(g)}): no proved combine ({got.tried()})")
        for f, e in zip(g, got.combine.outputs):
            outputs[f] = e
        hows.append(f"({', '.join(g)}) by {got.route}")
    names = tuple((f"a.{f.name}", f.type) for f in loop.fields) + \
        tuple((f"b.{f.name}", f.type) for f in loop.fields) + tuple((d.name, d.type) for d in loop.params)
    return Fn(names, tuple(outputs[f] for f in loop.field_names)), "the product of its groups: " + ", ".join(hows)


class Failed(Thm3Error):
    """The state is not a product of groups with proved combines."""


__all__ = ["Failed", "by_components", "components", "split_combine", "sub_loop", "synthesize"]
