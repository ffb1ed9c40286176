"""The human report of an analysis: the loop, the Bird check, the invariants, the
combine in math notation and as code, its identity, each law with status and time,
the stability verdicts, and the method that found the combine."""
from __future__ import annotations

from thm3.ir import Expr, Op, Type, var, walk
from thm3.ir.printer import INVARIANT, MATH, STATE, to_text

# What commutativity allows a reduction, by whether it is proved (the law is no part of
# the verdict: a non-commutative combine is a homomorphism all the same).
ORDERS = ("order-preserving only: a tree over halves in list order, or a scan; not a reduction that "
          "reorders partial states (Triton's tl.reduce, atomics)",
          "any order: partial states may be combined in any order (tl.reduce, atomics, work stealing)")


def math_text(e) -> str:
    """A combine's term as mathematics: a.m -> m₁, b.m -> m₂, products with ·, ±∞; exp
    and max as in the loop file."""
    return to_text(e, MATH)


def invariant_text(e) -> str:
    """An invariant as the user reads it: `not A or B` as "A => B", fields without `acc.`,
    and 0.0 as 0."""
    negated = {Op.EQ: Op.NE, Op.NE: Op.EQ, Op.LT: Op.GE, Op.GE: Op.LT, Op.GT: Op.LE, Op.LE: Op.GT}
    if e.op is Op.OR and e.src[0].op is Op.NOT:
        return f"{to_text(e.src[0].src[0], INVARIANT)} => {to_text(e.src[1], INVARIANT)}"
    if e.op is Op.OR and e.src[0].op in negated:
        first = e.src[0]
        return f"{to_text(Expr(negated[first.op], first.type, first.src, first.arg), INVARIANT)} => " \
               f"{to_text(e.src[1], INVARIANT)}"
    return to_text(e, INVARIANT)


def one_line(a) -> str:
    """`repr(a)`: the loop, the verdict, the proofs in brief, the time."""
    laws = [a.proofs.get(k, "skipped") for k in ("identity", "associativity", "homomorphism")]
    fields = ", ".join(a.loop.field_names)
    return (f"<Analysis {a.loop.name}: {a.verdict}, state ({fields}), "
            f"laws proved {laws.count('proved')}/3, bird {a.proofs.get('bird', 'skipped')}, {a.seconds:.2f} s>")


def _default(f) -> str:
    if f.type is Type.VEC and f.default == 0:
        return "0⃗"
    v = f.default
    if isinstance(v, float) and v in (float("inf"), float("-inf")):
        return "∞" if v > 0 else "−∞"
    return str(v)


def render_report(a) -> str:
    loop = a.loop
    out: list[str] = []
    w = out.append
    fields = ", ".join(f.name for f in loop.fields)
    elems = ", ".join(f"{d.name}: {'Index' if d.index else d.type.value}" for d in loop.elements)
    w(f"thm3 · {loop.title}")
    w(f"  file      {loop.path}")
    w(f"  state     ({fields}) = ({', '.join(_default(f) for f in loop.fields)}) initially")
    w(f"  element   {elems}")
    if loop.params:
        w(f"  params    {', '.join(f'{d.name}: {d.type.value}' for d in loop.params)}")
    if loop.preconditions:
        w(f"  assumes   {'; '.join(to_text(p) for p in loop.preconditions)}")
    w("  left      " + "\n            ".join(
        f"{f.name}' = {to_text(e, STATE)}"
        for f, e in zip(loop.fields, branches_merged(with_field_names(loop, loop.left.outputs, "'")))))
    w("")
    w(f"verdict: {a.verdict.upper()}" + (f"  ({a.reason})" if a.reason else "") + f"   [{a.seconds:.2f} s]")
    w("")
    n = 1
    w(f"{n}. Bird check (left fold = right fold): {a.proofs.get('bird', 'skipped')}")
    w(f"     {a.bird_detail}")
    if a.proofs.get("bird") == "failed" and a.combine_fn is not None:
        from thm3.lift import derived_right
        w("     the right fold the combine gives, right(e, acc) = combine(left(init, e), acc):")
        for f, e in zip(loop.fields, derived_right(loop, a.combine_fn)):
            w(f"       {f.name}' = {to_text(e)}")
    n += 1
    w(f"{n}. Inductive invariants (Houdini; every law below assumes them):")
    w("     " + (", ".join(invariant_text(e) for e in a.invariant_exprs) if a.invariant_exprs else "none"))
    n += 1
    if a.combine_fn is not None:
        names1 = ", ".join(f"{f.name}₁" for f in loop.fields)
        names2 = ", ".join(f"{f.name}₂" for f in loop.fields)
        w(f"{n}. Combine ⊙ (found by {a.method}):")
        w(f"     ({names1}) ⊙ ({names2}) = (")
        terms = combine_terms(loop, a.combine_fn.outputs)
        for f, e in zip(loop.fields, terms):
            w(f"        {f.name}: {math_text(e)}")
        w("     )")
        read = {v.arg for v in walk(terms) if v.op is Op.VAR}
        primed = [f.name for f in loop.fields if f"{f.name}'" in read]
        if primed:
            w(f"     where {', '.join(p + chr(39) for p in primed)}: the combined value above")
        w(f"     identity: ({', '.join(_default(f) for f in loop.fields)})")
        if getattr(a, "transport", None):
            w(f"     transport of structure: {a.transport}")
        w("     as code:")
        for line in combine_code(a).splitlines():
            w("       " + line)
        n += 1
        w(f"{n}. Laws (h(xs + ys) = h(xs) ⊙ h(ys) follows from these three by induction):")
        for law in ("identity", "associativity", "homomorphism"):
            w(f"     {law:<14} {a.proofs.get(law, 'skipped'):<8} {a.law_details.get(law, '')}")
        if "commutativity" in a.proofs:
            w(f"     {'commutativity':<14} {a.proofs['commutativity']:<8} {a.law_details.get('commutativity', '')}")
            w("       " + ORDERS[a.proofs["commutativity"] == "proved"])
        n += 1
    elif a.witness is not None:
        w(f"{n}. No combine over ({fields}) exists. Witness (checked by running the folds):")
        w(f"     {a.reason}")
        n += 1
        lift_step = next((s for s in a.steps if s.name == "lift"), None)
        if a.lifted:
            _lift_lines(w, a, f"{n}. A lift exists: add ")
        elif lift_step is not None:
            w(f"{n}. " + (lift_step.detail[0].upper() + lift_step.detail[1:] if lift_step.detail.startswith(
                "no lift found, and the state grows") else f"No lift found: {lift_step.detail}"))
        n += 1
    if a.verdict == "unknown":
        w(f"{n}. Why unknown: what was tried, and what you could change")
        for line in unknown_advice(a):
            w("     " + line)
        n += 1
        if a.lifted and a.witness is None:
            _lift_lines(w, a, f"{n}. A lift a theorem gives (over the state as written no combine was found): add ")
            n += 1
    w(f"{n}. Numerical stability (the combine and left step as emitted):")
    for k, v in a.stability.items():
        w(f"     {k:<14} {v:<8} {a.stability_notes.get(k, '')}")
    w("")
    w("steps: " + ", ".join(f"{s.name} {s.seconds:.2f}s" for s in a.steps))
    return "\n".join(out)


def _lift_lines(w, a, head: str) -> None:
    """The lift's section: its added fields, its proved combine and the lifted file."""
    w(head + "; ".join(a.lift_added))
    w("     (`thm3 lift FILE -o OUT` writes it; the lifted loop is a proved homomorphism)")
    if a.lifted_analysis is not None:
        w("     its combine (every law proved):")
        for line in combine_code(a.lifted_analysis).splitlines():
            w("       " + line)
    for line in a.lifted.splitlines():
        w("       | " + line)


def unknown_advice(a) -> list[str]:
    """For an "unknown": each step that was tried with its outcome, then what the user
    could change to get an answer."""
    lines = [f"tried: {s.name} ({s.status}{': ' + s.detail if s.detail else ''})"
             for s in a.steps if s.name in ("bird", "witness", "synthesize", "prove", "lift", "theorem lift")]
    timed_out = any(s.status == "timeout" for s in a.steps) or "time" in a.reason
    if timed_out:
        lines.append("change: give more time (--timeout S, or timeout= in thm3.analyze); "
                     "a timeout never counts as a proof")
    if any(s.name == "synthesize" and s.status == "none" for s in a.steps):
        lines.append("change: no combine over this state was found and none was proved impossible; "
                     "a field that carries what the combine needs (a total, a running maximum, "
                     "a length) may make one exist: `thm3 lift FILE` searches for such fields")
    if any(v == "failed" for k, v in a.proofs.items() if k not in ("bird", "commutativity")):
        lines.append("change: the candidate failed a law on the lists shown; check the loop's "
                     "preconditions (`assert` on the element) and its initial values")
    if a.loop.right is None:
        lines.append("change: a `def right(x, acc)` (the right fold) lets the Bird check prove "
                     "the precondition of the theorem by induction")
    return lines


def with_field_names(loop, outputs, suffix: str = "", earlier: bool = False) -> list:
    """Each output that another output reads is written by its field's name (plus
    `suffix`: left's new values read m'), so shared terms print once.  With `earlier`, only
    a field declared before the reader is (code that assigns the fields in order)."""
    # (a name or a literal stays itself: every equal literal is one node, no field's value)
    by_node = {e: k for k, e in enumerate(outputs) if e.op not in (Op.VAR, Op.CONST)}
    out = []
    for i, e in enumerate(outputs):
        memo = {}

        def go(x, i=i, e=e, memo=memo):
            if x in memo:
                return memo[x]
            k = by_node.get(x)
            if x is not e and k is not None and (not earlier or k < i):
                r = var(loop.fields[k].name + suffix, x.type)
            elif not x.src:
                r = x
            else:
                r = Expr(x.op, x.type, tuple(go(s) for s in x.src), x.arg)
            memo[x] = r
            return r
        out.append(go(e))
    return out


def combine_terms(loop, outputs) -> list:
    """The combine's outputs as the report writes them in math: an output that another
    reads by its field's name primed (n' = n₁ + n₂, as left's new values read; a bare `n`
    beside n₁ and n₂ would not say which), branches that agree merged."""
    return branches_merged(with_field_names(loop, outputs, "'"))


def branches_merged(exprs: list) -> list:
    """`exprs` with every `A if c else A` written A (sharing kept): what an if/else whose
    branches compute the same term reads as."""
    memo: dict = {}

    def go(x):
        if id(x) in memo:
            return memo[id(x)]
        src = tuple(go(s) for s in x.src)
        r = x if all(a is b for a, b in zip(src, x.src)) else Expr(x.op, x.type, src, x.arg)
        if r.op is Op.WHERE and src[1] is src[2]:
            r = src[1]
        memo[id(x)] = r
        return r
    return [go(e) for e in exprs]


def combine_code(a) -> str:
    loop = a.loop
    lines = ["def combine(a: State, b: State) -> State:"]
    for f, e in zip(loop.fields, with_field_names(loop, a.combine_fn.outputs, earlier=True)):
        lines.append(f"    {f.name} = {to_text(e)}")
    lines.append(f"    return State({', '.join(f.name for f in loop.fields)})")
    return "\n".join(lines)
