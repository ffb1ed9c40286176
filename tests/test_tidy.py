"""SymPy tidying of rational combine fields: Welford's update reads as Chan's, smaller,
and still agrees with h(xs + ys)."""
from __future__ import annotations

import time

from stages import loop_of
from thm3.ir import walk
from thm3.semantics.samples import make_triples
from thm3.synth.check import Checker
from thm3.synth.sketch import synthesize
from thm3.synth.tidy import tidy_combine, tidy_field


def test_welford_is_tidied():
    loop = loop_of("welford")
    triples = make_triples(loop)
    cands, _ = synthesize(loop, triples, deadline=time.monotonic() + 60)
    raw = cands[0]
    tidy = tidy_combine(loop, raw, triples)
    assert tidy is not None
    changed = [i for i, (x, y) in enumerate(zip(raw.outputs, tidy.outputs)) if x is not y]
    assert changed
    for i in changed:
        assert len(walk([tidy.outputs[i]])) < len(walk([raw.outputs[i]]))
        assert Checker(raw.inputs, triples, i).passes(tidy.outputs[i])


def test_no_division_nothing_to_tidy():
    loop = loop_of("mps")
    triples = make_triples(loop)
    cands, _ = synthesize(loop, triples, deadline=time.monotonic() + 30)
    assert tidy_field(loop, cands[0], 0) is None and tidy_field(loop, cands[0], 1) is None
    assert tidy_combine(loop, cands[0], triples) is None
