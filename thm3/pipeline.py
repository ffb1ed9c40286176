"""The pipeline: loop file -> IR -> invariants -> Bird check -> witness or combine ->
proofs -> stability, gathered in one frozen `Analysis` (`thm3.answer`: the library API of
the spec).

`STEPS` is the flat list of named steps.  Each step is a function of the `Context` and
the analysis so far that returns its results (`Done`); `analyze_loop` runs the steps
whose condition holds, in order, and builds each next `Analysis` with `replace`, so the
CLI can show and time them one by one."""
from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from thm3.analysis.bird import bird_check
from thm3.analysis.invariants import infer
from thm3.analysis.stability import stability
from thm3.answer import Analysis, Step
from thm3.ir import Loop
from thm3.prove.budget import GRACE, PastDeadline, hard_deadline, young_collections_only
from thm3.prove.laws import Setting
from thm3.semantics.critical import division_guards
from thm3.prove.combine import LAWS, commutativity, prove_combine, verdict_of
from thm3.semantics.samples import PreconditionsUnmet, make_triples
from thm3.status import Status, Verdict
from thm3.analysis.witness import WIDER_SETTINGS, find_witness
from thm3.lift import lift, with_right_fold
from thm3.syntax.loopfile import loop_text


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


def search_witness_reached(ctx: Context, a: Analysis, w: Work) -> Done:
    """Where no combine and no witness was found: the witness search over the values that
    switch a comparison at the states short lists reach (a decay whose factor a phase
    picks moves the threshold of a min with the state)."""
    found = find_witness(ctx.loop, timeout=min(2.0, max(0.1, ctx.deadline - time.monotonic() - 0.5)),
                         reached=True)
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
    PipelineStep("witness, values at reached states", search_witness_reached, lambda ctx, a, w: (
        a.verdict is Verdict.UNKNOWN and a.witness is None and a.combine_fn is None
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
