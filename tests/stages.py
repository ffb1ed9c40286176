"""Small loops and hand-written combines shared by the per-stage tests (no analysis run)."""
from __future__ import annotations

import time

import thm3
from catalog import SAMPLES_DIR
from thm3.analysis.invariants import infer
from thm3.ir import Expr, Fn, Op, Type, var
from thm3.prove.laws import Setting
from thm3.semantics.samples import make_triples

R = Type.REAL


def loop_of(name: str):
    return thm3.parse_file(SAMPLES_DIR / f"{name}.py")


def combine_of(loop, **fields: Expr) -> Fn:
    """A combine over a.<field>, b.<field> and the loop parameters, from its outputs."""
    inputs = tuple((f"{p}.{f.name}", f.type) for p in "ab" for f in loop.fields) + \
        tuple((d.name, d.type) for d in loop.params)
    return Fn(inputs, tuple(fields[f.name] for f in loop.fields))


def a(name: str, type_: Type = R) -> Expr:
    return var(f"a.{name}", type_)


def b(name: str, type_: Type = R) -> Expr:
    return var(f"b.{name}", type_)


def add(x: Expr, y: Expr) -> Expr:
    return Expr(Op.ADD, R, (x, y))


def mx(x: Expr, y: Expr) -> Expr:
    return Expr(Op.MAX, R, (x, y))


def mps_combine(loop) -> Fn:
    return combine_of(loop, s=add(a("s"), b("s")), m=mx(a("m"), add(a("s"), b("m"))))


def prepared(name: str):
    """The loop, its sampled triples and the proof setting with its invariants."""
    loop = loop_of(name)
    triples = make_triples(loop)
    inv, _ = infer(loop, triples, time.monotonic() + 30)
    return loop, triples, Setting(loop, inv)


def route_alone(loop, routes, seconds: float):
    """Synthesis by `routes` only (a tuple of routes), with its candidates proved in
    `seconds`, as the pipeline runs it: the invariants first, with a budget of their own
    (they must end: a Houdini run cut short keeps no invariant, and the laws then fail for
    want of one, which is not what a route test is about), and the collector's full
    collections held back as in an analysis."""
    import thm3.synth as synth
    from thm3.prove.budget import young_collections_only
    from thm3.prove.combine import prove_combine
    with young_collections_only():
        triples = make_triples(loop)
        inv, timed_out = infer(loop, triples, time.monotonic() + 120)
        assert not timed_out, f"the invariants of {loop.name} took more than 120 s"
        setting = Setting(loop, inv)
        deadline = time.monotonic() + seconds
        return synth.synthesize(loop, triples, deadline=deadline, routes=routes,
                                prove=lambda c: prove_combine(loop, setting, c, triples, deadline))


def proved(got) -> bool:
    """Whether a synthesis gave a combine with all its laws proved."""
    return got.combine is not None and all(s == "proved" for s in got.statuses.values())


def later(seconds: float = 30.0) -> float:
    return time.monotonic() + seconds


# --- a proved combine on the backends ----------------------------------------------------------

def check_emitted_module(a, name: str, data, params: dict, tmp_path) -> None:
    """The NumPy module `a.emit` writes reduces and scans as the sequential loop folds, on
    `data(rng, n)`'s arrays for n = 0, 1 and 1007."""
    import importlib.util

    import numpy as np
    from thm3.semantics.samples import fold_left
    a.emit(tmp_path, dtype="float64")
    spec = importlib.util.spec_from_file_location(f"emitted_{name}", tmp_path / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)                 # thm3's own output, not the user's file
    rng = np.random.default_rng(8)
    for n in (0, 1, 1007):
        arrays = data(rng, n)
        want = fold_left(a.loop, list(zip(*[x.tolist() for x in arrays])), params)
        got = module.reduce(*arrays, backend="numpy", **params)
        assert np.allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float), rtol=1e-9), (n, got, want)
        if n:
            last = [np.asarray(v)[-1] for v in module.scan(*arrays, backend="numpy", **params)]
            assert np.allclose(np.asarray(last, dtype=float), np.asarray(want, dtype=float), rtol=1e-9)


def compile_kernels(a, name: str, arch: str, dtype: str) -> str:
    """The reduction and scan kernels of a proved combine compiled by NVRTC for `arch`;
    the reduction's CUDA source."""
    from thm3.gpu.render import cuda as render
    from thm3.gpu.render.scan import render_scan
    from thm3.gpu.runtime import nvrtc
    src = render.render(a.loop, a.combine_fn, dtype=dtype)
    assert ".entry thm3_reduce_blocks(" in nvrtc.compile_cuda(src, arch, f"{name}.cu").decode()
    scan = nvrtc.compile_cuda(render_scan(a.loop, a.combine_fn, dtype=dtype), arch, f"{name}_scan.cu").decode()
    assert ".entry thm3_scan_blocks(" in scan
    return src


def check_runs_as_the_loop(a, data, params: dict, sizes) -> None:
    """`a.run` (the combine tree on NumPy) gives the sequential fold of `data(rng, n)`'s
    arrays for each n in `sizes`."""
    import numpy as np
    from thm3.semantics.samples import fold_left
    rng = np.random.default_rng(5)
    for n in sizes:
        arrays = data(rng, n)
        want = fold_left(a.loop, list(zip(*[x.tolist() for x in arrays])), params)
        got = a.run(*arrays, **params)
        assert np.allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float), rtol=1e-9, atol=1e-12), \
            (n, got, want)
