"""The README's figures reproduce by construction (issue 23): every figure names the
command that made it and its results file, which exists; the accuracy table's rows up to
n = 10^4 are what its commands print at HEAD (rerun here at --max-n 10000); and the
second quick-start command is the fast tier that `.ci/run` runs before the slow tier."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from thm3.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
POWERS = {"10²": 100, "10³": 1000, "10⁴": 10_000, "10⁵": 100_000, "10⁶": 10**6, "10⁷": 10**7}


def _section(title: str) -> str:
    start = README.index(f"## {title}")
    end = README.find("\n## ", start + 1)
    return README[start:end if end > 0 else None]


def _accuracy_rows() -> dict[str, dict[int, tuple[str, str]]]:
    """sample -> n -> (sequential, tree) as the README's accuracy table writes them."""
    rows: dict[str, dict[int, tuple[str, str]]] = {}
    sample = None
    for line in _section("Accuracy").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or cells[1] not in POWERS:
            continue
        found = re.search(r"thm3 accuracy --sample (\w+)", cells[4])
        if found:
            sample = found.group(1)
        elif cells[4] != "same":
            sample = None                   # a row made by another command (a test)
        if sample:
            rows.setdefault(sample, {})[POWERS[cells[1]]] = (cells[2], cells[3])
    return rows


def test_accuracy_table_has_the_small_rows_to_check():
    rows = _accuracy_rows()
    assert set(rows) == {"welford", "safe_softmax"}
    for sample, by_n in rows.items():
        assert {100, 1000, 10_000} <= set(by_n), sample


@pytest.mark.parametrize("sample", ["welford", "safe_softmax"])
def test_accuracy_rows_up_to_ten_thousand_are_what_head_prints(sample):
    want = _accuracy_rows()[sample]
    r = CliRunner().invoke(main, ["accuracy", "--sample", sample, "--max-n", "10000"])
    assert r.exit_code == 0, r.output
    got = {}
    for line in r.output.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0].isdigit():
            got[int(parts[0])] = (parts[1], parts[2])
    assert set(got) == {100, 1000, 10_000}
    for n, values in got.items():
        assert want[n] == values, (f"README's {sample} row at n = {n} is {want[n]}, HEAD prints {values}: "
                                   "rerun python bench/accuracy.py and update the table")


def test_accuracy_section_names_its_command_and_existing_results_files():
    text = _section("Accuracy")
    assert "python bench/accuracy.py" in text
    files = re.findall(r"`(bench/results/accuracy-[^`]+)`", text)
    assert {f.split("-")[1] for f in files} >= {"welford", "safe_softmax"}, files
    for f in files:
        assert (ROOT / f).is_file(), f
    for image in re.findall(r"\]\((docs/img/[^)]+\.png)\)", text):
        assert f"--plot {image}" in text, f"no command draws {image}"


def test_every_performance_figure_names_its_command_and_results_file():
    rows = [line for line in _section("Performance").splitlines() if line.startswith("| ")
            and not line.startswith("| benchmark") and not line.startswith("| ---")]
    assert len(rows) >= 6
    for line in rows:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        command, results = cells[-2], cells[-1]
        assert re.fullmatch(r"`python bench/\w+\.py[^`]*`", command), line
        path = re.fullmatch(r"`(bench/results/[^`]+)`", results)
        assert path and (ROOT / path.group(1)).is_file(), line
        assert Path(path.group(1)).name.startswith(command.split("bench/")[1].split(".py")[0]), line


def test_second_command_is_the_fast_tier_and_ci_runs_it_then_the_slow_tier():
    quick = _section("Quick start")
    commands = re.search(r"```bash\n(.*?)```", quick, re.S).group(1).strip().splitlines()
    assert commands[1] == 'pip install -e ".[test]" && python -m pytest -q -m "not slow"'
    assert re.search(r"about \d+ s", quick) and "tests" in quick   # what it runs, how long here
    ci = (ROOT / ".ci" / "run").read_text()
    # the two tiers, in that order, are the whole suite: each test runs once
    assert 'for tier in "not slow" "slow"; do' in ci
    assert 'python3 -m pytest -q -p no:cacheprovider -m "$tier"' in ci
