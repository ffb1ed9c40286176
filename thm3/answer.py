"""The pipeline's answer about one loop: the frozen `Analysis` that `thm3.analyze`
returns (the library API of the spec: its State, identity, combine, `run`, `scan`,
`emit`, `to_json`), with the `Step`s as they ran.  `thm3.pipeline` builds it, one step
at a time."""
from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass, field

import numpy as np

from thm3.errors import BackendUnavailable, UsageError
from thm3.ir import Fn, Loop, Type
from thm3.ir.cache import Bounded
from thm3.semantics.evaluate import NUMPY, evaluate, quiet
from thm3.semantics.samples import plain
from thm3.status import Status, Verdict
from thm3.analysis.witness import exact_lists, json_lists


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
