"""bench/lift.py's table, not timed: the expected and found numbers of added fields, the
composition route with the full table it replaced, and `--help` running nothing."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from pathlib import Path

import thm3
from catalog import SMALLEST_LIFT
from corpus import by_name
from thm3.synth import finite

ROOT = Path(__file__).resolve().parents[1]


def _bench(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod            # for its dataclasses
    spec.loader.exec_module(mod)
    return mod


def test_the_lift_table_gives_expected_and_found_fields():
    bench = _bench("lift")
    items = {it.name: it for it in bench.catalogued()}
    assert items["mts"].expected == SMALLEST_LIFT["mts"]
    assert items["finite_delay_line"].expected == by_name("finite_delay_line").lift
    assert items["below_first"].expected is None            # an honest limit: no bounded lift
    assert "near_max_count_real" not in items               # no lift catalogued
    rows = bench.build_rows([items["mts"], items["finite_delay_line"]], timeout=20.0, prove=False,
                            echo=lambda *a, **k: None)
    assert [r["name"] for r in rows] == ["mts", "finite_delay_line"]
    for r in rows:
        assert r["found"] == len(r["added"]) == r["expected"], r
        assert r["ok"] and r["proved"] is None, r          # no prover: not "proved"
    mts, delay = rows
    assert mts["route"] == "" and mts["full"] is None
    states, fields = finite.full_table(thm3.parse_file(by_name("finite_delay_line").path))
    assert delay["route"] == "finite" and delay["full"] == {"of": "table", "states": states, "fields": fields}
    assert fields > delay["found"]
    (line,) = bench.composition_lines(rows)
    assert line.startswith(f"finite_delay_line: {delay['found']} fields") and f"the {fields} of the full table" in line
    total = bench.summary(rows, prove=False, baseline=1.0)
    assert (total["expected_lifts"], total["found"], total["minimal"], total["found_and_proved"]) == (2, 2, 2, 0)


def test_the_outcome_is_the_catalogued_one_only():
    outcome = _bench("lift").outcome
    assert outcome(1, 1, True) and outcome(1, 1, None) and outcome(None, None, None)
    assert not outcome(1, 2, True)          # more fields than the smallest lift
    assert not outcome(1, 1, False)         # found, but the prover did not prove it
    assert not outcome(1, None, None)       # not found
    assert not outcome(None, 1, True)       # a lift where none is bounded
    assert not outcome(None, None, None, failed=True)   # the search crashed or was killed


def test_bench_help_runs_nothing():
    results = ROOT / "bench" / "results"
    before = set(results.iterdir()) if results.exists() else set()
    for name in ("lift", "analyze"):
        t0 = time.monotonic()
        out = subprocess.run([sys.executable, str(ROOT / "bench" / f"{name}.py"), "--help"], capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 0 and out.stdout.startswith("usage:"), out.stderr
        assert "--only" in out.stdout and time.monotonic() - t0 < 30
    assert (set(results.iterdir()) if results.exists() else set()) == before


def test_cell_elements_where_the_element_does_not_enter_the_control():
    # below_first: the flag `has` is the control and reads no predicate on the element;
    # the lifting search's monoid witnesses asked a value of its one cell (a KeyError)
    m = finite.recognise(thm3.parse_file(by_name("below_first").path))
    assert not m.atoms
    reps = finite.cell_elements(m)
    assert reps is not None and len(reps) == len(m.cells) and all(len(r) == 1 for r in reps)
    assert finite.monoid_witnesses(m.loop, time.monotonic() + 2.0) == []
