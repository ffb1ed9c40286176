"""The fast tier's budget (tests/conftest.py, tests/durations.py): which tests it sends to the
slow tier, and that the recorded durations are read as pytest reports them."""
from __future__ import annotations

from conftest import BUDGET_SECONDS, DURATIONS, _recorded, over_budget
from durations import parse


def test_tests_over_the_budget_go_slow_but_each_file_keeps_its_cheapest():
    ids = ["tests/a.py::x", "tests/a.py::y", "tests/a.py::z", "tests/b.py::p", "tests/b.py::q[1]"]
    recorded = {"tests/a.py::x": 2.0, "tests/a.py::y": 0.1, "tests/b.py::p": 5.0, "tests/b.py::q[1]": 0.9}
    # a.py keeps y (under the budget) and z (not recorded); b.py is all dear: q[1], its
    # cheapest, stays
    assert over_budget(ids, recorded, budget=0.3) == {"tests/a.py::x", "tests/b.py::p"}
    assert over_budget(ids, recorded, budget=10.0) == set()
    assert over_budget(ids, {}, budget=0.3) == set()


def test_pytest_durations_report_is_summed_per_test():
    report = ("============ slowest durations ============\n"
              "1.50s call     tests/a.py::x[mps]\n"
              "0.25s setup    tests/a.py::x[mps]\n"
              "0.01s teardown tests/b.py::y\n"
              "3 passed in 2.00s\n")
    assert parse(report) == {"tests/a.py::x[mps]": 1.75, "tests/b.py::y": 0.01}


def test_the_recorded_durations_are_read():
    recorded = _recorded()
    assert DURATIONS.is_file() and recorded
    assert all(nodeid.startswith("tests/") and "::" in nodeid for nodeid in recorded)
    assert any(t >= BUDGET_SECONDS for t in recorded.values())


def test_on_demand_makes_each_value_once_and_only_when_asked():
    from analyzed import OnDemand
    made = []
    values = OnDemand(lambda k: made.append(k) or k * 2)
    assert made == []
    assert values[3] == 6 and values[3] == 6 and values[4] == 8
    assert made == [3, 4]
