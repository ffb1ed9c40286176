"""Write the attention kernel for a loop that thm3 recognised as attention
(`thm3.analysis.attention.recognize`): `NAME.cu`, the CUDA source of the main variant, and
`NAME.py`, a self-contained module (CuPy and NumPy only) with
`attention(q, k, v, *, causal=False, scale=None, splits=None, backend="cupy")`.

Both carry the derived combine: in its split form for the kernels (K/V tile merge and
split-K merge, `merge_source`), and as NumPy code for the CPU path.  The module's machinery is
`gpu/attention.py`, copied in, so the emitted file needs no thm3."""
from __future__ import annotations

from pathlib import Path

from thm3.ir import Expr, Fn, Op, walk
from thm3.ir.printer import to_text

from . import attention as fa
from thm3.analysis.attention import merge_form

from .render import c_name, render_lane_struct_function


def merge_source(loop, combine: Fn, shape) -> str:
    """`thm3_merge thm3_merge_rows(a_m, a_d, b_m, b_d)`: the derived combine in the split
    form the kernels merge in (m, d, and o's two coefficients), rendered from its terms.
    Raises ValueError when the combine has no such form (the kernel would be wrong)."""
    form = merge_form(loop, combine, shape)
    if form is None:
        raise ValueError(f"{loop.name}: the combine is not linear in {shape.sum_field} and "
                         f"{shape.out_field} with coefficients of {shape.max_field} alone; the "
                         f"attention kernel's partial sums would be wrong")
    m, d = shape.max_field, shape.sum_field
    inputs = {f"{side}.{n}": c_name(f"{side}_{n}") for side in "ab" for n in (m, d)}
    return render_lane_struct_function(
        loop, combine, "thm3_merge_rows", "thm3_merge", inputs,
        [("m", form.m), ("d", form.d), ("alpha_a", form.alpha_a), ("alpha_b", form.alpha_b)],
        f"the combine of `{loop.name}` as the kernel merges: ({m}, {d}) and the coefficients "
        f"of a.{shape.out_field} and b.{shape.out_field}; a is the earlier part")


# NumPy spelling of the IR for the CPU path, one entry per operation.
_NUMPY = {
    Op.NEG: "np.negative({0})", Op.NOT: "np.logical_not({0})", Op.ABS: "np.abs({0})",
    Op.EXP: "np.exp({0})", Op.EXP2: "np.exp2({0})", Op.LOG: "np.log({0})", Op.LOG2: "np.log2({0})",
    Op.SQRT: "np.sqrt({0})", Op.ADD: "({0} + {1})", Op.SUB: "({0} - {1})", Op.MUL: "({0} * {1})",
    Op.DIV: "np.true_divide({0}, {1})", Op.MAX: "np.maximum({0}, {1})", Op.MIN: "np.minimum({0}, {1})",
    Op.LT: "({0} < {1})", Op.LE: "({0} <= {1})", Op.GT: "({0} > {1})", Op.GE: "({0} >= {1})",
    Op.EQ: "({0} == {1})", Op.NE: "({0} != {1})", Op.AND: "np.logical_and({0}, {1})",
    Op.OR: "np.logical_or({0}, {1})", Op.WHERE: "np.where({0}, {1}, {2})",
    Op.DOT: "np.sum({0} * {1}, axis=-1, keepdims=True)",
}


def numpy_combine_source(loop, combine: Fn, shape) -> str:
    """`combine_numpy(a, b)` over (m, d, o) states of NumPy arrays, m and d (..., 1)."""
    lines = []
    temps: dict[int, str] = {}
    uses: dict[int, int] = {}
    for e in walk(combine.outputs):
        for s in e.src:
            uses[id(s)] = uses.get(id(s), 0) + 1

    def text(e: Expr) -> str:
        if id(e) in temps:
            return temps[id(e)]
        match e.op:
            case Op.CONST:
                v = e.arg
                out = ("np.inf" if v > 0 else "-np.inf") if isinstance(v, float) and v in (
                    float("inf"), float("-inf")) else repr(v)
            case Op.VAR:
                out = e.arg.replace(".", "_")
            case Op.POW:
                out = f"({text(e.src[0])} ** {e.arg})"
            case _:
                out = _NUMPY[e.op].format(*(text(s) for s in e.src))
        if uses.get(id(e), 0) > 1 and e.op not in (Op.CONST, Op.VAR):
            name = f"t{len(temps)}"
            lines.append(f"        {name} = {out}")
            temps[id(e)] = name
            return name
        return out

    outs = [text(e) for e in combine.outputs]
    order = [f.name for f in loop.fields]
    m, d, o = shape.max_field, shape.sum_field, shape.out_field
    unpack_a = ", ".join(f"a_{n}" for n in (m, d, o))
    unpack_b = ", ".join(f"b_{n}" for n in (m, d, o))
    body = "\n".join(lines)
    results = "\n".join(f"        r_{n} = {t}" for n, t in zip(order, outs))
    return f'''
def combine_numpy(a, b):
    """The derived combine of `{loop.name}` on (m, d, o) = ({m}, {d}, {o}) states of NumPy
    arrays; m and d shaped (..., 1), o (..., D)."""
    {unpack_a} = a
    {unpack_b} = b
    with np.errstate(all="ignore"):
{body}
{results}
    return r_{m}, r_{d}, r_{o}
'''


def _machinery() -> str:
    """gpu/attention.py without its docstring and __future__ import."""
    src = Path(fa.__file__).read_text()
    import ast
    tree = ast.parse(src)
    first = tree.body[0]
    lines = src.splitlines()
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        lines = lines[first.end_lineno:]
    return "\n".join(l for l in lines if l.strip() != "from __future__ import annotations")


def emit_attention(analysis, shape, outdir, *, dim: int) -> tuple[Path, Path]:
    loop, combine = analysis.loop, analysis.combine_fn
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    lane = merge_source(loop, combine, shape)
    main_variant = fa.render_attention(lane, dim=dim, dtype="bfloat16", causal=False)
    cu = outdir / f"{loop.name}.cu"
    cu.write_text(f"// {loop.title}\n// thm3: attention kernel (bfloat16, D = {dim}, non-causal) with the derived "
                  f"combine.\n// {shape.describe()}\n\n{main_variant}")
    combine_text = "\n".join(f"    {f.name} = {to_text(e)}" for f, e in zip(loop.fields, combine.outputs))
    py = outdir / f"{loop.name}.py"
    py.write_text(f'''"""{loop.title}

Attention derived by thm3 from the loop `{loop.name}` ({loop.path}): {shape.describe()}.
The K/V tile merge and the split-K merge use the derived combine (identity (-inf, 0, 0)):
{combine_text}

attention(q, k, v, *, causal=False, scale=None, splits=None, backend="cupy") -> (out, lse)
over (batch, heads, n, D = {dim}) arrays; backend="numpy" runs the same tiles, splits and
merges on the CPU.  Generated by thm3 (gpu/emit_attention.py); needs only CuPy and NumPy,
and CuPy only on first use.
"""
from __future__ import annotations
{_machinery()}

DIM = {dim}
MERGE = r"""{lane}"""
{numpy_combine_source(loop, combine, shape)}

_attention = attention


def attention(q, k, v, *, causal: bool = False, scale: float | None = None,
              splits: int | None = None, backend: str = "cupy"):
    """softmax(scale q K^T) V and its logsumexp, merging tiles and splits with the
    combine derived from `{loop.name}`."""
    if q.shape[-1] != DIM:
        raise ValueError(f"this module was emitted for D = {{DIM}}, not {{q.shape[-1]}}")
    return _attention(q, k, v, causal=causal, scale=scale, splits=splits, backend=backend,
                      combine=combine_numpy, merge_src=MERGE)
''')
    return cu, py
