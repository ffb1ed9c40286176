"""The Numba backend's disk cache: a second process loads the compiled functions instead
of compiling them again (the rendered module lives under $THM3_CACHE_DIR)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba")

SCRIPT = r'''
import json, sys
import numpy as np
import thm3
from thm3.backends import numba_tree
a = thm3.analyze(thm3.sample_path("mps"))
x = np.random.default_rng(0).standard_normal(1001)
state = numba_tree.run_numba(a.loop, a.combine_fn, [x], {})
mod = numba_tree.compiled(a.loop, a.combine_fn)
stats = mod.reduce.stats
print(json.dumps({"hits": sum(stats.cache_hits.values()), "misses": sum(stats.cache_misses.values()),
                  "state": [float(v) for v in state]}))
'''


@pytest.mark.slow
def test_a_second_process_loads_from_the_disk_cache(tmp_path):
    env = dict(os.environ, THM3_CACHE_DIR=str(tmp_path))
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                             timeout=600, cwd=Path(__file__).resolve().parents[1])
        assert out.returncode == 0, out.stderr[-2000:]
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    assert runs[0]["misses"] >= 1 and runs[0]["hits"] == 0      # compiled, and written
    assert runs[1]["hits"] >= 1 and runs[1]["misses"] == 0      # loaded, not compiled
    assert runs[0]["state"] == runs[1]["state"]
    assert list((tmp_path / "numba").glob("thm3_numba_mps_*.py"))
