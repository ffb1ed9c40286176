"""The pipeline: loop file -> IR -> invariants -> Bird check -> witness or combine ->
proofs -> stability, gathered in one `Analysis` (the library API of the spec).

Each step is a named function so the CLI can show and time them one by one."""
from __future__ import annotations

import itertools
import time
from collections import namedtuple
from dataclasses import dataclass, field

import numpy as np

from thm3.analysis.bird import bird_check
from thm3.analysis.invariants import infer
from thm3.analysis.stability import stability
from thm3.ir import Fn, Loop, Type
from thm3.prove.laws import Setting
from thm3.prove.combine import LAWS, prove_combine
from thm3.semantics.evaluate import NUMPY, evaluate, quiet
from thm3.semantics.samples import make_triples, plain
from thm3.synth.sketch import SearchTimeout, synthesize
from thm3.synth.tidy import tidy_combine
from thm3.analysis.witness import find_witness
from thm3.lift import lift, with_right_fold

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

    def __repr__(self) -> str:
        from thm3.report import one_line
        return one_line(self)

    def report(self) -> str:
        """The human report, as `thm3 analyze` prints it."""
        from thm3.report import render_report
        return render_report(self)

    def _repr_markdown_(self) -> str:
        from thm3.notebook import markdown
        return markdown(self)

    def _repr_html_(self) -> str:
        from thm3.notebook import html
        return html(self)

    def emit(self, outdir, *, dtype: str = "float32", dim: int | None = None) -> list:
        """Write the kernel source and its CuPy module into `outdir`; returns their paths."""
        if self.combine_fn is None:
            raise ValueError(f"{self.loop.name}: nothing to emit ({self.verdict}): {self.reason}"
                             + ("; `thm3 lift` (or a.lifted) gives a loop with a combine" if self.witness else ""))
        from thm3.analysis.attention import recognize
        shape = recognize(self.loop, self.transport_map)
        if shape is not None:                   # attention: tiles of K/V merged by the combine
            from thm3.gpu.emit_attention import emit_attention
            return list(emit_attention(self, shape, outdir, dim=dim or 64))
        from thm3.gpu.emit import emit as emit_files
        return list(emit_files(self.loop, self.combine_fn, outdir, dtype=dtype, dim=dim))

    # -- the spec's API --------------------------------------------------------------
    @property
    def invariants(self) -> list[str]:
        from thm3.report import invariant_text
        return [invariant_text(e) for e in self.invariant_exprs]

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
        real = _check_run_inputs(self.loop, arrays, params)
        match backend:
            case "numpy":
                from thm3.backends.numpy_tree import apply_result, run_parallel
                state = run_parallel(self.loop, self.combine_fn, list(arrays), params, dtype=real)
                return _in_dtype(apply_result(self.loop, state, params), real)
            case "cupy":
                from thm3.gpu.runtime import run_cupy       # renders CUDA; imports CuPy lazily
                return run_cupy(self, *arrays, **params)
            case _:
                raise ValueError(f"backend must be 'numpy' or 'cupy', not {backend!r}")

    def to_json(self) -> dict:
        from thm3.syntax.printer import to_text
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


def _check_run_inputs(loop: Loop, arrays, params: dict):
    """`a.run`'s inputs against the loop: one array per element parameter (an Index is
    implicit), known loop parameters, and the `assert` preconditions on every element.
    Returns the dtype the Real values are computed in: float32 when every Real array is."""
    unknown = sorted(set(params) - {p.name for p in loop.params})
    if unknown:
        known = ", ".join(p.name for p in loop.params) or "none"
        raise TypeError(f"{loop.name}: unknown keyword(s) {', '.join(unknown)}; the loop parameters are {known}")
    given = [d for d in loop.elements if not d.index]
    if len(arrays) != len(given):
        raise TypeError(f"{loop.name}: {len(arrays)} array(s) given, one per element parameter expected: "
                        + ", ".join(d.name for d in given))
    data = [np.asarray(x) for x in arrays]
    if loop.preconditions and data and data[0].shape[0]:
        n = data[0].shape[0]
        env = {d.name: np.arange(n) for d in loop.elements if d.index}
        env.update({d.name: (x if d.type is Type.VEC else x.reshape(n, 1)) for d, x in zip(given, data)})
        env.update({p.name: np.asarray(params[p.name], dtype=np.float64) for p in loop.params if p.name in params})
        from thm3.report import invariant_text
        for cond in loop.preconditions:
            with quiet():
                ok = np.broadcast_to(np.asarray(evaluate([cond], env, NUMPY)[0]).reshape(n, -1).all(axis=1), (n,))
            if not ok.all():
                i = int(np.argmin(ok))
                values = ", ".join(f"{d.name} = {plain(x[i])}" for d, x in zip(given, data))
                raise ValueError(f"{loop.name}: element {i} ({values}) breaks the precondition "
                                 f"`assert {invariant_text(cond)}`")
    reals = [x for d, x in zip(given, data) if d.type in (Type.REAL, Type.VEC)]
    return np.float32 if reals and all(x.dtype == np.float32 for x in reals) else np.float64


def _in_dtype(value, real):
    """The result with its floats in the dtype the run computed in."""
    if real is np.float64:
        return value
    if isinstance(value, tuple):
        return tuple(_in_dtype(v, real) for v in value)
    return real(value) if isinstance(value, (float, np.floating)) else value


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

def analyze_loop(loop: Loop, *, timeout: float = 60.0, lift: bool = True, progress=None) -> Analysis:
    """`progress(name, step)`, where given, is called as each step starts (step None)
    and ends (its `Step`)."""
    t_start = time.monotonic()
    deadline = t_start + timeout
    a = Analysis(loop)

    def step(name, fn):
        t0 = time.monotonic()
        if progress:
            progress(name, None)
        status, detail = fn()
        a.steps.append(Step(name, status, time.monotonic() - t0, detail))
        if progress:
            progress(name, a.steps[-1])

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

    def bird():
        a.proofs["bird"], a.bird_detail = bird_check(loop, setting, deadline)
        return a.proofs["bird"], a.bird_detail

    step("bird", bird)

    witness = []

    def find():
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
        step("stability", lambda: stability_step(a, setting, deadline))
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
        step("stability", lambda: stability_step(a, setting, deadline))
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
    step("stability", lambda: stability_step(a, setting, deadline))
    a.seconds = time.monotonic() - t_start
    return a


def stability_step(a: Analysis, setting: Setting, deadline: float):
    a.stability, a.stability_notes = stability(a.loop, a.combine_fn, setting, deadline)
    return ", ".join(f"{k} {v}" for k, v in a.stability.items()), ""


def transport_step(a: Analysis, triples, setting: Setting, deadline: float):
    from thm3.analysis.transport import find
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


def lift_step(a: Analysis, deadline: float):

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
