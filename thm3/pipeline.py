"""The pipeline: loop file -> IR -> invariants -> Bird check -> witness or combine ->
proofs -> stability, gathered in one frozen `Analysis` (the library API of the spec).

`STEPS` is the flat list of named steps.  Each step is a function of the `Context` and
the analysis so far that returns its results (`Done`); `analyze_loop` runs the steps
whose condition holds, in order, and builds each next `Analysis` with `replace`, so the
CLI can show and time them one by one."""
from __future__ import annotations

import sys
import time
from collections import namedtuple
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from thm3.analysis.bird import bird_check
from thm3.errors import BackendUnavailable, UsageError
from thm3.analysis.invariants import infer
from thm3.analysis.stability import stability
from thm3.ir import Fn, Loop, Type
from thm3.ir.cache import Bounded
from thm3.prove.budget import GRACE, PastDeadline, hard_deadline, young_collections_only
from thm3.prove.laws import Setting
from thm3.semantics.critical import division_guards
from thm3.prove.combine import LAWS, commutativity, prove_combine, verdict_of
from thm3.semantics.evaluate import NUMPY, evaluate, quiet
from thm3.semantics.samples import PreconditionsUnmet, make_triples, plain
from thm3.status import Status, Verdict
from thm3.analysis.witness import WIDER_SETTINGS, exact_lists, find_witness, json_lists
from thm3.lift import lift, with_right_fold
from thm3.syntax.loopfile import loop_text

@dataclass(frozen=True)
class Step:
    """One step as it ran: its name, status (the verdict, for "prove"), time and a line
    of detail."""
    name: str
    status: Status | Verdict
    seconds: float
    detail: str = ""


_STATE_CLASSES = Bounded(256)       # field names -> the namedtuple State


def state_class(names: tuple[str, ...]) -> type:
    """The namedtuple State of these field names, one class for each (it pickles: a State
    is rebuilt from its names and values, as a Dask worker or a process pool needs)."""
    got = _STATE_CLASSES.get(names)
    if got is None:
        base = namedtuple("State", names)
        got = _STATE_CLASSES.put(names, type("State", (base,), {
            "__slots__": (), "__module__": __name__,
            "__reduce__": lambda self: (_state_value, (names, tuple(self)))}))
    return got


def _state_value(names: tuple[str, ...], values: tuple):
    return state_class(names)(*values)


@dataclass(frozen=True)
class Analysis:
    """What the pipeline found about one loop: the verdict and how it was reached, the
    combine and its proofs, a witness or a lift, the stability verdicts, and the steps as
    they ran.  What the steps hand on to later steps lives in `Work`, not here."""
    loop: Loop
    verdict: Verdict = Verdict.UNKNOWN
    reason: str = ""
    combine_fn: Fn | None = None
    method: str = ""
    proofs: dict = field(default_factory=dict)
    invariant_exprs: list = field(default_factory=list)
    witness: list | None = None
    witness_params: dict = field(default_factory=dict)
    lifted: str | None = None
    lift_added: list = field(default_factory=list)
    lifted_analysis: "Analysis | None" = None      # the lifted loop's analysis: its proved combine
    stability: dict = field(default_factory=dict)
    stability_notes: dict = field(default_factory=dict)
    bird_detail: str = ""
    transport: str = ""
    transport_map: object = None
    law_details: dict = field(default_factory=dict)
    steps: tuple[Step, ...] = ()
    seconds: float = 0.0
    route: str = ""                                          # the synthesis route that found the combine
    methods: dict = field(default_factory=dict, repr=False)  # field -> the synthesis stage that found its term

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

    def emit(self, outdir, *, dtype: str = "float32", dim: int | None = None, target: str = "cuda") -> list:
        """Write the combine's code into `outdir`; returns the paths.  target="cuda": the
        kernel source and its CuPy module (NAME.cu, NAME.py); target="jax": the JAX module
        NAME_jax.py (`thm3.backends.jax_module`); target="triton": the Triton module
        NAME_triton.py (`thm3.backends.triton_module`)."""
        if self.combine_fn is None:
            raise UsageError(f"{self.loop.name}: nothing to emit ({self.verdict}): {self.reason}"
                             + ("; `thm3 lift` (or a.lifted) gives a loop with a combine" if self.witness else ""))
        if target in ("jax", "triton"):
            from pathlib import Path
            if target == "jax":
                from thm3.backends.jax_module import render
            else:
                from thm3.backends.triton_module import render
            text = render(self.loop, self.combine_fn, commutativity=self.proofs.get("commutativity", "unknown"))
            path = Path(outdir) / f"{self.loop.name}_{target}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            return [path]
        if target != "cuda":
            raise UsageError(f"target must be 'cuda', 'jax' or 'triton', not {target!r}")
        from thm3.analysis.attention import recognize
        shape = recognize(self.loop, self.transport_map)
        if shape is not None:                   # attention: tiles of K/V merged by the combine
            from thm3.backends.gpu import gpu
            return list(gpu().emit_attention(self, shape, outdir, dim=dim or 64))
        from thm3.backends.gpu import gpu
        return list(gpu().emit(self.loop, self.combine_fn, outdir, dtype=dtype, dim=dim))

    # -- the spec's API --------------------------------------------------------------
    @property
    def invariants(self) -> list[str]:
        from thm3.report import invariant_text
        return [invariant_text(e) for e in self.invariant_exprs]

    @property
    def State(self):
        """The loop's State as a namedtuple class: one class for each tuple of field names,
        so that `type(s) is a.State` holds for every State this analysis gives."""
        return state_class(self.loop.field_names)

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
            raise UsageError(f"{self.loop.name}: no combine ({self.verdict}): {self.reason}")
        real = _check_run_inputs(self.loop, arrays, params)
        match backend:
            case "numpy":
                from thm3.backends.numpy_tree import apply_result, run_parallel
                state = run_parallel(self.loop, self.combine_fn, list(arrays), params, dtype=real)
                return _in_dtype(apply_result(self.loop, state, params), real)
            case "numba":
                try:
                    from thm3.backends.numba_tree import run_numba
                except ImportError:
                    raise BackendUnavailable("backend='numba' needs Numba: pip install 'thm3[cpu]'") from None
                from thm3.backends.numpy_tree import apply_result
                return apply_result(self.loop, run_numba(self.loop, self.combine_fn, list(arrays), params), params)
            case "cupy":
                try:
                    import cupy  # noqa: F401
                except ImportError:
                    raise BackendUnavailable("backend='cupy' needs CuPy: pip install 'thm3[cuda12]' "
                                             "(or [cuda13])") from None
                from thm3.backends.gpu import gpu           # renders CUDA; imports CuPy lazily
                return gpu().run_cupy(self, *arrays, **params)
            case "jax":
                from thm3.backends.jax_tree import run_jax
                from thm3.backends.numpy_tree import apply_result
                state = run_jax(self.loop, self.combine_fn, list(arrays), params, dtype=real)
                return _in_dtype(apply_result(self.loop, state, params), real)
            case _:
                raise UsageError(f"backend must be 'numpy', 'numba', 'cupy' or 'jax', not {backend!r}")

    def scan(self, *arrays, backend: str = "numpy", result: bool = False, **params):
        """Every prefix state (inclusive, in list order): a State whose fields are arrays of
        length n (n x D for a Vec); with result=True the array of prefix results."""
        if self.combine_fn is None:
            raise UsageError(f"{self.loop.name}: no combine ({self.verdict}): {self.reason}")
        _check_run_inputs(self.loop, arrays, params)
        from thm3.backends.scan import prefix_results, scan_states
        states = scan_states(self.loop, self.combine_fn, list(arrays), params, backend=backend)
        return prefix_results(self.loop, states, params) if result else self.State(*states)

    def to_json(self) -> dict:
        from thm3.ir.printer import to_text
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
            "witness": json_lists(self.witness),
            "witness_exact": exact_lists(self.witness),
            "witness_params": json_lists({k: plain(v) for k, v in self.witness_params.items()}),
            "witness_params_exact": exact_lists({k: plain(v) for k, v in self.witness_params.items()}),
            "lifted": self.lifted,
            "lift_added": self.lift_added,
            "lifted_combine": self.lifted_analysis.to_json()["combine"] if self.lifted_analysis else None,
            "transport": self.transport or None,
            "stability": dict(self.stability),
            "stability_notes": dict(self.stability_notes),
            "timings": {s.name: round(s.seconds, 4) for s in self.steps} | {"total": round(self.seconds, 4)},
        }


def _json_num(v):
    if isinstance(v, float) and v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    return v


def _check_run_inputs(loop: Loop, arrays, params: dict):
    """`a.run`'s inputs against the loop: one array per element parameter (an Index is
    implicit), known loop parameters, and the `assert` preconditions on every element.
    Returns the dtype the Real values are computed in: float32 when every Real array is."""
    unknown = sorted(set(params) - {p.name for p in loop.params})
    if unknown:
        known = ", ".join(p.name for p in loop.params) or "none"
        raise UsageError(f"{loop.name}: unknown keyword(s) {', '.join(unknown)}; the loop parameters are {known}")
    missing = [p.name for p in loop.params if p.name not in params]
    if missing:
        raise UsageError(f"{loop.name}: missing loop parameter(s) {', '.join(missing)}: pass "
                         + ", ".join(f"{name}=..." for name in missing))
    given = [d for d in loop.elements if not d.index]
    if len(arrays) != len(given):
        raise UsageError(f"{loop.name}: {len(arrays)} array(s) given, one per element parameter expected: "
                        + ", ".join(d.name for d in given))
    data = [np.asarray(x) for x in arrays]
    if loop.preconditions and data and data[0].shape[0]:
        n = data[0].shape[0]
        env = {d.name: np.arange(n) for d in loop.elements if d.index}
        env.update({d.name: (x if d.type is Type.VEC else x.reshape(n, 1)) for d, x in zip(given, data)})
        env.update({p.name: np.asarray(params[p.name], dtype=np.float64) for p in loop.params if p.name in params})
        from thm3.ir import free_vars
        from thm3.report import invariant_text
        names = {p.name for p in loop.params}
        for cond in loop.preconditions:
            if free_vars([cond]) <= names:      # over the parameters alone: blame them, not the data
                with quiet():
                    holds = bool(np.all(evaluate([cond], env, NUMPY)[0]))
                if not holds:
                    values = ", ".join(f"{p.name} = {plain(params[p.name])}" for p in loop.params
                                       if p.name in free_vars([cond]))
                    raise UsageError(f"{loop.name}: the loop parameter(s) {values} break the precondition "
                                     f"`assert {invariant_text(cond)}`")
                continue
            with quiet():
                holds = np.asarray(evaluate([cond], env, NUMPY)[0])
                holds = np.broadcast_to(holds, (n, 1)) if holds.ndim == 0 else holds   # a condition on parameters only
                ok = np.broadcast_to(holds.reshape(n, -1).all(axis=1), (n,))
            if not ok.all():
                i = int(np.argmin(ok))
                values = ", ".join(f"{d.name} = {plain(x[i])}" for d, x in zip(given, data))
                raise UsageError(f"{loop.name}: element {i} ({values}) breaks the precondition "
                                 f"`assert {invariant_text(cond)}`")
    reals = [x for d, x in zip(given, data) if d.type in (Type.REAL, Type.VEC)]
    return np.float32 if reals and all(x.dtype == np.float32 for x in reals) else np.float64


def _in_dtype(value, real):
    """The result with its floats in the dtype the run computed in."""
    if real is np.float64:
        return value
    if isinstance(value, tuple):                # a tuple or NamedTuple keeps its class
        values = [_in_dtype(v, real) for v in value]
        return type(value)(*values) if hasattr(value, "_fields") else tuple(values)
    return real(value) if isinstance(value, (float, np.floating)) else value


# -- the steps ----------------------------------------------------------------------

@dataclass(frozen=True)
class Context:
    """What every step reads and none changes: the loop, the time budget, whether to lift,
    whether a combine whose laws are only tested counts as a homomorphism."""
    loop: Loop
    timeout: float
    deadline: float
    lift: bool
    accept_tested: bool = False
    lift_unknown: bool = False      # lift an "unknown" loop too (nothing prunes the search then)


@dataclass(frozen=True)
class Work:
    """What steps hand on to later steps, beside the answer: the sampled lists, the proof
    setting (the loop and its invariants), the synthesis' record."""
    samples: tuple = ()                 # Triples of sampled lists
    setting: Setting | None = None
    synthesis: object = None            # thm3.synth.Synthesis: the combine found, and its laws as the routes proved them


@dataclass(frozen=True)
class Done:
    """A step's results: its status and detail, the fields of `Analysis` it sets, and
    those of `Work`."""
    status: Status | Verdict
    detail: str
    changes: dict = field(default_factory=dict)
    work: dict = field(default_factory=dict)
    last: bool = False          # no later step can run (no lists meet the preconditions)


def sample(ctx: Context, a: Analysis, w: Work) -> Done:
    try:
        triples = tuple(make_triples(ctx.loop))
    except PreconditionsUnmet as err:       # nothing to test or search on: "unknown", and why
        return Done(Status.NONE, str(err), {"reason": f"{err}; no analysis without lists",
                                            "proofs": dict.fromkeys(("bird",) + LAWS, Status.SKIPPED)}, last=True)
    return Done(Status.DONE, f"{sum(t.a[0].shape[0] for t in triples)} pairs of lists", work={"samples": triples})


def infer_invariants(ctx: Context, a: Analysis, w: Work) -> Done:
    # a lifted loop that came with its combine (`Loop.combine_hint`) needs no search for one,
    # and its proofs split on the reachable control, which the invariants give: half the
    # time for them (a debounce's 38 lifted fields: about 10 s of candidates, which 30%
    # of a 40 s share cut short on a loaded machine, and then no invariant at all)
    share = 0.5 if ctx.loop.combine_hint is not None else 0.3
    inv, timed_out = infer(ctx.loop, list(w.samples), min(ctx.deadline, time.monotonic() + ctx.timeout * share))
    return Done(Status.TIMEOUT if timed_out else Status.PROVED, f"{len(inv)} inductive facts",
                {"invariant_exprs": inv}, work={"setting": Setting(ctx.loop, inv)})


def check_bird(ctx: Context, a: Analysis, w: Work) -> Done:
    status, detail = bird_check(ctx.loop, w.setting, ctx.deadline)
    return Done(Status(status), detail, {"proofs": a.proofs | {"bird": Status(status)}, "bird_detail": detail})


def search_witness(ctx: Context, a: Analysis, w: Work) -> Done:
    return _witness(ctx, a, find_witness(ctx.loop, timeout=min(2.0, max(0.1, ctx.deadline - time.monotonic()))))


def search_witness_wider(ctx: Context, a: Analysis, w: Work) -> Done:
    """Where no combine was found for a loop with parameters, the witness search again over
    more of their values: the first tries two (2 and 0.5), and a law may fail only for a
    negative one (a feedback gain of -1 makes a peak tracker ring)."""
    found = find_witness(ctx.loop, timeout=min(2.0, max(0.1, ctx.deadline - time.monotonic())),
                         settings=WIDER_SETTINGS)
    return _witness(ctx, a, found)


def _witness(ctx: Context, a: Analysis, found) -> Done:
    loop = ctx.loop
    if found is None:
        return Done(Status.NONE, "no two lists with equal state told apart")
    return Done(Status.FOUND, "no combine over this state exists", {
        "verdict": Verdict.NOT_HOMOMORPHISM,
        "witness": [list(found.xs1), list(found.xs2), list(found.ys), found.side],
        "witness_params": dict(found.params),
        "reason": f"{found.describe()}: no combine over ({', '.join(loop.field_names)}) exists",
        "proofs": a.proofs | dict.fromkeys(LAWS, Status.SKIPPED)})


def lift_prover(deadline: float):
    """The `prove` callback of `lift`: a lifted loop counts when its own analysis
    (without lifting) proves it a homomorphism; that analysis is the answer."""

    def prove(lifted: Loop, seconds: float | None = None) -> Analysis | None:
        # on Linux in a child process, so that an analysis that overruns its own budget
        # cannot carry the lifting search past the deadline (`SolverTimeout` then);
        # `seconds`: at most that long (the search's share for this lifted loop), and never
        # past `deadline`: the child's answer comes back within its GRACE of its timeout
        from thm3.errors import SolverTimeout
        now = time.monotonic()
        timeout = min(10.0 if seconds is None else seconds, (deadline - now) / (1 + GRACE))
        if timeout < 0.1:
            raise SolverTimeout("no time left to prove the lifted loop")
        if sys.platform.startswith("linux"):
            from functools import partial
            from thm3.prove.budget import within
            b = within(min(now + timeout * (1 + GRACE) + 0.5, deadline),
                       partial(analyze_loop, lifted, timeout=timeout, lift=False), daemon=False)
        else:
            b = analyze_loop(lifted, timeout=timeout, lift=False)
        ok = b.verdict == Verdict.HOMOMORPHISM and all(b.proofs.get(k) == Status.PROVED for k in LAWS)
        return b if ok else None

    return prove


def lift_state(ctx: Context, a: Analysis, w: Work) -> Done:
    """The lifting search with this analyzer as prover; the lifted loop gets the right
    fold its proved combine gives, and its text is rendered once, here."""
    return _lift_done(lift(ctx.loop, timeout=max(0.0, ctx.deadline - time.monotonic()),
                           prove=lift_prover(ctx.deadline), without_witness=ctx.lift_unknown))


def _lift_done(res) -> Done:
    """A lifting search's answer as a step's: the lifted file (with the right fold its
    proved combine gives), the added fields and the lifted loop's analysis."""
    if res.loop is None:
        return Done(Status.NONE, res.reason)
    text = loop_text(with_right_fold(res.loop, res.proof.combine_fn, res.proof.invariant_exprs))
    return Done(Status.FOUND, "; ".join(res.added),
                {"lifted": text, "lift_added": list(res.added), "lifted_analysis": res.proof})


def lift_by_theorem(ctx: Context, a: Analysis, w: Work) -> Done:
    """An "unknown" loop with no witness, whose step a theorem lifts (a semiring-affine
    block whose composed map the state does not hold: a decay with the length but not the
    power; a finite-state step's copies): those lifts only, each proved; the verdict stays
    "unknown" over the state as written."""
    from thm3.synth import finite, semiring
    if not semiring.lift_units(ctx.loop, lambda r, c, full: f"k_{r}_{c}"):
        try:
            finite.recognise(ctx.loop, min(ctx.deadline, time.monotonic() + 1.0))
        except finite.Failed:
            return Done(Status.NONE, "no lift a theorem gives: the step is neither semiring-affine nor finite-state")
    return _lift_done(lift(ctx.loop, timeout=max(0.0, ctx.deadline - time.monotonic()),
                           prove=lift_prover(ctx.deadline), theorem_only=True))


def synthesize_combine(ctx: Context, a: Analysis, w: Work) -> Done:
    import thm3.synth
    loop, samples = ctx.loop, list(w.samples)
    got = thm3.synth.synthesize(loop, samples, deadline=ctx.deadline,
                                prove=lambda c: prove_combine(loop, w.setting, c, samples, ctx.deadline))
    if got.combine is None:
        timed = any(t.outcome == "timeout" for t in got.attempts)
        return Done(Status.TIMEOUT if timed else Status.NONE, got.tried(), {
            "verdict": Verdict.UNKNOWN, "proofs": a.proofs | dict.fromkeys(LAWS, Status.SKIPPED),
            "reason": _no_combine_reason(loop, got)})
    return Done(Status.FOUND, f"route {got.route}; {got.tried()}", {"route": got.route, "methods": dict(got.methods)},
                work={"synthesis": got})


def _no_combine_reason(loop: Loop, got) -> str:
    reason = f"no combine found (routes tried: {got.tried()}), and no witness that none exists"
    if guards := division_guards(loop):       # a list dividing by zero has no state
        reason += "; the loop divides by zero on some lists: consider " + ", ".join(
            f"`assert {g}`" for g in guards)
    return reason


def prove_laws(ctx: Context, a: Analysis, w: Work) -> Done:
    """The synthesized combine's laws, as the routes proved them while they raced (each
    route's candidates went to `prove_combine` there), judged by `verdict_of`."""
    got = w.synthesis
    cand, statuses, details, timed_out = got.combine, got.statuses, got.details, got.timed_out
    kinds = sorted(set(a.methods.values()))
    method = kinds[0] if len(kinds) == 1 else "; ".join(f"{k}: {v}" for k, v in a.methods.items())
    if got.tidied:
        method += "; rational terms tidied with SymPy"
    method += " (each term checked on batched reachable states, then proved)"
    judged = verdict_of(statuses, details, timed_out, ctx.accept_tested)
    reason = judged.reason
    if a.proofs.get("bird") == Status.FAILED:
        reason = "; ".join(r for r in (reason, f"the given right fold is wrong: {a.bird_detail}") if r)
    return Done(judged.verdict, ", ".join(f"{k} {v}" for k, v in statuses.items()), {
        "combine_fn": cand if judged.keeps_combine else None, "method": method,
        "proofs": a.proofs | statuses, "law_details": a.law_details | details,
        "verdict": judged.verdict, "reason": reason})


# Seconds the transport step may take: it describes a proved combine and never changes
# the verdict (commutativity has its own bound, `COMMUTATIVITY_SECONDS`).
TRANSPORT_SECONDS = 5.0


def check_commutativity(ctx: Context, a: Analysis, w: Work) -> Done:
    """combine(a, b) == combine(b, a), beside the verdict: which reductions may reorder."""
    status, detail = commutativity(ctx.loop, w.setting, a.combine_fn, list(w.samples), ctx.deadline)
    return Done(status, detail, {"proofs": a.proofs | {"commutativity": status},
                                 "law_details": a.law_details | {"commutativity": detail}})


def find_transport(ctx: Context, a: Analysis, w: Work) -> Done:
    from thm3.analysis.transport import find
    t = find(ctx.loop, a.combine_fn, list(w.samples), w.setting,
             min(ctx.deadline, time.monotonic() + TRANSPORT_SECONDS))
    if t is None:
        return Done(Status.NONE, "no map onto a product of known monoids in the grammar")
    text = t.describe(ctx.loop)
    if t.trivial:
        text = "⊙ is itself a product of monoids: " + text
    return Done(Status(t.status), text, {"transport": text, "transport_map": t})


def check_stability(ctx: Context, a: Analysis, w: Work) -> Done:
    verdicts, notes = stability(ctx.loop, a.combine_fn, w.setting, ctx.deadline)
    if a.combine_fn is not None and (guards := division_guards(ctx.loop)):
        # the combine is proved in the reals, where a list dividing by zero has no state;
        # on such data the emitted code need not match IEEE's sequential fold
        notes = dict(notes)
        notes["division"] = (notes.get("division", "") + "; " if notes.get("division") else "") + (
            "the combine is proved on the lists that do not divide by zero: consider "
            + ", ".join(f"`assert {g}`" for g in guards))
    return Done(Status.DONE, ", ".join(f"{k} {v}" for k, v in verdicts.items()),
                {"stability": {k: Status(v) for k, v in verdicts.items()}, "stability_notes": notes})


@dataclass(frozen=True)
class PipelineStep:
    """A named step and the condition on the analysis so far (and the work handed on)
    under which it runs."""
    name: str
    run: Callable[[Context, Analysis, Work], Done]
    applies: Callable[[Context, Analysis, Work], bool] = lambda ctx, a, w: True


STEPS: tuple[PipelineStep, ...] = (
    PipelineStep("sample", sample),
    PipelineStep("invariants", infer_invariants),
    PipelineStep("bird", check_bird),
    PipelineStep("witness", search_witness),
    PipelineStep("lift", lift_state, lambda ctx, a, w: ctx.lift and (
        a.witness is not None or (ctx.lift_unknown and a.verdict is Verdict.UNKNOWN))),
    PipelineStep("synthesize", synthesize_combine, lambda ctx, a, w: a.witness is None),
    PipelineStep("prove", prove_laws, lambda ctx, a, w: w.synthesis is not None),
    PipelineStep("witness, more parameter values", search_witness_wider, lambda ctx, a, w: (
        bool(ctx.loop.params) and a.verdict is Verdict.UNKNOWN and a.witness is None and a.combine_fn is None
        and time.monotonic() < ctx.deadline - 1.0)),
    PipelineStep("lift", lift_state, lambda ctx, a, w: ctx.lift and a.witness is not None
                 and not any(s.name == "lift" for s in a.steps)),
    PipelineStep("theorem lift", lift_by_theorem, lambda ctx, a, w: ctx.lift and not ctx.lift_unknown and (
        a.verdict is Verdict.UNKNOWN and a.witness is None and a.combine_fn is None
        and time.monotonic() < ctx.deadline - 1.0)),
    PipelineStep("commutativity", check_commutativity,
                 lambda ctx, a, w: a.combine_fn is not None and a.verdict is Verdict.HOMOMORPHISM),
    PipelineStep("transport", find_transport, lambda ctx, a, w: a.combine_fn is not None),
    PipelineStep("stability", check_stability),
)


def analyze_loop(loop: Loop, *, timeout: float = 60.0, lift: bool = True, accept_tested: bool = False,
                 progress=None, lift_unknown: bool = False, started: float | None = None) -> Analysis:
    """Run `STEPS` on `loop` within `timeout` seconds; `lift=False` skips lifting, which
    otherwise runs for a loop with a witness, and with `lift_unknown` for an "unknown"
    one as well (every candidate then goes to the prover: slower, and what `thm3 lift`
    does); `accept_tested` lets laws only tested on lists make a homomorphism.
    `progress(name, step)`, where given, is called as each step starts (step None) and
    ends (its `Step`).  A step still running when the timeout passes is stopped
    (`hard_deadline`; the tenth past it the docs allow is left for a native call to return
    and for the answer to be built) and the answer is what the earlier steps found: "unknown", naming
    the step, where they found no verdict.  `started` (a `time.monotonic()` value) is
    when the timeout began, if before this call (the entry point's parsing and imports)."""
    t_run = time.monotonic()
    t_start = t_run if started is None else started
    ctx = Context(loop, timeout, t_start + timeout, lift, accept_tested, lift_unknown)
    a, w = Analysis(loop), Work()
    current, t0 = None, t_start
    try:
        with hard_deadline(t_start + timeout), young_collections_only():
            for step in STEPS:
                if not step.applies(ctx, a, w):
                    continue
                current, t0 = step.name, time.monotonic()
                if progress:
                    progress(step.name, None)
                done = step.run(ctx, a, w)
                a = replace(a, **done.changes,
                            steps=a.steps + (Step(step.name, done.status, time.monotonic() - t0, done.detail),))
                w = replace(w, **done.work)
                current = None
                if progress:
                    progress(step.name, a.steps[-1])
                if done.last:
                    break
    except PastDeadline:
        a = _stopped(a, current, t0, timeout)
        if progress and current:
            progress(current, a.steps[-1])
    return replace(a, seconds=time.monotonic() - t_run)


def analyze_within_memory(loop: Loop, memory: int, *, timeout: float = 60.0, started: float | None = None,
                          **options) -> Analysis:
    """`analyze_loop` in a forked child that may map at most `memory` MiB beyond what this
    process holds (`memory_bound`; Z3 gets the same bound), as the command line's
    `--memory` runs it: an allocation past the bound, or a native library that aborts
    when one fails, ends the child, never this process, and the answer is "unknown",
    naming the bound.  Linux only; elsewhere the analysis runs here, unbounded.  The
    child's `progress` calls do not reach this process."""
    import sys
    from thm3.prove.budget import within_memory
    started = time.monotonic() if started is None else started
    if not sys.platform.startswith("linux"):
        return analyze_loop(loop, timeout=timeout, started=started, **options)
    options.pop("progress", None)
    got, a = within_memory(memory, started + timeout * (1 + GRACE), _analyze_loop, loop, timeout,
                           started, options)
    if got == "done":
        return a
    why = {"memory": f"the analysis needed more than memory={memory} MiB and was stopped",
           "ended": f"the analysis' process ended without an answer (a native library out of the memory={memory} "
                    "MiB bound aborts)",
           "timeout": f"the analysis ran past timeout {timeout:g} s and was stopped"}[got]
    return Analysis(loop, reason=why + "; a larger bound may give an answer",
                    proofs=dict.fromkeys(("bird",) + LAWS, Status.SKIPPED))


def _analyze_loop(loop: Loop, timeout: float, started: float, options: dict) -> Analysis:
    return analyze_loop(loop, timeout=timeout, started=started, **options)


def _stopped(a: Analysis, step: str | None, t0: float, timeout: float) -> Analysis:
    """The analysis so far, when `step` ran past the hard deadline: what the earlier steps
    found stands (a proved combine, a witness, the routes tried); a verdict not yet
    reached is "unknown", saying which step was stopped."""
    where = f" in step '{step}'" if step else ""
    why = f"the analysis ran past timeout {timeout:g} s{where} and was stopped; a larger timeout may give an answer"
    steps = a.steps + ((Step(step, Status.TIMEOUT, time.monotonic() - t0, why),) if step else ())
    if a.verdict is not Verdict.UNKNOWN or step in ("transport", "stability"):
        return replace(a, steps=steps)
    return replace(a, steps=steps, reason=why, combine_fn=None,
                   proofs=a.proofs | {k: a.proofs.get(k, Status.SKIPPED) for k in LAWS})
