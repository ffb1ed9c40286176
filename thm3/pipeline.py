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
            # single States, or batches (fields as NumPy/CuPy arrays) lane by lane
            from thm3.backends.states import combine_states
            return combine_states(loop, fn, a, b, params, State)

        combine.__doc__ = f"The combine of {loop.title!r}, synthesized by {self.method}."
        return combine

    def run(self, *arrays, backend: str = "numpy", **params):
        if self.combine_fn is None:
            raise ValueError(f"{self.loop.name}: no combine ({self.verdict}): {self.reason}")
        match backend:
            case "numpy":
                from thm3.backends.numpy_tree import apply_result, run_parallel
                state = run_parallel(self.loop, self.combine_fn, list(arrays), params)
                return apply_result(self.loop, state, params)
            case "numba":
                from thm3.backends.numba_tree import run_numba
                from thm3.backends.numpy_tree import apply_result
                return apply_result(self.loop, run_numba(self.loop, self.combine_fn, list(arrays), params), params)
            case "cupy":
                from thm3.gpu.runtime import run_cupy       # renders CUDA; imports CuPy lazily
                return run_cupy(self, *arrays, **params)
            case _:
                raise ValueError(f"backend must be 'numpy', 'numba' or 'cupy', not {backend!r}")

    def scan(self, *arrays, backend: str = "numpy", result: bool = False, **params):
        """Every prefix state (inclusive, in list order): a State whose fields are arrays of
        length n (n x D for a Vec); with result=True the array of prefix results."""
        if self.combine_fn is None:
            raise ValueError(f"{self.loop.name}: no combine ({self.verdict}): {self.reason}")
        from thm3.backends.scan import prefix_results, scan_states
        states = scan_states(self.loop, self.combine_fn, list(arrays), params, backend=backend)
        return prefix_results(self.loop, states, params) if result else self.State(*states)

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
