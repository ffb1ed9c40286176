"""The words every stage answers with: a `Status` for a law, a check or a pipeline step,
and the `Verdict` of an analysis.  Both are `str` enums, so `a.proofs["identity"] ==
"proved"` holds, they print as their value (`repr` too, so that `print(a.proofs)` shows words) and JSON
carries the plain word."""
from __future__ import annotations

from enum import Enum


class Status(str, Enum):
    """How far a claim got.  For laws and checks (the spec's words): "proved" by a
    solver on every path, "bounded" (checked exhaustively up to a length), "tested" on
    sampled states only, "failed" with a counterexample, "skipped" where it does not
    apply; "unproved" and "timeout" where the prover gave up or ran out of time; "unknown"
    for commutativity neither proved nor refuted (it is no part of a verdict).  For
    pipeline steps: "found", "none" (nothing found) or "done"."""
    PROVED = "proved"
    BOUNDED = "bounded"
    TESTED = "tested"
    FAILED = "failed"
    SKIPPED = "skipped"
    UNPROVED = "unproved"
    TIMEOUT = "timeout"
    UNKNOWN = "unknown"
    FOUND = "found"
    NONE = "none"
    DONE = "done"

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:       # in a printed dict or list too: the word, as JSON has it
        return repr(self.value)


class Verdict(str, Enum):
    """The answer of an analysis: a combine exists and its laws hold, none can exist
    (a witness shows it), or neither is established."""
    HOMOMORPHISM = "homomorphism"
    NOT_HOMOMORPHISM = "not-homomorphism"
    UNKNOWN = "unknown"

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:       # in a printed dict or list too: the word, as JSON has it
        return repr(self.value)
