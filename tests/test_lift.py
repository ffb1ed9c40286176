"""The lifting search and the loop-file renderer it writes with.

For every catalog loop with an expected lift: a lift is found in under 10 s, with the
fewest fields; the lifted file parses; its original fields keep their values on random
lists (both loops folded by the reference fold); and the witness search finds nothing
on it.  Boyer-Moore majority gets an honest None.  The renderer round-trips every
sample: `parse_source(render_loop(...))` computes the same function."""
from __future__ import annotations

import ast
import time

import numpy as np
import pytest
from catalog import SAMPLES, SAMPLES_DIR, SMALLEST_LIFT as SMALLEST

import thm3

from thm3 import parse_file, parse_source
from thm3.semantics.evaluate import call
from thm3.ir import Expr, FieldDecl, Op, ParamDecl, Type, const, var
from thm3.lift import Lift, lift
from thm3.syntax.loopfile import render_loop
from thm3.semantics.equality import states_close
from thm3.semantics.samples import Domain, fold_left, fold_right
from thm3.analysis.witness import find_witness

CORPUS_DIR = SAMPLES_DIR.parent / "bench" / "corpus"

LIFTING = [s for s in SAMPLES if s.lift == "expected"]
NO_LIFT = [s for s in SAMPLES if s.lift == "none"]

LINEAR_RECURRENCE = '''"""Linear recurrence y' = a * y + b, keeping y only."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    y: Real = 0     # the value so far


def left(acc: State, a: Real, b: Real) -> State:
    return State(a * acc.y + b)
'''


def _decls(fields):
    return [(f.name, f.type, f.default, f.comment) for f in fields]


def _expr(op, type_, *src):
    return Expr(op, type_, tuple(src))


def _add(a, b):
    return _expr(Op.ADD, Type.REAL, a, b)


def _random_lists(loop, count=60, seed=1):
    rng = np.random.default_rng(seed)
    dom = Domain(loop)
    for i in range(count):
        params = dom.params(rng, small=i % 2 == 0)
        yield dom.random_list(rng, params, int(rng.integers(0, 10)), small=i % 3 != 0), params


class _Lifts(dict):
    """Each sample's lift and its seconds, searched when a test first asks for it (the
    default tier asks for a few; tests/conftest.py)."""

    def __missing__(self, name: str) -> tuple[Lift, float]:
        s = next(s for s in LIFTING + NO_LIFT if s.name == name)
        loop = parse_file(s.path)
        t0 = time.monotonic()
        res = lift(loop)
        self[name] = (res, time.monotonic() - t0)
        return self[name]


@pytest.fixture(scope="module")
def lifts() -> dict[str, tuple[Lift, float]]:
    return _Lifts()


@pytest.mark.parametrize("sample", LIFTING, ids=lambda s: s.name)
def test_lift_found(sample, lifts):
    res, elapsed = lifts[sample.name]
    assert res.loop_text is not None, res.reason
    assert elapsed < 10.0, f"{sample.name}: {elapsed:.1f} s"
    assert len(res.added) == SMALLEST[sample.name], res.added
    assert res.witness is not None


@pytest.mark.parametrize("sample", LIFTING, ids=lambda s: s.name)
def test_lift_keeps_the_original_fields(sample, lifts):
    res, _ = lifts[sample.name]
    loop = parse_file(sample.path)
    lifted = parse_source(res.loop_text, "<lifted>")
    k = len(loop.fields)
    assert _decls(lifted.fields[:k]) == _decls(loop.fields)
    assert len(lifted.fields) == k + len(res.added)
    assert lifted.right is None            # the lead adds right from the combine
    assert lifted.preconditions or not loop.preconditions
    for xs, params in _random_lists(loop):
        assert states_close(fold_left(loop, xs, params), fold_left(lifted, xs, params)[:k]), xs
        # the text, rendered once from the IR the search checked, computes the same
        assert states_close(fold_left(res.loop, xs, params), fold_left(lifted, xs, params)), xs
        if loop.result is not None:
            a = call(loop.result, *fold_left(loop, xs, params), *params.values())
            b = call(lifted.result, *fold_left(lifted, xs, params), *params.values())
            assert states_close(tuple(a), tuple(b))


@pytest.mark.parametrize("sample", LIFTING, ids=lambda s: s.name)
def test_lifted_loop_has_no_witness(sample, lifts):
    res, _ = lifts[sample.name]
    lifted = parse_source(res.loop_text, "<lifted>")
    assert find_witness(lifted, timeout=3.0, max_lists=12000, settings=3) is None


@pytest.mark.parametrize("sample", LIFTING, ids=lambda s: s.name)
def test_lifted_text_explains_itself(sample, lifts):
    res, _ = lifts[sample.name]
    doc = ast.get_docstring(ast.parse(res.loop_text))
    assert "Lifted by thm3" in doc and "h(" in doc
    for line in res.added:
        name = line.split(":", 1)[0]
        assert f"Added {name}:" in doc
        assert "left:" in line and f"{name}' =" in line


def test_majority_has_no_small_lift(lifts):
    res, elapsed = lifts["majority"]
    assert res.loop_text is None and res.added == ()
    assert "no lift" in res.reason and res.witness is not None
    assert elapsed < 10.0


def test_expected_fields():
    by = {}
    for name in ("mts", "kadane", "atoi", "brackets_ok"):
        res = lift(parse_file(SAMPLES_DIR / f"{name}.py"))
        by[name] = parse_source(res.loop_text)
    assert by["mts"].field_names == ("t", "s")
    assert by["kadane"].field_names == ("m", "t", "s", "p")
    assert by["atoi"].field_names == ("v", "pw")
    # brackets_ok's depth already is the total: only the lowest prefix depth is added
    assert by["brackets_ok"].field_names == ("depth", "ok", "low")


def test_expected_fields_of_the_lifts_that_exist(lifts):
    """The issue's lifts: one field (the first element), three fields (the longest
    increasing run: all-increasing flag, leading run, first element), a leading sum."""
    by = {name: lifts[name][0].loop for name in ("signs_alternate", "longest_increasing", "positive_block_sum")}
    assert by["signs_alternate"].field_names == ("ok", "last", "first")
    assert set(by["longest_increasing"].field_names[3:]) == {"all_x_gt_last", "lead", "first"}
    assert by["positive_block_sum"].field_names == ("best", "cur", "all_x_gt_0", "lead_s")


def test_flags_read_the_state_they_had():
    """A predicate of `left` that reads the state (x > acc.last) makes flags and runs too."""
    from thm3.lift.candidates import Candidates
    loop = parse_file(SAMPLES_DIR / "longest_increasing.py")
    texts = [repr(c.update) for c in Candidates(loop, np.random.default_rng(0)).build()]
    assert any("acc.last" in t and "and" in t for t in texts), texts


def test_step_matrix_is_the_companion_matrix_power():
    """recurrence2 (y' = a y + b z + x, z' = y): two candidate groups, the Cayley-Hamilton
    coefficients first (A**n = ch0 I + ch1 A, two fields), then M' = A M from the identity,
    A = [[a, b], [1, 0]]; folded, each gives A**len; the loop lifted by either keeps its
    fields and has no witness, even for a = 1 or 0."""
    from thm3.lift.candidates import Candidates, with_fields
    loop = parse_file(SAMPLES_DIR / "recurrence2.py")
    cands = Candidates(loop, np.random.default_rng(0)).build()
    groups: dict = {}
    for c in cands:
        if c.group:
            groups.setdefault(c.group, []).append(c)
    hamilton, full = groups.values()
    assert [c.hint for c in hamilton] == ["ch0", "ch1"]
    assert [c.hint for c in full] == ["m_y_y", "m_y_z", "m_z_y", "m_z_z"]
    rng = np.random.default_rng(2)
    for group in (hamilton, full):
        lifted = with_fields(loop, group)
        for n in range(6):
            a, b = (float(v) for v in rng.normal(size=2))
            xs = [(float(v),) for v in rng.normal(size=n)]
            state = fold_left(lifted, xs, {"a": a, "b": b})
            A = np.array([[a, b], [1.0, 0.0]])
            power = np.linalg.matrix_power(A, n)
            got = np.array(state[2:]).reshape(2, 2) if group is full else state[2] * np.eye(2) + state[3] * A
            assert np.allclose(got, power)
            assert states_close(state[:2], fold_left(loop, xs, {"a": a, "b": b}))
        assert find_witness(lifted, timeout=3.0, max_lists=12000, settings=8) is None


@pytest.mark.slow
def test_step_matrix_follows_refused_scalars():
    """Where the prover refuses every smaller set (the length, a**len, ...), the search
    goes on to the four fields of the step matrix."""
    loop = parse_file(SAMPLES_DIR / "recurrence2.py")
    seen = []

    def refuse_scalars(lifted):
        seen.append(lifted.field_names[2:])
        return len(lifted.fields) == 6
    res = lift(loop, timeout=20.0, prove=refuse_scalars)
    assert res.loop is not None and len(res.added) == 4, res.reason
    assert all(len(f) < 4 for f in seen[:-1]) and len(seen[-1]) == 4


def test_the_analyzer_proves_a_lift_without_raising():
    """signs_alternate's lifted combine multiplies the first element (inf while empty):
    the prover's extended reals take inf * 0 and inf * x without an internal error."""
    from thm3.pipeline import LAWS, analyze_loop
    loop = parse_file(SAMPLES_DIR / "signs_alternate.py")

    def proves(lifted):
        b = analyze_loop(lifted, timeout=10.0, lift=False)
        return b if all(b.proofs.get(k) == "proved" for k in LAWS) else None
    res = lift(loop, timeout=10.0, prove=proves)
    assert res.loop is not None, res.reason
    assert "prover failed" not in res.reason
    assert res.proof.verdict == "homomorphism" and res.loop.field_names == ("ok", "last", "first")


def test_derived_right_fold_is_simplified():
    from thm3.ir.simplify import simplify
    x, a, b = var("x", Type.REAL), var("acc.a", Type.REAL), var("acc.b", Type.REAL)
    zero = const(0.0, Type.REAL)
    e = _expr(Op.MAX, Type.REAL, zero, _expr(Op.SUB, Type.REAL, x, x))
    assert repr(simplify(e, finite={"x"})) == "0.0"
    assert repr(simplify(e)) != "0.0"                # x might be inf: inf - inf is NaN
    e = _add(_expr(Op.MUL, Type.REAL, x, zero), _expr(Op.MUL, Type.REAL, b, x))
    assert simplify(e, finite={"x"}) is _expr(Op.MUL, Type.REAL, b, x)
    assert simplify(_expr(Op.MUL, Type.REAL, a, zero), finite={"x"}).op is Op.MUL   # acc.a may be inf
    inf = const(float("inf"), Type.REAL)
    assert repr(simplify(_expr(Op.EQ, Type.BOOL, x, inf), finite={"x"})) == "False"
    assert simplify(_expr(Op.EQ, Type.BOOL, a, inf), finite={"x"}).op is Op.EQ
    flag, c = var("acc.f", Type.BOOL), _expr(Op.GT, Type.BOOL, x, zero)
    e = Expr(Op.WHERE, Type.BOOL, (c, const(True, Type.BOOL), flag))
    assert simplify(e) is _expr(Op.OR, Type.BOOL, c, flag)
    assert simplify(_expr(Op.EQ, Type.BOOL, flag, const(False, Type.BOOL))) is _expr(Op.NOT, Type.BOOL, flag)
    guarded = Expr(Op.WHERE, Type.REAL, (c, x, zero))          # x if x > 0 else 0 is at least 0
    assert simplify(_expr(Op.MAX, Type.REAL, zero, guarded)) is guarded
    assert simplify(_expr(Op.MAX, Type.REAL, zero, x)).op is Op.MAX


def test_lifted_text_keeps_the_docstring_and_parameter_comments(lifts):
    """The frontend keeps the docstring body and the loop parameters' comments, so the
    lifted file carries them without re-reading the source."""
    loop = parse_file(SAMPLES_DIR / "horner.py")
    assert loop.param_comments == {"t": "the point at which the polynomial is evaluated"}
    text = lifts["horner"][0].loop_text
    assert "t: Real     # the point at which the polynomial is evaluated\n" in text
    assert lifts["horner"][0].loop.path == "<lifted horner>"
    text = LINEAR_RECURRENCE.replace('keeping y only."""', 'keeping y only.\n\nThe body stays."""')
    loop = parse_source(text)
    assert loop.doc == "The body stays."
    res = lift(loop)
    doc = ast.get_docstring(ast.parse(res.loop_text))
    assert doc.startswith("Linear recurrence y' = a * y + b, keeping y only.\n\nThe body stays.\n\nLifted by thm3")


def test_nothing_to_lift_for_a_homomorphism():
    res = lift(parse_file(SAMPLES_DIR / "sum.py"))
    assert res.loop_text is None and "nothing to lift" in res.reason


def test_linear_recurrence_keeps_the_product():
    loop = parse_source(LINEAR_RECURRENCE)
    res = lift(loop)
    lifted = parse_source(res.loop_text)
    assert lifted.field_names == ("y", "pw")
    assert "a" in res.added[0].split("left:")[1]


def test_prove_decides():
    loop = parse_file(SAMPLES_DIR / "mts.py")
    seen = []

    def refuse(lifted):
        seen.append(lifted.field_names)
        return False

    res = lift(loop, timeout=3.0, prove=refuse)
    assert res.loop_text is None and "no combine was proved" in res.reason
    assert seen and seen[0] == ("t", "s")
    res = lift(loop, prove=lambda lifted: True)
    assert res.loop_text is not None and "proved" in res.reason


# --- the renderer ----------------------------------------------------------------------

@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s.name)
def test_render_round_trip(sample):
    loop = parse_file(sample.path)
    text = render_loop(loop.title, "", loop.fields, loop.params, loop.elements, loop.left.outputs,
                       loop.right.outputs if loop.right else None, loop.result, loop.preconditions,
                       result_type=loop.result_type)
    back = parse_source(text, "<rendered>")
    assert _decls(back.fields) == _decls(loop.fields)
    assert [p.name for p in back.params] == [p.name for p in loop.params]
    assert back.elements == loop.elements
    assert back.result_type == loop.result_type
    for xs, params in _random_lists(loop, 25):
        assert states_close(fold_left(loop, xs, params), fold_left(back, xs, params))
        if loop.right is not None:
            assert states_close(fold_right(loop, xs, params), fold_right(back, xs, params))


def test_render_binds_shared_subterms_and_imports_what_it_uses():
    x = var("x", Type.REAL)
    s_new = _add(var("acc.s", Type.REAL), x)
    m_new = _expr(Op.MAX, Type.REAL, var("acc.m", Type.REAL), s_new)
    fields = [FieldDecl("s", Type.REAL, 0.0, "sum so far"), FieldDecl("m", Type.REAL, 0.0, "best prefix")]
    text = render_loop("Maximum prefix sum.", "", fields, [], [ParamDecl("x", Type.REAL)],
                       [s_new, m_new], result=var("acc.m", Type.REAL))
    assert "    s = acc.s + x\n    return State(s, max(acc.m, s))\n" in text
    assert "from thm3.lang import Real\n" in text
    assert "    s: Real = 0     # sum so far\n" in text
    loop = parse_source(text)
    assert loop.field_names == ("s", "m")


def test_render_parameters_preconditions_and_functions():
    alpha = var("alpha", Type.REAL)
    x = var("x", Type.REAL)
    decay = _expr(Op.SUB, Type.REAL, const(1.0), alpha)
    left = [_add(_expr(Op.MUL, Type.REAL, decay, var("acc.s", Type.REAL)), _expr(Op.MUL, Type.REAL, alpha, x)),
            _expr(Op.MUL, Type.REAL, var("acc.w", Type.REAL), decay)]
    pre = [_expr(Op.AND, Type.BOOL, _expr(Op.LT, Type.BOOL, const(0.0), alpha),
                 _expr(Op.LT, Type.BOOL, alpha, const(1.0)))]
    fields = [FieldDecl("s", Type.REAL, 0.0, "average"), FieldDecl("w", Type.REAL, 1.0, "decay weight")]
    text = render_loop("EMA", "With its weight.", fields, [ParamDecl("alpha", Type.REAL)],
                       [ParamDecl("x", Type.REAL)], left, result=_expr(Op.EXP, Type.REAL, var("acc.s", Type.REAL)),
                       preconditions=pre, param_comments={"alpha": "smoothing factor"})
    assert text.startswith('"""EMA\n\nWith its weight."""\n')
    assert "from thm3.lang import Real, exp\n" in text
    assert "alpha: Real     # smoothing factor\n" in text
    assert "    assert 0 < alpha < 1\n" in text
    assert "def result(acc: State) -> Real:\n    return exp(acc.s)\n" in text
    loop = parse_source(text)
    rng = np.random.default_rng(0)
    for _ in range(10):
        xs = [(float(v),) for v in rng.normal(size=5)]
        s, w = fold_left(loop, xs, {"alpha": 0.25})
        assert np.isclose(w, 0.75 ** 5)



def test_a_predicate_on_the_state_gives_the_after_first_flag_and_its_leading_run():
    """x == acc.last is false at the first element (nothing came before): "every element
    after the first" is the flag of one run, and the leading run grows under it; a
    predicate on the element alone gets no such flag."""
    from thm3.lift.candidates import Candidates
    from thm3.ir.printer import to_text
    cands = Candidates(parse_file(CORPUS_DIR / "longest_equal_run.py"), np.random.default_rng(0)).build()
    flags = [c for c in cands if c.hint.startswith("all_after_first")]
    assert [to_text(c.update) for c in flags] == [f"acc.{flags[0].key} and (x == acc.last or acc.c4_first == inf)"]
    assert any(c.hint == "lead" and flags[0].key in c.needs for c in cands)
    plain = Candidates(parse_file(SAMPLES_DIR / "longest_ones.py"), np.random.default_rng(0)).build()
    assert not any(c.hint.startswith("all_after_first") for c in plain)


def test_the_longest_equal_run_lifts_and_its_combine_is_the_brute_force_one():
    import random
    a = thm3.analyze(CORPUS_DIR / "longest_equal_run.py", timeout=30)
    assert [x.split(":")[0] for x in a.lift_added] == ["first", "all_after_first_x_eq_last", "lead"], a.reason
    lifted = a.lifted_analysis

    def best(xs):
        out, run = 0, 0
        for i, x in enumerate(xs):
            run = run + 1 if i and x == xs[i - 1] else 1
            out = max(out, run)
        return out
    rng = random.Random(7)
    for _ in range(300):
        xs = [float(rng.randrange(3)) for _ in range(rng.randrange(7))]
        ys = [float(rng.randrange(3)) for _ in range(rng.randrange(7))]
        got = lifted.combine(fold_left(lifted.loop, [(x,) for x in xs], {}), fold_left(lifted.loop, [(y,) for y in ys], {}))
        assert got[2] == best(xs + ys), (xs, ys, got)


def test_a_two_sided_clamp_lifts_by_the_sum_and_its_restarts_from_both_infinities():
    """c' = min(max(c + x, L), U): the list's map of any start is min(max(c + s, lo), hi)
    with lo and hi what it makes of -inf and +inf; a one-sided clamp (Kadane's max(cur + x,
    0)) gets no restarts (its prefix extrema do it)."""
    import random
    from thm3.lift.candidates import Candidates
    hints = {c.hint for c in Candidates(parse_file(CORPUS_DIR / "clip_between_params.py"),
                                         np.random.default_rng(0)).build()}
    assert {"c_from_inf", "c_from_neg_inf"} <= hints
    assert not any("_from_inf" in c.hint for c in Candidates(parse_file(SAMPLES_DIR / "kadane.py"),
                                                              np.random.default_rng(0)).build())
    a = thm3.analyze(CORPUS_DIR / "clip_between_params.py", timeout=30)
    assert sorted(x.split(":")[0] for x in a.lift_added) == ["c_from_inf", "c_from_neg_inf", "s"], a.reason
    lifted = a.lifted_analysis
    rng = random.Random(4)
    for _ in range(200):
        lo, hi = -rng.choice((0.5, 1.0, 2.0)), rng.choice((0.25, 1.0, 3.0))

        def clip(xs, c=0.0):
            for x in xs:
                c = min(max(c + x, lo), hi)
            return c
        xs = [float(rng.choice((-1, -0.5, 0, 0.5, 1))) for _ in range(rng.randrange(7))]
        ys = [float(rng.choice((-1, -0.5, 0, 0.5, 1))) for _ in range(rng.randrange(7))]
        p = {"L": lo, "U": hi}
        got = lifted.combine(fold_left(lifted.loop, [(x,) for x in xs], p), fold_left(lifted.loop, [(y,) for y in ys], p),
                             **p)
        assert abs(float(got[0]) - clip(xs + ys)) < 1e-12, (xs, ys, p, got)
