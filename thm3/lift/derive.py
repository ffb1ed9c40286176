"""The right fold a proved combine gives: right(e, acc) = combine(left(init, e), acc),
written into a lifted loop file."""
from __future__ import annotations

from thm3.ir import Expr, Fn, Loop


def derived_right(loop: Loop, combine: Fn) -> list[Expr]:
    """right(e, acc) = combine(left(init, e), acc), simplified: the right fold that a
    combine gives (over "acc.<field>", the element and the loop parameters)."""
    from thm3.ir import initial_state, substitute, var
    from thm3.ir.simplify import simplify
    init = {f"acc.{f.name}": e for f, e in zip(loop.fields, initial_state(loop))}
    single = substitute(loop.left.outputs, init)
    mapping = {f"a.{f.name}": e for f, e in zip(loop.fields, single)}
    mapping |= {f"b.{f.name}": var(f"acc.{f.name}", f.type) for f in loop.fields}
    return [simplify(e) for e in substitute(combine.outputs, mapping)]


def with_right_fold(text: str, b) -> str:
    """The lifted loop with right(e, acc) = combine(left(init, e), acc), simplified."""
    import ast

    from thm3.syntax.frontend import parse_source
    from thm3.syntax.loopfile import render_loop
    loop = parse_source(text, b.loop.path)
    right = derived_right(loop, b.combine_fn)
    doc = ast.get_docstring(ast.parse(text)) or loop.title
    title, _, rest = doc.partition("\n")
    rest = rest.strip() + ("\n" if rest.strip() else "") + \
        "The right fold is derived from the proved combine: right(e, acc) = combine(left(init, e), acc)."
    return render_loop(title, rest, loop.fields, loop.params, loop.elements, loop.left.outputs,
                       right, loop.result, loop.preconditions, result_type=loop.result_type)
