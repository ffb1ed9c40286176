"""The layout's rules, checked on the source (issue 9): no module imports another
module's private names; `thm3/` reaches the GPU stage only through
`thm3/backends/gpu.py`; the GPU runtime (compile and launch) never imports the renderer."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = {"thm3": REPO / "thm3", "thm3.cli": REPO / "cli", "thm3.gpu": REPO / "gpu"}


def _modules():
    for prefix, folder in PACKAGE.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            name = ".".join((prefix, *parts)).removesuffix(".__init__")
            yield name, path


MODULES = dict(_modules())


def _imports(path: Path):
    """(module imported from, name, line) for every `from thm3... import name`, lazy ones too."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("thm3"):
            for alias in node.names:
                yield node.module, alias.name, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("thm3"):
                    yield alias.name, None, node.lineno


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_private_names_across_modules(name):
    bad = [f"line {line}: from {mod} import {what}" for mod, what, line in _imports(MODULES[name])
           if what and what.startswith("_") and not what.startswith("__") and mod != name]
    assert bad == []


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n.startswith("thm3.") and
                                        not n.startswith(("thm3.gpu", "thm3.cli"))))
def test_thm3_reaches_the_gpu_stage_through_one_door(name):
    if name == "thm3.backends.gpu":
        return
    bad = [f"line {line}: {mod}" for mod, _, line in _imports(MODULES[name]) if mod.startswith("thm3.gpu")]
    assert bad == [], "use thm3.backends.gpu.gpu()"


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n.startswith("thm3.gpu.runtime")))
def test_the_runtime_does_not_render(name):
    bad = [f"line {line}: {mod}" for mod, _, line in _imports(MODULES[name]) if mod.startswith("thm3.gpu.render")]
    assert bad == []


def test_the_check_can_fail(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("def f():\n    from thm3.synth.tidy import _hidden\n")
    assert [(m, w) for m, w, _ in _imports(p)] == [("thm3.synth.tidy", "_hidden")]
