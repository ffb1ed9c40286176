"""The inclusive scan in CUDA, rendered from the same IR as the reduction (`cuda.py`):
reduce-then-scan in three launches, list order kept, 64-bit indexing, and a row-wise
variant (`templates/scan.cu`).  The emitted module launches it (`scan`, `scan_rows` in
`gpu/runtime/reduce.py`).

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

from thm3.ir import Fn, Loop, Type

from . import cuda as R
from . import cuda_template

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


_SCAN = cuda_template("scan.cu")


def render_scan(loop: Loop, combine: Fn, *, dtype: str = "float32", dim: int | None = None) -> str:
    """The whole CUDA source of the scan: the functions of `cuda.py` and the kernels
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
        return R.c_signature(head, args)

    def row_offset(name, vec):
        return f"{name} + thm3_row * thm3_n" + (" * THM3_DIM" if vec else "")

    holes = dict(
        block=scan_block(spec), items=ITEMS,
        params_decl="".join(f", {d}" for d in param_decls), params=params, outputs=outputs,
        put=R.indent(put),
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
