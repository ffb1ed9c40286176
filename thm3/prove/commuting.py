"""The laws of a combine that folds b's own fields into a: combine(a, b) = foldl(left, a,
[b.f1 .. b.fk]) (the route "own list"), proved by two small lemmas in place of
associativity over three states and the step law over two.

Theorem.  Let S be the states that satisfy the inductive invariants (every reachable
state is in S), g(t) = [t.f1 .. t.fk], and the loop have no precondition on its element.
If
  (C) left(left(s, x), y) == left(left(s, y), x) for s in S and all elements x, y,
  (G) foldl(left, init, g(t)) == t for t in S, and
  (N) left(s, v) == s for s in S and each infinity v that a field of S may hold,
then combine(h(xs), h(ys)) == h(xs + ys) for all lists xs, ys.
Proof.  By (C), h is invariant under a swap of adjacent elements (the state before the
swap is reachable, so in S), hence under every permutation.  Let t = h(ys), L = g(t) and
F the finite entries of L (elements: no precondition restricts them).  The infinite
entries leave a state of S as it is (N), and the finite ones keep it in S (the invariants
are inductive), so foldl(left, a, L) == foldl(left, a, F) for a in S; with a = init and
(G), h(F) == t.  Then combine(h(xs), t) = foldl(left, h(xs), F) = h(xs + F) = h(F + xs) =
foldl(left, h(F), xs) = foldl(left, h(ys), xs) = h(ys + xs) = h(xs + ys).  So on reachable
states the combine is associative, init is its identity (ys = [] and xs = []), and it is
the homomorphism's combine.

(C) quantifies over one state and two elements, (G) and (N) over one state: where the state is
the k smallest for k up to 8 both are small problems for Z3, where associativity of the
unrolled fold over three states is not.  The permutation step is the classical one
(commutative monoid actions: Bird, "Introduction to Functional Programming", 1988;
the k smallest of a multiset are a function of the multiset)."""
from __future__ import annotations

from thm3.ir import Fn, Loop, Op, walk
from thm3.semantics.symbolic import Inf
from thm3.prove.laws import (Law, Outcome, Setting, apply_fn, check_equal_pairs, element_of, initial, params_of,
                             state_of)

HOW = ("from left(left(s, x), y) == left(left(s, y), x), foldl(left, init, b's fields) == b and "
       "left(s, inf) == s on invariant states (the state is its own list: h is a function of the multiset)")


def own_list_order(loop: Loop, combine: Fn) -> list[str] | None:
    """The field names g lists where `combine` is foldl(left, a, [b.f1 .. b.fk]) as the
    route "own list" writes it (the same terms), else None."""
    from thm3.synth.inverse import own_list_orders, unrolled
    for order in own_list_orders(loop):
        fn = unrolled(loop, [(_b(loop, name),) for name in order])
        memo: dict = {}
        if fn.inputs == combine.inputs and len(fn.outputs) == len(combine.outputs) and \
                all(_same(x, y, memo) for x, y in zip(fn.outputs, combine.outputs)):
            return order
    return None


def _same(x, y, memo: dict) -> bool:
    """Structural equality of two term DAGs, each pair of nodes compared once (`same`
    walks every path of a DAG, and an unrolled fold shares its nodes many times over)."""
    if x is y:
        return True
    key = (id(x), id(y))
    got = memo.get(key)
    if got is None:
        got = memo[key] = x.op is y.op and x.type is y.type and x.arg == y.arg and len(x.src) == len(y.src) \
            and all(_same(a, b, memo) for a, b in zip(x.src, y.src))
    return got


def _b(loop: Loop, name: str):
    from thm3.ir import var
    return var(f"b.{name}", next(f.type for f in loop.fields if f.name == name))


def prove_commutes(setting: Setting, deadline: float) -> Outcome:
    """(C): two steps in either order give the same state, on invariant states."""
    loop = setting.loop

    def build(table, env):
        s, x, y, p = state_of(env, "s", loop), element_of(env, "x", loop), element_of(env, "y", loop), params_of(env, loop)
        xy = apply_fn(table, loop.left, apply_fn(table, loop.left, s + x, p) + y, p)
        yx = apply_fn(table, loop.left, apply_fn(table, loop.left, s + y, p) + x, p)
        return list(zip(xy, yx))

    return Law(setting, ["s"], ["x", "y"], deadline, loop.left.outputs).run(build, check_equal_pairs)


def prove_gives_back(setting: Setting, order: list[str], deadline: float) -> Outcome:
    """(G): folding t's fields, in `order`, from init gives t back, on invariant states."""
    loop = setting.loop
    at = {f.name: i for i, f in enumerate(loop.fields)}

    def build(table, env):
        t, p = state_of(env, "t", loop), params_of(env, loop)
        state = initial(loop)
        for name in order:
            state = apply_fn(table, loop.left, state + [t[at[name]]], p)
        return list(zip(state, t))

    return Law(setting, ["t"], [], deadline, loop.left.outputs).run(build, check_equal_pairs)


def prove_neutral_ends(setting: Setting, order: list[str], deadline: float) -> Outcome:
    """(N): an infinity that a listed field may hold, as an element, leaves every invariant
    state as it is (the padding of a state not yet full: inserting +inf into the k smallest)."""
    loop = setting.loop
    opts = setting.inf_options()
    ends = sorted({s for name in order for s in opts[name] if s != "fin"})

    def build(table, env):
        s, p = state_of(env, "s", loop), params_of(env, loop)
        pairs = []
        for sign in ends:
            pairs += list(zip(apply_fn(table, loop.left, s + [Inf(sign)], p), s))
        return pairs

    if not ends:
        return Outcome("proved", "no field may be infinite")
    return Law(setting, ["s"], [], deadline, loop.left.outputs).run(build, check_equal_pairs)


def prove_own_list(setting: Setting, order: list[str], deadline: float) -> Outcome:
    """(C), (G) and (N) together: "proved" where all are, with the paths and seconds
    summed.  A loop with a precondition on its element is declined: b's fields would
    have to be shown to satisfy it as elements."""
    loop = setting.loop
    elements = {d.name for d in loop.elements}
    if any(e.op is Op.VAR and e.arg in elements for e in walk(list(loop.preconditions))):
        return Outcome("unproved", "a precondition on the element: b's fields are not shown to meet it")
    c = prove_commutes(setting, deadline)
    if not c.proved:
        c.detail = f"left(left(s, x), y) == left(left(s, y), x) not shown ({c.detail})"
        return c
    spent, paths = c.seconds, c.paths
    for prove, what in ((lambda: prove_gives_back(setting, order, deadline), "foldl(left, init, b's fields) == b"),
                        (lambda: prove_neutral_ends(setting, order, deadline), "left(s, inf) == s")):
        out = prove()
        spent, paths = spent + out.seconds, paths + out.paths
        if not out.proved:
            out.detail, out.seconds = f"{what} not shown ({out.detail})", spent
            return out
    return Outcome("proved", HOW, spent, paths)
