"""Synthesis route "semiring": `left` read as an affine map of the state over a semiring,
s' = M(x, p) (x) s (+) c(x, p), and the combine written as the composition of two such maps.

The semirings are (+, *), (+, *) mod m, (max, +), (min, +), (or, and), and (max, *) and
(min, *) over coefficients that are nonnegative from their form; a field's update
is read from its ops (after `thm3.ir.normalize`, so if/else, `where` and max/min spellings
meet in one form), a select on a condition that reads no state giving entries that select.
The map of a list ys is T(s) = E (x) s (+) d, E the product of the step matrices; the state
carries it when every entry of E is a constant or one of h(ys)'s fields (a matrix state, the
map fields of an affine pair), found on sampled lists.  Then combine(a, b) = T_b(a): over a
ring E (a - init) + b (reduced mod m), over the others E (x) a, (+) b where init is the
semiring's zero.  The prover decides, as for any route.  Where the state does not carry the
map, `lift_units` gives the lifting search the product of the step matrices, smallest first
(Blelloch 1990, "Prefix sums and their applications", section 1.4).  Where no one semiring
covers the state, its independent groups are composed each over its own (`blockwise`), and
a step that reads the state through a power of a count is read with the power as a field
(`thm3.synth.powers.with_power_fields`).

The route's parts: the semirings, their forms and their sums and products
(`semiring_algebra`), recognition (`semiring_recognition`), the composed map on sampled
lists and its readings (`semiring_samples`), and the lifts (`semiring_lift`); this module
composes the maps, and the rest is re-exported from here."""
from __future__ import annotations

import math
import time

import numpy as np

from thm3.ir import Expr, Fn, Loop, Op, Type, initial_state, var
from thm3.ir.simplify import simplify
from thm3.synth.powers import parameter_bases
from thm3.synth.semiring_algebra import (BOOLEAN, MAX_PLUS, MAX_TIMES, MAX_TIMES_NONNEGATIVE, MIN_PLUS, MIN_TIMES, RING,
                                         SEMIRINGS, Failed, Semiring, Step, arith, is_value, np_plus, np_times, oplus,
                                         otimes, scaling, semiring_form, where, zero_of)
from thm3.synth.semiring_recognition import (Asserted, asserted_nonnegative, constant_ring_step, nonnegative, positive,
                                             recognise, unsigned_coefficients, whole_affine, whole_linear)
from thm3.synth.semiring_samples import (composed_entries, linear_samples, read_entry, read_linear, residues,
                                         same_samples)
from thm3.synth.semiring_lift import MAX_FULL, Unit, full_matrix_size, lift_units

__all__ = ["Asserted", "BOOLEAN", "Failed", "MAX_FULL", "MAX_PLUS", "MAX_TIMES", "MAX_TIMES_NONNEGATIVE", "MIN_PLUS",
           "MIN_TIMES", "RING", "SEMIRINGS", "Semiring", "Step", "Unit", "arith", "asserted_nonnegative", "blockwise",
           "composed_entries", "composition", "constant_ring_step", "full_matrix_size", "is_value", "lift_units",
           "nonnegative", "np_times", "oplus", "otimes", "positive", "read_linear", "recognise", "scaling",
           "semiring_form", "synthesize", "whole_affine", "whole_linear", "zero_of"]


def synthesize(loop: Loop, deadline: float | None = None) -> tuple[Fn, str]:
    """The combine T_b(a), with T_b's entries read from b's fields; raises `Failed` with
    the reason (not affine over a semiring; an entry of the composed map that no field of b
    holds)."""
    step = recognise(loop)
    if step is not None:
        s = step.semiring
        if deadline is not None and time.monotonic() > deadline:
            raise Failed(f"affine over {s.name}; no time left to sample the composed map")
        fn, _, _ = composition(loop, step)
        return fn, f"composition of the affine maps over {s.name}"
    steps = blockwise(loop)
    if steps is None:
        from thm3.synth.powers import expand, with_power_fields
        got = with_power_fields(loop)
        if got is not None:
            extended, meaning = got
            try:
                fn, how = synthesize(extended, deadline)
            except Failed as e:
                raise Failed(f"with its powers of a count read as fields ({', '.join(meaning)}): {e}") from None
            outs = expand(fn.outputs[:len(loop.fields)], meaning, loop.field_names)
            return _combine_fn(loop, [simplify(e) for e in outs]), \
                f"{how}, with its powers of a count as fields ({', '.join(meaning)})"
        raise Failed("left is not affine in the state over (+, *), (+, *) mod m, (max, +), (min, +), "
                     "(max, *), (min, *) or (or, and), on the whole state or group by group"
                     + unsigned_coefficients(loop))
    outputs: dict = {}
    for step in steps:
        if deadline is not None and time.monotonic() > deadline:
            raise Failed(f"affine group by group; no time left to sample the composed map of "
                         f"({', '.join(step.block)})")
        outs, _, _ = _composed_outputs(loop, step)
        outputs.update(outs)
    hows = ", ".join(f"({', '.join(st.block)}) over {st.semiring.name}" for st in steps)
    return _combine_fn(loop, [outputs[f] for f in loop.field_names]), \
        f"composition of the affine maps group by group: {hows}"


def blockwise(loop: Loop) -> list[Step] | None:
    """Where the state is no one semiring's: its groups of fields that never read each other
    (`product.components`), each affine over a semiring of its own (a peak over (max, *)
    beside the count of its decays over (+, *)), else None.  A group's composed map may be
    read from another group's fields of b (0.5 ** b.ticks), which a product of the groups'
    own combines cannot do."""
    from thm3.synth.product import components
    groups = components(loop)
    if len(groups) < 2:
        return None
    steps = [recognise(loop, g) for g in groups]
    if any(st is None or set(st.block) != set(g) for st, g in zip(steps, groups)):
        return None
    return steps


def composition(loop: Loop, step: Step) -> tuple[Fn, dict, dict]:
    """The combine T_b(a) = E(b) (x) a (+) D(b) of `step`, its reading E (entry (f, g) of
    the composed map as a constant or a field of b, `b.<field>`) and its offset D (row f
    of the composed map's offset d as an expression in b's fields, or None where it is
    the zero on every sample), read off sampled lists (seeded, so the same every time);
    raises `Failed` where an entry or an offset is not read.  Over a ring the offset is
    b less E(b) init (h(ys) = M init + d); over the others, a field of b (b's own where the
    row reads only fields that start at the zero, a lifted offset field otherwise) or a
    constant.  `thm3.prove.composed` proves both readings and, with them, the laws."""
    outs, reading, offset = _composed_outputs(loop, step)
    return _combine_fn(loop, [outs[f] for f in step.block]), reading, offset


def _combine_fn(loop: Loop, outputs) -> Fn:
    names = tuple((f"a.{f.name}", f.type) for f in loop.fields) + \
        tuple((f"b.{f.name}", f.type) for f in loop.fields) + tuple((d.name, d.type) for d in loop.params)
    return Fn(names, tuple(outputs))


def _composed_outputs(loop: Loop, step: Step) -> tuple[dict, dict, dict]:
    """`composition`'s outputs on `step.block` (field -> expression), reading and offset."""
    s = step.semiring
    entries, offsets, states = composed_entries(loop, step)
    reading: dict = {}
    wide = None             # more parameter settings (unreduced mod m), for the linear readings
    # the bases of an entry that is a power of a count (over (+, *) only, as `read_entry` reads them)
    bases = parameter_bases(loop, {p.name: states[f"${p.name}"] for p in loop.params if f"${p.name}" in states},
                            len(next(iter(entries.values())))) if s is RING or scaling(s) else ()
    if scaling(s) and any(np.any((col < 0) & (col != s.zero)) for col in entries.values()):
        raise Failed(f"max/min of scaled fields, but a coefficient of the composed map is negative on samples: "
                     f"scaling by it does not distribute over {s.name}")
    for (f, g), col in entries.items():
        got = read_entry(col, states, loop, s, step.types[f], bases)
        if got is None and s.plus is Op.ADD and s.times is Op.MUL:
            if wide is None:
                wide = linear_samples(loop, step, entries, offsets, states)
            if wide:
                got = read_linear(wide[0][(f, g)], wide[1], step.types[f], s.modulus)
        if got is None:
            raise Failed(f"affine over {s.name}, but entry ({f}, {g}) of the composed map is no field of b "
                         f"and no constant: the state does not carry the map (a lift adds it)")
        reading[(f, g)] = residues(got, step) if s.modulus is not None else got
    init = dict(zip(loop.field_names, initial_state(loop)))
    offset: dict = {}
    for f in step.block:
        col = offsets[f]
        if bool(np.all(col == float(s.zero))):
            offset[f] = None
        elif s.plus is Op.ADD:
            d = var(f"b.{f}", step.types[f])
            for g in step.block:
                e = reading[(f, g)]
                if not is_value(e, 0) and not is_value(init[g], 0):
                    d = arith(Op.SUB, d, otimes(s, e, init[g]))
            offset[f] = d
        else:
            own = states.get(f)
            got = var(f"b.{f}", step.types[f]) if own is not None and same_samples(col, own) else \
                read_entry(col, states, loop, s, step.types[f])
            if got is None and own is not None and _absorbs_init(s, step, f, entries, offsets, states):
                got = var(f"b.{f}", step.types[f])
            if got is None:
                raise Failed(f"affine over {s.name} with an offset, but row {f}'s offset of the composed map "
                             f"is no field of b and no constant: the state does not carry it (a lift adds it)")
            offset[f] = got
    outs: dict = {}
    for f in step.block:
        # over a ring, E (a - init) + b: the offset b - E init spread over the terms
        ring = s.plus is Op.ADD and offset[f] is not None
        out = zero_of(s, step.types[f])
        for g in step.block:
            e = reading[(f, g)]
            if is_value(e, s.zero):
                continue
            ag = var(f"a.{g}", step.types[g])
            if ring and not is_value(init[g], 0):
                ag = arith(Op.SUB, ag, init[g])
            term = otimes(s, e, ag)
            if scaling(s) and math.isinf(float(s.zero)) and is_value(init[g], s.zero) and e.op is not Op.CONST:
                # a's field may be the zero (an infinity: the identity, padding), where a coefficient
                # that underflows to 0 (0.9 ** b.n on a long list) would make 0 * -inf a NaN that the
                # loop, scaling -inf one step at a time, never makes
                term = where(Expr(Op.EQ, Type.BOOL, (ag, init[g])), init[g], term)
            out = oplus(s, out, term)
        if offset[f] is not None:
            out = oplus(s, out, var(f"b.{f}", step.types[f]) if ring else offset[f])
        if f in step.reduced:
            out = Expr(Op.MOD, out.type, (out,), s.modulus)
        outs[f] = simplify(out)
    return outs, reading, offset


def _absorbs_init(s: Semiring, step: Step, f: str, entries: dict, offsets: dict, states: dict) -> bool:
    """Over a semiring without subtraction, whether b's own field f may stand for row f's
    offset d(b) where init is not the zero: b.f is T_b(init)_f = (+)_g E[f][g] (x) init_g
    (+) d_f, so (+)_g E[f][g] (x) a_g (+) b.f is T_b(a)_f wherever the map of a reachable
    a reaches at least its map of init (a peak meter held from 0.0: its peak never falls
    below 0).  Checked on the sampled states paired with the next sample's map; the
    prover decides."""
    plus, times = np_plus(s), np_times(s)
    n = len(offsets[f])
    if n < 2:
        return False
    after = np.roll(np.arange(n), 1)          # a: the sample before b's
    mapped = None
    for g in step.block:
        term = times(entries[(f, g)], states[g][after])
        mapped = term if mapped is None else plus(mapped, term)
    with np.errstate(invalid="ignore"):
        return same_samples(plus(mapped, offsets[f]), plus(mapped, states[f]))
