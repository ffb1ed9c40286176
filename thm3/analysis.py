"""The pipeline: loop file -> IR -> invariants -> Bird check -> witness or combine ->
proofs -> stability, gathered in one `Analysis` (the library API of the spec).

Each step is a named function so the CLI can show and time them one by one."""
from __future__ import annotations

import itertools
import time
from collections import namedtuple
from dataclasses import dataclass, field

import numpy as np

from thm3 import prove
from thm3.interpret import NUMPY, evaluate, quiet
from thm3.invariants import infer
from thm3.ir import Expr, Fn, Loop, Op, Type, walk
from thm3.prove import Setting
from thm3.sampling import (SMALL_INTS, SMALL_REALS, Domain, batch_close, batch_combine,
                           batch_fold, batch_init, batch_step, make_triples, plain,
                           stack_elements)
from thm3.synthesize import SearchTimeout, synthesize

LAWS = ("identity", "associativity", "homomorphism")


@dataclass
class Step:
    name: str
    status: str
    seconds: float
    detail: str = ""


@dataclass
class Analysis:
    loop: Loop
    verdict: str = "unknown"
    reason: str = ""
    combine_fn: Fn | None = None
    method: str = ""
    proofs: dict = field(default_factory=dict)
    invariant_exprs: list = field(default_factory=list)
    witness: list | None = None
    witness_params: dict = field(default_factory=dict)
    lifted: str | None = None
    lift_added: list = field(default_factory=list)
    stability: dict = field(default_factory=dict)
    stability_notes: dict = field(default_factory=dict)
    bird_detail: str = ""
    transport: str = ""
    transport_map: object = None
    law_details: dict = field(default_factory=dict)
    steps: list = field(default_factory=list)
    seconds: float = 0.0

    # -- the spec's API --------------------------------------------------------------
    @property
    def invariants(self) -> list[str]:
        return [repr(e).replace("acc.", "") for e in self.invariant_exprs]

    @property
    def State(self):
        return namedtuple("State", self.loop.field_names)

    @property
    def identity(self):
        return self.State(*(f.default for f in self.loop.fields))   # a Vec's 0 is the zero vector

    @property
    def combine(self):
        if self.combine_fn is None:
            return None
        fn, loop, State = self.combine_fn, self.loop, self.State

        def combine(a, b, **params):
            args = [_value(v, f.type) for v, f in zip(tuple(a), loop.fields)] + \
                   [_value(v, f.type) for v, f in zip(tuple(b), loop.fields)]
            env = {name: v for (name, _), v in zip(fn.inputs, args)}
            env.update({k: np.asarray(v, dtype=np.float64) if isinstance(v, (list, np.ndarray)) else v
                        for k, v in params.items()})
            with quiet():
                out = evaluate(fn.outputs, env, NUMPY)
            return State(*(_plain_value(v, f.type) for v, f in zip(out, loop.fields)))

        combine.__doc__ = f"The combine of {loop.title!r}, synthesized by {self.method}."
        return combine

    def run(self, *arrays, backend: str = "numpy", **params):
        if self.combine_fn is None:
            raise ValueError(f"{self.loop.name}: no combine ({self.verdict}): {self.reason}")
        match backend:
            case "numpy":
                from thm3.parallel import apply_result, run_parallel
                state = run_parallel(self.loop, self.combine_fn, list(arrays), params)
                return apply_result(self.loop, state, params)
            case "cupy":
                from thm3.gpu.runtime import run_cupy       # renders CUDA; imports CuPy lazily
                return run_cupy(self, *arrays, **params)
            case _:
                raise ValueError(f"backend must be 'numpy' or 'cupy', not {backend!r}")

    def to_json(self) -> dict:
        from thm3.printer import to_text
        combine_text = None
        if self.combine_fn is not None:
            combine_text = {f.name: to_text(e) for f, e in zip(self.loop.fields, self.combine_fn.outputs)}
        return {
            "loop": self.loop.name,
            "title": self.loop.title,
            "path": self.loop.path,
            "verdict": self.verdict,
            "reason": self.reason,
            "fields": [{"name": f.name, "type": f.type.value, "default": _json_num(f.default)}
                       for f in self.loop.fields],
            "combine": combine_text,
            "method": self.method or None,
            "identity": [_json_num(f.default) for f in self.loop.fields],
            "proofs": dict(self.proofs),
            "proof_details": dict(self.law_details),
            "bird_detail": self.bird_detail,
            "invariants": self.invariants,
            "witness": self.witness,
            "witness_params": {k: plain(v) for k, v in self.witness_params.items()},
            "lifted": self.lifted,
            "lift_added": self.lift_added,
            "transport": self.transport or None,
            "stability": dict(self.stability),
            "stability_notes": dict(self.stability_notes),
            "timings": {s.name: round(s.seconds, 4) for s in self.steps} | {"total": round(self.seconds, 4)},
        }


def _json_num(v):
    if isinstance(v, float) and v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    return v


def _value(v, type_: Type):
    if type_ is Type.VEC:
        return np.asarray(v, dtype=np.float64)
    if type_ is Type.BOOL:
        return np.bool_(v)
    if type_ is Type.INT:
        return np.int64(v)
    return np.float64(v)


def _plain_value(v, type_: Type):
    arr = np.asarray(v)
    if type_ is Type.VEC:
        return arr.astype(np.float64)
    item = arr.reshape(-1)[0].item() if arr.size else arr.item()
    if type_ is Type.BOOL:
        return bool(item)
    if type_ is Type.INT:
        return int(item)
    return float(item)


# -- the steps ----------------------------------------------------------------------

def analyze_loop(loop: Loop, *, timeout: float = 60.0, lift: bool = True) -> Analysis:
    t_start = time.monotonic()
    deadline = t_start + timeout
    a = Analysis(loop)

    def step(name, fn):
        t0 = time.monotonic()
        status, detail = fn()
        a.steps.append(Step(name, status, time.monotonic() - t0, detail))

    triples: list = []

    def sample():
        triples.extend(make_triples(loop))
        return "done", f"{sum(t.a[0].shape[0] for t in triples)} pairs of lists"

    step("sample", sample)

    def invariants():
        inv, timed_out = infer(loop, triples, min(deadline, time.monotonic() + timeout * 0.3))
        a.invariant_exprs = inv
        return ("timeout" if timed_out else "proved"), f"{len(inv)} inductive facts"

    step("invariants", invariants)
    setting = Setting(loop, a.invariant_exprs)

    step("bird", lambda: bird_check(a, setting, deadline))

    witness = []

    def find():
        try:
            from thm3.witness import find_witness
        except ImportError:
            return "skipped", "witness search not available"
        w = find_witness(loop, timeout=min(2.0, max(0.1, deadline - time.monotonic())))
        if w is None:
            return "none", "no two lists with equal state told apart"
        witness.append(w)
        return "found", "no combine over this state exists"

    step("witness", find)
    if witness:
        w = witness[0]
        a.verdict = "not-homomorphism"
        a.witness = [list(w.xs1), list(w.xs2), list(w.ys), w.side]
        a.witness_params = dict(w.params)
        a.reason = f"{w.describe()}: no combine over ({', '.join(loop.field_names)}) exists"
        for law in LAWS:
            a.proofs[law] = "skipped"
        if lift:
            step("lift", lambda: lift_step(a, deadline))
        step("stability", lambda: stability(a, setting, deadline))
        a.seconds = time.monotonic() - t_start
        return a

    found: list = []
    tidied: list = []
    methods: dict = {}

    def synth():
        try:
            cands, tried = synthesize(loop, triples, deadline=deadline, methods=methods)
        except SearchTimeout:
            return "timeout", "the search for a combine ran out of time"
        tidy = tidy_combine(loop, cands[0], triples) if cands else None
        if tidy is not None:
            tidied.append(tidy)
            cands.insert(0, tidy)
        found.extend(cands)
        if not cands:
            return "none", f"{tried} candidate terms, none agreed with h(xs + ys)"
        return "found", f"{len(cands)} candidate(s) after {tried} terms"

    step("synthesize", synth)
    if not found:
        a.verdict = "unknown"
        a.reason = ("the search for a combine ran out of time (--timeout)" if a.steps[-1].status == "timeout"
                    else "no combine found by the sketch search, and no witness that none exists")
        for law in LAWS:
            a.proofs[law] = "skipped"
        step("stability", lambda: stability(a, setting, deadline))
        a.seconds = time.monotonic() - t_start
        return a

    def prove_laws():
        best = None
        for cand in found:
            statuses, details, timed_out = prove_combine(loop, setting, cand, triples, deadline)
            score = sum(s == "proved" for s in statuses.values())
            if best is None or score > best[0]:
                best = (score, cand, statuses, details, timed_out)
            if score == len(LAWS) or time.monotonic() > deadline:
                break
        _, cand, statuses, details, timed_out = best
        a.combine_fn = cand
        kinds = sorted(set(methods.values()))
        a.method = kinds[0] if len(kinds) == 1 else "; ".join(f"{k}: {v}" for k, v in methods.items())
        if tidied and cand is tidied[0]:
            a.method += "; rational terms tidied with SymPy"
        a.method += " (each term checked on batched reachable states, then proved)"
        a.proofs.update(statuses)
        a.law_details.update(details)
        if any(s == "failed" for s in statuses.values()):
            a.verdict = "unknown"
            a.reason = "the candidate combine failed a law: " + "; ".join(
                f"{k}: {details[k]}" for k, s in statuses.items() if s == "failed")
            a.combine_fn = None
        elif all(s == "proved" for s in statuses.values()):
            a.verdict = "homomorphism"
        elif timed_out:
            a.verdict = "unknown"
            a.reason = "solver time ran out before the laws were proved (they pass on random lists)"
        else:
            a.verdict = "homomorphism"
            a.reason = "laws " + ", ".join(k for k, s in statuses.items() if s != "proved") + \
                " tested on random lists, not proved"
        return a.verdict, ", ".join(f"{k} {v}" for k, v in statuses.items())

    step("prove", prove_laws)
    if a.proofs.get("bird") == "failed":
        a.reason = "; ".join(r for r in (a.reason, f"the given right fold is wrong: {a.bird_detail}") if r)
    if a.combine_fn is not None:
        step("transport", lambda: transport_step(a, triples, setting, deadline))
    step("stability", lambda: stability(a, setting, deadline))
    a.seconds = time.monotonic() - t_start
    return a


def tidy_combine(loop: Loop, combine: Fn, triples) -> Fn | None:
    """The combine with fields rewritten by `thm3.tidy` where that agrees on samples."""
    from thm3.synthesize import _Checker
    from thm3.tidy import tidy_field
    outs = list(combine.outputs)
    changed = False
    for i in range(len(outs)):
        t = tidy_field(loop, combine, i)
        if t is not None and _Checker(combine.inputs, triples, i).passes(t):
            outs[i] = t
            changed = True
    return Fn(combine.inputs, tuple(outs)) if changed else None


def transport_step(a: Analysis, triples, setting: Setting, deadline: float):
    from thm3.transport import find
    t = find(a.loop, a.combine_fn, triples, setting, deadline)
    if t is None:
        return "none", "no map onto a product of known monoids in the grammar"
    a.transport = t.describe(a.loop)
    a.transport_map = t
    if t.trivial:
        a.transport = "⊙ is itself a product of monoids: " + a.transport
    return t.status, a.transport


def _show(xs) -> str:
    return "[" + ", ".join(str(x) for x in xs) + "]"


def prove_combine(loop, setting, combine, triples, deadline):
    statuses, details = {}, {}
    timed_out = False
    for law, fn in (("identity", prove.prove_identity), ("associativity", prove.prove_associativity),
                    ("homomorphism", prove.prove_homomorphism)):
        out = fn(setting, combine, deadline)
        if out.proved:
            statuses[law] = "proved"
            details[law] = f"{out.paths} path(s), {out.seconds:.2f} s"
            continue
        timed_out |= out.status == "timeout"
        bad = violation_on_samples(law, loop, combine, triples)
        statuses[law] = "failed" if bad else "tested"
        details[law] = bad or f"not proved ({out.detail}); holds on {sum(t.a[0].shape[0] for t in triples)} random cases"
    return statuses, details, timed_out


def violation_on_samples(law: str, loop: Loop, combine: Fn, triples) -> str:
    """A concrete violation of `law` on sampled reachable states, or ''."""
    for t in triples:
        rows = t.a[0].shape[0]
        init = batch_init(loop, rows, t.a[-1].shape[-1] if loop.fields[-1].type is Type.VEC else 3)
        init = tuple(np.broadcast_to(i, x.shape).copy() for i, x in zip(init, t.a))
        match law:
            case "identity":
                checks = [(batch_combine(combine, init, t.a, t.params), t.a),
                          (batch_combine(combine, t.a, init, t.params), t.a)]
            case "associativity":
                c = tuple(np.roll(x, 1, axis=0) for x in t.c)
                ab = tuple(batch_combine(combine, t.a, t.b, t.params))
                bc = tuple(batch_combine(combine, t.b, c, t.params))
                checks = [(batch_combine(combine, ab, c, t.params), batch_combine(combine, t.a, bc, t.params))]
            case _:
                checks = [(batch_combine(combine, t.a, t.b, t.params), t.c)]
        for got, want in checks:
            for i, (g, w) in enumerate(zip(got, want)):
                ok = batch_close(np.broadcast_to(g, np.shape(w)) if np.ndim(g) else g, w, rtol=1e-6, atol=1e-8)
                if not bool(np.all(ok)):
                    r = int(np.argmin(ok))
                    return (f"field {loop.fields[i].name}: {plain(np.asarray(g)[r] if np.ndim(g) else g)} != "
                            f"{plain(np.asarray(w)[r])} on a={plain(tuple(x[r] for x in t.a))}, "
                            f"b={plain(tuple(x[r] for x in t.b))}")
    return ""


# -- Bird ----------------------------------------------------------------------------

def bird_check(a: Analysis, setting: Setting, deadline: float):
    loop = a.loop
    if loop.right is None:
        a.proofs["bird"] = "skipped"
        a.bird_detail = "no right fold given"
        return "skipped", a.bird_detail
    out = prove.prove_bird(setting, deadline)
    if out.proved:
        a.proofs["bird"] = "proved"
        a.bird_detail = (f"left and right agree on [x], and right(x, left(s, y)) == left(right(x, s), y) "
                         f"on reachable s ({out.paths} paths, {out.seconds:.2f} s)")
        return "proved", a.bird_detail
    bad, checked = bounded_bird(loop)
    if bad is not None:
        a.proofs["bird"] = "failed"
        a.bird_detail = f"left and right differ on {bad[0]}: left gives {bad[1]}, right gives {bad[2]}"
        return "failed", a.bird_detail
    a.proofs["bird"] = "bounded"
    a.bird_detail = f"not proved by induction ({out.detail}); agree on all {checked} lists of the bounded domain"
    return "bounded", a.bird_detail


def small_domain(loop: Loop, params: dict) -> list[tuple]:
    """Few elements, ties and signs, honouring the preconditions."""
    dom = Domain(loop)
    per = []
    for d in loop.elements:
        if d.index:
            per.append([None])
        elif d.type is Type.BOOL:
            per.append([False, True])
        elif d.type is Type.INT:
            per.append(list(SMALL_INTS[:5]))
        elif d.type is Type.VEC:
            per.append([np.array([1.0, 0.0, -1.0]), np.array([-2.0, 1.0, 0.5]), np.zeros(3)])
        else:
            per.append(list(SMALL_REALS[:6]))
    out = []
    for combo in itertools.product(*per):
        e = tuple(0 if c is None else c for c in combo)
        if dom._precondition_holds(e, params):
            out.append(combo)
    return out[:12]


def _row(loop: Loop, state: tuple, r: int) -> tuple:
    return tuple(plain(x[r]) if f.type is Type.VEC else plain(x[r][0]) for f, x in zip(loop.fields, state))


def bounded_bird(loop: Loop, max_lists: int = 4000):
    """Every list up to a length over the small domain: (list, left, right) on a
    difference, else None; and how many lists were checked."""
    rng = np.random.default_rng(1)
    params = Domain(loop).params(rng)
    elems = small_domain(loop, params)
    checked = 0
    for n in range(1, 6):
        if len(elems) ** n > max_lists:
            break
        lists = [[tuple(i if v is None else v for i, v in enumerate(e)) for e in combo]
                 for combo in itertools.product(elems, repeat=n)]
        lists = [[tuple(pos if v is None else v for v in e) for pos, e in enumerate(xs)] for xs in lists]
        steps = stack_elements(loop, lists)
        rows = len(lists)
        left_state = batch_fold(loop, steps, params, batch_init(loop, rows, 3))
        right_state = batch_init(loop, rows, 3)
        for e in reversed(steps):
            right_state = batch_step(loop.right, right_state, e, params)
        ok = np.ones(rows, dtype=bool)
        for x, y in zip(left_state, right_state):
            ok &= batch_close(x, y)
        checked += rows
        if not ok.all():
            r = int(np.argmin(ok))
            xs = [plain(e[0]) if len(e) == 1 else plain(e) for e in lists[r]]
            return (xs, _row(loop, left_state, r), _row(loop, right_state, r)), checked
    return None, checked


# -- lifting ---------------------------------------------------------------------------

def lift_step(a: Analysis, deadline: float):
    try:
        from thm3.lift import lift
    except ImportError:
        return "skipped", "lifting not available"

    accepted: list = []

    def proves(lifted: Loop) -> bool:
        b = analyze_loop(lifted, timeout=max(1.0, min(10.0, deadline - time.monotonic())), lift=False)
        ok = b.verdict == "homomorphism" and all(b.proofs.get(k) == "proved" for k in LAWS)
        if ok:
            accepted.append(b)
        return ok

    res = lift(a.loop, timeout=max(1.0, deadline - time.monotonic()), prove=proves)
    if res.loop_text is None:
        return "none", res.reason
    a.lifted = with_right_fold(res.loop_text, accepted[-1]) if accepted else res.loop_text
    a.lift_added = list(res.added)
    return "found", "; ".join(res.added)


def derived_right(loop: Loop, combine: Fn) -> list[Expr]:
    """right(e, acc) = combine(left(init, e), acc), simplified: the right fold that a
    combine gives (over "acc.<field>", the element and the loop parameters)."""
    from thm3.ir import const as mk_const, substitute, var
    from thm3.simplify import simplify
    init = {f"acc.{f.name}": mk_const(f.default if f.type is not Type.REAL else float(f.default),
                                      f.type if f.type is not Type.VEC else Type.REAL)
            for f in loop.fields}
    single = substitute(loop.left.outputs, init)
    mapping = {f"a.{f.name}": e for f, e in zip(loop.fields, single)}
    mapping |= {f"b.{f.name}": var(f"acc.{f.name}", f.type) for f in loop.fields}
    return [simplify(e) for e in substitute(combine.outputs, mapping)]


def with_right_fold(text: str, b: Analysis) -> str:
    """The lifted loop with right(e, acc) = combine(left(init, e), acc), simplified."""
    import ast

    from thm3.frontend import parse_source
    from thm3.loopfile import render_loop
    loop = parse_source(text, b.loop.path)
    right = derived_right(loop, b.combine_fn)
    doc = ast.get_docstring(ast.parse(text)) or loop.title
    title, _, rest = doc.partition("\n")
    rest = rest.strip() + ("\n" if rest.strip() else "") + \
        "The right fold is derived from the proved combine: right(e, acc) = combine(left(init, e), acc)."
    return render_loop(title, rest, loop.fields, loop.params, loop.elements, loop.left.outputs,
                       right, loop.result, loop.preconditions, result_type=loop.result_type)


# -- stability -------------------------------------------------------------------------

def stability(a: Analysis, setting: Setting, deadline: float):
    loop, combine = a.loop, a.combine_fn
    fns = [("left", loop.left, ["s"], ["x"])]
    if combine is not None:
        fns.append(("combine", combine, ["a", "b"], []))
    if loop.result is not None:
        fns.append(("result", loop.result, ["s"], []))

    def args_for(fn_name, operands, elements):
        def args_of(env):
            vals = []
            for p in operands:
                vals += [env[f"{p}.{f.name}"] for f in loop.fields]
            for p in elements:
                vals += [env[f"{p}.{d.name}"] for d in loop.elements]
            return vals
        return args_of

    exp_status, exp_notes = [], []
    div_status, div_notes = [], []
    probes: dict = {}

    def settle(out, name, fn, proved_note, find_bad, sampled_note, statuses, notes):
        """A proof's outcome, or where none was reached, what the sampled states say:
        "failed" with the breaking value, else "tested"."""
        if out.proved:
            statuses.append("proved")
            notes.append(f"{name}: {proved_note}")
            return
        if not probes:
            probes.update(_numeric_inputs(loop, fns))      # sampled only when a proof is missing
        bad = find_bad(fn, probes[name])
        statuses.append("failed" if bad else "tested")
        notes.append(f"{name}: " + (bad or f"not proved ({out.detail}); {sampled_note}"))

    for name, fn, ops, els in fns:
        out = prove.exp_arguments_nonpositive(setting, fn, ops, els, args_for(name, ops, els), deadline)
        if out.status != "skipped":
            settle(out, name, fn, "every exp argument <= 0", _positive_exp_argument,
                   "no positive argument on sampled states", exp_status, exp_notes)
        if any(_divides(e) for e in walk(fn.outputs)):
            out = prove.no_nan_outputs(setting, fn, ops, els, args_for(name, ops, els), deadline, cause="division")
            settle(out, name, fn, "no denominator is 0 where its quotient is used", _nan_output,
                   "no NaN on sampled states", div_status, div_notes)
    a.stability["exp_overflow"] = _worst(exp_status)
    a.stability["division"] = _worst(div_status)
    if combine is not None:
        out = prove.identity_nan_free(setting, combine, deadline)
        a.stability["identity_nan"] = "proved" if out.proved else "failed"
        a.stability_notes["identity_nan"] = ("combining with the identity creates no NaN" if out.proved
                                             else out.detail)
    else:
        a.stability["identity_nan"] = "skipped"
    a.stability_notes["exp_overflow"] = "; ".join(exp_notes) or "no exp"
    a.stability_notes["division"] = "; ".join(div_notes) or "no division"
    return ", ".join(f"{k} {v}" for k, v in a.stability.items()), ""


def _divides(e: Expr) -> bool:
    """A division, or a power with a negative exponent (a division in disguise)."""
    return e.op is Op.DIV or (e.op is Op.POW and e.arg < 0)


def _numeric_inputs(loop: Loop, fns) -> dict:
    """Sampled input environments for each function checked for stability."""
    triples = make_triples(loop, seed=7, rows=8, max_len=4, param_sets=2)
    rng = np.random.default_rng(7)
    dom = Domain(loop)
    out = {}
    for name, fn, ops, els in fns:
        envs = []
        for t in triples:
            rows = t.a[0].shape[0]
            names = [n for n, _ in fn.inputs]
            vals = list(t.a) + (list(t.b) if len(ops) == 2 else [])
            if els:
                elems = dom.random_list(rng, t.params, rows, small=len(envs) % 2 == 0)
                steps = stack_elements(loop, [[e] for e in elems])
                vals += list(steps[0]) if steps else []
            envs.append(dict(zip(names, vals)) | t.params)
        out[name] = envs
    return out


def _positive_exp_argument(fn: Fn, envs) -> str:
    args = tuple(e.src[0] for e in walk(fn.outputs) if e.op in (Op.EXP, Op.EXP2))
    with quiet():
        for env in envs:
            for arg, v in zip(args, evaluate(args, env, NUMPY)):
                v = np.asarray(v, dtype=np.float64)
                if np.any(v > 0):
                    from thm3.printer import to_text
                    return f"exp({to_text(arg)}) has argument {float(np.max(v)):.4g} > 0 on a sampled state"
    return ""


def _nan_output(fn: Fn, envs) -> str:
    """A sampled row with finite inputs where a denominator is 0 and an output is not
    finite (inf or NaN from the division)."""
    dens = tuple(e.src[1] if e.op is Op.DIV else e.src[0] for e in walk(fn.outputs) if _divides(e))
    with quiet():
        for env in envs:
            # batched inputs only (loop parameters are shared by every row)
            ins = [np.asarray(env[n], dtype=np.float64) for n, _ in fn.inputs
                   if n in env and np.ndim(env[n]) == 2]
            if not ins:
                continue
            rows = np.shape(ins[0])[0]
            finite = np.ones(rows, dtype=bool)
            for x in ins:
                finite &= np.isfinite(x).reshape(rows, -1).all(axis=1)
            zero = np.zeros(rows, dtype=bool)
            for d in evaluate(dens, env, NUMPY):
                d = np.broadcast_to(np.asarray(d, dtype=np.float64), (rows,) + np.shape(d)[1:])
                zero |= (d == 0).reshape(rows, -1).any(axis=1)
            bad = np.zeros(rows, dtype=bool)
            for v in evaluate(fn.outputs, env, NUMPY):
                v = np.broadcast_to(np.asarray(v, dtype=np.float64), (rows,) + np.shape(v)[1:])
                bad |= ~np.isfinite(v).reshape(rows, -1).all(axis=1)
            if np.any(bad & zero & finite):
                return "a division by 0 gives inf or NaN on a sampled state with finite inputs"
    return ""


def _worst(statuses: list[str]) -> str:
    if not statuses:
        return "skipped"
    for s in ("failed", "tested"):
        if s in statuses:
            return s
    return "proved"
