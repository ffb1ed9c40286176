"""CUDA C for a loop and its combine: a printer of the IR (the table `CUDA`, keyed by
`Op`), the loop's `__host__ __device__` functions, and one kernel skeleton with named
holes (`templates/reduce.cu`) for the in-order reduction.  Pure text: nothing here
compiles or runs anything (`gpu/runtime/nvrtc.py` compiles, the module that
`gpu/render/module.py` writes runs the kernels).

The emitted source needs no CUDA header, so NVRTC compiles it as it is, and a host C++
compiler compiles its functions (the kernels aside) for testing against NumPy."""
from __future__ import annotations

from dataclasses import dataclass

from thm3.ir import Expr, Fn, Loop, Op, Type, walk
from thm3.ir.printer import to_text
from thm3.ir.program import lower

from . import cuda_template, cuda_text

BLOCK = 256                                 # threads per block: 8 warps
ITEMS = {"float32": 16, "float64": 8}       # elements per lane per warp tile: 64 bytes
# A State of several fields has a dearer combine (Welford's divides, softmax's exps), and
# each warp tile pays six of them (five shuffled rounds and the running state): in float32
# it takes tiles of 256 bytes a lane, over all its arrays, so that the combines cost a
# quarter as much an element (bench/results/sass-*: Welford float32 1.16 -> 0.50
# warp-instructions issued an element).  float64 keeps 64 bytes: its longer tiles took
# registers enough to halve the blocks a multiprocessor holds.
ITEMS_MULTI = {"float32": 64, "float64": 8}
VECTOR = {"float32": 4, "float64": 2}       # elements per 16-byte load
DTYPES = ("float32", "float64")


@dataclass(frozen=True)
class Real:
    """How Real values print for one dtype."""
    name: str           # "float32" | "float64"
    ctype: str
    suffix: str         # of a literal
    fn: str             # suffix of math functions: exp2f / exp2
    inf: str            # macro holding +inf
    nan: str


REALS = {
    "float32": Real("float32", "float", "f", "f", "THM3_INF_F", "THM3_NAN_F"),
    "float64": Real("float64", "double", "", "", "THM3_INF_D", "THM3_NAN_D"),
}

LOG2_E = "1.4426950408889634"               # exp(x) = exp2(x * log2(e))
LN_2 = "0.6931471805599453"                 # log(x) = log2(x) * ln(2)

# C++ binding strengths, weakest first.
_TERNARY, _LOR, _LAND, _EQUALITY, _RELATIONAL, _ADDITIVE, _MULTIPLICATIVE, _UNARY, _ATOM = range(1, 10)


@dataclass(frozen=True)
class Operand:
    """Printed C text, how strongly it binds, and the IR type of its value."""
    text: str
    strength: int
    type: Type


def _wrap(o: Operand, at_least: int) -> str:
    return o.text if o.strength >= at_least else f"({o.text})"


# --- the table: how each Op prints ------------------------------------------------------
# Entries take the printer, the node and its printed operands (already converted to the
# node's type where C would otherwise convert differently from NumPy) and give an Operand.

class _Infix:
    def __init__(self, token: str, strength: int, operand_at_least: int | None = None):
        self.token, self.strength = token, strength
        self.left = operand_at_least or strength
        # the right operand binds tighter: C's binary operators are left-associative and
        # floating-point ones are not associative, so a + (b + c) keeps its parentheses
        self.right = (operand_at_least or strength) + 1

    def __call__(self, p, e, args):
        return Operand(f"{_wrap(args[0], self.left)} {self.token} {_wrap(args[1], self.right)}",
                       self.strength, e.type)


class _Compare(_Infix):
    def __init__(self, token: str, strength: int):
        super().__init__(token, strength, strength + 1)     # never chain: (a < b) < c


class _Prefix:
    def __init__(self, token: str):
        self.token = token

    def __call__(self, p, e, args):
        text = _wrap(args[0], _UNARY)
        if text.startswith(self.token.strip()):             # -(-x), not --x
            text = f"({text})"
        return Operand(f"{self.token}{text}", _UNARY, e.type)


class _Math:
    """A math function with a float and a double spelling (sqrtf / sqrt)."""
    def __init__(self, name: str):
        self.name = name

    def __call__(self, p, e, args):
        return Operand(f"{self.name}{p.real.fn}({args[0].text})", _ATOM, e.type)


class _Helper:
    """A call of one of the helpers the source defines (thm3_max ...)."""
    def __init__(self, name: str):
        self.name = name

    def __call__(self, p, e, args):
        return Operand(f"{self.name}({', '.join(a.text for a in args)})", _ATOM, e.type)


def _exp(p, e, args):
    # exp(x) = exp2(x * log2 e): exp2f is one special-function instruction on the GPU, with
    # a subnormal fix-up around it that an argument proved <= 0 does without
    if p.fast_exp and p.real.name == "float32":
        return Operand(f"thm3_exp2_nonpositive({_wrap(args[0], _MULTIPLICATIVE)} * {LOG2_E}f)", _ATOM, e.type)
    return Operand(f"exp2{p.real.fn}({_wrap(args[0], _MULTIPLICATIVE)} * {LOG2_E}{p.real.suffix})",
                   _ATOM, e.type)


def _log(p, e, args):
    return Operand(f"log2{p.real.fn}({args[0].text}) * {LN_2}{p.real.suffix}", _MULTIPLICATIVE, e.type)


def _abs(p, e, args):
    if _scalar(e.type) is Type.REAL:
        return Operand(f"fabs{p.real.fn}({args[0].text})", _ATOM, e.type)
    return Operand(f"thm3_abs({args[0].text})", _ATOM, e.type)


def _pow(p, e, args):
    if e.arg >= 0:
        return Operand(f"thm3_powi({args[0].text}, {e.arg})", _ATOM, e.type)
    one = p.literal(1.0, Type.REAL)
    return Operand(f"{one} / thm3_powi({args[0].text}, {-e.arg})", _MULTIPLICATIVE, e.type)


def _pown(p, e, args):
    # c ** n with n an Int: pow with the exponent converted (exact for |n| < 2**24 in
    # float, 2**53 in double), IEEE as NumPy's power: 0 ** -k is inf
    return Operand(f"pow{p.real.fn}({args[0].text}, ({p.real.ctype})({args[1].text}))", _ATOM, e.type)


def _mod(p, e, args):
    # C's % truncates toward zero; the IR's remainder is floored, in [0, m).  For an Int
    # and m a power of two the low bits of the two's complement are that remainder.
    m = e.arg
    if _scalar(e.type) is Type.REAL:
        # as Python and NumPy: fmod, then m added to a negative remainder (one rounding)
        lit = p.literal(float(m), Type.REAL)
        r = f"fmod{p.real.fn}({args[0].text}, {lit})"
        return Operand(f"({r} < 0 ? {r} + {lit} : {r})", _ATOM, e.type)
    if m & (m - 1) == 0:
        return Operand(f"({_wrap(args[0], _ATOM)} & {m - 1}LL)", _ATOM, e.type)
    return Operand(f"(({_wrap(args[0], _MULTIPLICATIVE)} % {m}LL + {m}LL) % {m}LL)", _ATOM, e.type)


def _where(p, e, args):
    cond, then, other = args
    return Operand(f"{_wrap(cond, _LOR)} ? {_wrap(then, _LOR)} : {_wrap(other, _TERNARY)}",
                   _TERNARY, e.type)


def _dot(p, e, args):
    # the term of the accumulation loop the printer wraps around it: t += u[d] * v[d]
    return Operand(f"{_wrap(args[0], _MULTIPLICATIVE)} * {_wrap(args[1], _MULTIPLICATIVE + 1)}",
                   _MULTIPLICATIVE, Type.REAL)


def _const(p, e, args):
    return Operand(p.literal(e.arg, e.type), _UNARY if p.literal(e.arg, e.type).startswith("-") else _ATOM, e.type)


def _var(p, e, args):
    return p.variable(e)


CUDA: dict = {
    Op.CONST: _const,
    Op.VAR: _var,
    Op.NEG: _Prefix("-"),
    Op.NOT: _Prefix("!"),
    Op.ABS: _abs,
    Op.EXP: _exp,
    Op.EXP2: _Math("exp2"),
    Op.LOG: _log,
    Op.LOG2: _Math("log2"),
    Op.SQRT: _Math("sqrt"),
    Op.ADD: _Infix("+", _ADDITIVE),
    Op.SUB: _Infix("-", _ADDITIVE),
    Op.MUL: _Infix("*", _MULTIPLICATIVE),
    Op.DIV: _Infix("/", _MULTIPLICATIVE),
    Op.POW: _pow,
    Op.POWN: _pown,
    Op.MOD: _mod,
    Op.MAX: _Helper("thm3_max"),
    Op.MIN: _Helper("thm3_min"),
    Op.LT: _Compare("<", _RELATIONAL),
    Op.LE: _Compare("<=", _RELATIONAL),
    Op.GT: _Compare(">", _RELATIONAL),
    Op.GE: _Compare(">=", _RELATIONAL),
    Op.EQ: _Compare("==", _EQUALITY),
    Op.NE: _Compare("!=", _EQUALITY),
    Op.AND: _Infix("&&", _LAND),
    Op.OR: _Infix("||", _LOR, _LAND + 1),       # a && b inside || gets parentheses
    Op.WHERE: _where,
    Op.DOT: _dot,
}

# Operands that C would convert differently from NumPy are converted to the node's type
# first (an Int over an Int divides as integers in C; max(Int, Real) has no one T).
_CONVERT_ALL = {Op.NEG, Op.ABS, Op.EXP, Op.EXP2, Op.LOG, Op.LOG2, Op.SQRT, Op.ADD, Op.SUB,
                Op.MUL, Op.DIV, Op.POW, Op.MAX, Op.MIN}
_CONVERT_BRANCHES = {Op.WHERE}


def _scalar(t: Type) -> Type:
    return Type.REAL if t is Type.VEC else t


# --- names ----------------------------------------------------------------------------

_CPP_KEYWORDS = set("""alignas alignof and and_eq asm auto bitand bitor bool break case catch char
char8_t char16_t char32_t class compl concept const consteval constexpr constinit const_cast
continue co_await co_return co_yield decltype default delete do double dynamic_cast else enum
explicit export extern false float for friend goto if inline int long mutable namespace new
noexcept not not_eq nullptr operator or or_eq private protected public register
reinterpret_cast requires return short signed sizeof static static_assert static_cast struct
switch template this thread_local throw true try typedef typeid typename union unsigned using
virtual void volatile wchar_t while xor xor_eq main""".split())
# names the generated functions use for themselves
_TAKEN = {"acc", "a", "b", "r", "d", "out", "State", "T"}


def c_name(name: str) -> str:
    """A loop name as a C identifier that clashes with no keyword and no generated name."""
    while name in _CPP_KEYWORDS or name in _TAKEN or name.startswith(("thm3_", "THM3_", "__")):
        name += "_"
    return name


def c_member(name: str) -> str:
    """A field name as a member of `struct State` (members clash only with keywords)."""
    while name in _CPP_KEYWORDS or name.startswith("__"):
        name += "_"
    return name


# --- the loop, as the C code sees it -----------------------------------------------------

@dataclass(frozen=True)
class Spec:
    """A loop and its combine with everything the rendering needs decided: the dtype, the
    length of Vec values, and the C names."""
    loop: Loop
    combine: Fn
    real: Real
    dim: int | None
    exp_nonpositive: bool = False   # the certificate: every exp argument of left and combine <= 0

    @property
    def items(self) -> int:
        """Consecutive elements a lane folds in a warp tile (THM3_ITEMS)."""
        base = ITEMS[self.real.name]
        if len(self.loop.fields) < 2 or not self.vector_loads:
            return base
        per_array = ITEMS_MULTI[self.real.name] // len(self.data_elements)
        return max(base, per_array // self.vector * self.vector)

    @property
    def min_blocks(self) -> int:
        """Blocks a multiprocessor must hold (launch bounds): 1, or 2 for float32 states
        of several fields, whose long tiles would otherwise take registers for one."""
        return 2 if self.items > ITEMS[self.real.name] and self.real.name == "float32" else 1

    @property
    def vector(self) -> int:
        return VECTOR[self.real.name]

    def ctype(self, t: Type) -> str:
        match t:
            case Type.REAL | Type.VEC:
                return self.real.ctype
            case Type.INT:
                return "long long"
            case Type.BOOL:
                return "bool"
            case _:
                raise ValueError(f"no C type for {t}")

    @property
    def data_elements(self):
        """Element parameters read from arrays (an Index is the position instead)."""
        return [p for p in self.loop.elements if not p.index]

    @property
    def vector_loads(self) -> bool:
        """Whether full warp tiles load with 16-byte vectors: every array holds Reals."""
        return bool(self.data_elements) and all(p.type is Type.REAL for p in self.data_elements)

    @property
    def result_type(self) -> Type | None:
        """The type of a one-value result (None without one, or for several)."""
        if self.loop.result is None or self.loop.result_kind != "value":
            return None
        return self.loop.result_types[0]

    @property
    def result_outputs(self) -> list[tuple[str, Type]]:
        """The kernels' result arrays: `out_result` for one value, `out_result0`, ... for
        several (a tuple or NamedTuple result), with their types."""
        types = self.loop.result_types
        if self.loop.result_kind == "value":
            return [("out_result", t) for t in types]
        return [(f"out_result{k}", t) for k, t in enumerate(types)]

    def param_decls(self) -> list[str]:
        return [f"const {self.real.ctype}* {c_name(p.name)}" if p.type is Type.VEC
                else f"{self.ctype(p.type)} {c_name(p.name)}" for p in self.loop.params]

    def param_names(self) -> list[str]:
        return [c_name(p.name) for p in self.loop.params]


def make_spec(loop: Loop, combine: Fn, dtype: str = "float32", dim: int | None = None,
              exp_nonpositive: bool = False) -> Spec:
    if dtype not in REALS:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, not {dtype!r}")
    uses_vec = any(t is Type.VEC for t in [f.type for f in loop.fields]
                   + [p.type for p in loop.elements] + [p.type for p in loop.params])
    if uses_vec and not dim:
        raise ValueError(f"{loop.name}: the loop has Vec values; give their length (dim)")
    return Spec(loop, combine, REALS[dtype], dim if uses_vec else None, exp_nonpositive)


def state_layout(spec: Spec) -> list[tuple[str, str, int, int]]:
    """(field, C type, count, byte offset) of each State member, by C's layout rules."""
    sizes = {"float": 4, "double": 8, "long long": 8, "bool": 1}
    out, offset = [], 0
    for f in spec.loop.fields:
        ctype = spec.ctype(f.type)
        count = spec.dim if f.type is Type.VEC else 1
        offset = -(-offset // sizes[ctype]) * sizes[ctype]
        out.append((f.name, ctype, count, offset))
        offset += sizes[ctype] * count
    return out


def state_bytes(spec: Spec) -> int:
    sizes = {"float": 4, "double": 8, "long long": 8, "bool": 1}
    layout = state_layout(spec)
    align = max(sizes[c] for _, c, _, _ in layout)
    end = max(off + sizes[c] * n for _, c, n, off in layout)
    return -(-end // align) * align


# --- the printer -----------------------------------------------------------------------

class Printer:
    """Prints one Fn's outputs as C statements.  A DAG node used more than once becomes a
    local (so both uses see the same rounded value); so does each `dot` (an accumulation
    loop) and each scalar a Vec expression reads (computed once, not once per lane).
    Vec expressions print for one lane `d` inside `for (int d = 0; d < THM3_DIM; ++d)`.
    With `lanes=True` (the lane-wise combine) a Vec value is a single lane scalar."""

    def __init__(self, spec: Spec, names: dict[str, str], lanes: bool = False, fast_exp: bool = False):
        self.spec, self.real, self.names, self.lanes = spec, spec.real, names, lanes
        self.fast_exp = fast_exp        # exp arguments proved <= 0: ex2.approx alone
        self.int_checks: dict[Expr, int] = {}  # node -> the field code its overflow sets
        self.locals: dict[Expr, str] = {}
        self.lines: list[str] = []
        taken = set(names.values())
        self._fresh = (f"t{k}" for k in range(1 << 30) if f"t{k}" not in taken)

    # -- leaves --
    def literal(self, value, t: Type) -> str:
        match _scalar(t):
            case Type.BOOL:
                return "true" if value else "false"
            case Type.INT:
                v = int(value)
                return f"{v}LL" if not -2**31 <= v < 2**31 else str(v)
            case _:
                v = float(value)
                if v != v:
                    return self.real.nan
                if v in (float("inf"), float("-inf")):
                    return self.real.inf if v > 0 else f"-{self.real.inf}"
                return f"{v!r}{self.real.suffix}"

    def variable(self, e: Expr) -> Operand:
        text = self.names[e.arg]
        if e.type is Type.VEC and not self.lanes:
            text = f"{text}[d]"
        return Operand(text, _ATOM, e.type)

    # -- expressions --
    def expr(self, e: Expr) -> Operand:
        name = self.locals.get(e)
        if name is not None:
            vec_array = e.type is Type.VEC and not self.lanes
            return Operand(f"{name}[d]" if vec_array else name, _ATOM, e.type)
        args = [self.expr(s) for s in e.src]
        if e.op in _CONVERT_ALL:
            args = [self.convert(a, s, _scalar(e.type)) for a, s in zip(args, e.src)]
        elif e.op in _CONVERT_BRANCHES:
            args = [args[0]] + [self.convert(a, s, _scalar(e.type)) for a, s in zip(args[1:], e.src[1:])]
        code = self.int_checks.get(e)
        if code is not None:
            return _checked_int(e, args, code)
        return CUDA[e.op](self, e, args)

    def convert(self, o: Operand, e: Expr, to: Type) -> Operand:
        if _scalar(o.type) is to:
            return o
        if e.op is Op.CONST:
            text = self.literal(e.arg, to)
            return Operand(text, _UNARY if text.startswith("-") else _ATOM, to)
        return Operand(f"({self.spec.ctype(to)}){_wrap(o, _UNARY)}", _UNARY, to)

    # -- statements --
    def prepare(self, exprs) -> list[Expr]:
        """Declare the locals that `exprs` need, children first; returns `exprs` with equal
        subtrees shared, the form to print them in."""
        exprs = list(exprs)
        program = lower(exprs)
        read_per_lane: set[int] = set()         # steps a Vec operation reads in every lane
        for step in program.steps:
            e = step.node
            for k in step.args:
                if (e.type is Type.VEC or e.op is Op.DOT) and program.steps[k].node.type is not Type.VEC:
                    read_per_lane.add(k)
        for k, (step, uses) in enumerate(zip(program.steps, program.uses)):
            e = step.node
            if e.op in (Op.VAR, Op.CONST):
                continue
            if e.op is Op.DOT and self.lanes:
                raise ValueError("the lane-wise combine cannot hold dot(): it reads every lane")
            vec_array = e.type is Type.VEC and not self.lanes
            if e.op is Op.DOT or uses > 1 or (k in read_per_lane and not self.lanes):
                self._declare(e, vec_array)
        return exprs

    def _declare(self, e: Expr, vec_array: bool) -> None:
        name = next(self._fresh)
        if e.op is Op.DOT:
            term = self.expr(e)
            self.lines += [f"{self.real.ctype} {name} = {self.literal(0.0, Type.REAL)};",
                           f"for (int d = 0; d < THM3_DIM; ++d) {name} += {term.text};"]
        elif vec_array:
            text = self.expr(e).text
            self.lines += [f"{self.real.ctype} {name}[THM3_DIM];",
                           f"for (int d = 0; d < THM3_DIM; ++d) {name}[d] = {text};"]
        else:
            self.lines.append(f"const {self.spec.ctype(_scalar(e.type))} {name} = {self.expr(e).text};")
        self.locals[e] = name

    def assign(self, target: str, e: Expr, want: Type) -> None:
        """target = e (target[d] = e for each lane of a Vec)."""
        o = self.convert(self.expr(e), e, _scalar(want))
        if want is Type.VEC and not self.lanes:
            self.lines.append(f"for (int d = 0; d < THM3_DIM; ++d) {target}[d] = {o.text};")
        else:
            self.lines.append(f"{target} = {o.text};")


def c_signature(head: str, args: list[str], width: int = 96) -> str:
    """head(args...), the arguments wrapped under the first one when the line is long."""
    line = f"{head}({', '.join(args)})"
    if len(line) <= width or not args:
        return line
    pad = " " * (len(head) + 1)
    lines, current = [], f"{head}({args[0]}"
    for a in args[1:]:
        if len(current) + len(a) + 2 > width:
            lines.append(current + ",")
            current = pad + a
        else:
            current += f", {a}"
    return "\n".join(lines + [current + ")"])


def indent(lines, by: int = 4) -> str:
    return "\n".join(" " * by + line for line in lines)


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


# -- Int arithmetic in int64, checked -----------------------------------------------------
# A sum, difference, product, negation or power of Ints in `left` or the combine is a
# call of a helper of INT_CHECKS that computes it in two's complement and, where the exact
# value leaves int64, stores the code of the field (1 + its index) whose new value reads
# it in the device global `thm3_int_overflow`; the launcher reads it after the launch and
# raises OverflowError naming that field.

_CHECKED_INT = {Op.ADD: "thm3_add_ll", Op.SUB: "thm3_sub_ll", Op.MUL: "thm3_mul_ll",
                Op.NEG: "thm3_neg_ll", Op.ABS: "thm3_neg_ll", Op.POW: "thm3_powi_ll"}


def int_checks(outputs, loop: Loop, combine: Fn, side: str) -> dict[Expr, int]:
    """node -> 1 + the index of the first field whose output reads it, for each Int
    operation that int64 can overflow (`thm3.analysis.int_bounds.overflow_checks`)."""
    from thm3.analysis.int_bounds import overflow_checks
    return overflow_checks(outputs, loop, combine, side)


def _checked_int(e: Expr, args, code: int) -> Operand:
    texts = [a.text for a in args]
    match e.op:
        case Op.ABS:
            return Operand(f"thm3_abs_ll({texts[0]}, {code})", _ATOM, e.type)
        case Op.POW:
            return Operand(f"thm3_powi_ll({texts[0]}, {e.arg}, {code})", _ATOM, e.type)
    return Operand(f"{_CHECKED_INT[e.op]}({', '.join(texts)}, {code})", _ATOM, e.type)


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
