"""The generated sequential fold (`thm3.semantics.fold.Fold`) means what the reference
interpreter means: the same state, bit for bit, as the schedule `Compiled` folding the
same elements through the same table, for every sample (NaN and inf included), in
float64 and in float32 (rounded inline) alike."""
from __future__ import annotations

import numpy as np
import pytest

import thm3
from catalog import SAMPLES
from thm3.accuracy import _ROUNDED, table_for
from thm3.backends.numpy_tree import identity
from thm3.semantics.evaluate import PYTHON, Compiled, quiet
from thm3.semantics.fold import Fold
from thm3.semantics.samples import random_arrays


def _columns(loop, arrays, real):
    given = iter(arrays)
    out = []
    for d in loop.elements:
        col = None if d.index else np.asarray(next(given))
        out.append(None if col is None else (col.astype(real) if col.ndim > 1 else
                                              col.astype(real if col.dtype.kind == "f" else col.dtype).tolist()))
    return out


def _start(loop, arrays, params, real):
    dim = next((np.shape(x)[1] for x in arrays if np.ndim(x) > 1), None)
    state = [np.asarray(v).astype(real) if np.ndim(v) else np.asarray(v).item() for v in identity(loop, dim=dim, dtype=real)]
    env = {p.name: np.asarray(params[p.name], dtype=real).item() if not np.ndim(params[p.name])
           else np.asarray(params[p.name], dtype=real) for p in loop.params}
    return state, env


def _schedule_fold(loop, table, state, columns, n, env):
    step = Compiled(loop.left.outputs, table)
    env = dict(env)
    names = [f"acc.{f.name}" for f in loop.fields]
    for j in range(n):
        env.update(zip(names, state))
        for d, col in zip(loop.elements, columns):
            env[d.name] = j if col is None else col[j]
        state = step(env)
    return state


def _same(a, b):
    return all(x == y if isinstance(x, int) and isinstance(y, int) else
               np.array_equal(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64), equal_nan=True)
               for x, y in zip(a, b, strict=True))


def _arrays(loop, n, seed, real, specials):
    arrays, params = random_arrays(loop, n, 4, np.random.default_rng(seed))
    arrays = [x.astype(real) if x.dtype.kind == "f" else x for x in arrays]
    if specials and arrays and arrays[0].dtype.kind == "f" and n > 10 and not loop.preconditions:
        arrays[0] = np.ascontiguousarray(arrays[0])
        arrays[0].reshape(-1)[[3, 7, 9]] = [np.inf, -np.inf, np.nan]
    return arrays, params


@pytest.mark.parametrize("specials", [False, True], ids=["finite", "nan-inf"])
@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s.name)
def test_fold_is_the_schedule_bit_for_bit(sample, specials):
    loop = thm3.parse_file(sample.path)
    for real, fold_table, single, table in [(np.float64, PYTHON, frozenset(), PYTHON),
                                            (np.float32, PYTHON, _ROUNDED, table_for(np.float32))]:
        arrays, params = _arrays(loop, 1007, 5, real, specials)
        state, env = _start(loop, arrays, params, real)
        columns = _columns(loop, arrays, real)
        with quiet():
            want = _schedule_fold(loop, table, state, columns, 1007, env)
            fold = Fold(loop, fold_table, single=single)
            got = fold(state, columns, 0, 500, env)
            got = fold(got, columns, 500, 1007, env)        # resumed where it stopped
        assert _same(got, want), (real, fold.source)


def test_fold_source_names_nothing_from_the_file():
    loop = thm3.parse_source('"""t"""\nfrom typing import NamedTuple\nfrom thm3.lang import Real\n\n\n'
                             'class State(NamedTuple):\n    secret_total: Real = 0\n\n\n'
                             'def left(acc: State, weird_name: Real) -> State:\n'
                             '    return State(acc.secret_total + weird_name * 2.5)\n')
    src = Fold(loop, PYTHON).source
    assert "secret_total" not in src and "weird_name" not in src and "2.5" not in src
