"""Transport of structure: a map ψ onto a product of known monoids that carries the
combine, found on samples and proved."""
from __future__ import annotations

from analyzed import analysis
from catalog import SAMPLES_DIR
from stages import a, add, b, combine_of, later, mps_combine, prepared
from thm3.analysis.transport import find
from thm3.ir import Fn


def test_sum_is_itself_a_monoid():
    loop, triples, setting = prepared("sum")
    t = find(loop, combine_of(loop, s=add(a("s"), b("s"))), triples, setting, later())
    assert t is not None and t.trivial and t.status == "proved"
    assert "carries ⊙ onto (+)" in t.describe(loop)


def test_mps_has_no_transport():
    """max(a.m, a.s + b.m) is no product of the known monoids over any map in the grammar."""
    loop, triples, setting = prepared("mps")
    assert find(loop, mps_combine(loop), triples, setting, later()) is None


def test_welford_moves_to_power_sums():
    an = analysis(str(SAMPLES_DIR / "welford.py"))
    loop, triples, setting = prepared("welford")
    t = find(loop, an.combine_fn, triples, setting, later())
    assert isinstance(an.combine_fn, Fn) and t is not None and not t.trivial
    assert t.status in ("proved", "tested") and len(t.maps) == 3
