"""The enumerative fallback of combine synthesis: it finds combines that are not shaped
like `left`, keeps to its deadline, and finds nothing where nothing fits."""
from __future__ import annotations

import gc
import time
from dataclasses import replace

import numpy as np
import pytest

from catalog import SAMPLES_DIR
from thm3.ir.types import result_type
from thm3.synth.enumeration import enumerate_field
from thm3.syntax.frontend import parse_file, parse_source
from thm3.ir import Fn, Op, Type
from thm3.semantics.equality import rows_close
from thm3.semantics.samples import batch_combine, make_triples

BLOCKS = '''"""Number of blocks of ones, lifted."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    count: Int = 0       # number of blocks of ones so far
    prev: Bool = False   # the last element is a one
    has: Bool = False    # the list is not empty
    first: Int = 0       # the first element (0 while empty)


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    return State(acc.count + 1 if x == 1 and not acc.prev else acc.count, x == 1, True,
                 acc.first if acc.has else x)
'''


TWIN = '''"""A sum kept twice."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    s: Real = 0.0
    t: Real = 0.0


def left(acc: State, x: Real) -> State:
    return State(acc.s + x, acc.s + x)
'''


def _names(loop):
    return tuple((f"a.{f.name}", f.type) for f in loop.fields) + \
        tuple((f"b.{f.name}", f.type) for f in loop.fields) + \
        tuple((d.name, d.type) for d in loop.params)


def _agrees(e, i, names, triples) -> bool:
    fn = Fn(names, (e,))
    return all(bool(np.all(rows_close(batch_combine(fn, t.a, t.b, t.params)[0], t.c[i]))) for t in triples)


@pytest.fixture(scope="module")
def blocks():
    loop = parse_source(BLOCKS, "<blocks>")
    return loop, make_triples(loop), _names(loop)


def test_blocks_of_ones_count(blocks):
    """count = a.count + b.count, less one where a run of ones crosses the cut: not
    `left`'s shape, so only the enumeration finds it."""
    loop, triples, names = blocks
    t0 = time.monotonic()
    got = enumerate_field(loop, 0, triples, names, chosen={}, deadline=t0 + 10.0)
    assert time.monotonic() - t0 < 5.0
    assert got and all(_agrees(e, 0, names, triples) for e in got)
    assert got[0].type is Type.INT
    assert {"a.count", "b.count", "a.prev", "b.first"} <= {n.arg for n in _leaves(got[0])}


def test_blocks_of_ones_flags(blocks):
    loop, triples, names = blocks
    deadline = time.monotonic() + 10.0
    for i in (1, 2, 3):
        got = enumerate_field(loop, i, triples, names, chosen={}, deadline=deadline)
        assert got and _agrees(got[0], i, names, triples), loop.fields[i].name


def test_sum():
    loop = parse_file(SAMPLES_DIR / "sum.py")
    triples = make_triples(loop)
    got = enumerate_field(loop, 0, triples, _names(loop), chosen={}, deadline=time.monotonic() + 10.0)
    assert repr(got[0]) in ("a.s + b.s", "b.s + a.s")


def test_real_valued_rows_beyond_the_sample():
    """mps: more distinct rows than the enumeration evaluates on; hits are checked on all."""
    loop = parse_file(SAMPLES_DIR / "mps.py")
    triples = make_triples(loop)
    names = _names(loop)
    got = enumerate_field(loop, 1, triples, names, chosen={}, deadline=time.monotonic() + 10.0)
    assert got and all(_agrees(e, 1, names, triples) for e in got)


def test_uses_chosen_fields():
    """A combined field is a leaf of size 1 for the fields after it."""
    loop = parse_source(TWIN, "<twin>")
    triples = make_triples(loop)
    names = _names(loop)
    chosen = {0: enumerate_field(loop, 0, triples, names, chosen={}, deadline=time.monotonic() + 10.0)[0]}
    got = enumerate_field(loop, 1, triples, names, chosen=chosen, deadline=time.monotonic() + 10.0)
    assert got[0] is chosen[0]


def test_deadline(blocks):
    """A target no small term fits, with a tiny deadline: it returns at once."""
    loop, triples, names = blocks
    noisy = _noisy(triples, 0)
    gc.collect()        # the earlier tests' garbage is collected here, not inside the timed call
    t0 = time.monotonic()
    assert enumerate_field(loop, 0, noisy, names, chosen={}, deadline=t0 + 0.05, max_size=30) == []
    assert time.monotonic() - t0 < 0.5
    assert enumerate_field(loop, 0, triples, names, chosen={}, deadline=t0 - 1.0) == []


def test_noise_has_no_term():
    """Field s of h(xs + ys) replaced by random numbers: nothing up to the bound fits."""
    loop = parse_file(SAMPLES_DIR / "sum.py")
    noisy = _noisy(make_triples(loop), 0)
    got = enumerate_field(loop, 0, noisy, _names(loop), chosen={}, deadline=time.monotonic() + 10.0,
                          max_size=6)
    assert got == []


def test_typing_rules():
    assert result_type(Op.ADD, None, (Type.INT, Type.INT)) is Type.INT
    assert result_type(Op.ADD, None, (Type.INT, Type.REAL)) is Type.REAL
    assert result_type(Op.DIV, None, (Type.INT, Type.INT)) is Type.REAL
    assert result_type(Op.ADD, None, (Type.BOOL, Type.INT)) is None
    assert result_type(Op.LT, None, (Type.VEC, Type.REAL)) is None
    assert result_type(Op.EQ, None, (Type.BOOL, Type.BOOL)) is Type.BOOL
    assert result_type(Op.WHERE, None, (Type.BOOL, Type.INT, Type.REAL)) is Type.REAL
    assert result_type(Op.WHERE, None, (Type.BOOL, Type.BOOL, Type.INT)) is None


def _noisy(triples, i):
    rng = np.random.default_rng(7)
    out = []
    for t in triples:
        c = list(t.c)
        c[i] = rng.normal(0, 5, size=(c[i].shape[0], 1)).astype(c[i].dtype if c[i].dtype.kind == "f" else float)
        out.append(replace(t, c=tuple(c)))
    return out


def _leaves(e):
    from thm3.ir import walk
    return [n for n in walk([e]) if n.op is Op.VAR]
