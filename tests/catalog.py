"""The catalog of sample loops: what every test expects of each file in samples/.

One entry per loop file. `verdict` is the expected `thm3.analyze(path).verdict`;
`bird` says whether the file gives a right fold and whether it computes the same
function as `left` ("agree"), another one ("differ"), or is not given ("absent");
`lift` is None for a homomorphism, "expected" where a lift with a small auxiliary
state exists (`notes` says what it adds), and "none" where no small exact lift exists.
`combine` is the expected combine, field by field as `to_json()["combine"]` prints it
(None for a non-homomorphism), and `invariants` the expected `a.invariants`, as a set.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
SAMPLES_DIR = REPO_ROOT / "samples"

VERDICTS = ("homomorphism", "not-homomorphism", "unknown")
BIRDS = ("agree", "differ", "absent")
LIFTS = (None, "expected", "none")


@dataclass(frozen=True)
class Sample:
    name: str               # the file's stem, also the NAME of emitted files
    path: Path              # absolute path of samples/NAME.py
    verdict: str            # expected thm3.analyze(path).verdict
    bird: str               # "agree" | "differ" | "absent"
    lift: str | None        # None | "expected" | "none"
    notes: str = ""
    combine: tuple[tuple[str, str], ...] | None = None   # (field, combine text) in field order
    invariants: tuple[str, ...] = ()

    @property
    def relpath(self) -> str:
        """The path relative to the repository root, e.g. "samples/mps.py"."""
        return self.path.relative_to(REPO_ROOT).as_posix()

    def __post_init__(self):
        assert self.verdict in VERDICTS, self.verdict
        assert self.bird in BIRDS, self.bird
        assert self.lift in LIFTS, self.lift
        assert (self.lift is None) == (self.verdict == "homomorphism"), self.name
        assert (self.combine is not None) == (self.verdict == "homomorphism"), self.name


def _hom(name: str, bird: str = "agree", notes: str = "", *, combine: dict[str, str],
         invariants: tuple[str, ...]) -> Sample:
    return Sample(name, SAMPLES_DIR / f"{name}.py", "homomorphism", bird, None, notes,
                  tuple(combine.items()), invariants)


def _not(name: str, lift: str, notes: str, *, invariants: tuple[str, ...]) -> Sample:
    return Sample(name, SAMPLES_DIR / f"{name}.py", "not-homomorphism", "absent", lift, notes,
                  None, invariants)


SAMPLES: list[Sample] = [
    # --- homomorphisms -----------------------------------------------------------
    _hom("sum",
         combine={"s": "a.s + b.s"},
         invariants=("s > -inf", "s < inf")),
    _hom("vec_sum", notes="Vec state and element; zero-vector default",
         combine={"s": "a.s + b.s"},
         invariants=()),
    _hom("max", notes="-inf identity",
         combine={"m": "max(a.m, b.m)"},
         invariants=("m < inf",)),
    _hom("min", notes="inf identity",
         combine={"m": "min(a.m, b.m)"},
         invariants=("m > -inf",)),
    _hom("count", notes="Int state; the element is unused",
         combine={"n": "a.n + b.n"},
         invariants=("n >= 0",)),
    _hom("product",
         combine={"p": "a.p * b.p"},
         invariants=("p > -inf", "p < inf")),
    _hom("dot", "absent", notes="two element parameters",
         combine={"s": "a.s + b.s"},
         invariants=("s > -inf", "s < inf")),
    _hom("l2norm", notes="sum of squares; result sqrt",
         combine={"ss": "a.ss + b.ss"},
         invariants=("ss > -inf", "ss < inf", "ss >= 0")),
    _hom("count_above", "absent", notes="loop parameter threshold",
         combine={"n": "a.n + b.n"},
         invariants=("n >= 0",)),
    _hom("all_positive", notes="Bool state, identity True",
         combine={"ok": "a.ok and b.ok"},
         invariants=()),
    _hom("any_negative", notes="Bool state, identity False",
         combine={"found": "a.found or b.found"},
         invariants=()),
    _hom("range", "absent", notes="max and min; result hi - lo",
         combine={"hi": "max(a.hi, b.hi)", "lo": "min(a.lo, b.lo)"},
         invariants=("hi < inf", "lo > -inf", "hi == -inf => lo == inf", "lo == inf => hi == -inf")),
    _hom("top2", notes="largest and second largest as a multiset; if/elif/else",
         combine={"a": "max(a.a, b.a)",
                  "b": "max((a.a if b.a > a.a else (b.a if b.a > a.b else a.b)), b.b)"},
         invariants=("a < inf", "b < inf", "a >= b", "a == -inf => b == -inf")),
    _hom("first", notes="has-flag; combine keeps the left operand when it is non-empty",
         combine={"has": "a.has or b.has", "value": "(a.value if a.has else b.value)"},
         invariants=("value > -inf", "value < inf", "has == False => value == 0", "value != 0 => has")),
    _hom("last", notes="has-flag; combine keeps the right operand when it is non-empty",
         combine={"has": "a.has or b.has", "value": "(a.value if b.has == False else b.value)"},
         invariants=("value > -inf", "value < inf", "has == False => value == 0", "value != 0 => has")),
    _hom("mean", notes="division by n, guarded at n = 0 in the combine",
         combine={"n": "a.n + b.n",
                  "mean": "a.mean + b.n * (0.0 if a.n + b.n == 0 else (b.mean - a.mean) / (a.n + b.n))"},
         invariants=("n >= 0", "mean > -inf", "mean < inf", "n == 0 => mean == 0", "mean != 0 => n > 0")),
    _hom("weighted_mean", notes="assert w > 0; result guarded at sw = 0",
         combine={"sw": "a.sw + b.sw", "swx": "a.swx + b.swx"},
         invariants=("sw > -inf", "sw < inf", "sw >= 0", "swx > -inf", "swx < inf",
                     "sw == 0 => swx == 0", "swx != 0 => sw > 0")),
    _hom("welford", "absent",
         notes="Chan's parallel update; transport (n, mean, M2) -> (n, sum x, sum x^2); "
               "guard at n = 0",
         combine={"n": "a.n + b.n",
                  "mean": "a.mean + b.n * (0.0 if a.n + b.n == 0 else (b.mean - a.mean) / (a.n + b.n))",
                  "M2": "a.M2 + (0.0 if a.n + b.n == 0 else a.n * b.n * (a.mean - b.mean) ** 2 / (a.n + b.n)) + b.M2"},
         invariants=("n >= 0", "mean > -inf", "mean < inf", "M2 > -inf", "M2 < inf", "M2 >= 0",
                     "n == 0 => mean == 0", "n == 0 => M2 == 0", "mean != 0 => n > 0",
                     "M2 != 0 => n > 0")),
    _hom("mps", notes="the spec's example; g(s, m) = [m, s - m]; invariants m >= 0, m >= s",
         combine={"s": "a.s + b.s", "m": "max(a.m, a.s + b.m)"},
         invariants=("s > -inf", "s < inf", "m > -inf", "m < inf", "m >= 0", "m >= s")),
    _hom("bad_right", "differ",
         notes="mps with a right fold that forgets max(0, ...); they differ on [-1]; "
               "the combine is mps's",
         combine={"s": "a.s + b.s", "m": "max(a.m, a.s + b.m)"},
         invariants=("s > -inf", "s < inf", "m > -inf", "m < inf", "m >= 0", "m >= s")),
    _hom("mss", notes="fields s, p, t, m; g = [p, -m, m, s - p - t, t] with m <= p + t - s",
         combine={"s": "a.s + b.s", "p": "max(a.p, a.s + b.p)", "t": "max(b.t, b.s + a.t)",
                  "m": "max(a.m, max(a.t + b.p, b.m))"},
         invariants=("s > -inf", "s < inf", "p > -inf", "p < inf", "p >= 0", "t > -inf", "t < inf",
                     "t >= 0", "m > -inf", "m < inf", "m >= 0", "p >= s", "t >= s", "m >= s", "m >= p",
                     "m >= t", "p != 0 => m > 0", "t != 0 => m > 0", "m == 0 => p == 0",
                     "m == 0 => t == 0")),
    _hom("mts_total", notes="max tail sum with the total s",
         combine={"t": "max(a.t + b.s, b.t)", "s": "a.s + b.s"},
         invariants=("t > -inf", "t < inf", "t >= 0", "s > -inf", "s < inf", "t >= s")),
    _hom("brackets", notes="depth and min prefix depth; result depth == 0 and mindepth >= 0",
         combine={"depth": "a.depth + b.depth", "mindepth": "min(a.mindepth, a.depth + b.mindepth)"},
         invariants=("mindepth <= 0", "depth >= mindepth")),
    _hom("safe_softmax", notes="m = -inf, d = 0; combine needs a select where both m are -inf",
         combine={"m": "max(a.m, b.m)",
                  "d": "a.d * (1.0 if a.m == max(a.m, b.m) else exp(a.m - max(a.m, b.m))) + b.d * (1.0 if b.m == max(a.m, b.m) else exp(b.m - max(a.m, b.m)))"},
         invariants=("m < inf", "d > -inf", "d < inf", "d >= 0", "m == -inf => d == 0",
                     "m != -inf => d > 0", "d == 0 => m == -inf")),
    _hom("logsumexp", notes="(m, d) with result m + log(d), guarded: -inf for an empty list",
         combine={"m": "max(a.m, b.m)",
                  "d": "a.d * (1.0 if a.m == max(a.m, b.m) else exp(a.m - max(a.m, b.m))) + b.d * (1.0 if b.m == max(a.m, b.m) else exp(b.m - max(a.m, b.m)))"},
         invariants=("m < inf", "d > -inf", "d < inf", "d >= 0", "m == -inf => d == 0",
                     "m != -inf => d > 0", "d == 0 => m == -inf")),
    _hom("logsumexp_lse", "absent",
         notes="one field lse = -inf; the combine is the step with x replaced by the other "
               "lse, and needs a select when both are -inf (exp(-inf - -inf) is NaN)",
         combine={"lse": "max(a.lse, b.lse) + log((1.0 if a.lse == max(a.lse, b.lse) else exp(a.lse - max(a.lse, b.lse))) + (1.0 if b.lse == max(a.lse, b.lse) else exp(b.lse - max(a.lse, b.lse))))"},
         invariants=("lse < inf",)),
    _hom("online_softmax_values", notes="elements (s, v); result o / d, 0 for an empty list",
         combine={"m": "max(a.m, b.m)",
                  "d": "a.d * (1.0 if a.m == max(a.m, b.m) else exp(a.m - max(a.m, b.m))) + b.d * (1.0 if b.m == max(a.m, b.m) else exp(b.m - max(a.m, b.m)))",
                  "o": "a.o * (1.0 if a.m == max(a.m, b.m) else exp(a.m - max(a.m, b.m))) + (1.0 if b.m == max(a.m, b.m) else exp(b.m - max(a.m, b.m))) * b.o"},
         invariants=("m < inf", "d > -inf", "d < inf", "d >= 0", "o > -inf", "o < inf",
                     "m == -inf => d == 0", "m != -inf => d > 0", "m == -inf => o == 0",
                     "d == 0 => m == -inf", "d == 0 => o == 0", "o != 0 => d > 0")),
    _hom("flash_attention",
         notes="elements (k: Vec, v: Vec), loop parameters q: Vec, scale: Real; "
               "state (m, d, o: Vec); result o / d, zero for an empty list",
         combine={"m": "max(a.m, b.m)",
                  "d": "a.d * (1.0 if a.m == max(a.m, b.m) else exp(a.m - max(a.m, b.m))) + b.d * (1.0 if b.m == max(a.m, b.m) else exp(b.m - max(a.m, b.m)))",
                  "o": "a.o * (1.0 if a.m == max(a.m, b.m) else exp(a.m - max(a.m, b.m))) + (1.0 if b.m == max(a.m, b.m) else exp(b.m - max(a.m, b.m))) * b.o"},
         invariants=("m < inf", "d > -inf", "d < inf", "d >= 0", "m == -inf => d == 0",
                     "m != -inf => d > 0", "m == -inf => o == 0", "d == 0 => m == -inf",
                     "d == 0 => o == 0")),
    _hom("argmax", notes="Index element; ties keep the first index (left: >, right: >=)",
         combine={"best": "max(a.best, b.best)", "idx": "(b.idx if b.best > a.best else a.idx)"},
         invariants=("best < inf", "best == -inf => idx == -1")),
    _hom("polynomial",
         notes="loop parameter t; coefficients highest degree first; pw = t**len makes it "
               "a homomorphism: combine (p1*pw2 + p2, pw1*pw2)",
         combine={"p": "a.p * b.pw + b.p", "pw": "a.pw * b.pw"},
         invariants=("p > -inf", "p < inf", "pw > -inf", "pw < inf")),
    _hom("affine", notes="elements (a, b); composition of affine maps, not commutative",
         combine={"A": "a.A * b.A", "B": "b.A * a.B + b.B"},
         invariants=("A > -inf", "A < inf", "B > -inf", "B < inf")),
    _hom("ema_lifted",
         notes="assert 0 < alpha < 1; w = (1 - alpha)**len; combine (s1*w2 + s2, w1*w2)",
         combine={"s": "b.w * a.s + b.s", "w": "a.w * b.w"},
         invariants=("s > -inf", "s < inf", "w > -inf", "w < inf", "w > 0", "w <= 1", "s != 0 => w > 0",
                     "w == 1 => s == 0")),
    _hom("line_of_sight",
         notes="listed among the lifting cases, but a homomorphism as written: a visible "
               "last element is the maximum, so no last element is needed, and best = -inf "
               "only for the empty list. Combine: best = max(b1, b2), visible = v1 if "
               "b2 == -inf else (v2 and b2 > b1); needs the invariant best = -inf -> not "
               "visible",
         combine={"best": "max(a.best, b.best)",
                  "visible": "(a.visible if b.best == -inf else b.best > a.best and b.visible)"},
         invariants=("best < inf", "best == -inf => visible == False")),
    # --- not homomorphisms over their state: the lifting search ------------------
    _not("kadane", "expected",
         "adds total s and best prefix p (mss); witness [-1, 1] vs [1], ys = [1]",
         invariants=("m > -inf", "m < inf", "m >= 0", "t > -inf", "t < inf", "t >= 0", "m >= t",
                     "m == 0 => t == 0", "t != 0 => m > 0")),
    _not("mts", "expected", "adds total s; witness [] vs [-1], ys = [1]",
         invariants=("t > -inf", "t < inf", "t >= 0")),
    _not("is_sorted", "expected",
         "adds the first element (with an emptiness marker, e.g. an inf default); "
         "witness [1] vs [0, 1], ys = [0.5]",
         invariants=("last < inf", "last == -inf => ok == True")),
    _not("brackets_ok", "expected",
         "adds the minimum prefix depth (ok is then mindepth >= 0); "
         "witness [-1] vs [-1, -1, 1], ys = [1]",
         invariants=()),
    _not("longest_ones", "expected",
         "adds the leading run of ones and the length (or an all-ones flag); "
         "witness [1] vs [0, 1], ys = [1]",
         invariants=("best >= 0", "cur >= 0", "best >= cur", "best == 0 => cur == 0",
                     "cur != 0 => best > 0")),
    _not("blocks_of_ones", "expected",
         "adds whether the list starts with a one, plus an emptiness marker (a flag or the "
         "length); witness [1] vs [0, 1], ys = [1]",
         invariants=("count >= 0", "count == 0 => prev == False", "prev != False => count > 0")),
    _not("atoi", "expected", "adds 10**len; witness [] vs [0], ys = [1]",
         invariants=("v >= 0",)),
    _not("zero_after_one", "expected",
         "adds a seen-zero flag; witness [] vs [0], ys = [1]",
         invariants=("seen_one == False => found == False", "found != False => seen_one",
                     # the finite route's "the fields hold a reachable state" (issue 21)
                     "not seen_one and not found or seen_one and not found or seen_one and found")),
    _not("horner", "expected",
         "adds pw = t**len (as in polynomial); for t != 1 (t = 1 makes it a sum); "
         "witness [] vs [0], ys = [1] for any t != 1",
         invariants=("p > -inf", "p < inf")),
    _not("ema", "expected",
         "adds w = (1 - alpha)**len (as in ema_lifted); witness [] vs [0], ys = [1]",
         invariants=("s > -inf", "s < inf")),
    _not("majority", "none",
         "Boyer-Moore vote: no small exact lift; witness [1, 2] vs [1, 3], ys = [2]",
         invariants=("cand > -inf", "cand < inf", "count >= 0")),
    _not("signs_alternate", "expected",
         "assert x != 0; adds the first element (inf while empty): one field; "
         "witness [-1] vs [1, -1], ys = [1]",
         invariants=("last > -inf", "last < inf", "last == 0 => ok == True")),
    _not("longest_increasing", "expected",
         "adds three fields: whether the whole list increases, its leading increasing run, "
         "and the first element (inf while empty); witness [0] vs [1, 0], ys = [0]; the "
         "lifted combine is for synthesis to find (issue 14)",
         invariants=("best >= 0", "cur >= 0", "last < inf", "best >= cur",
                     "best == 0 => cur == 0", "best != 0 => cur > 0",
                     "best == 0 => last == -inf", "cur == 0 => best == 0",
                     "cur != 0 => best > 0", "cur == 0 => last == -inf",
                     "last == -inf => best == 0", "last != -inf => best > 0",
                     "last == -inf => cur == 0", "last != -inf => cur > 0")),
    _not("recurrence2", "expected",
         "y' = a*y + b*z + x, z' = y: adds the companion matrix's power A**n as its two "
         "Cayley-Hamilton coefficients (A**n = ch0 I + ch1 A; the four entries m_y_y .. m_z_z "
         "are the fallback); the length alone tells every pair of lists apart but gives no "
         "combine in the IR's operations",
         invariants=("y > -inf", "y < inf", "z > -inf", "z < inf")),
    _not("blocks_of_ones_run", "expected",
         "blocks of ones with the current run instead of a previous-element field: adds an "
         "all-ones flag and the leading run of ones; witness [1] vs [0, 1], ys = [1]",
         invariants=("count >= 0", "cur >= 0", "count == 0 => cur == 0",
                     "cur != 0 => count > 0")),
    _not("positive_block_sum", "expected",
         "largest sum of a maximal block of positive elements: adds an all-positive flag and "
         "the sum of the leading positive block; witness [] vs [0], ys = [1]",
         invariants=("best > -inf", "best < inf", "best >= 0", "cur > -inf", "cur < inf",
                     "cur >= 0", "best >= cur", "best == 0 => cur == 0",
                     "cur != 0 => best > 0")),
]

_BY_NAME = {s.name: s for s in SAMPLES}
assert len(_BY_NAME) == len(SAMPLES), "duplicate sample names"

HOMOMORPHISMS: list[Sample] = [s for s in SAMPLES if s.verdict == "homomorphism"]
NOT_HOMOMORPHISMS: list[Sample] = [s for s in SAMPLES if s.verdict == "not-homomorphism"]


# The fewest fields that make each "expected" loop a homomorphism (what the lifting search
# must not exceed; tests/test_lift.py, bench/lift.py).  Without a prover: recurrence2's
# length tells every pair of lists apart (A**len is a function of it), though no combine
# in the IR's operations reads it; with the analyzer as prover the two Cayley-Hamilton
# coefficients of A**len are what is left (test_lift_analyzed), one more than this bound.
SMALLEST_LIFT = {"kadane": 2, "mts": 1, "is_sorted": 1, "brackets_ok": 1, "longest_ones": 2,
                 "blocks_of_ones": 2, "atoi": 1, "zero_after_one": 1, "horner": 1, "ema": 1,
                 "signs_alternate": 1, "longest_increasing": 3, "recurrence2": 1, "blocks_of_ones_run": 2,
                 "positive_block_sum": 2}
assert set(SMALLEST_LIFT) == {s.name for s in SAMPLES if s.lift == "expected"}


def by_name(name: str) -> Sample:
    """The catalog entry of samples/NAME.py; KeyError for an unknown name."""
    return _BY_NAME[name]


__all__ = ["Sample", "SAMPLES", "HOMOMORPHISMS", "NOT_HOMOMORPHISMS", "SMALLEST_LIFT", "by_name",
           "REPO_ROOT", "SAMPLES_DIR"]
