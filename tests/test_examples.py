"""The examples/ notebook runs top to bottom with nbclient (online softmax from a loop in
a cell to kernel source)."""
from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[1] / "examples" / "online_softmax.ipynb"


@pytest.mark.slow
def test_online_softmax_notebook_runs():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3").execute()
    text = "\n".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "homomorphism" in text
    assert "__global__" in text
    markdown = [o for c in nb.cells for o in c.get("outputs", []) if "text/markdown" in o.get("data", {})]
    assert any("max(m₁, m₂)" in o["data"]["text/markdown"] for o in markdown)
