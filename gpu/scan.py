"""The inclusive scan in CUDA, rendered from the same IR as the reduction (`render.py`):
reduce-then-scan in three launches, list order kept, 64-bit indexing, and a row-wise
variant; plus the part of the emitted module that launches it (`scan`, `scan_rows`).

- a tile is BLOCK * ITEMS consecutive elements; thread t folds elements
  [t * ITEMS, (t + 1) * ITEMS) of it with `left`; the block scans the threads' states in
  shared memory (Hillis and Steele: state t - k on the left of state t, so the combine
  need not commute); each thread folds its run again from the carry combined with its
  exclusive prefix, writing the state after every element (`left(h(xs), x)` equals
  `combine(h(xs), left(init, x))`, a proved law);
- pass 1: block b carries a state over a contiguous range of tiles and writes it;
  pass 2 (one block): the partials become their exclusive prefixes, in order;
  pass 3: block b scans its tiles again from its prefix, writing every state;
- rows: one block a row, its tiles in order from the identity, no partials.
This reads the input twice where a single-pass decoupled look-back (Merrill and Garland,
2016) reads it once; the look-back is not rendered yet.
"""
from __future__ import annotations

from string import Template

from thm3.ir import Fn, Loop, Type

from . import render as R

ITEMS = 8                   # consecutive elements a thread folds in a tile
SHARED_BYTES = 32 * 1024    # the block's shared States stay under this


def scan_block(spec: R.Spec) -> int:
    """Threads per block: 256, fewer for a large State (its shared copies must fit)."""
    size = R.state_bytes(spec)
    block = 256
    while block > 32 and block * size > SHARED_BYTES:
        block //= 2
    if block * size > 48 * 1024:
        raise ValueError(f"{spec.loop.name}: a State of {size} bytes is too large for the block scan")
    return block


_SCAN = Template(r"""// ---- the inclusive scan, in list order (gpu/scan.py) -----------------------------------
#define THM3_SCAN_BLOCK ${block}
#define THM3_SCAN_ITEMS ${items}
#define THM3_SCAN_TILE ((long long)THM3_SCAN_BLOCK * THM3_SCAN_ITEMS)

// State s at position i of the outputs, one array a field (THM3_DIM values for a Vec).
${sig_put} {
${put}
}

// The exclusive prefix of this thread's state among the block's, in thread order; the
// block's total in *total.  Every thread of the block calls it.
__device__ State thm3_block_exclusive(const State& thm3_mine, State* thm3_total${params_decl}) {
    __shared__ State thm3_scan_state[THM3_SCAN_BLOCK];
    const int thm3_t = threadIdx.x;
    thm3_scan_state[thm3_t] = thm3_mine;
    __syncthreads();
    for (int thm3_offset = 1; thm3_offset < THM3_SCAN_BLOCK; thm3_offset <<= 1) {
        State thm3_v = thm3_scan_state[thm3_t];
        if (thm3_t >= thm3_offset) thm3_v = thm3_combine(thm3_scan_state[thm3_t - thm3_offset], thm3_v${params});
        __syncthreads();
        thm3_scan_state[thm3_t] = thm3_v;
        __syncthreads();
    }
    *thm3_total = thm3_scan_state[THM3_SCAN_BLOCK - 1];
    const State thm3_ex = thm3_t > 0 ? thm3_scan_state[thm3_t - 1] : thm3_identity();
    __syncthreads();                        // thm3_scan_state may be written again next call
    return thm3_ex;
}

// Elements [base, base + count) of one array (count <= a tile), `carry` the state before
// them: with `write`, every state into the outputs; returns carry combined with the tile.
${sig_tile} {
    const long long thm3_i0 = (long long)threadIdx.x * THM3_SCAN_ITEMS;
    State thm3_s = thm3_identity();
    for (int thm3_k = 0; thm3_k < THM3_SCAN_ITEMS; ++thm3_k) {
        const long long thm3_i = thm3_base + thm3_i0 + thm3_k;
        if (thm3_i0 + thm3_k < thm3_count) thm3_s = thm3_left(${left}${params});
    }
    State thm3_total;
    const State thm3_ex = thm3_block_exclusive(thm3_s, &thm3_total${params});
    if (thm3_write) {
        thm3_s = thm3_combine(thm3_carry, thm3_ex${params});
        for (int thm3_k = 0; thm3_k < THM3_SCAN_ITEMS; ++thm3_k) {
            const long long thm3_i = thm3_base + thm3_i0 + thm3_k;
            if (thm3_i0 + thm3_k < thm3_count) {
                thm3_s = thm3_left(${left}${params});
                thm3_put(thm3_s, thm3_i${outputs});
            }
        }
    }
    return thm3_combine(thm3_carry, thm3_total${params});
}

// Block b's range of tiles: [tiles * b / grid, tiles * (b + 1) / grid).
__device__ __forceinline__ void thm3_scan_range(long long thm3_n, long long* thm3_t0, long long* thm3_t1) {
    const long long thm3_tiles = (thm3_n + THM3_SCAN_TILE - 1) / THM3_SCAN_TILE;
    *thm3_t0 = thm3_tiles * blockIdx.x / gridDim.x;
    *thm3_t1 = thm3_tiles * (blockIdx.x + 1) / gridDim.x;
}

// Pass 1: block b's state over its tiles.
extern "C" __global__ void __launch_bounds__(THM3_SCAN_BLOCK)
${sig_blocks} {
    long long thm3_t0, thm3_t1;
    thm3_scan_range(thm3_n, &thm3_t0, &thm3_t1);
    State thm3_carry = thm3_identity();
    for (long long thm3_tile = thm3_t0; thm3_tile < thm3_t1; ++thm3_tile) {
        const long long thm3_base = thm3_tile * THM3_SCAN_TILE;
        const long long thm3_count = thm3_n - thm3_base < THM3_SCAN_TILE ? thm3_n - thm3_base : THM3_SCAN_TILE;
        thm3_carry = thm3_scan_tile(thm3_carry, thm3_base, thm3_count, false${arrays}${params}${null_outputs});
    }
    if (threadIdx.x == 0) thm3_partial[blockIdx.x] = thm3_carry;
}

// Pass 2, one block: partial[j] becomes the combine of partials 0 .. j-1, in order.
extern "C" __global__ void __launch_bounds__(THM3_SCAN_BLOCK)
${sig_partials} {
    const int thm3_per = (thm3_count + THM3_SCAN_BLOCK - 1) / THM3_SCAN_BLOCK;
    const int thm3_begin = threadIdx.x * thm3_per;
    const int thm3_end = thm3_begin + thm3_per < thm3_count ? thm3_begin + thm3_per : thm3_count;
    State thm3_s = thm3_identity();
    for (int thm3_j = thm3_begin; thm3_j < thm3_end; ++thm3_j) thm3_s = thm3_combine(thm3_s, thm3_partial[thm3_j]${params});
    State thm3_total;
    thm3_s = thm3_block_exclusive(thm3_s, &thm3_total${params});
    for (int thm3_j = thm3_begin; thm3_j < thm3_end; ++thm3_j) {
        const State thm3_v = thm3_partial[thm3_j];
        thm3_partial[thm3_j] = thm3_s;
        thm3_s = thm3_combine(thm3_s, thm3_v${params});
    }
}

// Pass 3: block b scans its tiles from its prefix, writing every state.
extern "C" __global__ void __launch_bounds__(THM3_SCAN_BLOCK)
${sig_down} {
    long long thm3_t0, thm3_t1;
    thm3_scan_range(thm3_n, &thm3_t0, &thm3_t1);
    State thm3_carry = thm3_partial[blockIdx.x];
    for (long long thm3_tile = thm3_t0; thm3_tile < thm3_t1; ++thm3_tile) {
        const long long thm3_base = thm3_tile * THM3_SCAN_TILE;
        const long long thm3_count = thm3_n - thm3_base < THM3_SCAN_TILE ? thm3_n - thm3_base : THM3_SCAN_TILE;
        thm3_carry = thm3_scan_tile(thm3_carry, thm3_base, thm3_count, true${arrays}${params}${outputs});
    }
}

// One scan per row of (rows, n) inputs, one block a row (Index: the position in the row).
extern "C" __global__ void __launch_bounds__(THM3_SCAN_BLOCK)
${sig_rows} {
    const long long thm3_row = blockIdx.x;
    State thm3_carry = thm3_identity();
    for (long long thm3_base = 0; thm3_base < thm3_n; thm3_base += THM3_SCAN_TILE) {
        const long long thm3_count = thm3_n - thm3_base < THM3_SCAN_TILE ? thm3_n - thm3_base : THM3_SCAN_TILE;
        thm3_carry = thm3_scan_tile(thm3_carry, thm3_base, thm3_count, true${row_arrays}${params}${row_outputs});
    }
}
""")


def render_scan(loop: Loop, combine: Fn, *, dtype: str = "float32", dim: int | None = None) -> str:
    """The whole CUDA source of the scan: the functions of `render.py` and the kernels
    thm3_scan_blocks, thm3_scan_partials, thm3_scan_down and thm3_scan_rows."""
    spec = R.make_spec(loop, combine, dtype, dim)
    return R.render_functions(loop, combine, dtype=dtype, dim=dim) + "\n" + render_scan_kernels(spec)


def render_scan_kernels(spec: R.Spec) -> str:
    loop = spec.loop
    real = spec.real.ctype
    arrays = spec.data_elements
    array_decls = [f"const {real}* __restrict__ in_{p.name}" if p.type is Type.VEC
                   else f"const {spec.ctype(p.type)}* __restrict__ in_{p.name}" for p in arrays]
    param_decls = [f"const {real}* __restrict__ {R.c_name(p.name)}" if p.type is Type.VEC
                   else f"{spec.ctype(p.type)} {R.c_name(p.name)}" for p in loop.params]
    out_decls = [f"{spec.ctype(f.type)}* __restrict__ out_{f.name}" for f in loop.fields]
    params = "".join(f", {R.c_name(p.name)}" for p in loop.params)
    outputs = "".join(f", out_{f.name}" for f in loop.fields)

    def element(p):
        if p.index:
            return "thm3_i"
        return f"in_{p.name} + thm3_i * THM3_DIM" if p.type is Type.VEC else f"in_{p.name}[thm3_i]"

    put = []
    for f in loop.fields:
        m = R.c_member(f.name)
        if f.type is Type.VEC:
            put.append(f"for (int thm3_d = 0; thm3_d < THM3_DIM; ++thm3_d) "
                       f"out_{f.name}[thm3_i * THM3_DIM + thm3_d] = thm3_s.{m}[thm3_d];")
        else:
            put.append(f"out_{f.name}[thm3_i] = thm3_s.{m};")

    def sig(head, args):
        return R._signature(head, args)

    def row_offset(name, vec):
        return f"{name} + thm3_row * thm3_n" + (" * THM3_DIM" if vec else "")

    holes = dict(
        block=scan_block(spec), items=ITEMS,
        params_decl="".join(f", {d}" for d in param_decls), params=params, outputs=outputs,
        put=R._indent(put),
        left=", ".join(["thm3_s"] + [element(p) for p in loop.elements]),
        sig_put=sig("__device__ __forceinline__ void thm3_put",
                    ["const State& thm3_s", "long long thm3_i"] + out_decls),
        sig_tile=sig("__device__ State thm3_scan_tile",
                     ["State thm3_carry", "long long thm3_base", "long long thm3_count", "bool thm3_write"]
                     + array_decls + param_decls + out_decls),
        sig_blocks=sig("thm3_scan_blocks", array_decls + ["long long thm3_n"] + param_decls + ["State* __restrict__ thm3_partial"]),
        sig_partials=sig("thm3_scan_partials", ["State* __restrict__ thm3_partial", "int thm3_count"] + param_decls),
        sig_down=sig("thm3_scan_down", array_decls + ["long long thm3_n"] + param_decls
                     + ["const State* __restrict__ thm3_partial"] + out_decls),
        sig_rows=sig("thm3_scan_rows", array_decls + ["long long thm3_n"] + param_decls + out_decls),
        arrays="".join(f", in_{p.name}" for p in arrays),
        null_outputs="".join(", nullptr" for _ in loop.fields),
        row_arrays="".join(f", {row_offset(f'in_{p.name}', p.type is Type.VEC)}" for p in arrays),
        row_outputs="".join(f", {row_offset(f'out_{f.name}', f.type is Type.VEC)}" for f in loop.fields),
    )
    return _SCAN.substitute(holes)


# --- the emitted module's scan ----------------------------------------------------------------

MODULE_PART = r'''

# ---- the inclusive scan (gpu/scan.py): every prefix state, in list order ------------------
SCAN_BLOCK = ${block}  # threads per block of the scan kernels
SCAN_TILE = ${tile}  # elements per tile: SCAN_BLOCK * ${items}
SCAN_SOURCE = ${source}

_scan_modules: dict = {}


def _scan_kernel(name: str):
    import cupy
    device = cupy.cuda.Device().id
    module = _scan_modules.get(device)
    if module is None:
        module = _scan_modules[device] = cupy.RawModule(code=SCAN_SOURCE)
    return module.get_function(name)


def _scan_outputs(shape) -> list:
    import cupy
    return [cupy.empty(shape + ((DIM,) if t == "Vec" else ()), dtype=_real_type(t)) for _, t in FIELDS]


def scan(*arrays, **params) -> tuple:
    """Every prefix State of `${name}` (inclusive, in list order): a tuple of CuPy arrays,
    one per field (${field_names}), of length n (n x DIM for a Vec).  Three launches:
    the blocks' states, their exclusive prefixes, each block's tiles scanned again."""
    import cupy
    if any(t != "Index" for _, t in ELEMENTS):
        xs, shape = _arrays(arrays, 1)
        n = shape[0]
    elif len(arrays) == 1:
        xs, n = [], int(arrays[0])
    else:
        raise TypeError(f"{NAME}: pass n, the number of elements")
    ps = _params(params)
    outs = _scan_outputs((n,))
    if n == 0:
        return tuple(outs)
    blocks = _scan_kernel("thm3_scan_blocks")
    grid = max(1, min(-(-n // SCAN_TILE), MAX_BLOCKS))
    partial = cupy.empty(grid * STATE_BYTES, dtype=cupy.uint8)
    blocks((grid,), (SCAN_BLOCK,), (*xs, np.int64(n), *ps, partial))
    _scan_kernel("thm3_scan_partials")((1,), (SCAN_BLOCK,), (partial, np.int32(grid), *ps))
    _scan_kernel("thm3_scan_down")((grid,), (SCAN_BLOCK,), (*xs, np.int64(n), *ps, partial, *outs))
    return tuple(outs)


def scan_rows(*arrays, **params) -> tuple:
    """One scan per row of (rows, n) arrays ((rows, n, DIM) for a Vec): a tuple of CuPy
    arrays, one per field, of shape (rows, n) ((rows, n, DIM) for a Vec)."""
    xs, shape = _arrays(arrays, 2)
    if shape is None:
        raise TypeError(f"{NAME}: scan_rows needs element arrays")
    rows, n = shape
    ps = _params(params)
    outs = _scan_outputs((rows, n))
    if rows and n:
        _scan_kernel("thm3_scan_rows")((rows,), (SCAN_BLOCK,), (*xs, np.int64(n), *ps, *outs))
    return tuple(outs)


__all__ += ["scan", "scan_rows", "SCAN_SOURCE"]
'''


def render_module_part(loop: Loop, combine: Fn, *, dtype: str = "float32", dim: int | None = None) -> str:
    """The text that the emitted module (`emit.py`) appends: SCAN_SOURCE, scan, scan_rows."""
    from .emit import _python_string
    spec = R.make_spec(loop, combine, dtype, dim)
    block = scan_block(spec)
    return Template(MODULE_PART).substitute(
        block=block, items=ITEMS, tile=block * ITEMS, name=loop.name,
        field_names=", ".join(f.name for f in loop.fields),
        source=_python_string(render_scan(loop, combine, dtype=dtype, dim=dim)))


# --- running it (Analysis.scan(..., backend="cupy"), Dask's CuPy chunks) -------------------

def _module(loop: Loop, combine: Fn, dtype: str, dim):
    import sys
    import types
    from .emit import render_module
    key = f"thm3_emitted_scan_{loop.name}_{dtype}_{dim}_{id(combine)}"
    mod = sys.modules.get(key)
    if mod is None:
        source = R.render(loop, combine, dtype=dtype, dim=dim)
        text = render_module(loop, combine, source, dtype=dtype, dim=dim)
        mod = types.ModuleType(key)
        sys.modules[key] = mod
        exec(compile(text, f"<thm3 emitted {loop.name}>", "exec"), mod.__dict__)  # thm3's own output
    return mod


def _dtype_and_dim(loop: Loop, arrays, params):
    import numpy as np
    data = [p for p in loop.elements if not p.index]
    dim = None
    for p, a in zip(data, arrays):
        if p.type is Type.VEC:
            dim = int(a.shape[-1])
    for p in loop.params:
        if p.type is Type.VEC:
            dim = len(params[p.name])
    reals = [a for p, a in zip(data, arrays) if p.type in (Type.REAL, Type.VEC)]
    single = reals and all(np.dtype(a.dtype) == np.float32 for a in reals)
    return ("float32" if single else "float64"), dim


def scan_cupy(loop: Loop, combine: Fn, arrays, params: dict) -> tuple:
    """The prefix states on the GPU (CuPy arrays), in float32 when every Real array is."""
    dtype, dim = _dtype_and_dim(loop, arrays, params)
    return _module(loop, combine, dtype, dim).scan(*arrays, **params)


def reduce_state_cupy(loop: Loop, combine: Fn, arrays, params: dict) -> tuple:
    """The final state of CuPy arrays, by the emitted reduction."""
    dtype, dim = _dtype_and_dim(loop, arrays, params)
    return _module(loop, combine, dtype, dim).reduce_state(*arrays, **params)
