"""The IR printed as CUDA C: the loop as the C code sees it (`Spec`: the dtype, the Vec
length, the C names, the State's layout), the table `CUDA` of how each `Op` prints, and
`Printer`, which writes one Fn's outputs as C statements.  Pure text; `cuda.py` builds the
loop's functions and kernels from these pieces."""
from __future__ import annotations

from dataclasses import dataclass

from thm3.ir import Expr, Fn, Loop, Op, Type
from thm3.ir.program import lower


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
    """Prints one Fn's outputs as C statements, a driver of the one lowering
    (`Program.run`) over the table `CUDA`.  A DAG node used more than once becomes a
    local (so both uses see the same rounded value); so does each `dot` (an accumulation
    loop) and each scalar a Vec expression reads (computed once, not once per lane).
    Vec expressions print for one lane `d` inside `for (int d = 0; d < THM3_DIM; ++d)`.
    With `lanes=True` (the lane-wise combine) a Vec value is a single lane scalar."""

    def __init__(self, spec: Spec, names: dict[str, str], lanes: bool = False, fast_exp: bool = False):
        self.spec, self.real, self.names, self.lanes = spec, spec.real, names, lanes
        self.fast_exp = fast_exp        # exp arguments proved <= 0: ex2.approx alone
        self.int_checks: dict[Expr, int] = {}  # node -> the field code its overflow sets
        self.locals: dict[Expr, Operand] = {}  # node -> how its declared local reads
        self.printed: dict[Expr, Operand] = {}  # the outputs `prepare` printed
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
    def entry(self, k: int, step, args: list[Operand]) -> Operand:
        """One step printed from its operands (the driver's table entry): the operands
        converted where C would convert them otherwise, then `CUDA`'s entry, or the
        checked call for an Int operation that int64 can overflow."""
        e = step.node
        if e.op in _CONVERT_ALL:
            args = [self.convert(a, s, _scalar(e.type)) for a, s in zip(args, e.src)]
        elif e.op in _CONVERT_BRANCHES:
            args = [args[0]] + [self.convert(a, s, _scalar(e.type)) for a, s in zip(args[1:], e.src[1:])]
        code = self.int_checks.get(e)
        if code is not None:
            return _checked_int(e, args, code)
        return CUDA[e.op](self, e, args)

    def expr(self, e: Expr) -> Operand:
        """`e` printed inline over the locals declared so far."""
        got = self.printed.get(e) or self.locals.get(e)
        if got is not None:
            return got
        return lower((e,), known=self.locals).run(self.entry, known=self.locals)[-1]

    def convert(self, o: Operand, e: Expr, to: Type) -> Operand:
        if _scalar(o.type) is to:
            return o
        if e.op is Op.CONST:
            text = self.literal(e.arg, to)
            return Operand(text, _UNARY if text.startswith("-") else _ATOM, to)
        return Operand(f"({self.spec.ctype(to)}){_wrap(o, _UNARY)}", _UNARY, to)

    # -- statements --
    def prepare(self, exprs) -> list[Expr]:
        """Declare the locals that `exprs` need, children first, and print the outputs
        over them (`assign` writes them); returns `exprs`."""
        exprs = list(exprs)
        program = lower(exprs)
        read_per_lane: set[int] = set()         # steps a Vec operation reads in every lane
        for step in program.steps:
            e = step.node
            if e.op is Op.DOT and self.lanes:
                raise ValueError("the lane-wise combine cannot hold dot(): it reads every lane")
            for k in step.args:
                if (e.type is Type.VEC or e.op is Op.DOT) and program.steps[k].node.type is not Type.VEC:
                    read_per_lane.add(k)

        def keep(k: int, step, o: Operand) -> Operand:
            e = step.node
            if e.op in (Op.VAR, Op.CONST):
                return o
            if e.op is Op.DOT or program.uses[k] > 1 or (k in read_per_lane and not self.lanes):
                return self._declare(e, o, e.type is Type.VEC and not self.lanes)
            return o

        values = program.run(self.entry, keep, known=self.locals)
        self.printed.update((program.steps[k].node, values[k]) for k in program.outputs)
        return exprs

    def _declare(self, e: Expr, o: Operand, vec_array: bool) -> Operand:
        """The local holding `o`, the printed `e`, and how it reads."""
        name = next(self._fresh)
        if e.op is Op.DOT:
            self.lines += [f"{self.real.ctype} {name} = {self.literal(0.0, Type.REAL)};",
                           f"for (int d = 0; d < THM3_DIM; ++d) {name} += {o.text};"]
        elif vec_array:
            self.lines += [f"{self.real.ctype} {name}[THM3_DIM];",
                           f"for (int d = 0; d < THM3_DIM; ++d) {name}[d] = {o.text};"]
        else:
            self.lines.append(f"const {self.spec.ctype(_scalar(e.type))} {name} = {o.text};")
        self.locals[e] = Operand(f"{name}[d]" if vec_array else name, _ATOM, e.type)
        return self.locals[e]

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


# -- Int arithmetic in int64, checked -----------------------------------------------------
# A sum, difference, product, negation or power of Ints in `left` or the combine is a
# call of a helper of INT_CHECKS (`cuda.py`) that computes it in two's complement and,
# where the exact value leaves int64, stores the code of the field (1 + its index) whose
# new value reads it in the device global `thm3_int_overflow`; the launcher reads it
# after the launch and raises OverflowError naming that field.

_CHECKED_INT = {Op.ADD: "thm3_add_ll", Op.SUB: "thm3_sub_ll", Op.MUL: "thm3_mul_ll",
                Op.NEG: "thm3_neg_ll", Op.ABS: "thm3_neg_ll", Op.POW: "thm3_powi_ll"}


def _checked_int(e: Expr, args, code: int) -> Operand:
    texts = [a.text for a in args]
    match e.op:
        case Op.ABS:
            return Operand(f"thm3_abs_ll({texts[0]}, {code})", _ATOM, e.type)
        case Op.POW:
            return Operand(f"thm3_powi_ll({texts[0]}, {e.arg}, {code})", _ATOM, e.type)
    return Operand(f"{_CHECKED_INT[e.op]}({', '.join(texts)}, {code})", _ATOM, e.type)
