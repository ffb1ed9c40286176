"""The Numba backend's disk cache: a second process loads the compiled functions instead
of compiling them again (the rendered module lives under $THM3_CACHE_DIR)."""
from __future__ import annotations

import itertools
import json
import math
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba")

from thm3.ir import Op, walk  # noqa: E402

SCRIPT = r'''
import json, sys
import numpy as np
import thm3
from thm3.backends import numba_tree
a = thm3.analyze(thm3.sample_path("mps"))
x = np.random.default_rng(0).standard_normal(1001)
state = numba_tree.run_numba(a.loop, a.combine_fn, [x], {})
mod = numba_tree.compiled(a.loop, a.combine_fn)
stats = [f.stats for f in (mod.reduce, mod.reduce_serial)]   # 1001 elements: one chunk, no threads
print(json.dumps({"hits": sum(sum(s.cache_hits.values()) for s in stats),
                  "misses": sum(sum(s.cache_misses.values()) for s in stats),
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


# --- one exponential per max-shifted pair --------------------------------------------------

SPECIALS = [0.0, -0.0, 1.5, -2.25, 700.0, -745.5, 1e308, -1e308, math.inf, -math.inf, math.nan]
SHIFTED = ["safe_softmax", "logsumexp", "logsumexp_lse", "online_softmax_values"]


def _identical(u, v) -> bool:
    """The same value: NaN for NaN, and a float's zero with its sign."""
    if not isinstance(u, float):
        return type(u) is type(v) and u == v
    if u != u:
        return isinstance(v, float) and v != v
    return isinstance(v, float) and u == v and math.copysign(1.0, u) == math.copysign(1.0, v)


@pytest.mark.parametrize("name", SHIFTED)
def test_shifted_exponentials_are_exact_on_every_special_value(name):
    """The rewrite the Numba rendering applies to `left` and to the combine computes the
    same float as the original expressions, on every pair of specials (inf - inf, NaN,
    signed zeros, overflow), evaluated with the sequential fold's own table."""
    from analyzed import analysis
    from catalog import by_name
    from thm3.ir.rewrite import shifted_exponentials
    from thm3.semantics.evaluate import PYTHON, Compiled
    a = analysis(str(by_name(name).path))
    for fn in (a.loop.left, a.combine_fn):
        names = sorted({e.arg for e in walk(fn.outputs) if e.op is Op.VAR})
        rewritten = shifted_exponentials(fn.outputs)
        assert sum(e.op is Op.EXP for e in walk(rewritten)) < sum(e.op is Op.EXP for e in walk(fn.outputs))
        before, after = Compiled(fn.outputs, PYTHON), Compiled(rewritten, PYTHON)
        for values in itertools.product(SPECIALS, repeat=len(names)) if len(names) <= 3 else \
                (tuple(random.Random(k).choice(SPECIALS) for _ in names) for k in range(20000)):
            env = dict(zip(names, values))
            want, got = before(env), after(env)
            assert all(_identical(g, w) for g, w in zip(got, want)), (env, got, want)


def test_safe_softmax_renders_one_exponential_per_element():
    from analyzed import analysis
    from catalog import by_name
    from thm3.backends.numba_tree import render
    a = analysis(str(by_name("safe_softmax").path))
    text = render(a.loop, a.combine_fn)
    left = text[text.index("def left("):text.index("def combine(")]
    assert left.count("math.exp(") == 1


@pytest.mark.parametrize("name", SHIFTED)
def test_the_rendered_fold_equals_the_python_fold_bit_for_bit_with_specials(name):
    """The compiled sequential fold (the same rendering of `left` the chunks use) against
    the Python fold, with inf, -inf and NaN in the list and a list of only -inf."""
    import numpy as np
    from analyzed import analysis
    from catalog import by_name
    from thm3.backends import numba_tree, numpy_tree
    from thm3.semantics.samples import random_arrays
    a = analysis(str(by_name(name).path))
    rng = np.random.default_rng(1)
    for case in range(4):
        arrays, params = random_arrays(a.loop, 257, 4, rng)
        for x in arrays:
            if case == 3:
                x[:] = -np.inf
            elif case:
                x[rng.integers(0, 257, size=case)] = [np.inf, -np.inf, np.nan][:case]
        want = numpy_tree.run_sequential(a.loop, arrays, params)
        got = numba_tree.run_numba_sequential(a.loop, a.combine_fn, arrays, params)
        assert all(_identical(float(g), float(w)) for g, w in zip(got, want)), (case, got, want)


@pytest.mark.parametrize("name", ["mps", "welford", "argmax", "affine"])
def test_without_threads_the_same_chunks_give_the_same_bits(name, monkeypatch):
    """reduce_serial and scan_serial (one chunk, Dask workers) fold the same chunks and
    combine them in the same tree as the threaded code: equal bit for bit."""
    import numpy as np
    from analyzed import analysis
    from catalog import by_name
    from thm3.backends import numba_tree
    from thm3.semantics.samples import random_arrays
    monkeypatch.setattr(numba_tree, "CHUNK", 64)
    a = analysis(str(by_name(name).path))
    arrays, params = random_arrays(a.loop, 1007, 4, np.random.default_rng(2))
    for run in (numba_tree.run_numba, numba_tree.scan_numba):
        threaded = run(a.loop, a.combine_fn, arrays, params, offset=3, threads=True)
        serial = run(a.loop, a.combine_fn, arrays, params, offset=3, threads=False)
        for u, v in zip(threaded, serial):
            assert np.array_equal(np.asarray(u), np.asarray(v), equal_nan=True)


@pytest.mark.parametrize("name", ["mps", "affine", "argmax", "vec_sum", "first"])
def test_a_scan_from_a_start_state_continues_the_list(name, monkeypatch):
    """scan_numba(start=h(head)) over the tail gives the prefixes of head + tail (a Dask
    chunk folded from its carry), across many chunks, with and without threads."""
    import numpy as np
    from analyzed import analysis
    from catalog import by_name
    from thm3.backends import numba_tree
    from thm3.backends.scan import run_sequential_prefixes
    from thm3.semantics.samples import random_arrays
    monkeypatch.setattr(numba_tree, "CHUNK", 64)
    a = analysis(str(by_name(name).path))
    arrays, params = random_arrays(a.loop, 1207, 4, np.random.default_rng(5))
    whole = run_sequential_prefixes(a.loop, arrays, params)
    head = numba_tree.run_numba(a.loop, a.combine_fn, [x[:200] for x in arrays], params)
    for threads in (True, False):
        tail = numba_tree.scan_numba(a.loop, a.combine_fn, [x[200:] for x in arrays], params,
                                     offset=200, threads=threads, start=head)
        for got, want in zip(tail, whole):
            assert np.allclose(np.asarray(got, dtype=float), np.asarray(want[200:], dtype=float),
                               rtol=1e-9, atol=1e-12, equal_nan=True)
