"""The remainder `%` (Op.MOD): read from a loop file, the same floored value (in [0, m), as
Python's) in every table and backend, decided by Z3 in the proofs, and what lets the
sketch read a condition on b's first element off the parity of a count (sign changes)."""
from __future__ import annotations

import math
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
import z3

import thm3
from thm3.ir import Expr, Fn, Op, Type, const, transform, walk
from thm3.pipeline import analyze_loop
from thm3.semantics.evaluate import NUMPY, PYTHON, quiet
from thm3.semantics.reals import REALS, UNDEFINED
from thm3.semantics.samples import Domain, fold_left
from thm3.semantics.equality import states_close
from thm3.semantics.symbolic import Explorer, Symbols, SymbolicTable
from thm3.semantics.sympy_table import SYMPY, to_ir
from thm3.synth.exact import EXACT
from thm3.syntax.frontend import parse_source

ROOT = Path(__file__).resolve().parents[1]
SIGN_CHANGES = ROOT / "bench" / "corpus" / "sign_changes.py"

PARITY = '''"""Positives so far, and their parity."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    n: Int = 0      # positives so far
    odd: Int = 0    # n % 2


def left(acc: State, x: Real) -> State:
    n = acc.n + 1 if x > 0 else acc.n
    return State(n, n % 2)
'''

MODULI = '''"""Positives modulo 3, and the sum modulo 2."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    k: Int = 0      # positives so far, modulo 3
    r: Real = 0     # sum so far, modulo 2


def left(acc: State, x: Real) -> State:
    return State((acc.k + (1 if x > 0 else 0)) % 3, (acc.r + x) % 2)
'''

DIFFERENCE_SIGN_CHANGES = '''"""Sign changes of x - y, with the last difference."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    c: Int = 0      # sign changes of x - y so far
    last: Real = 0  # the last x - y (0 while empty)


def left(acc: State, x: Real, y: Real) -> State:
    assert x != y
    d = x - y
    flip = acc.last != 0 and (d > 0) != (acc.last > 0)
    return State(acc.c + 1 if flip else acc.c, d)
'''


def _floored(a: Fraction, m: int) -> Fraction:
    return a - m * math.floor(a / m)


# --- the tables -------------------------------------------------------------------------

@pytest.mark.parametrize("m", [1, 2, 3, 4, 7])
def test_every_table_gives_the_floored_remainder(m):
    values = [Fraction(k) for k in range(-9, 10)] + [Fraction(-7, 2), Fraction(5, 4), Fraction(-1, 3)]
    for a in values:
        want = _floored(a, m)
        assert 0 <= want < m
        with quiet():
            assert float(NUMPY[Op.MOD](np.float64(a), m)) == pytest.approx(float(want), abs=1e-12)
            assert float(PYTHON[Op.MOD](float(a), m)) == pytest.approx(float(want), abs=1e-12)
        assert REALS[Op.MOD](a, m) == want
        assert EXACT[Op.MOD](a, m) == want
        assert SYMPY[Op.MOD](sp.Rational(a.numerator, a.denominator), m) == sp.Rational(want.numerator, want.denominator)
        if a.denominator == 1:
            assert PYTHON[Op.MOD](int(a), m) == int(want) and isinstance(PYTHON[Op.MOD](int(a), m), int)
    with quiet():
        assert np.isnan(NUMPY[Op.MOD](np.float64(np.inf), 2)) and np.isnan(PYTHON[Op.MOD](math.inf, 2))
    assert REALS[Op.MOD](math.inf, 2) is UNDEFINED


def _valid(claim_of, type_: Type) -> bool | None:
    """What Z3, through the symbolic table, says of claim_of(c) for every c of the type:
    True (proved on every path), False (refuted on some path) or None (undecided)."""
    syms = Symbols()
    c = syms.real("acc.c", type_)
    ex = Explorer(syms.hyps, time.monotonic() + 30)
    table = SymbolicTable(ex, lazy=False)
    for _ in ex.paths():
        got = ex.valid(claim_of(table, c))
        if got is not True:
            return got
    return True


def test_z3_decides_the_remainder():
    """(2c) % 2 == 0 holds for every Int and not for every Real; (c + 1) % 2 != c % 2
    holds for both; c % 3 < 3 and >= 0 always."""
    two = lambda t, c: t.op_mul(c, t.op_const(2, Type.INT))  # noqa: E731
    even = lambda t, c: t.op_eq(t.op_mod(two(t, c), 2), t.op_const(0, Type.INT))  # noqa: E731
    assert _valid(even, Type.INT) is True
    assert _valid(even, Type.REAL) is False          # refuted (c = 1/4), not merely undecided
    flips = lambda t, c: t.op_ne(t.op_mod(t.op_add(c, t.op_const(1, Type.INT)), 2), t.op_mod(c, 2))  # noqa: E731
    assert _valid(flips, Type.INT) is True and _valid(flips, Type.REAL) is True
    bounded = lambda t, c: z3.And(t.op_lt(t.op_mod(c, 3), t.op_const(3, Type.INT)),  # noqa: E731
                                  t.op_ge(t.op_mod(c, 3), t.op_const(0, Type.INT)))
    assert _valid(bounded, Type.INT) is True and _valid(bounded, Type.REAL) is True


def test_sympy_reads_a_remainder_back():
    c = sp.Symbol("a__c", integer=True)
    got = to_ir(sp.Mod(c + 1, 2), {"a.c": Type.INT}, want=Type.INT)
    assert got.op is Op.MOD and got.arg == 2 and got.type is Type.INT
    assert repr(got) == "(a.c + 1) % 2" or repr(got) == "(1 + a.c) % 2"


# --- the language -----------------------------------------------------------------------

@pytest.mark.parametrize("text", ["(acc.c + 1) % 2", "acc.c % 2 * 3", "3 * (acc.c % 2)", "-acc.c % 5",
                                  "acc.c % 4 % 3", "acc.s % 2 + 1.5", "(acc.s - x) % 7 - x"])
def test_printer_round_trip(text):
    src = f'''from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    c: Int = 0
    s: Real = 0


def left(acc: State, x: Real) -> State:
    return State(acc.c + 1, {text})
'''
    loop = parse_source(src)
    out = loop.left.outputs[1]
    back = parse_source(src.replace(text, repr(out))).left.outputs[1]
    assert out is back, (text, repr(out), repr(back))
    assert repr(out).replace(" ", "") == text.replace(" ", "")


# --- the sketch, the invariants and the proofs ------------------------------------------

@pytest.fixture(scope="module")
def sign_changes():
    return thm3.analyze(SIGN_CHANGES, timeout=30)


def test_sign_changes_combine_is_found_and_proved(sign_changes):
    a = sign_changes
    assert a.verdict == "homomorphism", a.reason
    assert all(a.proofs[k] == "proved" for k in ("identity", "associativity", "homomorphism"))
    assert "first element" in a.methods["c"]
    assert any(e.op is Op.MOD and e.arg == 2 for e in walk([a.combine_fn.outputs[0]]))


def test_sign_changes_runs_as_the_sequential_loop(sign_changes):
    a = sign_changes
    rng = np.random.default_rng(3)
    for n in (0, 1, 2, 3, 7, 64, 1001):
        x = rng.choice([-1.0, 1.0], n) * rng.uniform(0.1, 2.0, n)
        want = fold_left(a.loop, [(v,) for v in x], {})
        got = a.run(x)
        assert tuple(got) == tuple(want), (n, got, want)
        scan = a.scan(x)
        for k in (range(n) if n <= 64 else (0, n // 2, n - 1)):
            prefix = fold_left(a.loop, [(v,) for v in x[:k + 1]], {})
            assert scan.c[k] == prefix[0] and scan.last[k] == prefix[1]


@pytest.mark.slow
def test_a_wrong_parity_is_not_proved(sign_changes):
    """The same combine with `% 3` or `% 4`, or with the parity read the other way round,
    is refuted on lists: the prover does not take `%` on trust."""
    from thm3.prove.combine import prove_combine
    from thm3.prove.laws import Setting
    from thm3.semantics.samples import make_triples
    a = sign_changes
    fn = a.combine_fn
    triples = make_triples(a.loop)

    def modulus(k):
        return Fn(fn.inputs, transform(fn.outputs, lambda e, go: Expr(Op.MOD, e.type, (go(e.src[0]),), k)
                                       if e.op is Op.MOD else None))

    def odd(e, go):
        if e.op is Op.EQ and e.src[0].op is Op.MOD:
            return Expr(Op.EQ, e.type, (go(e.src[0]), const(1)))
        return None
    for wrong in (modulus(3), modulus(4), Fn(fn.inputs, transform(fn.outputs, odd))):
        statuses, details, _ = prove_combine(a.loop, Setting(a.loop, a.invariant_exprs), wrong, triples,
                                             time.monotonic() + 30)
        assert "failed" in statuses.values(), (repr(wrong.outputs[0]), statuses, details)


def test_numba_backend_agrees(sign_changes):
    pytest.importorskip("numba")
    rng = np.random.default_rng(11)
    x = rng.choice([-1.0, 1.0], 5000) * rng.uniform(0.1, 2.0, 5000)
    got, want = sign_changes.run(x, backend="numba"), sign_changes.run(x)
    assert tuple(got) == tuple(want)


def test_a_condition_on_a_local_term():
    """`d = x - y` is what the state keeps as last: the condition on d is read off b.last."""
    a = analyze_loop(parse_source(DIFFERENCE_SIGN_CHANGES, "difference_sign_changes.py"), timeout=30)
    assert a.verdict == "homomorphism", a.reason
    rng = np.random.default_rng(5)
    dom = Domain(a.loop)
    for _ in range(20):
        xs = dom.random_list(rng, {}, int(rng.integers(0, 30)))
        x = np.array([e[0] for e in xs]) if xs else np.zeros(0)
        y = np.array([e[1] for e in xs]) if xs else np.zeros(0)
        assert states_close(tuple(a.run(x, y)), fold_left(a.loop, xs, {}))


def test_remainder_invariants():
    """A field that is another's remainder (odd == n % 2) and one bounded by its modulus
    (k < 3) are invariants the proofs of the identity need."""
    p = analyze_loop(parse_source(PARITY, "parity.py"), timeout=30)
    assert p.verdict == "homomorphism", p.reason
    assert "odd == n % 2" in p.invariants
    m = analyze_loop(parse_source(MODULI, "moduli.py"), timeout=30)
    assert m.verdict == "homomorphism", m.reason
    assert "k < 3" in m.invariants and "r < 2" in m.invariants
    rng = np.random.default_rng(2)
    x = rng.normal(size=777)
    want = fold_left(m.loop, [(v,) for v in x], {})
    got = m.run(x)
    assert got[0] == want[0] and got[1] == pytest.approx(want[1], abs=1e-9)


# --- the CUDA text, on the CPU emulation of the kernels ---------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cuda_remainder_on_the_emulation(dtype, sign_changes, tmp_path):
    import shutil
    if not shutil.which("g++"):
        pytest.skip("no g++")
    from test_kernels import Emulated, _device_arrays
    from thm3.backends.numpy_tree import run_sequential
    from thm3.gpu.render import cuda as render
    m = analyze_loop(parse_source(MODULI, "moduli.py"), timeout=30)
    for a, make in ((sign_changes, lambda rng, n: rng.choice([-1.0, 1.0], n) * rng.uniform(0.5, 2.0, n)),
                    (m, lambda rng, n: rng.normal(0.0, 3.0, n))):
        spec = render.make_spec(a.loop, a.combine_fn, dtype, 4)
        emu = Emulated(spec, tmp_path, 64, 4)
        rng = np.random.default_rng(7)
        for n in (0, 1, 31, 1000, 4099):
            dev = _device_arrays(spec, [make(rng, n)])
            want = run_sequential(a.loop, [d.astype(np.float64) for d in dev], {})
            for grid in (1, 3, 7):
                got = emu.reduce(dev, {}, grid)
                assert int(got[0]) == int(want[0]), (a.loop.name, n, grid, got, want)
                assert float(got[1]) == pytest.approx(float(want[1]), rel=1e-4, abs=1e-4), (a.loop.name, n, grid)


def test_cuda_spells_the_floored_remainder(sign_changes):
    from thm3.gpu.render import cuda as render
    m = analyze_loop(parse_source(MODULI, "moduli.py"), timeout=30)
    src = render.render(m.loop, m.combine_fn, dtype="float32")
    assert "% 3LL + 3LL) % 3LL" in src              # C's % truncates: shifted into [0, 3)
    assert "fmodf(" in src and "+ 2.0f" in src       # a negative Real remainder gets m added
    assert "& 1LL" in render.render(sign_changes.loop, sign_changes.combine_fn, dtype="float32")


def test_emitted_numpy_functions_compute_the_remainder(sign_changes):
    """The emitted module's NumPy `_left` and `_combine` (what it checks the GPU against)
    read `%` as the loop does: folding halves with `_left` and joining them with
    `_combine` gives the sequential state."""
    from thm3.gpu.render.module import numpy_source
    a = sign_changes
    import thm3.gpu.runtime.host as runtime         # the module's checked Int helpers (_iadd, ...)
    ns = {"np": np, "DTYPE": np.float64} | {k: getattr(runtime, k) for k in dir(runtime) if k.startswith("_i")}
    exec(compile(numpy_source(a.loop, a.combine_fn), "<emitted>", "exec"), ns)   # thm3's own output
    rng = np.random.default_rng(9)
    for n in (0, 1, 2, 5, 40):
        x = rng.choice([-1.0, 1.0], n) * rng.uniform(0.5, 2.0, n)
        k = int(rng.integers(0, n + 1))
        parts = []
        for chunk in (x[:k], x[k:]):
            s = (np.int64(0), np.float64(0.0))
            for v in chunk:
                s = ns["_left"](*s, np.float64(v))
            parts.append(s)
        got = ns["_combine"](*parts[0], *parts[1])
        assert tuple(map(float, got)) == tuple(map(float, fold_left(a.loop, [(v,) for v in x], {}))), (n, k)


def test_a_count_kept_in_a_real_is_an_integer():
    """A Real field that starts at an integer and steps by integers gets the invariant
    c % 1 == 0 (one with a step of 0.5 does not), which the parity in the combine of
    the Real-count sign changes needs; laws whose terms have no `%` do not assume it."""
    from thm3.analysis.invariants import _integer_counts
    from thm3.prove.laws import Law, Setting
    path = ROOT / "bench" / "corpus" / "sign_changes_real_count.py"
    a = thm3.analyze(path, timeout=30)
    assert a.verdict == "homomorphism", a.reason
    assert "c % 1 == 0" in a.invariants
    half = parse_source(path.read_text().replace("acc.c + 1 if flip", "acc.c + 0.5 if flip"))
    assert _integer_counts(half) == []
    assert [repr(i) for i in _integer_counts(a.loop)] == ["acc.c % 1 == 0.0"]
    setting = Setting(a.loop, a.invariant_exprs)
    plain = Law(setting, ["s"], ["x"], time.monotonic() + 5, (a.loop.left.outputs[1],))
    assert not any("%" in repr(i) for i in plain.invariants) and plain.integers == []
    with_mod = Law(setting, ["a"], [], time.monotonic() + 5, a.combine_fn.outputs)
    assert with_mod.integers == ["c"]


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
def test_remainder_kernels_compile(arch, sign_changes):
    from thm3.gpu.render import cuda as render
    from thm3.gpu.render.scan import render_scan
    from thm3.gpu.runtime import nvrtc
    if not nvrtc.available():
        pytest.skip("cuda-bindings (NVRTC) is not installed")
    m = analyze_loop(parse_source(MODULI, "moduli.py"), timeout=30)
    for a in (sign_changes, m):
        for dtype in ("float32", "float64"):
            ptx = nvrtc.compile_cuda(render.render(a.loop, a.combine_fn, dtype=dtype, dim=4), arch,
                                     f"{a.loop.name}.cu").decode()
            assert ".entry thm3_reduce_blocks(" in ptx
            assert "ld.local" not in ptx and "st.local" not in ptx
            scan = nvrtc.compile_cuda(render_scan(a.loop, a.combine_fn, dtype=dtype, dim=4), arch,
                                      f"{a.loop.name}_scan.cu").decode()
            assert ".entry thm3_scan_blocks(" in scan


def test_only_a_term_that_is_an_integer_by_its_shape_gets_z3s_integer_mod():
    """The integer encoding floors first, so it is sound only on integers: a Real, a
    quotient or an unknown function of Int values never gets it."""
    syms = Symbols()
    n, k = syms.real("acc.n", Type.INT), syms.real("acc.k", Type.INT)
    r = syms.real("acc.r", Type.REAL)
    ex = Explorer(syms.hyps, time.monotonic() + 30)
    assert ex.integral(n.z3) and ex.integral((n.z3 + 1) * k.z3 - 3) and ex.integral(z3.If(r.z3 > 0, n.z3, k.z3))
    assert not ex.integral(r.z3) and not ex.integral(n.z3 / 2) and not ex.integral(n.z3 + z3.RealVal("1/2"))
    assert not ex.integral(z3.If(r.z3 > 0, n.z3, r.z3)) and not ex.integral(z3.Function("f", z3.RealSort(), z3.RealSort())(n.z3))
    # the same remainder on the Real side still means the floored remainder of a real
    t = SymbolicTable(ex, lazy=True)
    half = t.op_mod(t.op_add(r, t.op_const(0.5, Type.REAL)), 2)
    s = z3.Solver()
    s.add(r.z3 == 0, half.z3 != z3.RealVal("1/2"))
    assert s.check() == z3.unsat


# --- integer reasoning for `%` in the proofs (issue 21) -------------------------------------

def test_remainders_are_equal_where_their_arguments_are_congruent():
    from thm3.prove.modular import congruent_remainders
    h, b, x = sp.symbols("h B x", integer=True)
    y = sp.Symbol("y", real=True)
    p = 1000003
    # (h * B + |x|) % p on the path x <= 0, as the combine and as `left` spell it
    assert congruent_remainders(sp.Mod(b * h + (p - 1) * x, p), sp.Mod(b * h - x, p))
    # a remainder inside a ring term may be replaced by its argument
    assert congruent_remainders(sp.Mod(sp.Mod(h * b, p) * sp.Mod(x, p) + 1, p), sp.Mod(h * b * x + 1 + p, p))
    assert not congruent_remainders(sp.Mod(b * h + x, p), sp.Mod(b * h - x, p))
    assert not congruent_remainders(sp.Mod(y, p), sp.Mod(y + p, 7))
    # not an integer term: no claim
    assert not congruent_remainders(sp.Mod(sp.Mod(h, p) / 2, p), sp.Mod(h / 2, p))
    assert not congruent_remainders(sp.Mod(y, p), sp.Mod(y + p, p))


def _corpus_loop(name):
    import sys
    sys.path.insert(0, str(Path(__file__).parent))
    from corpus import by_name
    return thm3.parse_file(by_name(name).path), by_name(name)


def test_rolling_hash_of_magnitudes_with_its_power_is_proved():
    """Before: the homomorphism law stayed "tested": Z3 leaves (h * (B % p) + |x| % p) % p ==
    (h * B + |x|) % p open (nonlinear integer arithmetic), and the paths on the sign of x
    that SymPy would decide were never taken (a renamed method shadowed the lazy-then-split
    runner of the laws)."""
    loop, entry = _corpus_loop("semiring_hash_abs_pow")
    a = analyze_loop(loop, timeout=60, lift=False)
    assert a.verdict == "homomorphism", a.reason
    assert all(a.proofs[k] == "proved" for k in ("identity", "associativity", "homomorphism")), a.proofs


def test_rolling_hash_of_magnitudes_is_lifted_by_the_power():
    from thm3.lift import lift
    from thm3.pipeline import lift_prover
    loop, entry = _corpus_loop("semiring_hash_abs")
    got = lift(loop, timeout=60, prove=lift_prover(time.monotonic() + 60))
    assert got.loop is not None, got.reason
    assert len(got.added) == entry.lift and got.added[0].startswith("pw"), got.added
    rng = np.random.default_rng(5)
    dom = Domain(loop)
    for i in range(40):
        params = dom.params(rng, small=True)
        xs = dom.random_list(rng, params, int(rng.integers(0, 8)), small=i % 2 == 0)
        assert states_close(fold_left(got.loop, xs, params, dim=1)[:1], fold_left(loop, xs, params, dim=1))


def test_a_difference_of_remainders_is_decided_with_the_remainders_as_atoms():
    """Remainders inside a difference are opaque atoms to `_is_zero`: equal as polynomials
    in them is zero, at once; anything else is "not shown" (False), not SymPy's simplify
    (a tenth of a second a term, which decided none of a lexer's 289 paths); two remainders
    with congruent arguments are `congruent_remainders`' to show."""
    from thm3.prove.equal import _is_zero
    from thm3.prove.modular import congruent_remainders
    h, p, x = sp.symbols("h p x", integer=True)
    m = 1000003
    a = sp.Mod(h * 31 + x, m)
    t = time.monotonic()
    assert _is_zero(a * p + sp.Mod(p * 31, m) - (sp.Mod(31 * p, m) + p * a))
    assert not _is_zero(a - sp.Mod(h * 31 + x + 1, m))
    assert not _is_zero(sp.Mod(h * 31, m) * p - sp.Mod(h * 31 * p, m))   # not equal as integers
    assert time.monotonic() - t < 1.0
    assert congruent_remainders(sp.Mod(sp.Mod(h * 31, m) + x, m), a)
    assert not congruent_remainders(sp.Mod(h * 31 + x + 1, m), a)
