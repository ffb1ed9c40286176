"""The JAX backend (`backend="jax"`, `thm3 emit --target jax`): the emitted module's scan
(runs, their totals scanned by doubling) and reduction (a tree in list order), and its
`scan_leaves` (`jax.lax.associative_scan`), against the sequential
fold, on every sample homomorphism (the corpus in the slow tier), n = 0, 1, 1000 and
1007; NaN and inf as the loop carries them; Int overflow raised; the module standalone
and under `jax.jit`."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import thm3  # noqa: E402
from analyzed import analysis  # noqa: E402
from catalog import HOMOMORPHISMS, by_name  # noqa: E402
from closeness import running_magnitude, same  # noqa: E402
from thm3.backends import numpy_tree  # noqa: E402
from thm3.backends.jax_module import render  # noqa: E402
from thm3.backends.jax_tree import module, run_jax, scan_jax  # noqa: E402
from thm3.backends.scan import prefix_results, run_sequential_prefixes  # noqa: E402
from thm3.ir import Type  # noqa: E402
from thm3.semantics.samples import random_arrays  # noqa: E402

SIZES = [0, 1, 1000, 1007]


def _in_range(p) -> bool:
    v = np.abs(np.asarray(p, dtype=np.float64))
    return bool(np.all(np.isfinite(v)) and np.all((v == 0) | ((v > 1e-250) & (v < 1e250))))


def _case(a, n, seed):
    dim = 4 if any(x.type is Type.VEC for x in a.loop.fields + a.loop.elements + a.loop.params) else 4
    rng = np.random.default_rng(seed)
    for _ in range(8):
        arrays, params = random_arrays(a.loop, n, dim, rng)
        want = run_sequential_prefixes(a.loop, arrays, params, n=n, dim=dim)
        if all(_in_range(p) for p in want):
            return arrays, params, want, dim
    pytest.skip(f"{a.loop.name}: no random list of {n} elements stays within floating-point range")


def _check(a, n, seed, normwise=False):
    try:
        arrays, params, want, dim = _case(a, n, seed)
    except OverflowError:       # an Int field leaves int64 on the data: JAX says so too
        arrays, params = random_arrays(a.loop, n, 4, np.random.default_rng(seed))
        with pytest.raises(OverflowError):
            run_jax(a.loop, a.combine_fn, arrays, params, n=n, dim=4)
        return
    kw = dict(n=n, dim=dim)
    scale = running_magnitude(want, n) if normwise else None
    same(scan_jax(a.loop, a.combine_fn, arrays, params, **kw), want, scale=scale)
    final = numpy_tree.run_sequential(a.loop, arrays, params, n=n, dim=dim)
    same(run_jax(a.loop, a.combine_fn, arrays, params, **kw), final,
          scale=np.asarray(scale[-1]) if normwise and n else None)
    if normwise:
        return
    if arrays:      # the public API: the arrays give n
        same(a.run(*arrays, backend="jax", **params), numpy_tree.apply_result(a.loop, final, params))
        same(a.scan(*arrays, backend="jax", result=True, **params), prefix_results(a.loop, want, params))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("sample", HOMOMORPHISMS, ids=lambda s: s.name)
def test_jax_scan_and_reduce_equal_the_sequential_fold(sample, n):
    _check(analysis(str(sample.path)), n, n + 3)


def _corpus_homomorphisms():
    from corpus import HOMOMORPHISMS as CORPUS_HOMS
    return CORPUS_HOMS


@pytest.mark.slow
@pytest.mark.parametrize("entry", _corpus_homomorphisms(), ids=lambda e: e.name)
def test_jax_on_every_corpus_homomorphism(entry):
    a = analysis(str(entry.path))
    if a.combine_fn is None:
        pytest.skip(f"{entry.name}: {a.verdict} (the corpus tests follow it)")
    for n in SIZES:
        _check(a, n, n + 5, normwise=True)


@pytest.mark.parametrize("name", ["sum", "max", "mps", "safe_softmax", "logsumexp", "argmax", "welford", "affine"])
def test_nan_and_inf_as_the_sequential_loop(name):
    """Specials inside runs of 126 elements (8 runs), as the NumPy and Numba scans are
    tested: the combine is proved on finite values, and a run that starts with -inf has
    the total (-inf, NaN) in log-sum-exp, where the loop itself gives NaN on [-inf]."""
    a = analysis(str(by_name(name).path))
    rng = np.random.default_rng(1)
    arrays, params = random_arrays(a.loop, 1007, 4, rng)
    for x in arrays:
        if x.dtype.kind == "f":
            x[[122, 178, 898]] = [-np.inf, np.nan, np.inf]
    want = run_sequential_prefixes(a.loop, arrays, params)
    same(scan_jax(a.loop, a.combine_fn, arrays, params, lanes=8), want)
    same(run_jax(a.loop, a.combine_fn, arrays, params, lanes=8), numpy_tree.run_sequential(a.loop, arrays, params))


def test_a_non_commutative_combine_keeps_list_order():
    """The last element, the affine recurrence: an operand swapped anywhere in the scan or
    the tree would show."""
    for name in ("last", "affine", "first"):
        a = analysis(str(by_name(name).path))
        assert a.proofs["commutativity"] == "failed"
        x = np.arange(1.0, 1008.0)
        arrays = [x] * len([p for p in a.loop.elements if not p.index])
        same(a.scan(*arrays, backend="jax"), a.scan(*arrays))
        same(a.run(*arrays, backend="jax"), a.run(*arrays))


@pytest.mark.parametrize("name", ["mps", "affine", "last", "welford", "argmax"])
def test_the_leaves_through_jax_lax_associative_scan(name):
    """`scan_leaves`: the combine as jax.lax.associative_scan calls it, in order."""
    a = analysis(str(by_name(name).path))
    mod = module(a.loop, a.combine_fn)
    arrays, params, want, dim = _case(a, 1007, 2)
    with jax.enable_x64(True):
        columns = tuple(jax.numpy.asarray(x).reshape(-1, 1) for x in arrays)
        got = mod.scan_leaves(mod.leaf(columns, params, 0, 1007), params)
        got = tuple(np.asarray(g)[:, 0] for g in got[:len(a.loop.fields)])
    same(got, want)


PRODUCT = '''
"""Int product."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    p: Int = 1


def left(acc: State, x: Int) -> State:
    return State(acc.p * x)
'''


def test_an_int_overflow_raises(tmp_path):
    path = tmp_path / "int_product.py"
    path.write_text(PRODUCT)
    a = thm3.analyze(str(path), lift=False)
    assert a.verdict == "homomorphism"
    assert module(a.loop, a.combine_fn).OVERFLOW
    small = np.array([2, -3, 5, 7])
    assert a.run(small, backend="jax") == a.run(small) == (-210,)
    with pytest.raises(OverflowError, match="overflows"):
        a.run(np.full(70, 3), backend="jax")
    with pytest.raises(OverflowError):
        a.scan(np.full(70, 3), backend="jax")
    # at the edge: 2**62 * 2 wraps, 2**61 * 2 * 2 = 2**63 wraps, -2**62 * 2 = -2**63 does not
    assert a.run(np.array([-(2**62), 2]), backend="jax") == (-(2**63),)
    with pytest.raises(OverflowError):
        a.run(np.array([2**62, 2]), backend="jax")
    with pytest.raises(OverflowError):
        a.run(np.array([-1, -(2**63)]), backend="jax")


def test_a_field_named_like_the_overflow_flag(tmp_path):
    path = tmp_path / "bad_product.py"
    path.write_text(PRODUCT.replace("p: Int = 1", "bad: Int = 1").replace("acc.p", "acc.bad"))
    a = thm3.analyze(str(path), lift=False)
    assert module(a.loop, a.combine_fn).OVERFLOW
    assert a.run(np.array([2, -3, 5, 7]), backend="jax") == (-210,)
    with pytest.raises(OverflowError):
        a.run(np.full(70, 3), backend="jax")


def test_the_module_keeps_to_the_loop_file_types_and_names(tmp_path):
    a = analysis(str(by_name("welford").path))
    text = render(a.loop, a.combine_fn, commutativity=a.proofs["commutativity"])
    compile(text, "welford_jax.py", "exec")
    assert "import jax" in text and "thm3" not in text.split('"""', 2)[2].replace("thm3/backends", "")
    assert "COMMUTATIVITY = 'proved'" in text
    assert "jax.lax.associative_scan" in text


STANDALONE = r'''
import importlib.util, sys
import numpy as np
import jax
jax.config.update("jax_enable_x64", True)
spec = importlib.util.spec_from_file_location("m", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
assert "thm3" not in sys.modules, "the module imports thm3"
x = np.random.default_rng(0).standard_normal(1001)
states = m.scan(x)
best = np.maximum(np.maximum.accumulate(np.cumsum(x)), 0.0)
assert np.allclose(states[1], best), (states[1][:5], best[:5])
assert np.isclose(m.reduce(x), best[-1])
# under jax.jit: the leaves, the scan and the tree are traceable
f = jax.jit(lambda v: m.reduce_states(m.leaf((v.reshape(-1, 1),), {}, 0, v.shape[0]), {}))
got = f(x)
assert np.isclose(float(got[1][0, 0]), best[-1])
h = jax.jit(lambda v: m.scan_leaves(m.leaf((v.reshape(-1, 1),), {}, 0, v.shape[0]), {}))
assert np.allclose(h(x)[1][:, 0], best)
g = jax.jit(lambda v: m.scan(v))
assert np.allclose(g(x)[1], best)
assert m.reduce(np.zeros(0)) == 0.0 and m.scan(np.zeros(0))[0].shape == (0,)
print("ok")
'''


def test_emit_target_jax_writes_a_module_that_runs_with_jax_alone(tmp_path):
    out = subprocess.run([sys.executable, "-m", "thm3", "emit", "--sample", "mps", "-o", str(tmp_path),
                          "--target", "jax"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    path = tmp_path / "mps_jax.py"
    assert path.exists() and "commutativity: failed" in out.stdout
    run = subprocess.run([sys.executable, "-c", textwrap.dedent(STANDALONE), str(path)],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-3000:]
