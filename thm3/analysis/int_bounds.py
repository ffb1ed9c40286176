"""Int operations that cannot leave int64: a bound read from the step.

The backends compute Ints in int64 and check each sum, difference, product, negation,
abs and power (`numpy_tree.CHECKED`, the Numba and CUDA renderers).  A count (n + 1 a
step, a.n + b.n in the combine) cannot overflow: after k elements |n| <= k.  Such checks
cost the kernels registers (Welford's float64 partials kernel spilled with them) and buy
nothing, so they are dropped where this bound proves them unneeded.

The bound.  Every Int field f gets |f| <= A_f + C_f * k on a state h(xs) of k = |xs|
elements, proved by induction over the ways the backends build states:
- the identity (k = 0): |default| <= A_f;
- `left` on a state of k elements gives one of k + 1: the magnitude of f's new value,
  read off the step by the rules below with the fields at their bounds, is a + c * k with
  c <= C_f and a <= A_f + C_f;
- the combine of states of k_a and k_b elements gives one of k_a + k_b: its magnitude is
  a + c_a * k_a + c_b * k_b with a <= A_f, c_a <= C_f and c_b <= C_f (so the bound does not
  rest on the combine's law being proved: it holds for the combine as written).
A field whose step reads an element or a parameter in an Int operation, multiplies two
growing values, or grows faster than linearly has no bound (the checks stay).

The magnitudes, affine in (k_a, k_b) with non-negative coefficients: a literal v is |v|;
a Bool 1; +, -, negation and abs add the operands' (an upper bound of |x ± y|); a product
with a constant side scales the other; max, min and `where` take the larger of their
branches (whichever is chosen); `% m` is below m; an Index is the element's position,
k (it is the number of elements before it).  An operation is left unchecked where its
magnitude is below 2**63 for every list of at most LENGTH_LIMIT elements; the backends
refuse a longer list (`check_length`), which no machine holds or folds in a lifetime."""
from __future__ import annotations

from thm3.ir import Expr, Loop, Op, Type, walk

LENGTH_LIMIT = 2**56            # elements in a list the unchecked operations are proved for
_INT64_MAX = 2**63 - 1
_ROUNDS = 8
_CHECKED = (Op.ADD, Op.SUB, Op.MUL, Op.NEG, Op.ABS, Op.POW)

Affine = tuple[int, int, int]   # (constant, coefficient of k_a, coefficient of k_b)


def check_length(name: str, end: int) -> None:
    """OverflowError where a list reaches past LENGTH_LIMIT elements (`end`: the position
    after its last element, a chunk's offset included)."""
    if end > LENGTH_LIMIT:
        raise OverflowError(f"{name}: a list of {end} elements is longer than 2**56, the length for which "
                            "the backends' unchecked Int operations are proved to stay in int64")


def _magnitude(e: Expr, env: dict, memo: dict) -> Affine | None:
    key = id(e)
    if key in memo:
        return memo[key]
    out: Affine | None = None
    if e.type is Type.BOOL:
        out = (1, 0, 0)
    elif e.type is not Type.INT:
        out = None
    elif e.op is Op.CONST:
        out = (abs(int(e.arg)), 0, 0)
    elif e.op is Op.VAR:
        out = env.get(e.arg)
    elif e.op is Op.MOD:
        out = (abs(int(e.arg)), 0, 0)
    else:
        srcs = [_magnitude(s, env, memo) for s in (e.src[1:] if e.op is Op.WHERE else e.src)]
        if all(s is not None for s in srcs):
            match e.op:
                case Op.ADD | Op.SUB | Op.NEG | Op.ABS:
                    out = tuple(map(sum, zip(*srcs)))
                case Op.MAX | Op.MIN | Op.WHERE:
                    out = tuple(map(max, zip(*srcs)))
                case Op.MUL:
                    x, y = srcs
                    if x[1:] == (0, 0) or y[1:] == (0, 0):
                        k, other = (x[0], y) if x[1:] == (0, 0) else (y[0], x)
                        out = tuple(k * v for v in other)
                case Op.POW if e.arg >= 0:
                    x = srcs[0]
                    out = (x[0] ** e.arg, 0, 0) if x[1:] == (0, 0) or e.arg == 0 else x if e.arg == 1 else None
    if out is not None and max(out) > _INT64_MAX * LENGTH_LIMIT:
        out = None                      # beyond any use; keeps the numbers small
    memo[key] = out
    return out


class IntBounds:
    """The fields' bounds (A_f, C_f), or None for a field without one, for `loop` with
    `combine`; `unchecked` names the operations they prove in range."""

    def __init__(self, loop: Loop, combine):
        self.loop = loop
        ints = [f for f in loop.fields if f.type is Type.INT]
        bounds: dict[str, tuple[int, int] | None] = {f.name: (abs(int(f.default)), 0) for f in ints}
        outs = dict(zip((f.name for f in loop.fields), zip(loop.left.outputs, combine.outputs)))
        stable = False
        for _ in range(_ROUNDS * (len(ints) + 1)):
            changed = []
            left_env, combine_env = self._envs(bounds)
            for f in ints:
                if bounds[f.name] is None:
                    continue
                a_left = _magnitude(outs[f.name][0], left_env, {})
                a_comb = _magnitude(outs[f.name][1], combine_env, {})
                if a_left is None or a_comb is None:
                    bounds[f.name] = None
                    changed.append(f.name)
                    continue
                A, C = bounds[f.name]
                A2 = max(A, a_comb[0])
                C2 = max(C, a_left[1], a_left[0] - A2, a_comb[1], a_comb[2])
                if (A2, C2) != (A, C):
                    bounds[f.name] = (A2, C2)
                    changed.append(f.name)
            if not changed:
                stable = True
                break
        if not stable:                  # still growing: no bound (never reached in practice)
            bounds = dict.fromkeys(bounds)
        self.bounds = bounds

    def _envs(self, bounds: dict) -> tuple[dict, dict]:
        left = {f"acc.{name}": (b[0], b[1], 0) for name, b in bounds.items() if b is not None}
        left.update({p.name: (0, 1, 0) for p in self.loop.elements if p.index})
        combine = {f"a.{name}": (b[0], b[1], 0) for name, b in bounds.items() if b is not None}
        combine.update({f"b.{name}": (b[0], 0, b[1]) for name, b in bounds.items() if b is not None})
        return left, combine

    def unchecked(self, outputs, side: str) -> set:
        """The nodes of the Int operations of `outputs` (of `left` or of the combine, `side`
        "left" or "combine") proved not to leave int64 on lists of at most LENGTH_LIMIT
        elements."""
        left, combine = self._envs(self.bounds)
        env = left if side == "left" else combine
        memo: dict = {}
        out = set()
        for e in walk(list(outputs)):
            if e.op in _CHECKED and e.type is Type.INT:
                m = _magnitude(e, env, memo)
                if m is not None and m[0] + max(m[1], m[2]) * LENGTH_LIMIT <= _INT64_MAX:
                    out.add(e)
        return out


def unchecked(loop: Loop, combine, outputs, side: str) -> set:
    """`IntBounds(loop, combine).unchecked(outputs, side)`."""
    return IntBounds(loop, combine).unchecked(outputs, side)


# The Int operations whose exact value can leave int64; the backends check each one.
CHECKED_INT_OPS = frozenset({Op.ADD, Op.SUB, Op.MUL, Op.NEG, Op.ABS, Op.POW})


def overflow_checks(outputs, loop: Loop, combine, side: str) -> dict[Expr, int]:
    """node -> 1 + the index of the first field whose output reads it, for each Int
    operation of `outputs` (one per field, shared; of `left` or of the combine, `side`)
    that int64 can overflow: those the fields' bounds do not prove in range (a count's
    n + 1 and a.n + b.n need no check).  Every backend that computes Ints in int64
    checks these: the CUDA kernels, the NumPy module, Numba and JAX."""
    safe = unchecked(loop, combine, outputs, side)
    out: dict[Expr, int] = {}
    for k, o in enumerate(outputs):
        for e in walk([o]):
            if e.op in CHECKED_INT_OPS and e.type is Type.INT and all(x.type is Type.INT for x in e.src) \
                    and not (e.op is Op.POW and e.arg < 0) and e not in safe:
                out.setdefault(e, k + 1)
    return out
