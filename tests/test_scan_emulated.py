"""The CUDA scan kernels (gpu/render/scan.py: thm3_scan_blocks, thm3_scan_partials,
thm3_scan_down, thm3_scan_rows) run on the CPU emulation of CUDA of tests/test_kernels.py
(a std::thread per CUDA thread, a barrier for __syncthreads, __shared__ a static), built
with g++ from the very source the emitted module launches (`render_scan`, SCAN_SOURCE) and
launched as gpu/runtime/reduce.py's scan() and scan_rows() do: the same argument order, a
block of `scan_block(spec)` threads, pass 1 over `grid` blocks, pass 2 on one block over
the grid's partials, pass 3 over the grid.  Every prefix is checked against
`run_sequential_prefixes`, the float64 fold, on the float32-rounded inputs."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from thm3.backends.scan import run_sequential_prefixes
from thm3.gpu.render import cuda as render
from thm3.gpu.render.scan import ITEMS, render_scan, scan_block

from test_kernels import (EMULATION, LOOPS, R, DIM, _build, _loop, _numpy_of, _pack, _tolerance, add,
                          build_dir, data, emulated_flag, flag_wrappers, needs_gxx)  # noqa: F401  (build_dir: the fixture)

MAX_BLOCKS = 4096           # gpu/runtime/reduce.py: the cap on the scan's grid
SCAN_KERNELS = ("thm3_scan_blocks", "thm3_scan_partials", "thm3_scan_down", "thm3_scan_rows")


def _sum():
    return _loop("sum", "Sum", [("s", R, 0.0, "sum so far")], [("x", R, False)], [],
                 lambda n: (add(n["acc.s"], n["x"]),), lambda n: (add(n["a.s"], n["b.s"]),))


SCAN_LOOPS = {"sum": _sum, **{k: LOOPS[k] for k in ("welford", "mps", "argmax", "softmax")}}


def scan_args(spec, kernel: str) -> list:
    """The scan kernels' arguments in the order of templates/scan.cu's signatures (and of
    reduce.py's launches): arrays, n, params, partial / partial, count, params / ... ."""
    rows = render.kernel_args(spec, "thm3_reduce_rows")
    arrays = [a for a in rows if a.kind == "array"]
    n = [a for a in rows if a.kind == "n"]
    params = [a for a in rows if a.kind == "param"]
    outputs = [a for a in rows if a.kind == "output" and a.name != "out_result"]   # the fields only
    partial = [render.KernelArg("partial", "State", True, "partial")]
    count = [render.KernelArg("count", "int", False, "count")]
    return {"thm3_scan_blocks": arrays + n + params + partial,
            "thm3_scan_partials": partial + count + params,
            "thm3_scan_down": arrays + n + params + partial + outputs,
            "thm3_scan_rows": arrays + n + params + outputs}[kernel]


class EmulatedScan:
    """The four scan kernels of one loop on the emulation, launched from NumPy arrays."""

    def __init__(self, spec, build_dir):
        self.spec, self.block = spec, scan_block(spec)
        self.tile = self.block * ITEMS
        source = render_scan(spec.loop, spec.combine, dtype=spec.real.name, dim=spec.dim)
        wrappers = []
        for kernel in SCAN_KERNELS:
            args = scan_args(spec, kernel)
            decl = ", ".join(["unsigned grid"] + [f"{'void*' if a.pointer else a.ctype} {a.name}" for a in args])
            wrappers.append(f'extern "C" void emu_{kernel}({decl}) '
                            f'{{ emu_launch(grid, {kernel}, {", ".join(a.name for a in args)}); }}')
        wrappers += flag_wrappers(source)
        self.lib = _build(build_dir, f"#define THM3_BLOCK {self.block}\n" + EMULATION + source + "\n"
                          + "\n".join(wrappers))

    def launch(self, kernel: str, grid: int, values: dict):
        args = scan_args(self.spec, kernel)
        getattr(self.lib, f"emu_{kernel}")(ctypes.c_uint(grid), *[_pack(a, values[a.name]) for a in args])

    def default_grid(self, n: int) -> int:
        return max(1, min(-(-n // self.tile), MAX_BLOCKS))          # reduce.py's scan()

    def _inputs(self, arrays, params, n):
        values = {f"in_{p.name}": a for p, a in zip(self.spec.data_elements, arrays)}
        values["n"] = n
        for p in self.spec.loop.params:
            values[render.c_name(p.name)] = _numpy_of(self.spec.ctype(p.type))(params[p.name])
        return values

    def _outputs(self, shape) -> dict:
        return {a.name: np.full(shape + ((self.spec.dim,) if a.vec else ()), -7, _numpy_of(a.ctype))   # poisoned
                for a in scan_args(self.spec, "thm3_scan_rows") if a.kind == "output"}

    def scan(self, arrays, params, grid: int | None = None, n: int | None = None, out_len: int | None = None):
        n = len(arrays[0]) if n is None else n
        grid = self.default_grid(n) if grid is None else grid
        values = {**self._inputs(arrays, params, n), **self._outputs((n if out_len is None else out_len,))}
        values["partial"] = np.full(grid * render.state_bytes(self.spec), 0x55, np.uint8)   # poisoned
        values["count"] = grid
        self.launch("thm3_scan_blocks", grid, values)
        self.launch("thm3_scan_partials", 1, values)
        self.launch("thm3_scan_down", grid, values)
        return [values[f"out_{f.name}"] for f in self.spec.loop.fields]

    def scan_rows(self, arrays, params):
        rows, n = arrays[0].shape[:2]
        values = {**self._inputs(arrays, params, n), **self._outputs((rows, n))}
        self.launch("thm3_scan_rows", rows, values)
        return [values[f"out_{f.name}"] for f in self.spec.loop.fields]


@pytest.fixture(scope="module")
def emulated_scan(build_dir):
    made = {}

    def get(name, dtype="float32"):
        if (name, dtype) not in made:
            loop, combine = SCAN_LOOPS[name]()
            made[name, dtype] = EmulatedScan(render.make_spec(loop, combine, dtype, DIM), build_dir)
        return made[name, dtype]
    return get


def _device(spec, arrays):
    return [np.ascontiguousarray(a, _numpy_of(spec.ctype(p.type))) for p, a in zip(spec.data_elements, arrays)]


def assert_prefixes(spec, got, want, what):
    rtol, atol = _tolerance(spec.real.name)
    assert len(got) == len(want) == len(spec.loop.fields), what
    for f, g, w in zip(spec.loop.fields, got, want):
        g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
        assert g.shape == w.shape, (what, f.name, g.shape, w.shape)
        finite = np.abs(w[np.isfinite(w)])
        scale = max(1.0, float(finite.max())) if finite.size else 1.0     # float32 error grows with |prefix|
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol * scale, equal_nan=True,
                                   err_msg=f"{what}: field {f.name}")
        if f.type is not R:                                             # counts and indices: exact
            assert np.array_equal(g, w), (what, f.name, np.flatnonzero(g != w)[:10])


def _check(emu, name, arrays, params, grid, what):
    dev = _device(emu.spec, arrays)
    got = emu.scan(dev, params, grid)
    want = run_sequential_prefixes(emu.spec.loop, [a.astype(np.float64) for a in dev], params)
    assert_prefixes(emu.spec, got, want, f"{what} grid={grid}")


def _grids(emu, n):
    # reduce.py's grid, one block, and more blocks than tiles (blocks with no tile)
    return sorted({emu.default_grid(n), 1, 2, emu.default_grid(n) + 2})


@needs_gxx
@pytest.mark.parametrize("name", sorted(SCAN_LOOPS))
@pytest.mark.parametrize("n", [1, 1007, 4099])
def test_emulated_scan(name, n, emulated_scan):
    emu = emulated_scan(name)
    rng = np.random.default_rng(n)
    arrays, params = data(name, n, rng)
    if name == "argmax":        # a rising staircase of ties: new maxima (and ties) in every tile
        arrays[0] += np.arange(n) // 97
    for grid in _grids(emu, n):
        _check(emu, name, arrays, params, grid, f"{name} n={n}")


@needs_gxx
@pytest.mark.parametrize("name", sorted(SCAN_LOOPS))
def test_emulated_scan_empty(name, emulated_scan):
    # reduce.py's scan() launches nothing at n = 0 (the empty prefixes); the kernels
    # launched anyway at n = 0 must write nothing
    emu = emulated_scan(name)
    arrays, params = data(name, 0, np.random.default_rng(0))
    want = run_sequential_prefixes(emu.spec.loop, arrays, params)
    assert all(len(w) == 0 for w in want)
    got = emu.scan(_device(emu.spec, arrays), params, grid=1, n=0, out_len=1)
    assert all(np.all(g == -7) for g in got), got


@needs_gxx
def test_emulated_scan_argmax_positions_cross_blocks(emulated_scan):
    # Index is the global position: a later block's prefixes must name a maximum of an earlier one
    emu = emulated_scan("argmax")
    x = np.zeros(4099, np.float32)
    x[[5, 2100, 4000]] = [3.0, 3.0, 4.0]          # tile 0, tile 1 (tie: keeps 5), tile 1
    got = emu.scan([x], {}, 3)
    want_idx = np.where(np.arange(4099) >= 4000, 4000, np.where(np.arange(4099) >= 5, 5, 0))
    assert np.array_equal(got[1], want_idx), np.flatnonzero(got[1] != want_idx)[:10]


@needs_gxx
@pytest.mark.parametrize("name", sorted(SCAN_LOOPS))
def test_emulated_scan_nan_and_inf_follow_the_fold(name, emulated_scan):
    emu = emulated_scan(name)
    rng = np.random.default_rng(9)
    for poison in (np.nan, np.inf, -np.inf):
        arrays, params = data(name, 4099, rng)
        arrays[0][rng.integers(0, 4099, 3)] = poison
        _check(emu, name, arrays, params, emu.default_grid(4099), f"{name} poison={poison}")


@needs_gxx
@pytest.mark.parametrize("name", sorted(SCAN_LOOPS))
def test_emulated_scan_rows(name, emulated_scan):
    emu = emulated_scan(name)
    rng = np.random.default_rng(3)
    rows, n = 3, 1000
    per_row = [data(name, n, rng) for _ in range(rows)]
    params = per_row[0][1]
    stacked = _device(emu.spec, [np.stack([r[0][k] for r in per_row]) for k in range(len(per_row[0][0]))])
    got = emu.scan_rows(stacked, params)
    for r in range(rows):
        want = run_sequential_prefixes(emu.spec.loop, [a[r].astype(np.float64) for a in stacked], params)
        assert_prefixes(emu.spec, [g[r] for g in got], want, f"{name} row {r}")


@needs_gxx
@pytest.mark.parametrize("name", sorted(SCAN_LOOPS))
def test_the_scan_kernels_flag_only_what_the_proof_does_not_cover(name, emulated_scan):
    """thm3_uncovered stays 0 on a clean list, whatever the grid (blocks with no tile read
    no poisoned partial into a combine), and is set by a NaN element."""
    emu = emulated_scan(name)
    flag = emulated_flag(emu.lib)
    rng = np.random.default_rng(14)
    for n in (1, 1007, 4099):
        arrays, params = data(name, n, rng)
        for grid in _grids(emu, n):
            flag.value = 0
            emu.scan(_device(emu.spec, arrays), params, grid)
            assert flag.value == 0, (name, n, grid)
    flag.value = 0
    emu.scan_rows(_device(emu.spec, [np.stack([a, a]) for a in arrays]), params)
    assert flag.value == 0
    arrays[0][7] = np.nan
    emu.scan(_device(emu.spec, arrays), params)
    assert flag.value == 1
