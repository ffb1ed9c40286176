"""Fuzz families of issue 22, with their own truths and checks: right folds that differ
from `left` on a rare value, past a long length or for a large parameter (Bird must say
"failed", never "bounded"), and their agreeing twins (never "failed"); Int sums past int64
and literals beyond it (a.combine exact, the NumPy backend exact or an OverflowError); and
the if/else, `where` and `max` spellings of an exp-stable step (one stability verdict).

Kept apart from `generate.FAMILIES`, so that the seeds of bench/fuzz.py keep drawing the
loops they drew."""
from __future__ import annotations

import random
import time
import traceback
from dataclasses import dataclass

import numpy as np

import thm3

HEAD = "from typing import NamedTuple\nfrom thm3.lang import Bool, Int, Real, exp, inf, where\n\n"


@dataclass(frozen=True)
class Case22:
    family: str
    source: str
    expect: str             # "bird-failed" | "bird-agrees" | "int-exact" | "stable"
    why: str = ""


def _num(rng: random.Random) -> str:
    return rng.choice(["7.25", "-3.5", "0.125", "13", "-17", "2.75", "1000.5"])


def right_rare_value(rng: random.Random) -> Case22:
    v, d = _num(rng), rng.choice(["1", "0.5", "-2", "1e-9"])
    differ = rng.random() < 0.7
    spelled = rng.choice(["if", "where"])
    extra = d if differ else "0"
    if spelled == "if":
        right = (f"    if x == {v}:\n        return State(x + acc.s + {extra})\n"
                 "    return State(x + acc.s)\n")
    else:
        right = f"    return State(x + acc.s + where(x == {v}, {extra}, 0))\n"
    src = HEAD + ("class State(NamedTuple):\n    s: Real = 0\n\n"
                  "def left(acc: State, x: Real) -> State:\n    return State(acc.s + x)\n\n"
                  "def right(x: Real, acc: State) -> State:\n" + right)
    return Case22("right_rare_value", src, "bird-failed" if differ else "bird-agrees", f"x == {v} adds {extra}")


def right_long_length(rng: random.Random) -> Case22:
    k = rng.randint(6, 40)
    j = k + rng.choice([1, -1, 2]) if rng.random() < 0.7 else k
    op = rng.choice([">=", ">"])
    src = HEAD + ("class State(NamedTuple):\n    n: Int = 0\n    big: Bool = False\n\n"
                  f"def left(acc: State, x: Real) -> State:\n    return State(acc.n + 1, acc.n + 1 {op} {k})\n\n"
                  f"def right(x: Real, acc: State) -> State:\n    return State(1 + acc.n, acc.n + 1 {op} {j})\n")
    return Case22("right_long_length", src, "bird-failed" if j != k else "bird-agrees", f"{k} against {j}")


def right_large_param(rng: random.Random) -> Case22:
    c = rng.choice([100, 1000, 12.5, 1e6, -50])
    differ = rng.random() < 0.7
    cmp = rng.choice([">=", ">"])
    assert_line = rng.choice(["", "    assert cap > -1000000000\n"])
    src = HEAD + ("cap: Real\n\nclass State(NamedTuple):\n    s: Real = 0\n\n"
                  f"def left(acc: State, x: Real) -> State:\n{assert_line}    return State(acc.s + x)\n\n"
                  "def right(x: Real, acc: State) -> State:\n"
                  f"    if cap {cmp} {c}:\n        return State(x + acc.s + {1 if differ else 0})\n"
                  "    return State(x + acc.s)\n")
    return Case22("right_large_param", src, "bird-failed" if differ else "bird-agrees", f"cap {cmp} {c}")


def right_tiny_difference(rng: random.Random) -> Case22:
    eps = rng.choice(["1e-8", "1e-12", "3e-10", "1e-15"])
    differ = rng.random() < 0.7
    k = f"(1 + {eps})" if differ else "1"
    src = HEAD + ("class State(NamedTuple):\n    s: Real = 0\n\n"
                  "def left(acc: State, x: Real) -> State:\n    return State(acc.s + x)\n\n"
                  f"def right(x: Real, acc: State) -> State:\n    return State(x * {k} + acc.s)\n")
    return Case22("right_tiny_difference", src, "bird-failed" if differ else "bird-agrees", f"factor {k}")


def int_overflow(rng: random.Random) -> Case22:
    op = rng.choice(["acc.s + x", "acc.s + x * x", "acc.s - x", "max(acc.s, x) + 1"])
    init = "0" if "max" not in op else "-9223372036854775807"
    src = HEAD + (f"class State(NamedTuple):\n    s: Int = {init}\n\n"
                  f"def left(acc: State, x: Int) -> State:\n    return State({op})\n")
    return Case22("int_overflow", src, "int-exact", op)


def int_wide_literal(rng: random.Random) -> Case22:
    big = rng.choice([10**20, 2**63, -(2**63) - 1, 2**100 + 7])
    op = rng.choice([f"acc.s + x * {big}", f"max(acc.s, x + {big})", f"acc.s + x + {big} - {big}"])
    init = "0" if "max" not in op else "-9223372036854775807"
    src = HEAD + (f"class State(NamedTuple):\n    s: Int = {init}\n\n"
                  f"def left(acc: State, x: Int) -> State:\n    return State({op})\n")
    return Case22("int_wide_literal", src, "int-exact", op)


_STEPS = {
    "if": ("    if x > acc.m:\n        return State(x, acc.d * exp(acc.m - x) + {one})\n"
           "    return State(acc.m, acc.d + {term}exp(x - acc.m))\n"),
    "where": ("    return State(where(x > acc.m, x, acc.m),\n"
              "                 where(x > acc.m, acc.d * exp(acc.m - x) + {one}, acc.d + {term}exp(x - acc.m)))\n"),
    "max": ("    m = max(acc.m, x)\n"
            "    return State(m, acc.d * exp(acc.m - m) + {term}exp(x - m))\n"),
}


def exp_stable_spelling(rng: random.Random) -> Case22:
    spelling = rng.choice(sorted(_STEPS))
    scale = rng.choice(["1", "2", "0.5"])
    term = "" if scale == "1" else f"{scale} * "
    one = scale
    body = _STEPS[spelling].format(one=one, term=term)
    src = HEAD + ("class State(NamedTuple):\n    m: Real = -inf\n    d: Real = 0\n\n"
                  "def left(acc: State, x: Real) -> State:\n" + body)
    return Case22("exp_stable_spelling", src, "stable", spelling)


FAMILIES22 = (right_rare_value, right_long_length, right_large_param, right_tiny_difference,
              int_overflow, int_wide_literal, exp_stable_spelling)


def from_seed22(seed: int) -> Case22:
    rng = random.Random(seed)
    return rng.choice(FAMILIES22)(rng)


def judge22(case: Case22, timeout: float = 10.0) -> tuple[str, str]:
    """("ok" | "crash" | "wrong" | "unknown", detail)."""
    try:
        a = thm3.analyze_source(case.source, timeout=timeout, lift=False)
    except Exception as err:
        return "crash", f"{type(err).__name__}: {err} {traceback.format_exc(limit=2)}"
    bird = a.proofs.get("bird")
    match case.expect:
        case "bird-failed":
            if bird != "failed":
                return "wrong", f"bird {bird} where the folds differ ({case.why}): {a.bird_detail}"
        case "bird-agrees":
            if bird == "failed":
                return "wrong", f"bird failed where the folds agree ({case.why}): {a.bird_detail}"
        case "int-exact":
            if a.verdict != "homomorphism":
                return "unknown", a.reason
            rng = np.random.default_rng(0)
            for _ in range(3):
                xs = [int(v) for v in rng.integers(-2**62, 2**62, size=6)] + [2**62, 2**62 - 1]
                seq = a.identity
                for x in xs:                       # the loop in Python, on Python ints
                    seq = a.combine(seq, _one(a, x))
                exact = _python_fold(case.source, xs)
                if exact is not None and seq.s != exact:
                    return "wrong", f"a.combine folds {xs} to {seq.s}, Python to {exact}"
                try:
                    got = a.run(np.array(xs, dtype=np.int64))
                except OverflowError:
                    continue
                except Exception as err:
                    return "crash", f"a.run: {type(err).__name__}: {err}"
                if exact is not None and int(got[0]) != exact:
                    return "wrong", f"a.run gives {got[0]} where the exact value is {exact}"
        case "stable":
            if a.verdict != "homomorphism":
                return "unknown", a.reason
            status = a.stability.get("exp_overflow")
            if status == "failed":
                return "wrong", f"{case.why}: exp_overflow failed: {a.stability_notes}"
            if status != "proved":         # a solver that ran out of time: no claim made
                return "unknown", f"{case.why}: exp_overflow {status}"
    return "ok", ""


def _one(a, x: int):
    """h([x]) as a State: the left step from the identity, exactly (Python ints)."""
    from thm3.semantics.evaluate import PYTHON, evaluate
    env = {f"acc.{f.name}": v for f, v in zip(a.loop.fields, a.identity)} | {a.loop.elements[0].name: x}
    return a.State(*evaluate(a.loop.left.outputs, env, PYTHON))


def _python_fold(source: str, xs: list[int]):
    """The loop's left fold as Python would run it, read from the IR on Python ints."""
    from thm3.semantics.evaluate import PYTHON, evaluate
    loop = thm3.parse_source(source)
    state = {f"acc.{f.name}": f.default for f in loop.fields}
    for x in xs:
        out = evaluate(loop.left.outputs, state | {loop.elements[0].name: x}, PYTHON)
        state = {f"acc.{f.name}": v for f, v in zip(loop.fields, out)}
    return state["acc.s"]


def run(count: int, seed: int = 0, timeout: float = 10.0) -> dict:
    totals: dict = {}
    findings = []
    t0 = time.monotonic()
    for s in range(seed, seed + count):
        case = from_seed22(s)
        outcome, detail = judge22(case, timeout)
        key = (case.family, outcome)
        totals[key] = totals.get(key, 0) + 1
        if outcome in ("crash", "wrong"):
            findings.append((s, case.family, outcome, detail.splitlines()[0][:300] if detail else ""))
    return {"totals": totals, "findings": findings, "seconds": time.monotonic() - t0}
