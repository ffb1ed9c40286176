"""The sequential fold as one generated Python function: the third driver of the
evaluator's tables (beside `Compiled`, a schedule for many environments, and `Memo`).

`Fold(loop, table)` renders `left` as straight-line Python, one assignment per IR node,
inside the loop over the elements, so that folding 10**7 elements costs only the table's
own functions (and, for the PYTHON table, plain `+ - * <` where the table's entry is
Python's operator itself).  The meaning is the table's: the same functions are called
on the same values in the same order as `Compiled` would call them.

The text is thm3's own rendering of the IR, never the loop file's: every name in it is
generated (s0 for a field, e0 for an element, p0 for a loop parameter, t7 for a node),
and constants and table functions are bound as globals, not spelled as literals."""
from __future__ import annotations

import array
import operator

import numpy as np

from thm3.ir import Loop, Op, Type
from thm3.ir.program import lower

# Table entries that are Python's own operators render as the operator: the same call,
# without a function call's cost.
_INFIX = {operator.add: "+", operator.sub: "-", operator.mul: "*",
          operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">=",
          operator.eq: "==", operator.ne: "!="}


class Fold:
    """`fold(state, columns, start, stop, params)`: the state (a list, one value a field)
    after folding elements start .. stop-1.  `columns` holds one indexable column per
    element parameter in `loop.elements` order (None for an `Index`, which reads the
    position j plus `base`: the position in the whole list of a part's element 0);
    `params` maps loop parameter names to values.

    `single` names operations whose Real (and Vec) results are rounded to IEEE single
    precision after the table computes them in double, Real constants too: float32
    arithmetic on Python floats (one double operation rounded to single is the correctly
    rounded single result for + - * / and sqrt), inline for a Real value.

    With `every`, the function also takes a list `out` and appends the state (a tuple)
    after each element: the prefixes of a scan.
    """

    def __init__(self, loop: Loop, table: dict, single=frozenset(), every: bool = False):
        self.loop = loop
        names = {f"acc.{f.name}": f"s{i}" for i, f in enumerate(loop.fields)}
        names.update({d.name: f"e{i}" for i, d in enumerate(loop.elements)})
        names.update({p.name: f"p{i}" for i, p in enumerate(loop.params)})
        self.globals: dict = {"_single": array.array("f", [0.0]), "_f32": np.float32}
        body: list[str] = []
        program = lower(loop.left.outputs)

        def entry(k, step, args):
            """A step's text (a name for a leaf, bound as a global for a constant)."""
            e = step.node
            match e.op:
                case Op.VAR:
                    return names[e.arg]
                case Op.CONST:
                    value = table[Op.CONST](e.arg, e.type)
                    if single and e.type is Type.REAL:
                        value = float(np.float32(value))
                    self.globals[f"c{k}"] = value
                    return f"c{k}"
                case Op.POW | Op.MOD:
                    self.globals[f"f{k}"] = table[e.op]
                    self.globals[f"n{k}"] = e.arg
                    return f"f{k}({args[0]}, n{k})"
            f = table[e.op]
            infix = _INFIX.get(f) if len(args) == 2 else None
            if infix is not None:
                return f"{args[0]} {infix} {args[1]}"
            self.globals[f"f{k}"] = f
            return f"f{k}({', '.join(args)})"

        def keep(k, step, text):
            """Every operation is a local, t{k} (rounded to single where `single` says)."""
            e = step.node
            if e.op in (Op.VAR, Op.CONST):
                return text
            if e.op in single and e.type is Type.REAL:
                body.extend([f"        _single[0] = {text}", f"        t{k} = _single[0]"])
            elif e.op in single and e.type is Type.VEC:
                body.append(f"        t{k} = ({text}).astype(_f32)")
            else:
                body.append(f"        t{k} = {text}")
            return f"t{k}"

        slot = program.run(entry, keep)     # each step's name, by position
        fields = [f"s{i}" for i in range(len(loop.fields))]
        reads = [f"        e{i} = j + base" if d.index else f"        e{i} = c_{i}[j]"
                 for i, d in enumerate(loop.elements)]
        outs = [slot[k] for k in program.outputs]
        self.every = every
        lines = [f"def fold(state, columns, start, stop, params, base{', out' if every else ''}):",
                 *(["    keep = out.append"] if every else []),
                 f"    {', '.join(fields)}, = state",
                 *[f"    c_{i} = columns[{i}]" for i, d in enumerate(loop.elements) if not d.index],
                 *[f"    p{i} = params[{p.name!r}]" for i, p in enumerate(loop.params)],
                 "    for j in range(start, stop):",
                 *reads, *body,
                 f"        {', '.join(fields)}, = {', '.join(outs)},",
                 *([f"        keep(({', '.join(fields)},))"] if every else []),
                 f"    return [{', '.join(fields)}]"]
        self.source = "\n".join(lines) + "\n"
        code = compile(self.source, f"<thm3 fold of {loop.name}>", "exec")
        exec(code, self.globals)            # thm3's own rendering of the IR (see the docstring)
        self._fold = self.globals["fold"]

    def __call__(self, state, columns, start: int, stop: int, params: dict, out: list | None = None,
                 base: int = 0) -> list:
        if self.every:
            return self._fold(list(state), columns, start, stop, params, base, out)
        return self._fold(list(state), columns, start, stop, params, base)


__all__ = ["Fold"]
