"""thm3.dask with the Numba backend on first use: each scheduler in a fresh process with
an empty Numba cache, 16 chunks, so that the threads (or worker processes) all load the
rendered module at once.  A module registered before it had finished loading gave
`AttributeError: ... no attribute 'reduce_serial'`; a temporary file named per process,
`FileNotFoundError` on it."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("dask.array")
pytest.importorskip("numba")

SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import dask.array as da
    import thm3, thm3.dask
    a = thm3.analyze(thm3.sample_path("welford"), timeout=60)
    x = np.random.default_rng(0).normal(size=48_000)
    dx = da.from_array(x, chunks=3_000)
    assert dx.numblocks == (16,)
    lazy = thm3.dask.reduce(a, dx, backend="numba")
    match sys.argv[1]:
        case "cluster":
            import distributed
            with distributed.LocalCluster(n_workers=2, threads_per_worker=4, processes=True,
                                          dashboard_address=None) as cluster, distributed.Client(cluster):
                got = lazy.compute()
        case scheduler:
            got = lazy.compute(scheduler=scheduler, num_workers=8)
    want = a.run(x)
    print(repr(got), repr(want))
    assert np.isclose(got, want, rtol=1e-9), (got, want)
    print("ok")
""")


@pytest.mark.slow
@pytest.mark.parametrize("scheduler", ["threads", "processes", "cluster"])
def test_dask_numba_first_use_in_a_fresh_process(scheduler, tmp_path):
    if scheduler == "cluster":
        pytest.importorskip("distributed")
    env = dict(os.environ, THM3_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-c", SCRIPT, scheduler], env=env, capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]
    assert not list((tmp_path / "cache" / "numba").glob("*.tmp")), "a temporary file was left behind"
