"""The numerical side of the parallel form, measured: the relative error of the
sequential fold and of the blocked combine tree (`thm3.backends.numpy_tree`), both
computed in a lower precision, against a reference in a wider precision, as the list grows.

The reference (`reference_states`) is the same combine tree computed in the platform's
extended precision (`numpy.longdouble`: a 64-bit significand on x86, 113 bits on
aarch64 Linux), whose own error, about log2(n) units of 2**-64, is four orders of
magnitude below float64's resolution: against float32 or float64 results it is exact
for the purpose.  The tree is a valid reference because its combine is proved equal to
the fold over the reals.  Where `longdouble` is plain double (Windows, macOS on arm64),
the reference is the float64 sequential fold and says so.

The sequential fold is the loop as written, element by element; the tree folds runs of
a few elements and combines them pairwise, so each element's value passes through about
log2(n) combines instead of n steps, which is why summation error grows like log n
rather than n there.  `thm3 accuracy` prints the table and draws it."""
from __future__ import annotations

import math

import numpy as np

from thm3.errors import UsageError
from thm3.ir import Loop, Op
from thm3.semantics.evaluate import PYTHON, quiet
from thm3.semantics.fold import Fold

# Operations whose Real result must be rounded to the working precision; the others
# (max, min, abs, negation, comparisons) return one of their operands exactly.
_ROUNDED = (Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.POW, Op.POWN, Op.EXP, Op.EXP2, Op.LOG, Op.LOG2, Op.SQRT, Op.DOT)


def _rounding(f, real):
    """`f` with a float result rounded to `real` (np.float32): float32 arithmetic on Python
    floats.  One IEEE double operation rounded to float32 is the correctly rounded float32
    result for + - * / and sqrt (double has more than 2 * 24 + 2 bits)."""
    def g(*args):
        v = f(*args)
        if type(v) is float:
            return float(real(v))
        if isinstance(v, np.ndarray) and v.dtype.kind == "f":
            return v.astype(real)
        return v
    return g


def table_for(dtype) -> dict:
    """The PYTHON table of the reference interpreter, computing Real values in `dtype`."""
    real = np.dtype(dtype).type
    if real is np.float64:
        return PYTHON
    table = dict(PYTHON)
    for op in _ROUNDED:
        table[op] = _rounding(PYTHON[op], real)
    const = PYTHON[Op.CONST]
    table[Op.CONST] = lambda value, type_: _rounding(const, real)(value, type_)
    return table


def fold_in(loop: Loop, dtype) -> Fold:
    """The loop's left fold on Python values, computing Reals in `dtype` (float32 as
    float64 operations rounded to single, which is float32 arithmetic)."""
    real = np.dtype(dtype).type
    return Fold(loop, PYTHON, single=_ROUNDED) if real is np.float32 else Fold(loop, table_for(real))


def sequential_prefixes(loop: Loop, arrays, params: dict, checkpoints, *, dtype=np.float64,
                        progress=None) -> list[tuple]:
    """One left fold, element by element, computing in `dtype`; the state after the first
    n elements for each n in `checkpoints` (ascending).  `progress(k)` is told every few
    thousand elements how many more were folded."""
    from thm3.backends.numpy_tree import identity
    real = np.dtype(dtype).type
    step = fold_in(loop, real)
    state = [_python(v, real) for v in identity(loop, dim=_dim(arrays), dtype=real)]
    env = {p.name: _python(np.asarray(params[p.name], dtype=real), real) for p in loop.params}
    given = iter(arrays)
    columns = []
    for d in loop.elements:
        col = None if d.index else np.asarray(next(given))
        columns.append(None if col is None else (col.astype(real) if col.ndim > 1 else
                                                 col.astype(real if col.dtype.kind == "f" else col.dtype).tolist()))
    out, i = [], 0
    with quiet():
        for n in checkpoints:
            while i < n:
                stop = min(n, i + 262144)
                state = step(state, columns, i, stop, env)
                if progress:
                    progress(stop - i)
                i = stop
            out.append(tuple(state))
    return out


def _python(v, real):
    arr = np.asarray(v)
    return arr.astype(real) if arr.ndim else arr.item()


def _dim(arrays):
    return next((np.shape(x)[1] for x in arrays if np.ndim(x) > 1), None)


def checkpoints(max_n: int) -> list[int]:
    """n = 10^2, 10^3, ... up to max_n (and max_n itself)."""
    ns = [10 ** k for k in range(2, 9) if 10 ** k <= max_n]
    return ns + ([max_n] if max_n not in ns else [])


def relative_error(value, reference) -> float:
    """The largest relative error over the result's entries (absolute where the
    reference is 0; 0 where both are the same inf or NaN)."""
    xs = value if isinstance(value, tuple) else (value,)
    rs = reference if isinstance(reference, tuple) else (reference,)
    worst = 0.0
    for x, r in zip(xs, rs):
        x = np.asarray(x, dtype=np.float64).ravel()
        r = np.asarray(r, dtype=np.float64).ravel()
        with quiet():
            same = (x == r) | (np.isnan(x) & np.isnan(r))
            err = np.where(same, 0.0, np.abs(x - r) / np.where(r == 0, 1.0, np.abs(r)))
        worst = max(worst, float(np.max(err)) if err.size else 0.0)
    return worst


def extended() -> bool:
    """Whether `numpy.longdouble` is wider than float64 here."""
    return np.finfo(np.longdouble).nmant > np.finfo(np.float64).nmant


def reference_name() -> str:
    if extended():
        return f"the combine tree in long double ({np.finfo(np.longdouble).nmant + 1}-bit significand)"
    return "the float64 sequential fold (long double is double on this platform)"


def reference_states(a, arrays, params: dict, ns, *, progress=None) -> list[tuple]:
    """The final state after the first n elements, for each n in `ns`, in the widest
    precision at hand (see the module docstring)."""
    from thm3.backends.numpy_tree import run_parallel
    if not extended():
        return sequential_prefixes(a.loop, arrays, params, ns, dtype=np.float64, progress=progress)
    wide = np.longdouble
    arrays = [np.asarray(x).astype(wide) if np.asarray(x).dtype.kind == "f" else np.asarray(x) for x in arrays]
    out, done = [], 0
    for n in ns:
        out.append(run_parallel(a.loop, a.combine_fn, [x[:n] for x in arrays], params, dtype=wide, n=n))
        if progress:
            progress(n - done)
        done = n
    return out


def measure(a, *, dtype: str = "float32", max_n: int = 10**7, seed: int = 0, arrays=None,
            params: dict | None = None, progress=None) -> list[dict]:
    """Rows {n, sequential, tree} of relative errors of the loop's result, computed in
    `dtype` by the sequential fold and by the blocked tree, against `reference_states`
    over the same (dtype-rounded) inputs.  Random inputs are drawn honouring the
    preconditions unless `arrays` (and `params`) are given; `params` alone fixes those
    loop parameters and draws the rest.  `progress(k)` is told as
    elements are folded (2 * max_n in all)."""
    from thm3.backends.numpy_tree import apply_result, run_parallel
    from thm3.semantics.samples import random_arrays
    if a.combine_fn is None:
        raise UsageError(f"{a.loop.name}: no combine ({a.verdict}): {a.reason}")
    real = np.dtype(dtype).type
    if arrays is None:
        arrays, params = random_arrays(a.loop, max_n, 4, np.random.default_rng(seed), params)
    params = dict(params or {})
    arrays = [np.asarray(x).astype(real) if np.asarray(x).dtype.kind == "f" else np.asarray(x) for x in arrays]
    n_total = len(arrays[0]) if arrays else max_n
    ns = checkpoints(min(max_n, n_total))
    low = sequential_prefixes(a.loop, arrays, params, ns, dtype=real, progress=progress)
    ref = reference_states(a, arrays, params, ns, progress=progress)
    rows = []
    for n, s_low, s_ref in zip(ns, low, ref):
        tree = run_parallel(a.loop, a.combine_fn, [x[:n] for x in arrays], params, dtype=real, n=n)
        want = apply_result(a.loop, s_ref, params)
        rows.append({"n": n,
                     "sequential": relative_error(apply_result(a.loop, s_low, params), want),
                     "tree": relative_error(apply_result(a.loop, tree, params), want)})
    return rows


def table(rows: list[dict]) -> str:
    lines = [f"{'n':>10}  {'sequential':>11}  {'tree':>11}  sequential / tree"]
    for r in rows:
        ratio = r["sequential"] / r["tree"] if r["tree"] else math.inf if r["sequential"] else 1.0
        lines.append(f"{r['n']:>10}  {r['sequential']:>11.2e}  {r['tree']:>11.2e}  {ratio:.3g}")
    return "\n".join(lines)


def plot_errors(rows: list[dict], path, *, title: str = "", dtype: str | None = None) -> None:
    """Both errors against n on log-log axes, into a PNG at `path` (needs matplotlib);
    with `dtype`, its unit roundoff as a dashed line."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ns = [r["n"] for r in rows]
    floor = 1e-17                           # an exact answer is drawn at the bottom, not dropped
    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    ax.loglog(ns, [max(r["sequential"], floor) for r in rows], "o-", label="sequential fold (the loop as written)")
    ax.loglog(ns, [max(r["tree"], floor) for r in rows], "s-", label="thm3's blocked combine tree")
    if dtype is not None:
        u = float(np.finfo(dtype).eps) / 2
        ax.axhline(u, color="gray", linestyle="--", linewidth=1, label=f"{dtype} unit roundoff ({u:.1e})")
    ax.set_xlabel("n (list length)")
    ax.set_ylabel("relative error vs extended precision" if extended() else "relative error vs float64")
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


__all__ = ["checkpoints", "extended", "fold_in", "measure", "reference_name", "reference_states", "plot_errors", "relative_error", "sequential_prefixes", "table", "table_for"]
