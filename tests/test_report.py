"""The text report and the JSON of a few samples against golden files in
tests/golden/ (timings and the checkout's path normalised away).
THM3_UPDATE_GOLDEN=1 rewrites them; review the diff before committing it."""
from __future__ import annotations

import json
import os
import re

import pytest

from analyzed import analysis
from catalog import REPO_ROOT, by_name
from thm3.report import render_report

GOLDEN = REPO_ROOT / "tests" / "golden"
# a homomorphism, one with a select and invariants, a Vec state, a wrong right fold, a witness
NAMES = ("mps", "safe_softmax", "vec_sum", "bad_right", "mts")
_SECONDS = re.compile(r"\d+\.\d+ ?s\b")


def _normal(text: str) -> str:
    return _SECONDS.sub("<t> s", text.replace(str(REPO_ROOT) + "/", ""))


def _check(path, text: str):
    if os.environ.get("THM3_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert text == path.read_text(), f"{path} differs; THM3_UPDATE_GOLDEN=1 rewrites it"


@pytest.mark.parametrize("name", NAMES)
def test_report_golden(name):
    a = analysis(str(by_name(name).path))
    _check(GOLDEN / "report" / f"{name}.txt", _normal(render_report(a)) + "\n")


@pytest.mark.parametrize("name", NAMES)
def test_json_golden(name):
    a = analysis(str(by_name(name).path))
    data = a.to_json()
    assert set(data["timings"]) == {s.name for s in a.steps} | {"total"}
    del data["timings"]
    _check(GOLDEN / "json" / f"{name}.json", _normal(json.dumps(data, indent=1, sort_keys=True)) + "\n")
