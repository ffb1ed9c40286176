"""Corpus entries of issue 21's classes: steps linear in the state over a semiring (matrices), and powers and reciprocals.

Same conventions as tests/corpus.py (which adds these to CORPUS): each entry carries its
`klass`, and a non-homomorphism its smallest lift's size in `lift` where one is known."""
from __future__ import annotations

import math

from corpus import INF, Entry, _hom, _not  # noqa: F401

SEMIRING = "Blelloch 1990 / semiring scans"
CHECKSUMS = "checksums and rolling hashes"


def _ssm_lifted(a, b, p):               # (h1, h2, p1, p2)
    return (a[0] * b[2] + b[0], a[1] * b[3] + b[1], a[2] * b[2], a[3] * b[3])


def _tropical(plus, later_first: bool):
    def combine(a, b, p):               # row-major 2x2: B (x) A over (plus, +), or A (x) B
        (l00, l01, l10, l11), (r00, r01, r10, r11) = (b, a) if later_first else (a, b)
        return (plus(l00 + r00, l01 + r10), plus(l00 + r01, l01 + r11),
                plus(l10 + r00, l11 + r10), plus(l10 + r01, l11 + r11))
    return combine


def _boolean(a, b, p):                  # row-major 2x2 relations, h(xs + ys) = A ; B
    a00, a01, a10, a11 = a
    b00, b01, b10, b11 = b
    return ((a00 and b00) or (a01 and b10), (a00 and b01) or (a01 and b11),
            (a10 and b00) or (a11 and b10), (a10 and b01) or (a11 and b11))


def _boolean3(a, b, p):                 # row-major 3x3 relations, h(xs + ys) = A ; B
    return tuple(any(a[3 * i + k] and b[3 * k + j] for k in range(3)) for i in range(3) for j in range(3))


def _tropical3(plus):
    def combine(a, b, p):               # row-major 3x3: A (x) B over (plus, +)
        return tuple(plus(a[3 * i + k] + b[3 * k + j] for k in range(3)) for i in range(3) for j in range(3))
    return combine


def _hash_pow(a, b, p):                 # (h, pw) mod 1000003
    m = 1000003
    return ((a[0] * b[1] + b[0]) % m, (a[1] * b[1]) % m)


def _adler(a, b, p):                    # (a, b, n) mod 65521
    m = 65521
    return ((a[0] + b[0] - 1) % m, (a[1] + b[1] + b[2] * (a[0] - 1)) % m, a[2] + b[2])


def _fletcher3_len(a, b, p):            # (s1, s2, s3, n) mod 251
    m, n = 251, b[3]
    return ((a[0] + b[0]) % m, (a[1] + b[1] + n * a[0]) % m,
            (a[2] + b[2] + n * a[1] + n * (n + 1) // 2 * a[0]) % m, a[3] + b[3])


def _fletcher4_len(a, b, p):            # (n, s1, s2, s3, s4) mod 65521
    m, n = 65521, b[0]
    c2, c3 = n * (n + 1) // 2, n * (n + 1) * (n + 2) // 6
    return (a[0] + b[0], (a[1] + b[1]) % m, (a[2] + b[2] + n * a[1]) % m,
            (a[3] + b[3] + n * a[2] + c2 * a[1]) % m, (a[4] + b[4] + n * a[3] + c2 * a[2] + c3 * a[1]) % m)


def _ema_decay(a, b, p):                # (s, d)
    return (a[0] * b[1] + b[0], a[1] * b[1])


def _discounted(a, b, p):               # (g, d)
    return (a[0] + a[1] * b[0], a[1] * b[1])


def _decay_count(c):
    def combine(a, b, p):               # (n, v)
        return (a[0] + b[0], c ** b[0] * a[1] + b[1])
    return combine


def _discount_forward(a, b, p):         # (t, g)
    return (a[0] + b[0], a[1] + 0.99 ** a[0] * b[1])


def _held(pick, c):
    def combine(a, b, p):               # (value, count, sums...): the value scaled by c ** (b's count)
        k = c(p) if callable(c) else c
        return (pick(k ** b[1] * a[0], b[0]), a[1] + b[1], *(x + y for x, y in zip(a[2:], b[2:])))
    return combine


def _release_counts(a, b, p):           # (peak, quiet_n, loud_n)
    return (max(a[0] * 0.5 ** b[1] * 0.9 ** b[2], b[0]), a[1] + b[1], a[2] + b[2])


def _fast_slow(a, b, p):                # (fast, slow, n)
    return (max(0.5 ** b[2] * a[0], b[0]), max(0.95 ** b[2] * a[1], b[1]), a[2] + b[2])


def _digits(c):
    def combine(a, b, p):               # (v, k): b's digits shifted by a's count
        return (a[0] + b[0] * c ** a[1], a[1] + b[1])
    return combine


def _discount_forward_param(a, b, p):   # (g, t, total)
    return (a[0] + p["gamma"] ** a[1] * b[0], a[1] + b[1], a[2] + b[2])


def _two_modes(decay):
    def combine(a, b, p):               # (mode, a, b, n0, n1); b's list from a's mode
        c = decay(p)
        if a[0] == 0:
            return (b[0], c ** b[3] * a[1] + b[1], c ** b[4] * a[2] + b[2], a[3] + b[3], a[4] + b[4])
        return (1 - b[0], c ** b[4] * a[1] + b[2], c ** b[3] * a[2] + b[1], a[3] + b[4], a[4] + b[3])
    return combine


def _harmonic(a, b, p):                 # (n, h)
    if a[0] == 0:
        return b
    if b[0] == 0:
        return a
    return (a[0] + b[0], (a[0] + b[0]) / (a[0] / a[1] + b[0] / b[1]))


def _parallel(a, b, p):                 # (r,): 1 / r adds up, 0 is the empty side
    if a[0] == 0:
        return b
    if b[0] == 0:
        return a
    return (1 / (1 / a[0] + 1 / b[0]),)


def _inverse_variance(a, b, p):         # (v, m): 1 / v and m / v add up
    if a[0] == 0:
        return b
    if b[0] == 0:
        return a
    precision = 1 / a[0] + 1 / b[0]
    return (1 / precision, (a[1] / a[0] + b[1] / b[0]) / precision)


ENTRIES: list[Entry] = [
    # --- (+, *): affine maps, state-space scans ---------------------------------------------
    _not("semiring_affine_scan", SEMIRING, "[] and [(0, 0)] both give 0; after (1, 1) they give 1 and 0",
         ([], [(0.0, 0.0)], [(1.0, 1.0)]), domain="pair", klass="semiring", lift=1),
    _not("semiring_ssm_diag", SEMIRING, "A1 = 2: [] and [0] both give (0, 0); after 1 they differ",
         ([], [0.0], [1.0]), params=({"A1": 2.0, "A2": 0.5},), klass="semiring", lift=2),
    _not("semiring_iir3", SEMIRING, "a1 = a2 = a3 = 2: [] and [0] both give (0, 0, 0); after 1 they differ",
         ([], [0.0], [1.0]), params=({"a1": 2.0, "a2": 2.0, "a3": 2.0},), klass="semiring", lift=3),
    _not("semiring_coupled_pair", SEMIRING, "[] and [0] both give (0, 0); after 1 they give (1, 0) and (2, 1)",
         ([], [0.0], [1.0]), klass="semiring", lift=2),
    _hom("semiring_ssm_diag_lifted", SEMIRING, "h = h1 A**n2 + h2 per channel, powers multiply",
         _ssm_lifted, params=({"A1": 2.0, "A2": 0.5}, {"A1": -1.0, "A2": 0.0}), klass="semiring"),
    # --- (max, +) and (min, +): Viterbi, independent sets, shortest paths ----------------
    _hom("semiring_viterbi2_matrix", SEMIRING, "the (max, +) matrix product B (x) A",
         _tropical(max, later_first=True), domain="pair", klass="semiring"),
    _not("semiring_viterbi2_vector", SEMIRING,
         "[(0, 0)] and [(0, -3), (0, 0)] both give (0, -2); after (0, 1) they differ",
         ([(0.0, 0.0)], [(0.0, -3.0), (0.0, 0.0)], [(0.0, 1.0)]), domain="pair", klass="semiring", lift=2,
         twin="semiring_viterbi2_vector_max"),
    _not("semiring_viterbi2_vector_max", SEMIRING, "as semiring_viterbi2_vector (the same step with max())",
         ([(0.0, 0.0)], [(0.0, -3.0), (0.0, 0.0)], [(0.0, 1.0)]), domain="pair", klass="semiring", lift=2),
    _not("semiring_mwis_path", SEMIRING, "[0] and [0, 0] both give (0, 0); after 1 they differ",
         ([0.0], [0.0, 0.0], [1.0]), klass="semiring", lift=2),
    _hom("semiring_two_lanes_matrix", SEMIRING, "the (min, +) matrix product A (x) B (rows: the start lane)",
         _tropical(min, later_first=False), domain="digits", klass="semiring"),
    # --- (or, and): relations ----------------------------------------------------------------
    _hom("semiring_reach2_matrix", SEMIRING, "the (or, and) product of the relations A ; B",
         _boolean, klass="semiring"),
    _hom("semiring_viterbi3_matrix", "Rabiner 1989 / Blelloch 1990", "the (max, +) matrix product A (x) B",
         _tropical3(max), klass="semiring"),
    _hom("semiring_lanes3_matrix", SEMIRING, "the (min, +) matrix product A (x) B", _tropical3(min),
         klass="semiring"),
    _hom("semiring_reach3_matrix", "Mytkowicz et al., ASPLOS 2014", "the (or, and) product of the relations A ; B",
         _boolean3, klass="semiring"),
    # --- (+, *) mod m: rolling hashes, checksums -------------------------------------------
    _not("semiring_rolling_hash", CHECKSUMS, "B = 31: [] and [0] both give 0; after 1 they give 1 and 31",
         ([], [0], [1]), domain="int", params=({"B": 31},), klass="semiring", lift=1),
    _hom("semiring_rolling_hash_pow", CHECKSUMS, "h = h1 pw2 + h2, pw = pw1 pw2 (mod p)", _hash_pow,
         domain="int", params=({"B": 31}, {"B": 2}, {"B": -3}), klass="semiring"),
    _not("semiring_continuant_mod", SEMIRING, "[] and [0, 1] both give (1, 0); after [0] they give (0, 1) and "
         "(1, 1)", ([], [0, 1], [0]), domain="int", klass="semiring", lift=2),
    _not("semiring_hash_abs", CHECKSUMS, "B = 2: [] and [0] both give 0; after 1 they give 1 and 2",
         ([], [0], [1]), domain="int", params=({"B": 2},), klass="semiring", lift=1),
    _hom("semiring_hash_abs_pow", CHECKSUMS, "h = h1 pw2 + h2, pw = pw1 pw2 (mod p), over |x|", _hash_pow,
         domain="int", params=({"B": 31}, {"B": 2}, {"B": -3}), klass="semiring"),
    _hom("powers_adler32", CHECKSUMS, "zlib's adler32_combine: b = b1 + b2 + n2 (a1 - 1) (mod 65521)",
         _adler, domain="int", klass="powers"),
    _not("powers_fletcher16", CHECKSUMS, "[] and [0] both give (0, 0); after 1 they give 2 and 1 in s2",
         ([], [0], [1]), domain="int", klass="powers", lift=1),
    _hom("powers_fletcher3_len", CHECKSUMS, "s3 = s3a + s3b + n s2a + n (n + 1) / 2 s1a (mod 251), n = b's length",
         _fletcher3_len, domain="int", klass="powers"),
    _hom("powers_fletcher4_len", CHECKSUMS, "the k-th sum shifts the earlier ones by C(n + j - 1, j) (mod 65521)",
         _fletcher4_len, domain="int", klass="powers"),
    _not("powers_fletcher3_lift", CHECKSUMS, "[] and [0] both give (0, 0, 0); after 1 they give 2 and 3 in s3",
         ([], [0], [1]), domain="int", klass="powers", lift=1),
    _not("powers_position_sum_mod", CHECKSUMS, "[0] and [1] both give (1, 0); after [0] the 1 is at position 1",
         ([0], [1], [0]), domain="int", klass="powers", lift=1),
    # --- powers: decays, 2**-k, discounts; reciprocals -----------------------------------------
    _not("powers_decay_param", SEMIRING, "c = 2: [] and [0] both give 0; after 1 they give 1 and 2",
         ([], [0.0], [1.0]), params=({"c": 2.0},), klass="powers", lift=1),
    _hom("powers_ema_decay", SEMIRING, "s = s1 d2 + s2, d = d1 d2", _ema_decay,
         params=({"alpha": 0.5}, {"alpha": 0.25}), klass="powers"),
    _not("powers_halving", SEMIRING, "[] and [-1, 1] both give 0; after 1 they give 1 and 0.5",
         ([], [-1.0, 1.0], [1.0]), klass="powers", lift=1),
    _hom("powers_halving_lifted", SEMIRING, "s = s1 w2 + s2, w = w1 w2", _ema_decay, klass="powers"),
    _hom("powers_discounted_return", SEMIRING, "G = G1 + d1 G2, d = d1 d2", _discounted,
         params=({"gamma": 0.5}, {"gamma": -2.0}), klass="powers"),
    _hom("powers_decay_count", SEMIRING, "v = 0.9 ** n2 v1 + v2: the decay over b's list from b's count",
         _decay_count(0.9), klass="powers"),
    _hom("powers_ema_count", SEMIRING, "s = (1 - alpha) ** n2 s1 + s2: a parameter's power of b's count",
         lambda a, b, p: (a[0] + b[0], (1 - p["alpha"]) ** b[0] * a[1] + b[1]),
         params=({"alpha": 0.5}, {"alpha": 0.25}), klass="powers"),
    _hom("powers_gated_halving", SEMIRING, "v = 0.5 ** k2 v1 + v2, k counting the positive elements",
         _decay_count(0.5), klass="powers"),
    _hom("powers_discount_forward", SEMIRING, "G = G1 + 0.99 ** t1 G2", _discount_forward, klass="powers"),
    _hom("powers_two_mode_decay", SEMIRING, "per mode of a: b's sums decayed by 0.5 ** (b's count in that "
         "mode), swapped where a ends in mode 1", _two_modes(lambda p: 0.5), klass="finite-linear"),
    _hom("powers_two_mode_param", SEMIRING, "as powers_two_mode_decay with the decay a parameter: p ** (b's count)",
         _two_modes(lambda p: p["p"]), params=({"p": 0.5}, {"p": 0.9}), klass="finite-linear"),
    _not("powers_two_mode_skewed", SEMIRING, "[(0, 0), (0, 0.5)] and [(0, 1), (0, 0)] both give (0, 0.5, 0, 2, 0); "
         "after a flip they decay by 0.8 and differ", ([(0, 0.0), (0, 0.5)], [(0, 1.0), (0, 0.0)], [(1, 0.0)]),
         klass="finite-linear"),
    # --- (max, *) and (min, *): scaled by nonnegative coefficients; powers a step reads ----------
    _hom("semiring_peak_meter", SEMIRING, "peak = max(0.5 ** ticks2 peak1, peak2): a peak never falls below 0",
         _held(max, 0.5), klass="semiring"),
    _hom("semiring_peak_meter_inf", SEMIRING, "peak = max(0.9 ** n2 peak1, peak2): scaling by 0.9 is monotone",
         _held(max, 0.9), klass="semiring"),
    _hom("semiring_cheapest_inflated", SEMIRING, "cost = min(1.05 ** t2 cost1, cost2)", _held(min, 1.05),
         klass="semiring"),
    _hom("semiring_peak_decay_param", SEMIRING, "peak = max(decay ** n2 peak1, peak2)",
         _held(max, lambda p: p["decay"]), params=({"decay": 0.5}, {"decay": 0.9}), klass="semiring"),
    _hom("semiring_peak_hold_branch", SEMIRING, "peak = max(0.5 ** ticks2 peak1, peak2), the total a sum",
         _held(max, 0.5), klass="semiring"),
    _hom("semiring_gated_inflation", SEMIRING, "cost = min(1.1 ** busy2 cost1, cost2)", _held(min, 1.1),
         klass="semiring"),
    _hom("semiring_envelope_dt", SEMIRING, "peak = max(exp(-t2) peak1, peak2): the product of exp(-dt) is "
         "exp(-(sum of dt))", lambda a, b, p: (max(math.exp(-b[1]) * a[0], b[0]), a[1] + b[1]),
         klass="semiring"),
    _hom("powers_ema_irregular", SEMIRING, "v = exp(-0.5 t2) v1 + v2",
         lambda a, b, p: (math.exp(-0.5 * b[1]) * a[0] + b[0], a[1] + b[1]), klass="powers"),
    _hom("semiring_fast_slow_peaks", SEMIRING, "each peak scaled by its decay ** n2", _fast_slow, klass="semiring"),
    _hom("semiring_release_counts", SEMIRING, "peak = max(0.5 ** quiet_n2 * 0.9 ** loud_n2 * peak1, peak2): a "
         "product of two counts' powers", _release_counts, domain="nonneg", klass="semiring"),
    _not("semiring_viterbi2_prob", SEMIRING, "[0, -1, 0] and [1, 0, 0] both give the same scores; after [1] "
         "they differ", ([0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [1.0]), klass="semiring", lift=2),
    _not("semiring_peak_flip", SEMIRING, "[0] and [-1] both give (0, 1); after [1] they give 0 and -0.5",
         ([0.0], [-1.0], [1.0])),
    _not("semiring_signed_feedback", SEMIRING, "k = -1: [0] and [-1] both give (0, 1); after [1] they give 0 "
         "and -1", ([0.0], [-1.0], [1.0]), params=({"k": -1.0},)),
    _hom("powers_bitplane", SEMIRING, "v = v1 + v2 * 2.0 ** -k1: b's bits shifted by a's count",
         _digits(0.5), domain="bits", klass="powers"),
    _hom("powers_gated_digits", SEMIRING, "v = v1 + v2 * 0.1 ** k1, k counting the valid digits",
         _digits(0.1), klass="powers"),
    _hom("powers_discount_forward_param", SEMIRING, "g = g1 + gamma ** t1 g2", _discount_forward_param,
         params=({"gamma": 0.5}, {"gamma": 0.9}), klass="powers"),
    _hom("powers_harmonic_mean", SEMIRING, "n / h adds up: h = (n1 + n2) / (n1 / h1 + n2 / h2)",
         _harmonic, domain="digits", klass="powers"),
    _hom("powers_weighted_harmonic", SEMIRING, "w and w / h add up: h = (w1 + w2) / (w1 / h1 + w2 / h2)",
         _harmonic, domain="digits", klass="powers"),
    _hom("powers_parallel_resistors", SEMIRING, "the conductance 1 / r adds up: r = r1 r2 / (r1 + r2)",
         _parallel, domain="digits", klass="powers"),
    _hom("powers_inverse_variance", SEMIRING, "the precision 1 / v and m / v add up",
         _inverse_variance, domain="digits", klass="powers"),
]
