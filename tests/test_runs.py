"""Many-field runs (issue 21, bigger states): a sketch that completes all fields but a
few hands those few to the enumeration at once, with the other fields' combines fixed
(`sketch.Partial`, the route "enumeration of the missing fields"), instead of after every
other route has failed on the field it missed."""
from __future__ import annotations

import time

import thm3
import thm3.synth as synth
from thm3.prove.combine import prove_combine
from thm3.semantics.samples import make_triples
from thm3.synth import sketch

from test_own_list import _setting
from test_synth_routes import CORPUS, _alone, _proved

RUNS = CORPUS / "positive_runs_lifted.py"


def _partial(path):
    loop = thm3.parse_file(path)
    triples = list(make_triples(loop))
    partial = sketch.Partial(loop)
    cands, _ = sketch.synthesize(loop, triples, deadline=time.monotonic() + 60, with_enumeration=False,
                                 partial=partial)
    return loop, triples, cands, partial


def test_sketch_says_which_field_it_missed():
    loop, _, cands, partial = _partial(RUNS)
    names = [f.name for f in loop.fields]
    assert not cands
    assert [names[i] for i in partial.missing] == ["blocks"]
    assert sorted(names[i] for i in partial.done) == sorted(set(names) - {"blocks"})
    assert partial.nearly_complete()
    assert "mirrored" in partial.methods["trail"], partial.methods


def test_resumed_enumeration_fills_only_the_missing_field():
    loop, triples, _, partial = _partial(RUNS)
    methods: dict = {}
    cands, tried = sketch.synthesize(loop, triples, deadline=time.monotonic() + 60, methods=methods,
                                     resume=partial)
    assert cands and tried == 0, tried          # no sketch term checked again
    assert methods["blocks"].startswith("bottom-up enumeration"), methods
    assert {k: v for k, v in methods.items() if k != "blocks"} == partial.methods
    assert synth.agrees(loop, cands[0], triples)


def test_nearly_complete_needs_three_fields_done_for_each_missing():
    p = sketch.Partial(None, done=[0, 1], missing=[2])
    assert not p.nearly_complete()
    assert sketch.Partial(None, done=[0, 1, 2], missing=[3]).nearly_complete()
    assert not sketch.Partial(None, done=[0, 1, 2]).nearly_complete()


def test_missing_fields_are_enumerated_right_after_the_sketch():
    """Before: interpolation and the weak right inverse failed on blocks first (9 s and
    8 s under load), and the enumeration, last, found it with little time left."""
    routes = tuple(synth.route_named(n) for n in ("own list", "sketch", "interpolation", "weak right inverse",
                                                    "enumeration"))
    loop = thm3.parse_file(RUNS)
    setting, triples = _setting(loop)
    deadline = time.monotonic() + 60
    got = synth.synthesize(loop, triples, deadline=deadline, routes=routes,
                           prove=lambda c: prove_combine(loop, setting, c, triples, deadline))
    assert _proved(got), got.tried()
    # ("own list", where it runs before the sketch, declines at once)
    tried = [a.route for a in got.attempts if a.route != "own list"]
    assert tried == ["sketch", "enumeration of the missing fields"], got.tried()


def test_enumeration_alone_still_sketches_first():
    got = _alone("enumeration", RUNS, 60)
    assert _proved(got), got.tried()
    assert got.methods["blocks"].startswith("bottom-up enumeration"), got.methods


def test_related_fields_of_a_block_count_add_the_mirror_and_its_reads():
    loop = thm3.parse_file(RUNS)
    from thm3.synth import mirror
    names = [f.name for f in loop.fields]
    near = sketch.related_fields(loop, names.index("blocks"), mirror.reversal(loop))
    assert {names[j] for j in near} == {"blocks", "trail", "lead", "n"}


def test_ten_field_runs_enumerate_the_block_count_on_its_related_fields():
    """Before (all twenty fields of a and b as leaves): the terms of size 5 took more than
    the field's 3 s, and no route solved the loop within 30 s."""
    loop, triples, _, partial = _partial(CORPUS / "sign_runs_ten.py")
    assert [loop.fields[i].name for i in partial.missing] == ["kp"]
    methods: dict = {}
    cands, _ = sketch.synthesize(loop, triples, deadline=time.monotonic() + 60, methods=methods, resume=partial,
                                 max_size=synth.SMALL_TERMS, related=True)
    assert cands and methods["kp"].startswith("bottom-up enumeration"), methods
    assert synth.agrees(loop, cands[0], triples)


def test_a_saturation_flag_is_read_against_the_parameter():
    """full == (c >= K): the identity of the saturating counter's combine needs it."""
    from thm3.analysis.invariants import infer
    from thm3.ir.printer import to_text
    loop = thm3.parse_file(CORPUS / "saturating_hits.py")
    inv, _ = infer(loop, list(make_triples(loop)), time.monotonic() + 20)
    assert "acc.full == (acc.c >= K)" in [to_text(e) for e in inv], [to_text(e) for e in inv]
