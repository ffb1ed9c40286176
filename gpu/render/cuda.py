"""CUDA C for a loop and its combine: the loop's `__host__ __device__` functions and one
kernel skeleton with named holes (`templates/reduce.cu`) for the in-order reduction, both
printed with `c_printer.py` (the table `CUDA`, keyed by `Op`, and `Printer`).  Pure text:
nothing here compiles or runs anything (`gpu/runtime/nvrtc.py` compiles, the module that
`gpu/render/module.py` writes runs the kernels).

The emitted source needs no CUDA header, so NVRTC compiles it as it is, and a host C++
compiler compiles its functions (the kernels aside) for testing against NumPy."""
from __future__ import annotations

from dataclasses import dataclass

from thm3.ir import Expr, Fn, Loop, Op, Type, walk
from thm3.ir.printer import to_text

from . import cuda_template, cuda_text
from .c_printer import (BLOCK, CUDA, DTYPES, Printer, Spec, c_member, c_name, c_signature, indent,
                        make_spec, state_bytes, state_layout)


# --- the loop's functions ----------------------------------------------------------------

_HELPERS = cuda_text("helpers.cu")


def _header(spec: Spec) -> str:
    loop = spec.loop
    lines = [f"// thm3 kernels for `{loop.name}`: {loop.title}",
             f"// Rendered by thm3 (gpu/render/cuda.py); Real is {spec.real.ctype}"
             + (f", Vec length THM3_DIM = {spec.dim}" if spec.dim else "") + ".",
             "// combine(a, b), with identity "
             + ", ".join(f"{f.name} = {_default_text(f)}" for f in loop.fields) + ":"]
    lines += [f"//   {f.name} = {to_text(e)}" for f, e in zip(loop.fields, spec.combine.outputs)]
    return "\n".join(lines)


def _default_text(f) -> str:
    if f.type is Type.VEC:
        return f"{f.default} (every lane)"
    return str(f.default)


def render_state(spec: Spec) -> str:
    members = []
    for name, ctype, count, _ in state_layout(spec):
        comment = next(f.comment for f in spec.loop.fields if f.name == name)
        decl = f"{ctype} {c_member(name)}" + ("[THM3_DIM]" if _is_vec(spec, name) else "") + ";"
        members.append(f"    {decl:<28}" + (f"// {comment}" if comment else "").rstrip())
    dim = f"#define THM3_DIM {spec.dim}\n" if spec.dim else ""
    return (f"{dim}// The loop's state: its fields in declaration order.\n"
            "struct State {\n" + "\n".join(m.rstrip() for m in members) + "\n};\n"
            f'static_assert(sizeof(State) == {state_bytes(spec)}, "State layout");')


def _is_vec(spec: Spec, field: str) -> bool:
    return next(f.type for f in spec.loop.fields if f.name == field) is Type.VEC


def _function(signature: str, lines: list[str], comment: str) -> str:
    return f"// {comment}\n{signature} {{\n{indent(lines)}\n}}"


def render_identity(spec: Spec) -> str:
    p = Printer(spec, {})
    lines = ["State r;"]
    for f in spec.loop.fields:
        value = float(f.default) if f.type is Type.VEC else f.default
        if f.type is Type.VEC:
            lines.append(f"for (int d = 0; d < THM3_DIM; ++d) r.{c_member(f.name)}[d] = {p.literal(value, Type.REAL)};")
        else:
            lines.append(f"r.{c_member(f.name)} = {p.literal(value, f.type)};")
    lines.append("return r;")
    return _function("__host__ __device__ __forceinline__ State thm3_identity()", lines,
                     "identity: h of the empty list, the fields' defaults")


def _state_names(spec: Spec, prefix: str, var: str) -> dict[str, str]:
    return {f"{prefix}.{f.name}": f"{var}.{c_member(f.name)}" for f in spec.loop.fields}


def _body(spec: Spec, fn: Fn, names: dict[str, str], targets: list[tuple[str, Type]],
          fast_exp: bool = False, checked: str | None = None) -> list[str]:
    p = Printer(spec, names, fast_exp=fast_exp)
    outputs = fn.outputs
    if checked:                             # "left" or "combine": its Int operations checked
        p.int_checks = int_checks(outputs, spec.loop, spec.combine, checked)
    for (target, t), e in zip(targets, p.prepare(outputs)):
        p.assign(target, e, t)
    return p.lines


# -- Int arithmetic in int64, checked (the helpers; `c_printer.py` prints the calls) ----

def int_checks(outputs, loop: Loop, combine: Fn, side: str) -> dict[Expr, int]:
    """node -> 1 + the index of the first field whose output reads it, for each Int
    operation that int64 can overflow (`thm3.analysis.int_bounds.overflow_checks`)."""
    from thm3.analysis.int_bounds import overflow_checks
    return overflow_checks(outputs, loop, combine, side)


INT_CHECKS = cuda_text("int_checks.cu")


def uses_int_checks(loop: Loop, combine: Fn) -> bool:
    """Whether the rendered left or combine holds a checked Int operation."""
    return bool(int_checks(loop.left.outputs, loop, combine, "left")
                or int_checks(combine.outputs, loop, combine, "combine"))


# -- where the proof stops ----------------------------------------------------------------
# The combine is proved equal to the fold over the reals: an element that is NaN or
# infinite, or a state whose Real field holds NaN or an infinity other than its identity
# value, is outside the proof (log-sum-exp's run that starts at -inf is (-inf, NaN) from
# the identity where the loop's own state stays finite).  left and the combine store 1 in
# the device global `thm3_uncovered` where they meet one; the launcher reads it after the
# launch and computes that list again on the host in list order (the module's NumPy path,
# which folds a run the proof does not cover from the state carried into it).

COVER = """#ifndef THM3_COVER
#define THM3_COVER
// 1 where left or the combine met an element or a state outside the proof over the reals
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
__device__ int thm3_uncovered = 0;
#else
static int thm3_uncovered = 0;
#endif
// finite (a double by its high word's exponent bits: an integer test, no FP64 compare)
__host__ __device__ __forceinline__ bool thm3_finite(float v) { return isfinite(v); }
__host__ __device__ __forceinline__ bool thm3_finite(double v) {
#ifdef __CUDA_ARCH__
    return (__double2hiint(v) & 0x7ff00000) != 0x7ff00000;
#else
    return isfinite(v);
#endif
}
#endif"""


def guarded(spec: Spec) -> tuple[bool, bool]:
    """(the state has a Real or Vec field: the combine checks its operands and value; an
    element is a Real or Vec: left checks it)."""
    real = (Type.REAL, Type.VEC)
    return (any(f.type in real for f in spec.loop.fields),
            any(p.type in real for p in spec.data_elements))


def render_covered(spec: Spec) -> str:
    """`thm3_covered(s)`: every Real field of s finite or at its identity value."""
    p = Printer(spec, {})
    lines = ["bool ok = true;                 // & without short cuts: predicates, no branches"]
    for f in spec.loop.fields:
        if f.type not in (Type.REAL, Type.VEC):
            continue
        default = float(f.default)
        m = c_member(f.name)
        keep = "" if default == default and abs(default) != float("inf") else f" | (v == {p.literal(default, Type.REAL)})"
        if f.type is Type.VEC:
            lines.append(f"for (int d = 0; d < THM3_DIM; ++d) {{ const {spec.real.ctype} v = s.{m}[d]; "
                         f"ok &= thm3_finite(v){keep}; }}")
        else:
            lines.append(f"{{ const {spec.real.ctype} v = s.{m}; ok &= thm3_finite(v){keep}; }}")
    lines.append("return ok;")
    return _function("__host__ __device__ __forceinline__ bool thm3_covered(const State& s)", lines,
                     "covered: every Real field finite or at its identity value (the proof's reals)")


def _element_checks(spec: Spec) -> list[str]:
    lines = []
    for p in spec.data_elements:
        name = c_name(p.name)
        if p.type is Type.VEC:
            lines.append(f"for (int d = 0; d < THM3_DIM; ++d) if (!thm3_finite({name}[d])) thm3_uncovered = 1;")
        elif p.type is Type.REAL:
            lines.append(f"if (!thm3_finite({name})) thm3_uncovered = 1;     // outside the proof")
    return lines


def render_left(spec: Spec) -> str:
    loop = spec.loop
    names = _state_names(spec, "acc", "acc")
    args = ["const State& acc"]
    for p in loop.elements:
        names[p.name] = c_name(p.name)
        args.append(f"const {spec.real.ctype}* {c_name(p.name)}" if p.type is Type.VEC
                    else f"{spec.ctype(p.type)} {c_name(p.name)}")
    names.update({p.name: c_name(p.name) for p in loop.params})
    targets = [(f"r.{c_member(f.name)}", f.type) for f in loop.fields]
    lines = (["State r;"] + _body(spec, loop.left, names, targets, spec.exp_nonpositive, checked="left")
             + _element_checks(spec) + ["return r;"])
    sig = c_signature("__host__ __device__ __forceinline__ State thm3_left", args + spec.param_decls())
    return _function(sig, lines, "left: one step of the sequential fold")


def render_combine(spec: Spec) -> str:
    names = {**_state_names(spec, "a", "a"), **_state_names(spec, "b", "b")}
    names.update({p.name: c_name(p.name) for p in spec.loop.params})
    targets = [(f"r.{c_member(f.name)}", f.type) for f in spec.loop.fields]
    lines = ["State r;"] + _body(spec, spec.combine, names, targets, spec.exp_nonpositive, checked="combine")
    if guarded(spec)[0]:
        lines.append("if (!(thm3_covered(a) && thm3_covered(b) && thm3_covered(r))) thm3_uncovered = 1;")
    lines.append("return r;")
    args = ["const State& a", "const State& b"] + spec.param_decls()
    return _function(c_signature("__host__ __device__ __forceinline__ State thm3_combine", args),
                     lines, "combine: h(xs + ys) from a = h(xs) and b = h(ys); a is the earlier part")


def render_result(spec: Spec) -> str:
    if spec.loop.result is None:
        return ""
    names = _state_names(spec, "acc", "acc")
    names.update({p.name: c_name(p.name) for p in spec.loop.params})
    types = [t for _, t in spec.result_outputs]
    several = spec.loop.result_kind != "value"
    outs = [f"out{k}" for k in range(len(types))] if several else ["out"]
    targets = [(o if t is Type.VEC else f"{o}[0]", t) for o, t in zip(outs, types)]
    lines = _body(spec, spec.loop.result, names, targets)
    args = ["const State& acc"] + spec.param_decls() + [f"{spec.ctype(t)}* {o}" for o, t in zip(outs, types)]
    note = (f" ({len(types)} values, one output each)" if several
            else " (THM3_DIM values)" if types == [Type.VEC] else "")
    return _function(c_signature("__host__ __device__ __forceinline__ void thm3_result", args), lines,
                     "result: the loop's answer from the final state" + note)


def render_functions(loop: Loop, combine: Fn, *, dtype: str = "float32", dim: int | None = None,
                     exp_nonpositive: bool = False) -> str:
    """The helpers, `struct State` and the `__host__ __device__` functions thm3_identity,
    thm3_left, thm3_combine and (for a loop with `result`) thm3_result: the part of the
    source that a host compiler builds too.  `exp_nonpositive`: the stability certificate
    proved every exp argument of left and the combine <= 0 (their float32 exps then use
    ex2.approx alone; the result's keep exp2f)."""
    spec = make_spec(loop, combine, dtype, dim, exp_nonpositive)
    checks = INT_CHECKS if uses_int_checks(loop, combine) else ""
    states, elements = guarded(spec)
    parts = [_header(spec), _HELPERS, checks, COVER if states or elements else "", render_state(spec),
             render_identity(spec), render_covered(spec) if states else "",
             render_left(spec), render_combine(spec), render_result(spec)]
    return "\n\n".join(p for p in parts if p) + "\n"


def render_combine_lane(loop: Loop, combine: Fn, dtype: str = "float32", *,
                        name: str = "thm3_combine_lane") -> str:
    """The combine for one lane of the Vec fields:
    `name(a_f1, ..., b_f1, ..., <scalar loop parameters the combine reads>, r_f1&, ...)`,
    fields in declaration order, a Vec field as one lane's scalar.  Raises ValueError for a
    combine that mixes lanes (dot) or reads a Vec loop parameter.  Helpers and the function
    are guarded by #ifndef, so several renders concatenate."""
    spec = make_spec(loop, combine, dtype, dim=1)
    used = {e.arg for e in walk(combine.outputs) if e.op is Op.VAR}
    params = [p for p in loop.params if p.name in used]
    if any(p.type is Type.VEC for p in params):
        raise ValueError(f"{loop.name}: the combine reads a Vec loop parameter; no lane-wise form")
    names = {f"{side}.{f.name}": c_name(f"{side}_{f.name}") for side in "ab" for f in loop.fields}
    names.update({p.name: c_name(p.name) for p in params})
    printer = Printer(spec, names, lanes=True)
    for f, e in zip(loop.fields, printer.prepare(combine.outputs)):
        printer.assign(c_name(f"r_{f.name}"), e, f.type)
    args = [f"{spec.ctype(f.type)} {names[f'{side}.{f.name}']}" for side in "ab" for f in loop.fields]
    args += [f"{spec.ctype(p.type)} {c_name(p.name)}" for p in params]
    args += [f"{spec.ctype(f.type)}& {c_name(f'r_{f.name}')}" for f in loop.fields]
    guard = f"THM3_LANE_{name.upper()}_{dtype.upper()}"
    sig = c_signature(f"__host__ __device__ __forceinline__ void {name}", args)
    comment = (f"{name}: the combine of `{loop.name}` for one lane of its Vec fields "
               f"({spec.real.ctype}); a is the earlier part")
    return (f"{_HELPERS}\n\n#ifndef {guard}\n#define {guard}\n"
            f"{_function(sig, printer.lines, comment)}\n#endif\n")


def render_lane_struct_function(loop: Loop, combine: Fn, name: str, struct: str,
                                inputs: dict[str, str], outputs: list[tuple[str, Expr]],
                                comment: str, dtype: str = "float32") -> str:
    """`struct name(inputs...)`: each output expression (of the combine's variables, Vec
    values as one lane's scalar) stored in member `member` of a `struct` value, all printed
    by one Printer, so a subterm that several outputs share is computed once.  `inputs`
    maps the variables read (e.g. "a.m") to C parameter names; reading any other variable
    raises ValueError.  Helpers and the function are guarded, like `render_combine_lane`."""
    spec = make_spec(loop, combine, dtype, dim=1)
    exprs = [e for _, e in outputs]
    unknown = {e.arg for e in walk(exprs) if e.op is Op.VAR} - set(inputs)
    if unknown:
        raise ValueError(f"{loop.name}: {name} would read {sorted(unknown)}, which it is not given")
    printer = Printer(spec, dict(inputs), lanes=True)
    printer.lines.append(f"{struct} r;")
    for (member, _), e in zip(outputs, printer.prepare(exprs)):
        printer.assign(f"r.{member}", e, Type.REAL)
    printer.lines.append("return r;")
    sig = c_signature(f"__host__ __device__ __forceinline__ {struct} {name}",
                     [f"{spec.real.ctype} {c}" for c in inputs.values()])
    guard = f"THM3_STRUCT_{name.upper()}_{dtype.upper()}"
    return (f"{_HELPERS}\n\n#ifndef {guard}\n#define {guard}\n"
            f"{_function(sig, printer.lines, comment)}\n#endif\n")


# --- the kernels ----------------------------------------------------------------------------

_KERNELS = cuda_template("reduce.cu")


def _shuffle_lines(spec: Spec) -> list[str]:
    lines = []
    for f in spec.loop.fields:
        m = c_member(f.name)
        match f.type:
            case Type.VEC:
                lines.append(f"for (int d = 0; d < THM3_DIM; ++d) "
                             f"r.{m}[d] = __shfl_down_sync(0xffffffffu, s.{m}[d], offset);")
            case Type.BOOL:
                lines.append(f"r.{m} = __shfl_down_sync(0xffffffffu, (int)s.{m}, offset) != 0;")
            case _:
                lines.append(f"r.{m} = __shfl_down_sync(0xffffffffu, s.{m}, offset);")
    return lines


@dataclass(frozen=True)
class KernelArg:
    """One argument of a kernel, for the kernels' signatures and for their launchers."""
    name: str           # the C name
    ctype: str          # the value type (a pointer's element type)
    pointer: bool
    kind: str           # "array" | "n" | "param" | "partial" | "count" | "output"
    of: str = ""        # the element, loop parameter or field it holds ("result" for the result)
    vec: bool = False   # THM3_DIM values per element / row

    def decl(self, restrict: bool = True) -> str:
        if not self.pointer:
            return f"{self.ctype} {self.name}"
        const = "const " if self.kind in ("array", "param") else ""
        return f"{const}{self.ctype}* {'__restrict__ ' if restrict else ''}{self.name}"


def kernel_args(spec: Spec, kernel: str) -> list[KernelArg]:
    """The arguments of "thm3_reduce_blocks", "thm3_reduce_partials" or "thm3_reduce_rows",
    in order: arrays (one per element that is not an Index), n, the loop parameters (a Vec
    one as a pointer); or the partials and their count; then the outputs (one array per
    field, and one for each value of the result)."""
    arrays = [KernelArg(f"in_{p.name}", spec.ctype(p.type), True, "array", p.name, p.type is Type.VEC)
              for p in spec.data_elements]
    params = [KernelArg(c_name(p.name), spec.ctype(p.type), p.type is Type.VEC, "param", p.name,
                        p.type is Type.VEC) for p in spec.loop.params]
    outputs = [KernelArg(f"out_{f.name}", spec.ctype(f.type), True, "output", f.name, f.type is Type.VEC)
               for f in spec.loop.fields]
    for name, t in spec.result_outputs:
        outputs.append(KernelArg(name, spec.ctype(t), True, "output", name.removeprefix("out_"), t is Type.VEC))
    n = KernelArg("n", "long long", False, "n")
    match kernel:
        case "thm3_reduce_blocks":
            return arrays + [n] + params + [KernelArg("partial", "State", True, "partial")]
        case "thm3_reduce_partials":
            return ([KernelArg("partial", "State", True, "partial"), KernelArg("count", "int", False, "count")]
                    + params + outputs)
        case "thm3_reduce_rows":
            return arrays + [n] + params + outputs
        case _:
            raise ValueError(f"no kernel {kernel!r}")


def output_names(spec: Spec) -> list[str]:
    """The kernels' output arrays: one per field, then the result (if the loop has one)."""
    return [a.name for a in kernel_args(spec, "thm3_reduce_rows") if a.kind == "output"]


def _store_lines(spec: Spec) -> list[str]:
    lines = []
    for f in spec.loop.fields:
        m = c_member(f.name)
        if f.type is Type.VEC:
            lines.append(f"for (int d = 0; d < THM3_DIM; ++d) out_{f.name}[row * THM3_DIM + d] = s.{m}[d];")
        else:
            lines.append(f"out_{f.name}[row] = s.{m};")
    if spec.result_outputs:
        outs = [f"{name} + row{' * THM3_DIM' if t is Type.VEC else ''}" for name, t in spec.result_outputs]
        lines.append(f"thm3_result(s{_lead(spec.param_names())}{_lead(outs)});")
    return lines


def _lead(items: list[str]) -> str:
    """", a, b" for a non-empty list: arguments that follow others."""
    return "".join(f", {x}" for x in items)


def _left_call(spec: Spec, element_of) -> str:
    """The arguments of thm3_left for one element, `element_of(p)` printing each."""
    return ", ".join(["s"] + [element_of(p) for p in spec.loop.elements])


def render_kernels(spec: Spec) -> str:
    real = spec.real.ctype
    arrays = spec.data_elements
    range_decls = [a.decl() for a in kernel_args(spec, "thm3_reduce_rows")
                   if a.kind == "array"] or ["const void*"]

    def offset(p, at):
        return f"in_{p.name} + {at}" + (" * THM3_DIM" if p.type is Type.VEC else "")

    def scalar_element(p):
        if p.index:
            return "first + i"
        return f"in_{p.name} + i * THM3_DIM" if p.type is Type.VEC else f"in_{p.name}[i]"

    def vector_element(p):
        return "first + i0 + k" if p.index else f"v_{p.name}[k / THM3_VECTOR].v[k % THM3_VECTOR]"

    if spec.vector_loads:
        fold_full = ["// a full run: 16-byte loads, all issued before the first step"]
        fold_full += [f"thm3_vec v_{p.name}[THM3_ITEMS / THM3_VECTOR];" for p in arrays]
        fold_full += ["#pragma unroll", "for (int v = 0; v < THM3_ITEMS / THM3_VECTOR; ++v) {"]
        fold_full += [f"    v_{p.name}[v] = reinterpret_cast<const thm3_vec*>(in_{p.name} + i0)[v];"
                      for p in arrays]
        fold_full += ["}", "#pragma unroll",
                      f"for (int k = 0; k < THM3_ITEMS; ++k) s = thm3_left({_left_call(spec, vector_element)}"
                      f"{_lead(spec.param_names())});"]
        aligned = " && ".join(f"thm3_aligned(in_{p.name})" for p in arrays)
    else:
        fold_full = ["// a full run (these arrays take no 16-byte loads)",
                     "for (int k = 0; k < THM3_ITEMS; ++k) {", "    const long long i = i0 + k;",
                     f"    s = thm3_left({_left_call(spec, scalar_element)}{_lead(spec.param_names())});", "}"]
        aligned = "true"
    names = ", ".join(f"in_{p.name}" for p in arrays) or "nullptr"
    params = _lead(spec.param_names())
    if spec.vector_loads:
        heads = [f"thm3_head(in_{p.name})" for p in arrays]
        peel = [f"int head = {heads[0]};"]
        peel += [f"if ({h} != head) head = 0;           // different offsets: no common boundary"
                 for h in heads[1:]]
        shifted = ", ".join(offset(p, "peeled") for p in arrays)
        peel += ["const long long peeled = head < count ? head : count;",
                 "State s = thm3_identity();",
                 "if (threadIdx.x == 0)",
                 f"    for (long long i = 0; i < peeled; ++i) s = thm3_left({_left_call(spec, scalar_element)}{params});",
                 f"const State rest = thm3_fold_tiles({shifted}, count - peeled, first + peeled{params});",
                 f"return peeled > 0 ? thm3_combine(s, rest{params}) : rest;"]
    else:
        peel = [f"return thm3_fold_tiles({names}, count, first{params});"]
    param_decls = [a.decl() for a in kernel_args(spec, "thm3_reduce_rows") if a.kind == "param"]
    out_decls = [a.decl() for a in kernel_args(spec, "thm3_reduce_rows") if a.kind == "output"]
    outputs = output_names(spec)

    def signature(kernel):
        return c_signature(kernel, [a.decl() if a.kind != "partial" or kernel == "thm3_reduce_blocks"
                                   else "const State* __restrict__ partial"
                                   for a in kernel_args(spec, kernel)])

    holes = dict(
        block=BLOCK, items=spec.items, vector=spec.vector, real=real, min_blocks=spec.min_blocks,
        shuffle=indent(_shuffle_lines(spec)),
        params_decl=_lead(param_decls), params=_lead(spec.param_names()),
        outputs=_lead(outputs),
        aligned=aligned,
        fold_full=indent(fold_full, 12),
        left_scalar=_left_call(spec, scalar_element),
        store=indent(_store_lines(spec)),
        sig_fold=c_signature("__device__ __forceinline__ State thm3_fold_range",
                            range_decls + ["long long count", "long long first"] + param_decls),
        sig_tiles=c_signature("__device__ __forceinline__ State thm3_fold_tiles",
                             range_decls + ["long long count", "long long first"] + param_decls),
        peel=indent(peel),
        sig_store=c_signature("__device__ __forceinline__ void thm3_store",
                             ["const State& s", "long long row"] + param_decls + out_decls),
        sig_blocks=signature("thm3_reduce_blocks"),
        sig_partials=signature("thm3_reduce_partials"),
        sig_rows=signature("thm3_reduce_rows"),
        range_begin=", ".join(offset(p, "begin") for p in arrays) or "nullptr",
        range_row=", ".join(offset(p, "row * n") for p in arrays) or "nullptr",
    )
    return _KERNELS.substitute(holes)


def render(loop: Loop, combine: Fn, *, dtype: str = "float32", dim: int | None = None,
           exp_nonpositive: bool = False) -> str:
    """The whole CUDA source: functions and kernels `thm3_reduce_blocks`,
    `thm3_reduce_partials` and `thm3_reduce_rows` (see the comments in the source)."""
    spec = make_spec(loop, combine, dtype, dim, exp_nonpositive)
    return (render_functions(loop, combine, dtype=dtype, dim=dim, exp_nonpositive=exp_nonpositive)
            + "\n" + render_kernels(spec))


# this module's names, and those of `c_printer.py` that renderers, tests and bench read from here
__all__ = ["BLOCK", "COVER", "CUDA", "DTYPES", "INT_CHECKS", "KernelArg", "Printer", "Spec", "c_member",
           "c_name", "c_signature", "guarded", "indent", "int_checks", "kernel_args", "make_spec",
           "output_names", "render", "render_combine", "render_combine_lane", "render_covered",
           "render_functions", "render_identity", "render_kernels", "render_lane_struct_function",
           "render_left", "render_result", "render_state", "state_bytes", "state_layout",
           "uses_int_checks"]
