"""The brute-force oracle: fold every list up to a short length over a small element
domain taken from the loop's own constants, exactly (Fractions), and look for two lists
with one state that a common prefix tells apart.  Such a triple proves that no combine
over the State exists; finding none proves nothing.  Then `judge` holds thm3's answer
against the family's truth and the oracle: a crash, a wrong verdict, a witness that does
not fold as claimed, a combine that disagrees with the fold on random splits.

Nothing here calls thm3's synthesizer, prover or witness search: only `thm3.analyze` for
the answer under test, the parsed IR and the reference evaluator's table."""
from __future__ import annotations

import itertools
import math
import random
import time
import traceback
from dataclasses import dataclass
from fractions import Fraction

import thm3
from thm3.ir import Op, Type, walk

from fuzz.fold import STRICT, Folder, close_state, exact, has_nan, same_state
from fuzz.generate import FuzzLoop

BASE = (Fraction(0), Fraction(1), Fraction(-1), Fraction(2), Fraction(-2), Fraction(1, 2))


def constants(loop) -> list:
    """The finite numeric constants of `left` and the fields' finite defaults."""
    found = []
    for e in walk(list(loop.left.outputs)):
        if e.op is Op.CONST and e.type is not Type.BOOL and not math.isinf(float(e.arg)):
            found.append(Fraction(e.arg))
    for f in loop.fields:
        if f.type is not Type.BOOL and not math.isinf(float(f.default)):
            found.append(Fraction(f.default))
    return list(dict.fromkeys(found))


def element_domain(loop, size: int = 14) -> list:
    """Values that make the loop's comparisons and equalities switch: each constant, the
    differences of two constants (x + c == d) and their quotients by a third (m x + c == d),
    negations, a value on either side of each constant, then a few small numbers; at most
    `size` values."""
    cs = constants(loop)
    values = list(cs)
    values += [c - d for c, d in itertools.permutations(cs, 2)]
    values += [(c - d) / m for c, d in itertools.permutations(cs, 2) for m in cs if m not in (0, 1)]
    values += [-c for c in cs]
    values += [c + d for c in cs for d in (Fraction(1, 2), Fraction(-1, 2))]
    values += [c + 1 for c in cs] + [c - 1 for c in cs]
    values = list(dict.fromkeys(values))[: size - 3]
    values = list(dict.fromkeys(values + list(BASE)))[:size]
    element = next(p for p in loop.elements if not p.index)
    if element.type is Type.INT:
        values = list(dict.fromkeys(int(v) for v in values))
    elif element.type is Type.BOOL:
        values = [False, True]
    return values


def _fold(folder: Folder, xs, start: int = 0, state=None):
    try:
        s = folder.fold(xs, start=start, state=state)
    except (ZeroDivisionError, OverflowError, ValueError, TypeError):
        return None
    return None if has_nan(s) else s


def counterexample(loop, params: dict | None = None, *, max_len: int = 3, size: int = 14,
                   prefix_len: int = 2, pair_budget: int = 80):
    """(xs1, xs2, ys) with h(xs1) == h(xs2) and h(ys + xs1) != h(ys + xs2), exactly, or
    None where the lists searched show none."""
    folder = Folder(loop, params, STRICT)
    domain = [x for x in element_domain(loop, size) if folder.admits(x)]
    classes: dict[tuple, list] = {}
    for n in range(max_len + 1):
        for xs in itertools.product(domain, repeat=n):
            s = _fold(folder, list(xs))
            if s is not None:
                classes.setdefault(s, []).append(list(xs))
    prefixes = [list(ys) for n in (1, 2) if n <= prefix_len
                for ys in itertools.product(domain[: 4 if n == 2 else None], repeat=n)]
    starts = [(ys, _fold(folder, ys)) for ys in prefixes]
    starts = [(ys, s) for ys, s in starts if s is not None]
    budget = pair_budget
    for members in sorted(classes.values(), key=lambda m: len(m[0])):
        for other in members[1:4]:
            budget -= 1
            if budget < 0:
                return None
            first = members[0]
            for ys, s in starts:
                u = _fold(folder, first, len(ys), s)
                v = _fold(folder, other, len(ys), s)
                if u is not None and v is not None and not same_state(u, v):
                    return first, other, ys
    return None


def show(xs) -> str:
    """A list of exact elements as the loop file would write them."""
    def one(v):
        if isinstance(v, tuple):
            return "(" + ", ".join(one(u) for u in v) + ")"
        return str(int(v)) if isinstance(v, Fraction) and v.denominator == 1 else \
            repr(float(v)) if isinstance(v, Fraction) else repr(v)
    return "[" + ", ".join(one(v) for v in xs) + "]"


@dataclass
class Judgement:
    family: str
    verdict: str
    outcome: str        # "ok" | "crash" | "wrong" | "overrun" | "unknown-with-answer" | "unknown"
    detail: str = ""
    tested: bool = False  # a homomorphism with a law only "tested"
    seconds: float = 0.0
    analysis_seconds: float = 0.0   # thm3.analyze's part of `seconds`; the rest is the oracle's


def _float_lists(domain, rng: random.Random, n: int):
    return [[float(rng.choice(domain)) if not isinstance(domain[0], bool) else rng.choice(domain)
             for _ in range(rng.randint(0, 12))] for _ in range(n)]


def check_combine(loop, combine, params: dict, rng: random.Random, splits: int = 40) -> str:
    """'' when combine(h(xs), h(ys)) equals h(xs + ys) on random splits, else the split.
    A split whose list divides by zero has no state in the reals (the semantics of the
    proofs, and of the family truths): it is skipped."""
    folder = Folder(loop, params)
    strict = Folder(loop, params, STRICT)
    domain = [x for x in element_domain(loop, 14) if folder.admits(x)]
    domain = [v if isinstance(v, (bool, int)) else float(v) for v in domain]
    for _ in range(splits):
        xs = [rng.choice(domain) for _ in range(rng.randint(0, 12))]
        ys = [rng.choice(domain) for _ in range(rng.randint(0, 12))]
        if _divides_by_zero(strict, [exact(v) for v in xs + ys]):
            continue
        whole = folder.fold(xs + ys)
        got = tuple(combine(folder.fold(xs), folder.fold(ys, start=len(xs)), **params))
        if not close_state(got, whole):
            return f"combine({xs}, {ys}) = {got}, fold = {whole}"
    return ""


def _divides_by_zero(folder: Folder, xs) -> bool:
    try:
        folder.fold(xs)
    except ZeroDivisionError:
        return True
    except (OverflowError, ValueError, TypeError):
        return False
    return False


def check_witness(loop, witness, params: dict) -> str:
    """'' when thm3's witness folds as claimed, exactly and in the reals; else why not."""
    xs1, xs2, ys, side = witness
    folder = Folder(loop, params, STRICT)
    xs1, xs2, ys = ([exact(x) for x in xs] for xs in (xs1, xs2, ys))
    if not all(folder.admits(x) for x in xs1 + xs2 + ys):
        return f"witness {witness} breaks the loop's assert"
    a, b = _fold(folder, xs1), _fold(folder, xs2)
    if a is None or b is None or not same_state(a, b):
        return f"witness {witness}: h(xs1) = {a} != h(xs2) = {b} (or outside the reals)"
    if side == "left":
        u, v = _fold(folder, xs1 + ys), _fold(folder, xs2 + ys)
    else:
        u, v = _fold(folder, ys + xs1), _fold(folder, ys + xs2)
    if u is None or v is None or same_state(u, v):
        return f"witness {witness}: the extensions agree ({u}) or leave the reals"
    return ""


def judge(case: FuzzLoop, *, timeout: float = 10.0, seed: int = 0) -> Judgement:
    t0 = time.monotonic()
    try:
        loop = thm3.parse_source(case.source)
    except thm3.LoopError as err:
        return Judgement(case.family, "-", "crash", f"generator wrote an invalid loop: {err}")
    try:
        t_call = time.monotonic()
        a = thm3.analyze_source(case.source, timeout=timeout, lift=False)
        analysed, call = time.monotonic() - t0, time.monotonic() - t_call
    except thm3.LoopError as err:
        t = time.monotonic() - t0
        return Judgement(case.family, "-", "ok", f"LoopError: {err}", seconds=t, analysis_seconds=t)
    except Exception as err:
        return Judgement(case.family, "-", "crash",
                         f"{type(err).__name__}: {err}\n{traceback.format_exc(limit=3)}",
                         seconds=time.monotonic() - t0, analysis_seconds=time.monotonic() - t0)
    if call > timeout * 1.1:                # the deadline's promise: the timeout plus a tenth
        return Judgement(case.family, a.verdict, "overrun", f"{call:.1f} s for timeout {timeout:g} s",
                         seconds=time.monotonic() - t0, analysis_seconds=analysed)
    found = counterexample(loop, case.params)
    truth = case.truth or ("not-homomorphism" if found else None)
    j = Judgement(case.family, a.verdict, "ok", seconds=0.0, analysis_seconds=analysed)
    match a.verdict:
        case "homomorphism":
            j.tested = any(v == "tested" for k, v in a.proofs.items() if k != "bird")
            if found:
                j.outcome, j.detail = "wrong", (f"oracle: h({show(found[0])}) == h({show(found[1])}), "
                                            f"prefix {show(found[2])} tells them apart")
            elif truth == "not-homomorphism":
                j.outcome, j.detail = "wrong", f"family truth: {case.why}"
            else:
                bad = check_combine(loop, a.combine, case.params, random.Random(seed))
                if bad:
                    j.outcome, j.detail = "wrong", bad
        case "not-homomorphism":
            bad = check_witness(loop, a.witness, case.params) if a.witness else "no witness"
            if bad:
                j.outcome, j.detail = "wrong", bad
            elif truth == "homomorphism":
                j.outcome, j.detail = "wrong", f"family truth: {case.why} (witness folds: the family is wrong)"
        case _:
            j.outcome = "unknown-with-answer" if truth else "unknown"
            j.detail = a.reason
    j.seconds = time.monotonic() - t0
    return j
