"""The IR: one closed set of operations over typed, immutable expression trees.

The frontend turns `left`, `right` and `result` into `Fn`s (pure expression DAGs over
named inputs); synthesis produces the `combine` as another `Fn`.  Every backend (NumPy,
SymPy, Z3, the prover's extended reals, the CUDA printer) is a table keyed by `Op`.
"""
from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from thm3.ir.ops import BINARY, COMPARISONS, TRANSCENDENTAL, UNARY, WITH_ARG, Op, Type
from thm3.ir.printer import to_text

__all__ = ["BINARY", "COMPARISONS", "Expr", "FieldDecl", "Fn", "Loop", "Op", "ParamDecl", "TRANSCENDENTAL", "Type", "UNARY", "WITH_ARG", "as_real", "const", "initial_state", "free_vars", "promote", "equal_upto_order", "substitute", "transform", "uses", "var", "walk"]


class Expr:
    """One node, hash-consed: the constructor returns the one live node with the same
    operation, type, children and argument, so structural equality is identity (`is`,
    `==`) and hashing is O(1).  The argument is keyed by its type and, for a float, its
    exact `repr`: 0.0 and -0.0 stay apart, and so do 1, 1.0 and True.  A NumPy scalar
    argument becomes the Python scalar of the same value.  Nodes are immutable; the
    table holds them weakly, so a node no one uses is freed."""
    __slots__ = ("op", "type", "src", "arg", "__weakref__")
    op: Op
    type: Type
    src: tuple["Expr", ...]
    arg: object

    def __new__(cls, op: Op, type: Type, src=(), arg=None):
        src = tuple(src)
        if isinstance(arg, np.generic):
            arg = arg.item()
        key = (op, type, src, type_key(arg))
        with _LOCK:
            ref = _INTERNED.get(key)
            node = ref() if ref is not None else None
            if node is None:
                node = object.__new__(cls)
                object.__setattr__(node, "op", op)
                object.__setattr__(node, "type", type)
                object.__setattr__(node, "src", src)
                object.__setattr__(node, "arg", arg)
                _INTERNED[key] = weakref.ref(node, partial(_forget, key))
        return node

    def __setattr__(self, name, value):
        raise AttributeError(f"Expr is immutable: cannot set {name}")

    def __delattr__(self, name):
        raise AttributeError(f"Expr is immutable: cannot delete {name}")

    def __reduce__(self):               # a copy or an unpickled node is interned again
        return (Expr, (self.op, self.type, self.src, self.arg))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __repr__(self) -> str:
        return to_text(self)


# The live nodes: structural key -> weak reference.  A node's reference, when the node is
# freed, removes its own entry (not one a newer node with the same key put there since).
_INTERNED: dict[tuple, weakref.ref] = {}
_LOCK = threading.RLock()      # re-entrant: a freed node's callback may run inside `Expr(...)`


def _forget(key: tuple, ref: weakref.ref) -> None:
    with _LOCK:
        if _INTERNED.get(key) is ref:
            del _INTERNED[key]


def type_key(value) -> tuple:
    """A hashable key that tells apart values Python calls equal: 0.0 and -0.0, 1 and
    1.0 and True (each float by its exact `repr`, so nan is one key)."""
    if isinstance(value, float):
        return (float, repr(value))
    try:
        hash(value)
    except TypeError:
        return (type(value), id(value))     # unhashable (never in the IR's own ops): no sharing
    return (type(value), value)


def interned_count() -> int:
    """How many nodes are live (a figure for tests and benchmarks)."""
    return len(_INTERNED)


def const(value, type_: Type | None = None) -> Expr:
    if type_ is None:
        type_ = Type.BOOL if isinstance(value, bool) else Type.INT if isinstance(value, int) else Type.REAL
    if type_ is Type.REAL:
        value = float(value)
    return Expr(Op.CONST, type_, (), value)


def var(name: str, type_: Type) -> Expr:
    return Expr(Op.VAR, type_, (), name)


@dataclass(frozen=True)
class Fn:
    """A pure function: named, typed inputs to a tuple of outputs (one per state field,
    or one for `result`)."""
    inputs: tuple[tuple[str, Type], ...]
    outputs: tuple[Expr, ...]


@dataclass(frozen=True)
class FieldDecl:
    name: str
    type: Type
    default: object            # float/int/bool; 0 for a Vec means the zero vector
    comment: str = ""


@dataclass(frozen=True)
class ParamDecl:
    name: str
    type: Type
    index: bool = False         # an `Index` element parameter: INT in proofs, position at run time


@dataclass(frozen=True)
class Loop:
    """A parsed loop file.

    Names inside the `Fn`s: state fields of `left`/`right`/`result` are "acc.<field>",
    element parameters and loop parameters go by their own names.  A combine reads
    "a.<field>" and "b.<field>"."""
    name: str                                   # the file's stem
    title: str                                  # first docstring line, or the name
    path: str
    source: str
    fields: tuple[FieldDecl, ...]
    elements: tuple[ParamDecl, ...]             # element parameters, in order
    params: tuple[ParamDecl, ...]               # loop parameters
    left: Fn
    right: Fn | None = None
    result: Fn | None = None
    result_type: Type | None = None             # one value's type (None for several)
    result_kind: str = "value"                  # "value", "tuple" or "namedtuple": what `result` returns
    result_names: tuple[str, ...] = ()          # a NamedTuple result's field names
    result_class: str = ""                      # ... and its class's name
    preconditions: tuple[Expr, ...] = ()        # assert conditions over elements and params
    doc: str = field(default="", compare=False)             # the docstring after its title line
    param_comments: dict = field(default_factory=dict, compare=False)   # loop parameter -> its comment
    # a combine a theorem gives with the loop (a copies lift's composition, `thm3.synth.copies`):
    # the synthesis tries it first, and the prover decides it like any other candidate
    combine_hint: "Fn | None" = field(default=None, compare=False, repr=False)

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    @property
    def result_types(self) -> tuple[Type, ...]:
        """The type of each value `result` returns (one for a single value); () without
        a `result`."""
        if self.result is None:
            return ()
        if self.result_kind == "value":
            return (self.result_type or self.result.outputs[0].type,)
        return tuple(e.type for e in self.result.outputs)


def initial_state(loop: Loop) -> tuple[Expr, ...]:
    """The initial state (the combine's identity) as IR constants, one per field: the
    field's default at its type (a Real as a float), a Vec's 0 as the Real 0 that
    broadcasts to the zero vector.  Every evaluator reads the identity from here."""
    return tuple(const(f.default, Type.REAL) if f.type is Type.VEC else const(f.default, f.type)
                 for f in loop.fields)


def promote(a: Type, b: Type) -> Type:
    """The type of arithmetic on two numbers: Vec broadcasts, Real absorbs Int."""
    if Type.VEC in (a, b):
        return Type.VEC
    if Type.REAL in (a, b):
        return Type.REAL
    return Type.INT


def as_real(e: Expr) -> Expr:
    """An Int literal used among Reals becomes a Real literal (other Int terms stay Int
    under a Real operation: evaluators promote them as NumPy does)."""
    if e.op is Op.CONST and e.type is Type.INT:
        return const(float(e.arg), Type.REAL)
    return e


def substitute(exprs, mapping: dict[str, Expr]):
    """Replace VAR leaves by name; shares the result DAG like the input DAG."""
    return transform(exprs, lambda e, go: mapping.get(e.arg, e) if e.op is Op.VAR else None)


def transform(exprs, rule):
    """`exprs` rebuilt bottom-up, each shared subterm once: `rule(e, go)` gives e's
    replacement (`go` maps a subterm the same way), or None to keep e over its mapped
    children (e itself where none changed)."""
    memo: dict[int, Expr] = {}

    def go(e: Expr) -> Expr:
        got = memo.get(id(e))
        if got is not None:
            return got
        out = rule(e, go)
        if out is None:
            if not e.src:
                out = e
            else:
                src = tuple(go(s) for s in e.src)
                out = e if all(a is b for a, b in zip(src, e.src)) else Expr(e.op, e.type, src, e.arg)
        memo[id(e)] = out
        return out

    return tuple(go(e) for e in exprs)


def walk(exprs, stop=None):
    """Every node once, children before parents.  With `stop`, a node for which
    `stop(node)` is true is left out, and so is what lies below it (unless another
    path reaches it)."""
    seen: set[int] = set()
    order: list[Expr] = []
    stack = [(e, False) for e in reversed(tuple(exprs))]
    while stack:
        e, done = stack.pop()
        if done:
            order.append(e)
            continue
        if id(e) in seen or (stop is not None and stop(e)):
            continue
        seen.add(id(e))
        stack.append((e, True))
        stack.extend((s, False) for s in reversed(e.src))
    return order


def free_vars(exprs) -> set[str]:
    return {e.arg for e in walk(exprs) if e.op is Op.VAR}


def uses(exprs, ops) -> bool:
    return any(e.op in ops for e in walk(exprs))


# Ops whose value over the reals (and the Bools) does not depend on the order or the
# grouping of their operands: `equal_upto_order` flattens and sorts them.
_AC = frozenset({Op.ADD, Op.MUL, Op.MAX, Op.MIN, Op.AND, Op.OR})
_COMMUTATIVE = _AC | {Op.EQ, Op.NE, Op.DOT}


def equal_upto_order(a: Expr, b: Expr) -> bool:
    """Equality up to the order and grouping of the operands of +, *, max, min, and, or
    (and the order of ==, !=, dot): the same function over the reals, as the proofs read
    it (not bit for bit in floating point, where + is not associative)."""
    return a is b or _ac_key(a, {}) == _ac_key(b, {})


def _ac_key(e: Expr, memo: dict):
    got = memo.get(id(e))
    if got is not None:
        return got
    if e.op in _AC:
        parts, stack = [], list(e.src)
        while stack:
            x = stack.pop()
            if x.op is e.op:
                stack.extend(x.src)
            else:
                parts.append(_ac_key(x, memo))
        kids = tuple(sorted(parts, key=repr))
    elif e.op in _COMMUTATIVE:
        kids = tuple(sorted((_ac_key(x, memo) for x in e.src), key=repr))
    else:
        kids = tuple(_ac_key(x, memo) for x in e.src)
    key = (e.op.name, e.type.name, repr(e.arg), kids)
    memo[id(e)] = key
    return key
