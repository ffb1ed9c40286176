"""The declared Python floor (`requires-python` in pyproject.toml) matches what the code
needs: every module parses with that version's grammar, and no module uses a standard-
library name newer than the floor unless it guards it with `hasattr`.  CI runs on a newer
interpreter, so this is how it checks the floor (`.ci/run` also runs the wheel under the
floor's interpreter where one is installed)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FOLDERS = ("thm3", "cli", "gpu", "tests", "bench", "samples", "examples")

# Standard-library names added after 3.10, by module (the ones a project like this might reach for).
NEWER = {
    (3, 11): {"ast": {"TryStar"}, "math": {"exp2", "cbrt"}, "datetime": {"UTC"},
              "enum": {"StrEnum", "verify", "ReprEnum"}, "typing": {"Self", "Never", "LiteralString",
              "assert_never", "reveal_type", "TypeVarTuple", "Unpack", "dataclass_transform"},
              "asyncio": {"TaskGroup", "timeout"}, "hashlib": {"file_digest"}, "operator": {"call"},
              "inspect": {"getmembers_static"}, "tomllib": {"*"}, "wsgiref.types": {"*"}},
    (3, 12): {"itertools": {"batched"}, "typing": {"override"}, "math": {"sumprod"}},
}


def floor() -> tuple[int, int]:
    text = (REPO / "pyproject.toml").read_text()
    major, minor = re.search(r'requires-python\s*=\s*">=\s*(\d+)\.(\d+)"', text).groups()
    return int(major), int(minor)


def newer_names(tree: ast.AST, version: tuple[int, int]) -> list[str]:
    """`module.name` uses (and imports) of names newer than `version`, outside an
    `if hasattr(module, "name"):` guard."""
    banned = {}
    for v, table in NEWER.items():
        if v > version:
            for mod, names in table.items():
                banned.setdefault(mod, set()).update(names)
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Call) and \
                getattr(node.test.func, "id", None) == "hasattr":
            guarded.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    found = []
    for node in ast.walk(tree):
        if id(node) in guarded:
            continue
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.attr in banned.get(node.value.id, ()):
                found.append(f"{node.value.id}.{node.attr} (line {node.lineno})")
        elif isinstance(node, ast.ImportFrom) and node.module in banned:
            names = banned[node.module]
            found += [f"from {node.module} import {a.name} (line {node.lineno})"
                      for a in node.names if "*" in names or a.name in names]
        elif isinstance(node, ast.Import):
            found += [f"import {a.name} (line {node.lineno})" for a in node.names if "*" in banned.get(a.name, ())]
    return found


def _modules():
    return sorted(p for folder in FOLDERS for p in (REPO / folder).rglob("*.py"))


def test_floor_is_declared():
    assert floor() >= (3, 11)        # 3.10 reached its end of life in October 2026


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(REPO)))
def test_module_fits_the_floor(path):
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text, filename=str(path), feature_version=floor())
    assert newer_names(tree, floor()) == []


def test_the_check_can_fail():
    tree = ast.parse("import math\nimport tomllib\nx = math.exp2(3)\nif hasattr(math, 'cbrt'):\n    y = math.cbrt(8)\n")
    assert sorted(newer_names(tree, (3, 10))) == ["import tomllib (line 2)", "math.exp2 (line 3)"]
    assert newer_names(tree, (3, 11)) == []
    with pytest.raises(SyntaxError):
        ast.parse("try:\n    pass\nexcept* ValueError:\n    pass\n", feature_version=(3, 10))
