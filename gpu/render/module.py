"""The text of the emitted Python modules, made self-contained one way: the loop's own part
(its constants, its rendered CUDA sources, its functions printed as NumPy code), then the
runtime of `gpu/runtime/` copied verbatim (`runtime_source`).

- the reduction module (`reduction_module`): `reduce`, `reduce_state`, `reduce_device`,
  `reduce_rows`, `reduce_rows_state`, the inclusive `scan` and `scan_rows`, each with
  backend="numpy" where it has one; runtime `common.py` + `host.py` + `reduce.py`;
- the attention module (`attention_module`): `attention(q, k, v, ...)` with its variants
  pre-rendered; runtime `common.py` + `attention.py`.
Pure text: nothing here imports CuPy or compiles anything."""
from __future__ import annotations

import ast
from pathlib import Path
from string import Template

import numpy as np

from thm3.ir import Expr, Fn, Loop, Op, Type
from thm3.ir.printer import to_text
from thm3.ir.lines import Dialect, scalar_literals, straight_lines

from . import cuda as R
from .attention import render_variants
from .scan import ITEMS as SCAN_ITEMS, render_scan, scan_block

RUNTIME = Path(__file__).resolve().parents[1] / "runtime"
RUNTIME_IMPORT = "# thm3: runtime import"       # a runtime file's import of another one


def runtime_source(*names: str) -> str:
    """The files gpu/runtime/NAME.py, verbatim, one after the other: each less its
    docstring, its `from __future__` line and its imports of the other runtime files
    (lines marked `# thm3: runtime import`), which the concatenation makes unneeded."""
    parts = []
    for name in names:
        text = (RUNTIME / f"{name}.py").read_text()
        tree = ast.parse(text)
        lines = text.splitlines()
        first = tree.body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            lines = lines[first.end_lineno:]
        kept = [line for line in lines if line.strip() != "from __future__ import annotations"
                and RUNTIME_IMPORT not in line]
        body = "\n".join(kept).strip("\n")
        parts.append(f"# ---- gpu/runtime/{name}.py, copied verbatim by thm3 "
                     + "-" * max(4, 52 - len(name)) + f"\n\n{body}\n")
    return "\n\n".join(parts)


# --- the same loop as NumPy code ---------------------------------------------------------
# One entry per operation; operands are printed NumPy expressions.  Batched scalars are
# (runs, 1) arrays and Vec values (runs, DIM), so scalar-vector arithmetic broadcasts; max
# and min follow thm3's tables (a NaN on either side propagates, a tie gives b).
NUMPY_OPS = {
    Op.NEG: "np.negative({0})", Op.NOT: "np.logical_not({0})", Op.ABS: "np.abs({0})",
    Op.EXP: "np.exp({0})", Op.EXP2: "np.exp2({0})", Op.LOG: "np.log({0})", Op.LOG2: "np.log2({0})",
    Op.SQRT: "np.sqrt({0})", Op.ADD: "({0} + {1})", Op.SUB: "({0} - {1})", Op.MUL: "({0} * {1})",
    Op.DIV: "np.true_divide({0}, {1})", Op.MAX: "_max({0}, {1})", Op.MIN: "_min({0}, {1})",
    Op.POWN: "_pown({0}, {1})",
    Op.LT: "({0} < {1})", Op.LE: "({0} <= {1})", Op.GT: "({0} > {1})", Op.GE: "({0} >= {1})",
    Op.EQ: "({0} == {1})", Op.NE: "({0} != {1})", Op.AND: "np.logical_and({0}, {1})",
    Op.OR: "np.logical_or({0}, {1})", Op.WHERE: "np.where({0}, {1}, {2})",
    Op.DOT: "np.sum({0} * {1}, axis=-1, keepdims=True)",
}
# The attention module's states are float32 or float64 by the inputs (no DTYPE): untyped
# literals, and NumPy's own maximum and minimum (NaN propagates there too).
ATTENTION_OPS = {**NUMPY_OPS, Op.MAX: "np.maximum({0}, {1})", Op.MIN: "np.minimum({0}, {1})",
                 Op.POWN: "np.power({0}, np.asarray({1}, dtype=np.float64))"}


# An Int operation that int64 can overflow (`cuda.int_checks`, the rule the kernels follow)
# is a call of the runtime's checked helper, which raises OverflowError naming the field.
CHECKED_OPS = {Op.ADD: "_iadd({0}, {1}, {c})", Op.SUB: "_isub({0}, {1}, {c})", Op.MUL: "_imul({0}, {1}, {c})",
               Op.NEG: "_ineg({0}, {c})", Op.ABS: "_iabs({0}, {c})"}


def _numpy_literal(typed: bool):
    def literal(v, t: Type) -> str:
        if isinstance(v, float) and v != v:
            return "np.nan"
        if isinstance(v, float) and v in (float("inf"), float("-inf")):
            return "np.inf" if v > 0 else "-np.inf"
        if not typed:
            return repr(v)
        return {Type.BOOL: f"np.bool_({bool(v)})", Type.INT: f"np.int64({int(v)})"}.get(t, f"DTYPE({float(v)!r})")
    return literal


def _numpy_power(typed: bool):
    def power(base: str, n: int) -> str:
        return f"np.power(np.asarray({base}, dtype=DTYPE), {n})" if typed and n < 0 else f"({base} ** {n})"
    return power


# The reduction module's NumPy (Real literals as DTYPE(...), the emitted reduction's
# Real) and the attention module's (bare floats: its states take the inputs' dtype).
NUMPY = Dialect("numpy", NUMPY_OPS, _numpy_literal(True), _numpy_power(True), "np.mod({0}, {m})",
                CHECKED_OPS, "_ipow({0}, {n}, {c})")
NUMPY_ATTENTION = Dialect("numpy (attention)", ATTENTION_OPS, _numpy_literal(False), _numpy_power(False),
                          "np.mod({0}, {m})", CHECKED_OPS, "_ipow({0}, {n}, {c})")


# --- the step on Python scalars: the guard's fold of one lane, element by element ---------
# (gpu/runtime/host.py `_fold_span`, where a run is not covered by the proof).  Python's
# float arithmetic is IEEE double; the helpers `_s...` give what NumPy gives where Python
# raises (exp overflowing, log of 0, division by 0); for a float32 DTYPE each Real
# operation's value is rounded to single (`_r32`), float32 arithmetic for + - * / and sqrt.
# Ints are Python's, exact; the fold checks its Int fields against int64 after each step.
PYTHON_OPS = {
    Op.NEG: "(-{0})", Op.NOT: "(not {0})", Op.ABS: "abs({0})",
    Op.EXP: "_sexp({0})", Op.EXP2: "_sexp2({0})", Op.LOG: "_slog({0})", Op.LOG2: "_slog2({0})",
    Op.SQRT: "_ssqrt({0})", Op.ADD: "({0} + {1})", Op.SUB: "({0} - {1})", Op.MUL: "({0} * {1})",
    Op.DIV: "_sdiv({0}, {1})", Op.MAX: "_smax({0}, {1})", Op.MIN: "_smin({0}, {1})",
    Op.POWN: "_spown({0}, {1})",
    Op.LT: "({0} < {1})", Op.LE: "({0} <= {1})", Op.GT: "({0} > {1})", Op.GE: "({0} >= {1})",
    Op.EQ: "({0} == {1})", Op.NE: "({0} != {1})", Op.AND: "({0} and {1})", Op.OR: "({0} or {1})",
    Op.WHERE: "({1} if {0} else {2})",
}


def python_dialect(dtype: str) -> Dialect:
    """Python scalars for a module whose Real is `dtype`: literals as Python writes them
    (a Real rounded to single for float32), powers by `_spow`, Reals rounded by `_r32`
    for float32."""
    single = dtype == "float32"
    plain = scalar_literals("math.nan", "math.inf")

    def literal(v, t: Type) -> str:
        if t is Type.REAL and single:
            v = float(np.float32(float(v)))
        return plain(v, t)
    return Dialect(f"python ({dtype})", PYTHON_OPS, literal, lambda base, n: f"_spow({base}, {n})",
                   "({0} % {m})", rounded="_r32({0})" if single else "")


def python_left(loop: Loop, dtype: str) -> str:
    """`_left_py`, left on Python scalars (None where a Vec takes part: one lane of NumPy
    then, `_left` itself)."""
    if any(x.type is Type.VEC for x in loop.fields + loop.elements + loop.params):
        return "_left_py = None\n"
    names = {f"acc.{f.name}": f"acc_{f.name}" for f in loop.fields}
    names.update({p.name: f"x_{p.name}" for p in loop.elements})
    names.update({p.name: f"p_{p.name}" for p in loop.params})
    lines, outs, _ = straight_lines(loop.left.outputs, names, python_dialect(dtype), indent="    ")
    return (f"def _left_py({', '.join(names.values())}):\n"
            f"    \"\"\"left on Python scalars: the guard's fold of one lane\"\"\"\n"
            + "".join(line + "\n" for line in lines) + f"    return ({', '.join(outs)},)\n")


def numpy_lines(outputs, names: dict[str, str], *, dialect: Dialect = NUMPY,
                indent: str = "        ", checks: dict[Expr, int] | None = None,
                where: str = "") -> tuple[list[str], list[str]]:
    """(lines, outputs): `outputs` printed with NumPy (`thm3.ir.lines`), `names` mapping
    the IR variables to Python names; a subterm used more than once becomes a local
    `tK = ...` line.  `checks` (node -> field code): those Int operations call the
    checked helpers, with `where` ("left", "the combine") for their message."""
    checks = checks or {}
    lines, outs, _ = straight_lines(outputs, names, dialect, indent=indent, checks=checks,
                                    context=lambda e: f"{checks[e]}, {where!r}")
    return lines, outs


def numpy_function(name: str, fn: Fn, names: dict[str, str], doc: str, checked=None) -> str:
    """`def name(<names' values>): return (outputs...)` printing `fn`'s outputs with NumPy;
    `names` maps the IR variables to the Python parameter names, in order.  With `checked`
    (the loop, its combine, and "left" or "combine"), the Int operations that int64 can
    overflow are checked, as in the kernels."""
    checks = R.int_checks(fn.outputs, *checked) if checked else None
    where = {"left": "left", "combine": "the combine"}[checked[2]] if checked else ""
    lines, outs = numpy_lines(fn.outputs, names, checks=checks, where=where)
    body = "\n".join(lines)
    args = ", ".join(names.values())
    return (f"def {name}({args}):\n    \"\"\"{doc}\"\"\"\n    with np.errstate(all=\"ignore\"):\n"
            + (body + "\n" if body else "") + f"        return ({', '.join(outs)},)\n")


def numpy_source(loop: Loop, combine: Fn) -> str:
    """The module's NumPy functions: `_left`, `_combine`, `_result` (None without one)."""
    fields = [f.name for f in loop.fields]
    left_names = {f"acc.{f}": f"acc_{f}" for f in fields}
    left_names.update({p.name: f"x_{p.name}" for p in loop.elements})
    left_names.update({p.name: f"p_{p.name}" for p in loop.params})
    combine_names = {f"{side}.{f}": f"{side}_{f}" for side in "ab" for f in fields}
    combine_names.update({p.name: f"p_{p.name}" for p in loop.params})
    parts = [numpy_function("_left", loop.left, left_names, "left: one element into the state",
                            (loop, combine, "left")),
             numpy_function("_combine", combine, combine_names, "the combine, a the earlier part",
                            (loop, combine, "combine"))]
    if loop.result is not None:
        result_names = {f"acc.{f}": f"acc_{f}" for f in fields}
        result_names.update({p.name: f"p_{p.name}" for p in loop.params})
        parts.append(numpy_function("_result", loop.result, result_names, "the answer from a state"))
    else:
        parts.append("_result = None\n")
    return "\n\n".join(parts)


def numpy_combine_source(loop, combine: Fn, shape) -> str:
    """`combine_numpy(a, b)` over (m, d, o) states of NumPy arrays, m and d (..., 1): the
    attention module's combine for backend="numpy"."""
    names = {f"{side}.{f.name}": f"{side}_{f.name}" for side in "ab" for f in loop.fields}
    lines, outs = numpy_lines(combine.outputs, names, dialect=NUMPY_ATTENTION)
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


def python_value(v) -> str:
    """A field's default as Python source (infinities and NaN by float())."""
    if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
        return f"float({str(v)!r})"
    return repr(v)


def python_string(text: str) -> str:
    """`text` as a Python string literal (raw and triple-quoted where it can be)."""
    if "'''" not in text and not text.endswith("\\"):
        return "r'''" + text + "'''"
    return repr(text)


# --- the reduction module -------------------------------------------------------------------

_REDUCTION = Template('''"""${title}

thm3 kernels for the loop `${name}`${path}; Real is ${dtype}${dim_note}.
The reduction keeps list order: blocked left folds, then combines of neighbours with
the earlier part on the left, at every level (warp, block, grid).

combine(a, b), with identity (${identity}):
${combine}

reduce(${signature}) -> ${returns}
reduce_state(...) -> the final State as a tuple (${field_names})
    (both take backend="numpy" to run the same order of combines on the CPU, without CuPy)
reduce_device(...) -> the outputs left on the device, not waited for (for timing)
reduce_rows(...) / reduce_rows_state(...): one reduction per row of 2-D inputs
scan(...) / scan_rows(...): every prefix state, in list order (scan also with backend="numpy")

Generated by thm3 (gpu/render/module.py): this loop's constants, sources and NumPy
functions, then thm3's runtime (gpu/runtime/common.py, host.py, reduce.py) copied
verbatim.  Needs only CuPy and NumPy; CuPy is imported on first use, so this module
imports on a machine without a GPU.
"""
from __future__ import annotations

import numpy as np

NAME = ${name_repr}
DTYPE = np.${dtype}
DIM = ${dim}
# The State: (name, type) in order; the elements, one array each in order (an Index is the
# position instead); the loop parameters, passed by keyword; the type of reduce's answer
# (None: the state itself; a tuple of types: several values, named by RESULT_NAMES in a
# NamedTuple RESULT_CLASS where `result` returns one).
FIELDS = ${fields}
ELEMENTS = ${elements}
PARAMS = ${params}
RESULT = ${result}
RESULT_NAMES = ${result_names}
RESULT_CLASS = ${result_class}
BLOCK = ${block}  # threads per block
ITEMS = ${items}  # consecutive elements per thread in a warp tile
STATE_BYTES = ${state_bytes}  # sizeof(State) in the source
DEFAULTS = ${defaults}
SCAN_BLOCK = ${scan_block}  # threads per block of the scan kernels
SCAN_TILE = ${scan_tile}  # elements per tile: SCAN_BLOCK * ${scan_items}

SOURCE = ${source}

SCAN_SOURCE = ${scan_source}

# --- the loop as NumPy code, for backend="numpy" ---------------------------------------

${numpy_functions}

''')

_REDUCTION_DOCS = Template('''

# ---- this loop's docstrings ---------------------------------------------------------------
reduce_state.__doc__ = """The final State of `${name}` over the arrays (${signature}), as a tuple of
NumPy values (${field_names}), computed in list order on the GPU (backend="cupy") or, in the
same order of combines, on the CPU (backend="numpy", no CuPy needed)."""

reduce.__doc__ = """`${name}` (${title_short}) over the arrays: ${returns}; on the GPU, or on the
CPU with backend="numpy".

Arrays, in order: ${array_doc}.${param_doc}
combine(a, b):
${combine_doc}"""

reduce_rows_state.__doc__ = """One reduction of `${name}` per row of (rows, n) arrays ((rows, n, DIM)
for a Vec): the final States as a tuple of CuPy arrays, one per field (${field_names}), each of
length rows."""

reduce_rows.__doc__ = """One reduction of `${name}` per row of (rows, n) arrays ((rows, n, DIM) for
a Vec): a CuPy array of the rows' results${rows_returns}."""

scan.__doc__ = """Every prefix State of `${name}` (inclusive, in list order): a tuple of CuPy
arrays, one per field (${field_names}), of length n (n x DIM for a Vec); NumPy arrays computed
on the CPU with backend="numpy" (no CuPy needed).  On the GPU, three launches: the blocks'
states, their exclusive prefixes, each block's tiles scanned again."""
''')


def reduction_module(loop: Loop, combine: Fn, source: str, *, dtype: str = "float32",
                     dim: int | None = None) -> str:
    """The text of the Python module that runs `source` (the output of `cuda.render`) and
    the loop's scan."""
    spec = R.make_spec(loop, combine, dtype, dim)
    data = [p for p in loop.elements if not p.index]
    fields = tuple((f.name, f.type.value) for f in loop.fields)
    elements = tuple((p.name, "Index" if p.index else p.type.value) for p in loop.elements)
    params = tuple((p.name, p.type.value) for p in loop.params)
    several = loop.result is not None and loop.result_kind != "value"
    result = (tuple(t.value for t in loop.result_types) if several
              else spec.result_type.value if spec.result_type else None)
    from thm3.report import with_field_names     # fields another field reads go by name
    combine_lines = [f"    {f.name} = {to_text(e)}" for f, e in zip(loop.fields, with_field_names(loop, combine.outputs))]
    signature = ", ".join([p.name for p in data] or ["n"]) + "".join(f", {p.name}=..." for p in loop.params)
    returns = (f"the result, a {loop.result_class} ({', '.join(loop.result_names)})" if loop.result_kind == "namedtuple"
               else f"the result, a tuple ({', '.join(result)})" if several
               else f"the result ({result})" if result else f"the final State ({', '.join(f.name for f in loop.fields)})")
    identity = ", ".join(f"{f.name}={str(f.default) + ' (every lane)' if f.type is Type.VEC else f.default}" for f in loop.fields)
    array_doc = ", ".join(f"{p.name} ({'(n, DIM)' if p.type is Type.VEC else '(n,)'} {p.type.value})"
                          for p in data) or "none: pass n, the length (Index elements only)"
    param_doc = ("\n    Loop parameters (keywords): "
                 + ", ".join(f"{p.name} ({p.type.value})" for p in loop.params) + ".") if loop.params else ""
    block = scan_block(spec)
    holes = dict(
        title=loop.title.replace('"""', "'''"),
        title_short=loop.title.split(":")[0].replace('"""', "'''"),
        name=loop.name, name_repr=repr(loop.name),
        path=f" ({Path(loop.path).name})" if loop.path else "",
        dtype=dtype, dim=repr(spec.dim), dim_note=f", Vec length DIM = {spec.dim}" if spec.dim else "",
        identity=identity, combine="\n".join(combine_lines),
        combine_doc="\n".join("    " + line for line in combine_lines),
        signature=signature, returns=returns,
        rows_returns=(" (a tuple of them for a result of several values)" if several
                      else "" if result else " (no result: a tuple of per-field arrays)"),
        field_names=", ".join(f.name for f in loop.fields),
        fields=repr(fields), elements=repr(elements), params=repr(params), result=repr(result),
        result_names=repr(loop.result_names or None), result_class=repr(loop.result_class or None),
        block=R.BLOCK, items=spec.items, state_bytes=R.state_bytes(spec),
        scan_block=block, scan_tile=block * SCAN_ITEMS, scan_items=SCAN_ITEMS,
        array_doc=array_doc, param_doc=param_doc,
        source=python_string(source),
        scan_source=python_string(render_scan(loop, combine, dtype=dtype, dim=dim)),
        numpy_functions=numpy_source(loop, combine) + "\n\n" + python_left(loop, dtype),
        defaults="(" + "".join(f"{python_value(float(f.default) if f.type is Type.VEC else f.default)}, "
                               for f in loop.fields) + ")",
    )
    return (_REDUCTION.substitute(holes) + runtime_source("common", "host", "reduce")
            + _REDUCTION_DOCS.substitute(holes))


# --- the attention module -------------------------------------------------------------------

def attention_module(loop: Loop, combine: Fn, shape, merge_src: str, *, dim: int) -> str:
    """The text of the attention module for `loop` (recognised as attention, `shape`): its
    variants for head dimension `dim` rendered with `merge_src`, and the NumPy combine."""
    combine_text = "\n".join(f"    {f.name} = {to_text(e)}" for f, e in zip(loop.fields, combine.outputs))
    variants = render_variants(merge_src, dim=dim)
    sources = "\n".join(f"    {key!r}: {python_string(text)}," for key, text in variants.items())
    return f'''"""{loop.title}

Attention derived by thm3 from the loop `{loop.name}` ({loop.path}): {shape.describe()}.
The K/V tile merge and the split-K merge use the derived combine (identity (-inf, 0, 0)):
{combine_text}

attention(q, k, v, *, causal=False, scale=None, splits=None, backend="cupy") -> (out, lse)
over (batch, heads, n, D = {dim}) arrays; backend="numpy" runs the same tiles, splits and
merges on the CPU.  Generated by thm3 (gpu/render/module.py): thm3's runtime
(gpu/runtime/common.py, gpu/runtime/attention.py) copied verbatim, then this loop's
combine and kernel variants.  Needs only CuPy and NumPy, and CuPy only on first use.
"""
from __future__ import annotations

{runtime_source("common", "attention")}

# ---- this loop's part ------------------------------------------------------------------------

DIM = {dim}
MERGE = r"""{merge_src}"""
# (dtype, causal, num_warps) -> the CUDA source of that variant, rendered with MERGE
SOURCES = {{
{sources}
}}
{numpy_combine_source(loop, combine, shape)}

def _source(dtype: str, causal: bool, num_warps: int) -> str:
    try:
        return SOURCES[(dtype, causal, num_warps)]
    except KeyError:
        raise ValueError(f"this module carries no {{dtype}} variant with {{num_warps}} warps") from None


_attention = attention


def attention(q, k, v, *, causal: bool = False, scale: float | None = None,
              splits: int | None = None, backend: str = "cupy"):
    """softmax(scale q K^T) V and its logsumexp, merging tiles and splits with the
    combine derived from `{loop.name}`."""
    if q.shape[-1] != DIM:
        raise ValueError(f"this module was emitted for D = {{DIM}}, not {{q.shape[-1]}}")
    return _attention(q, k, v, causal=causal, scale=scale, splits=splits, backend=backend,
                      combine=combine_numpy, sources=_source)
'''
