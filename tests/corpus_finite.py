"""Corpus entries of issue 21's classes: finite-state steps (transition tables) and finite control with linear data.

Same conventions as tests/corpus.py (which adds these to CORPUS): each entry carries its
`klass`, and a non-homomorphism its smallest lift's size in `lift` where one is known.
`COPY_LIFTS` gives, besides, the size of the smallest lift made of copies of the state's
fields (each copy: a field of the state reached from another reachable state, the
Myhill–Nerode construction restricted to the reachable states), worked out by hand on the
transition monoid (a copy that equals another field, or is constant, adds nothing); it
is larger than `lift` where a field of another kind does it alone (ends with 01: the
number of ones, which tells the one-element list [1] apart).  `NAMED_LIFTS` gives the
named field (a capped length, a parity, the first element, the last element's predicate)
that does what the copies do with as many fields or fewer."""
from __future__ import annotations

from corpus import INF, Entry, _hom, _not  # noqa: F401

FSM = "Mytkowicz, Musuvathi and Schulte, ASPLOS 2014 (data-parallel finite-state machines)"
PATTERNS = "PLDI 2021 regular-pattern loops"
COUNTERS = "saturating counters"
LINEAR = "finite control with linear data (AutoLifter / Parsynt region counts)"
TROPICAL = "finite control with (max, +) or (min, +) data (weighted automata over tropical semirings, Mohri 2009)"
SCALING = "finite control with (max, *) or (min, *) data (weighted automata over the Viterbi semiring)"


def _stop_peak(a, b, p):                # (stopped, peak, ticks)
    if a[0]:
        return tuple(a)
    return (b[0], max(a[1] * 0.9 ** b[2], b[1]), a[2] + b[2])


def _xor(a, b, p):
    return (a[0] != b[0],)


def _sustained(a, b, p):
    """Runs of five positives: the counts added, less each block's count of the run they
    share, plus 1 where the joined run reaches five."""
    if a[0] == 0:
        return tuple(b)
    if b[0] == 0:
        return tuple(a)
    first, lead, whole, last, trail, long = a
    join = last == b[0]
    long += b[5]
    if join and last == 2:
        long += (trail + b[1] >= 5) - (trail >= 5) - (b[1] >= 5)
    return (first, min(lead + b[1], 5) if whole and join else lead, whole and b[2] and join, b[3],
            min(trail + b[4], 5) if b[2] and join else b[4], long)


def _pretokenizer(a, b, p):
    """Runs of one class: a run of two counted once, where the blocks' runs join (a's
    trailing run and b's leading one, each capped at 2) one is added or one taken off."""
    if a[0] == 0:
        return tuple(b)
    if b[0] == 0:
        return tuple(a)
    first, lead, whole, last, trail, long, letters = a
    join = last == b[0]
    long += b[5] + (join and trail == 1 and b[1] == 1) - (join and trail == 2 and b[1] == 2)
    return (first, min(lead + b[1], 2) if whole and join else lead, whole and b[2] and join, b[3],
            min(trail + b[4], 2) if b[2] and join else b[4], long, letters + b[6])


def _reset_peak_total(a, b, p):
    """Since the last reset: b's own where b saw one, else the peaks' max, the totals' sum
    and the dips' min."""
    if b[0]:
        return tuple(b)
    return (a[0], max(a[1], b[1]), a[2] + b[2], min(a[3], b[3]))


def _up_streaks(a, b, p):
    """a's trailing streak joins b's leading one."""
    return (a[0] and b[0], a[1] + b[1] if a[0] else a[1], a[2] + b[1] if b[0] else b[2],
            max(a[3], b[3], a[2] + b[1]))


def _mod3(a, b, p):
    return ((a[0] + b[0]) % 3,)


def _sat3(a, b, p):
    return (min(a[0] + b[0], 3),)


def _last_nonempty(a, b, p):            # (has, pos)
    return b if b[0] else a


def _three(a, b, p):                    # (n, enough)
    n = min(a[0] + b[0], 3)
    return (n, n >= 3)


def _sign_switch(a, b, p):              # (flip, s)
    return (a[0] != b[0], a[1] + (-b[1] if a[0] else b[1]))


def _swap_sums(a, b, p):                # (flip, p, n)
    if a[0]:
        return (not b[0], a[1] + b[2], a[2] + b[1])
    return (b[0], a[1] + b[1], a[2] + b[2])


def _rotating_sums(a, b, p):            # (m, s0, s1, s2): b's sums turned by a's mode
    m = a[0]
    return ((m + b[0]) % 3,) + tuple(a[1 + k] + b[1 + (k - m) % 3] for k in range(3))


def _paused_ema(a, b, p):               # (paused, ema, ema_p, pw_r, pw_p): b's map from a's end state
    def through_b(paused_start, ema):
        return b[4] * ema + b[2] if paused_start else b[3] * ema + b[1]
    return (a[0] != b[0], through_b(a[0], a[1]), through_b(not a[0], a[2]),
            (b[4] if a[0] else b[3]) * a[3], (b[3] if a[0] else b[4]) * a[4])


def _sign_parity(a, b, p):              # (sg, changes): b's first sign is its last turned changes times
    if b[0] == 0:
        return a
    if a[0] == 0:
        return b
    first = b[0] if int(b[1]) % 2 == 0 else -b[0]
    return (b[0], a[1] + b[1] + (1 if first != a[0] else 0))


# S3's elements as permutations of (0, 1, 2) in lexicographic order; row a, column b: a then b
_S3 = [[0, 1, 2, 3, 4, 5], [1, 0, 3, 2, 5, 4], [2, 4, 0, 5, 1, 3], [3, 5, 1, 4, 0, 2], [4, 2, 5, 0, 3, 1],
       [5, 3, 4, 1, 2, 0]]


def _s3(a, b, p):
    return (_S3[a[0]][b[0]],)


ENTRIES: list[Entry] = [
    _not("finite_contains_101", PATTERNS, "[] and [0] stay in state 0; after [1, 0] only [] leaves 10",
         ([], [0], [1, 0]), domain="bits", klass="finite", lift=2),
    _not("finite_ends_with_01", PATTERNS, "[] and [1] agree; after [0] only [0, 1] ends with 01",
         ([], [1], [0]), domain="bits", klass="finite", lift=1),
    _hom("finite_parity_ones", PATTERNS, "odd = odd1 != odd2 (the table: b's flag selects not or id)",
         _xor, domain="bits", klass="finite"),
    _hom("finite_mod3_positive", FSM, "c = (c1 + c2) % 3", _mod3, klass="finite"),
    _hom("finite_saturating_ones", COUNTERS, "n = min(n1 + n2, 3)", _sat3, domain="bits", klass="finite"),
    _not("finite_clamp_walk", COUNTERS, "[1] and [-1, 1] reach 1; after [1] one reaches 2, the other 1",
         ([1], [-1, 1], [1]), domain="pm1", klass="finite", lift=2),
    _hom("finite_mode_rotate", FSM, "m = (m1 + m2) % 3: b's mode says how far a's is turned",
         _mod3, domain="bits", klass="finite"),
    _not("finite_mode_reset", FSM, "[1] and [2, 1] reach mode 1; after [1] the second was reset",
         ([1], [2, 1], [1]), domain="digits", klass="finite", lift=1),
    _hom("finite_s3_word", FSM, "the group's multiplication table: b's element after a's", _s3,
         domain="bits", klass="finite"),
    _hom("finite_last_positive", PATTERNS, "the right operand when it is not empty", _last_nonempty,
         klass="finite"),
    _hom("finite_three_ones", COUNTERS, "n = min(n1 + n2, 3), enough = n >= 3", _three, domain="bits",
         klass="finite"),
    _not("finite_delay_line", PATTERNS, "[] and [0] both give (0, 0); after [1] the first gives (1, 0), the other (0, 1)",
         ([], [0], [1]), domain="bits", klass="finite", lift=1),
    _not("finite_sign_since_one", PATTERNS, "[] and [0] both give 0; after [1] one gives 1, the other -1",
         ([], [0], [1]), domain="bits", klass="finite", lift=1),
    _not("finite_sorted_bits", PATTERNS, "[] and [0] both give (0, True); after [1] only [1, 0] is unsorted",
         ([], [0], [1]), domain="bits", klass="finite", lift=1),
    _not("finite_warmup_flag", COUNTERS, "[0, 0, 0] and [0, 0, 1] both give (3, False); after [0] they differ",
         ([0, 0, 0], [0, 0, 1], [0]), domain="bits", klass="finite", lift=1),
    _not("finite_hash_mod7", FSM, "[] and [0] both give 0; after [1] one gives 1, the other 3",
         ([], [0], [1]), domain="bits", klass="finite", lift=1),
    _not("finite_ones_in_brackets", LINEAR, "[] and [1] agree outside; after [2] only [2, 1] counts a one",
         ([], [1], [2]), domain="digits", klass="finite-linear", lift=1),
    _not("finite_sum_after_marker", LINEAR, "[] and [1] agree before a zero; after [0] they differ",
         ([], [1.0], [0.0]), klass="finite-linear", lift=1),
    _not("finite_mode_scale", LINEAR, "[-1] and [-1, 0] both give (1, 0); after [1] the sum is doubled by the 0: 1 vs 2",
         ([-1.0], [-1.0, 0.0], [1.0]), klass="finite-linear", lift=3),
    _not("finite_first_three_sum", LINEAR, "[0, 0, 1] and [0, 1, 0] both give (3, 1); after [0] only the first 1 counts",
         ([0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [0.0]), klass="finite-linear", lift=2),
    _hom("finite_sign_switch_sum", LINEAR, "flip = flip1 != flip2, s = s1 + (-s2 if flip1 else s2)",
         _sign_switch, klass="finite-linear"),
    _not("finite_ones_after_zero", PATTERNS, "[] and [1] agree before a zero; after [0] they differ",
         ([], [1], [0]), domain="bits", klass="finite-linear", lift=1),
    _hom("finite_swap_sums", LINEAR, "from a flipped start b's sums swap roles", _swap_sums,
         klass="finite-linear"),
    _not("finite_phase_sum", LINEAR, "[] and [0, 0, 0, 1] both give (0, 0); after [0] the 1 is at phase 0",
         ([], [0.0, 0.0, 0.0, 1.0], [0.0]), klass="finite-linear", lift=3),
    _not("finite_hysteresis_count", LINEAR, "[] and [0] both give (off, 0); after [3] the 0 is counted as on",
         ([], [0.0], [3.0]), params=({"hi": 2.0, "lo": -2.0},), klass="finite-linear", lift=2),
    _not("finite_saturating_confident_sum", COUNTERS, "[] and [0] both give (0, 0); after [1, 1, 1] the 0 takes c down",
         ([], [0.0], [1.0, 1.0, 1.0]), klass="finite-linear", lift=None),
    _not("finite_escape_scale", LINEAR, "[] and [92, 0] both give (False, 0); after [1] the escaped 0 triples it",
         ([], [92, 0], [1]), domain="int", klass="finite-linear", lift=None),
    _not("finite_record_moments", LINEAR, "[] and [1] both give (off, 0, 0); after [101] the 1 is recorded",
         ([], [1.0], [101.0]), klass="finite-linear", lift=3),
    _hom("finite_rotating_sums", LINEAR, "from mode m, b's accumulator k adds to a's (k + m) % 3",
         _rotating_sums, klass="finite-linear"),
    _not("finite_paused_ema", LINEAR, "[0] and [0, 1] both give (paused, 0); after [0] the 1 is decayed by lam",
         ([0.0], [0.0, 1.0], [0.0]), params=({"lam": 2.0},), klass="finite-linear", lift=3),
    _hom("finite_paused_ema_lifted", LINEAR, "b's slope from a's control state times a's average, plus what b adds "
         "from there", _paused_ema, params=({"lam": 0.5}, {"lam": -1.5}), klass="finite-linear"),
    _not("finite_gated_decay", LINEAR, "[] and [1] both give (closed, 0, 0); after [11] the 1 enters the level",
         ([], [1.0], [11.0]), params=({"rho": 2.0},), klass="finite-linear", lift=4),
    _not("finite_escape_hash_mod", LINEAR, "[] and [92, 0] both give (False, 0); after [1] the escaped 0 triples "
         "it mod 251", ([], [92, 0], [1]), domain="int", klass="finite-linear", lift=None),
    _hom("finite_sign_changes_parity", LINEAR, "b's first sign is its last turned b.changes times: one form "
         "a residue of b.changes mod 2", _sign_parity, klass="finite-linear"),
    _not("finite_gated_fletcher", LINEAR, "[] and [1] both give (off, 0, 0); after [255] the 1 is summed",
         ([], [1], [255]), domain="int", klass="finite-linear", lift=None),
    _not("finite_quoted_hash_mod", LINEAR, "[0, 34] and [34, 1, 2] both give (True, 7); after [0] the first "
         "multiplies the 7 by 7, the second adds to it", ([0, 34], [34, 1, 2], [0]), domain="int",
         klass="finite-linear", lift=None),
    _not("finite_string_escape_hash", LINEAR, "[] and [1] both give (outside, 0); after [34] the 1 is hashed",
         ([], [1], [34]), domain="int", klass="finite-linear", lift=None),
    _not("finite_two_switch_ema", LINEAR, "[] and [1] both give (off, off, 0); after [101, -101] the 1 enters "
         "the level", ([], [1.0], [101.0, -101.0]), params=({"a": 0.5},), klass="finite-linear", lift=None),
    _not("finite_gated_momentum", LINEAR, "[] and [-1] both give (0, 0, 0); after [1, 1] the -1 ends the run",
         ([], [-1.0], [1.0, 1.0]), params=({"beta": 0.5},), klass="finite-linear", lift=None),
    _not("finite_flushed_ones", LINEAR, "[0, 0, 0, 1] and [0, 0, 1, 0] both give (0, 0, 1); after [0] the one "
         "stays in the buffer", ([0, 0, 0, 1], [0, 0, 1, 0], [0]), domain="bits", klass="finite-linear", lift=None),
    _not("finite_frame_checksum", LINEAR, "[] and [0] both give (idle, 0, 0, 0); after [126] the 0 is a "
         "payload byte", ([], [0], [126]), domain="int", klass="finite-linear", lift=None),
    _not("finite_holt_warmup", LINEAR, "[-2, 2] and [0, 0, 1] both give (2, 2, 4) with alpha = beta = 2; after "
         "[0] the first is smoothed from its second element on", ([-2.0, 2.0], [0.0, 0.0, 1.0], [0.0]),
         params=({"alpha": 2.0, "beta": 2.0},), klass="finite-linear", lift=None),
    _not("finite_token_bucket", LINEAR, "[] and [0] both give (5, 0, 0, 0); after [1] the 0 adds the token back",
         ([], [0.0], [1.0]), klass="finite-linear", lift=None),
    _not("finite_debounce_five", LINEAR, "[] and [0] both give (False, 0, 0, 0); after [1, 1, 1, 1] the 0 "
         "breaks the streak of four", ([], [0.0], [1.0, 1.0, 1.0, 1.0]), klass="finite-linear", lift=None),
    _not("finite_code_hash_four_modes", LINEAR, "[] and [34, 34] both give (code, 0); after [34, 92] the first "
         "34 is escaped", ([], [34, 34], [34, 92]), domain="int", klass="finite-linear", lift=None),
    _hom("finite_sustained_runs", LINEAR, "the counts added, corrected by the run the blocks share (111 control "
         "states)", _sustained, klass="finite-linear"),
    _hom("finite_pretokenizer_runs", LINEAR, "the counts added, a run of two joined across the blocks counted "
         "once (73 control states)", _pretokenizer, domain="int", klass="finite-linear"),
    _not("finite_base64_quanta", LINEAR, "[0, 65] and [65, 61] both give (1, False, 0, 1); after [65] the 61 is "
         "padding, not a rejected byte", ([0, 65], [65, 61], [65]), domain="int", klass="finite-linear", lift=None),
    _not("finite_frame_bucket_bytes", LINEAR, "[65, 67] and [67, 65] both give (0, 2, 0, 132); after [65] the "
         "bucket sends only the first of them", ([65, 67], [67, 65], [65]), domain="int", klass="finite-linear",
         lift=None),
    _not("finite_retry_breaker", LINEAR, "[0, -1, -1, 0] and [-1, -1, 0, 0] both give (0, False, 0, 2, 2, 0, 0, "
         "0); after [-1] the first opens the breaker", ([0.0, -1.0, -1.0, 0.0], [-1.0, -1.0, 0.0, 0.0], [-1.0]),
         klass="finite-linear", lift=None),
    _not("finite_csv_columns", LINEAR, "[] and [0] both give (False, 0, 0, 0, 0, 0, 0); after [34] the 0 is a "
         "quoted byte", ([], [0], [34]), domain="int", klass="finite-linear", lift=None),
    _not("finite_wire_type_fields", LINEAR, "[0, 0] and [0, 1] both give (True, 0, 1, 1, 0, 0); after [0] the 1 is "
         "a key of wire type 1", ([0, 0], [0, 1], [0]), domain="int", klass="finite-linear", lift=None),
    _hom("finite_reset_peak_total", TROPICAL, "b's fields where b saw a reset, else the peaks' max, the totals' "
         "sum and the dips' min", _reset_peak_total, klass="finite-linear"),
    _hom("finite_up_streaks", TROPICAL, "the leading streaks added while a is all up, the trailing ones while "
         "b is, and the longest of both and of a's trailing streak joined to b's leading one", _up_streaks,
         klass="finite-linear"),
    _not("finite_armed_high_water", TROPICAL, "[] and [1] both give (False, -inf); after [0] the 1 is counted",
         ([], [1.0], [0.0]), klass="finite-linear", lift=1),
    _not("finite_hot_streak_min", TROPICAL, "[] and [0] both give (0, inf); after [51] the 0 is not counted but "
         "after [51, 51] it is", ([], [0.0], [51.0, 51.0]), klass="finite-linear", lift=None),
    _not("finite_phase_peaks", TROPICAL, "[0] and [0, 0, 1, 0] both give (1, 0); after [0] the 1 is at phase 0",
         ([0.0], [0.0, 0.0, 1.0, 0.0], [0.0]), klass="finite-linear", lift=2),
    _not("finite_outage_worst", TROPICAL, "[] and [1] both give (False, 0, 0); after [100] the 1 is logged",
         ([], [1], [100]), domain="int", klass="finite-linear", lift=None),
    _not("finite_toggled_peak_reset", TROPICAL, "[] and [1] both give (False, -inf); after [0] the 1 is "
         "recorded", ([], [1.0], [0.0]), klass="finite-linear", lift=2),
    _not("finite_phase_min_int", TROPICAL, "[0, 0] and [0, 1] both give (2, 1000, 2); after [0] the 1 is at slot "
         "2", ([0, 0], [0, 1], [0]), domain="int", klass="finite-linear", lift=2),
    _not("finite_armed_mps", TROPICAL, "[] and [1] both give (False, 0, 0); after [0] the 1 is gained",
         ([], [1.0], [0.0]), klass="finite-linear", lift=None),
    _not("finite_gear_odometer", LINEAR, "[(1, up)] and [(1.75, stay), (0, up)] both give (1, 1.75); after (0, up) "
         "the first hour runs in gear 2, the second in gear 1", ([(1.0, 1)], [(1.75, 0), (0.0, 1)], [(0.0, 1)]),
         klass="finite-linear", lift=None),
    _not("finite_sweep_arrival", TROPICAL, "[1, -1] and [1, -10] both give (False, 1); after [1] the first "
         "arrives at 1, the second at 2", ([1.0, -1.0], [1.0, -10.0], [1.0]), klass="finite-linear", lift=None),
    _not("finite_two_lane_gate", TROPICAL, "[-1] and [-1, 0] both give (False, 0, inf); after [-1] the road is "
         "open for the 0, which crosses to lane 1 at 3", ([-1.0], [-1.0, 0.0], [-1.0]), klass="finite-linear",
         lift=None),
    _not("finite_mixed_session", TROPICAL, "[] and [1] both give (False, 0, inf); after [0] the 1 is sold",
         ([], [1.0], [0.0]), klass="finite-linear", lift=None),
    _not("finite_phase_viterbi", TROPICAL, "[0] and [0.5, 0, 0, 0] both give (1, 0, -1); after [0] they are read "
         "at other phases", ([0.0], [0.5, 0.0, 0.0, 0.0], [0.0]), klass="finite-linear", lift=None),
    _not("finite_sentence_viterbi", TROPICAL, "[] and [0] both give (False, 0, 0); after [1] the 0 moves the "
         "scores", ([], [0.0], [1.0]), klass="finite-linear", lift=None),
    _not("finite_toll_int", TROPICAL, "[0, 1] and [1, 0] both give (2, 1); after [0] the 1 falls on the peak "
         "tick and costs 2", ([0, 1], [1, 0], [0]), domain="int", klass="finite-linear", lift=None),
    _not("finite_comment_scanner", LINEAR, "[42, 47] and [0, 47] both give (1, 1, 0); after [47] the 42 opens "
         "a comment", ([42, 47], [0, 47], [47]), domain="int", klass="finite-linear", lift=None),
    _not("finite_release_peak", SCALING, "[0] and [0, 0] both give (True, 0); after [1] the held 1 decays once by "
         "0.9, or by 0.9 and 0.5", ([0.0], [0.0, 0.0], [1.0]), domain="nonneg", klass="finite-linear", lift=None),
    _not("finite_clip_peak", SCALING, "[] and [0] both give (False, 0); after [1] the 1 is held, or decayed to 0.95",
         ([], [0.0], [1.0]), domain="nonneg", klass="finite-linear", lift=None),
    _not("finite_gated_compound", SCALING, "[] and [(1, closed)] both give (False, 0); after an opening (0, start) "
         "the 1 is a gain of its own", ([], [(1.0, False)], [(0.0, True)]), domain="nonneg", klass="finite-linear",
         lift=None),
    _not("finite_scan_phase_peak", SCALING, "[0, 2] and [1, 0] both give (2, 1) with decay 2; after [0] they start "
         "in phase 1, where the 2 is halved and the 1 kept", ([0.0, 2.0], [1.0, 0.0], [0.0]), domain="nonneg",
         params=({"decay": 2.0},), klass="finite-linear", lift=None),
    _not("finite_min_ratio_market", SCALING, "[(1, 2, stay)] and [(2, 2, stay)] both give (True, 2); after (1, 1, "
         "stay) the 1 held is scaled by 1 or by 2", ([(1.0, 2.0, False)], [(2.0, 2.0, False)], [(1.0, 1.0, False)]),
         domain="nonneg", klass="finite-linear", lift=None),
    _not("finite_prob_viterbi_phase", SCALING, "[(1, 0), (0, 1)] and [(1, 1), (0, 1)] both give (0, 0, 0.8 * 0.5); "
         "after (0, 1) the second list's first step reads b", ([(1.0, 0.0), (0.0, 1.0)], [(1.0, 1.0), (0.0, 1.0)],
                                                              [(0.0, 1.0)]),
         domain="nonneg", klass="finite-linear", lift=None),
    _not("finite_phase_weighted_peak", SCALING, "[1] and [0, 0, 1, 1] both give (1, 1); after [0] the lists start "
         "in phase 1: 0.5 against 0.8", ([1.0], [0.0, 0.0, 1.0, 1.0], [0.0]), domain="nonneg", klass="finite-linear",
         lift=None),
    _not("finite_phase_weighted_best", TROPICAL, "[0, 0] and [1, -1] both give (2, 0); after [0] the lists start in "
         "phase 1: 0 against -0.25", ([0.0, 0.0], [1.0, -1.0], [0.0]), klass="finite-linear", lift=None),
    _hom("finite_stop_peak", SCALING, "a's own once stopped, else max(0.9 ** b.ticks * a.peak, b.peak)", _stop_peak,
         domain="nonneg", klass="finite-linear"),
    _not("finite_gap_phase_viterbi", TROPICAL, "[-1, -1] and [-2, -1] both give (2, -2, 0); after [0] the lists "
         "start in phase 1: (0, -1, 1) against (0, 0, 2)", ([-1.0, -1.0], [-2.0, -1.0], [0.0]),
         klass="finite-linear", lift=None),
    _not("finite_storm_viterbi", TROPICAL, "[(1, 0, alarm)] and [(0, 0, alarm), (0, 0, calm)] both give (True, -2, "
         "-1); after (0, 0, alarm) the 1 reaches s0 at -1 against -2",
         ([(1.0, 0.0, True)], [(0.0, 0.0, True), (0.0, 0.0, False)], [(0.0, 0.0, True)]), domain="nonneg",
         klass="finite-linear", lift=None),
    _not("finite_momentum_phase", LINEAR, "[1, -1, 0.9] and [-1, 1, 0] both give (1, 0, 0.45); after [0] the "
         "frictions swap: pos 0.95 against -0.95", ([1.0, -1.0, 0.9], [-1.0, 1.0, 0.0], [0.0]),
         klass="finite-linear", lift=None),
    _not("finite_fib_mode", LINEAR, "[(1, slow)] and [(0, fast), (0, slow)] both give (False, 2, 1); after "
         "(0, slow) v is 1 against 2", ([(1.0, False)], [(0.0, True), (0.0, False)], [(0.0, False)]),
         domain="nonneg", klass="finite-linear", lift=None),
    _not("finite_two_lane_stop", TROPICAL, "[(0, 0, go)] and [(0, 1, go), (0, 0, go)] both give (False, 0, 2); "
         "after (0, -1, go) lane 1 costs 1 against 2",
         ([(0.0, 0.0, False)], [(0.0, 1.0, False), (0.0, 0.0, False)], [(0.0, -1.0, False)]), domain="nonneg",
         klass="finite-linear", lift=None),
    _not("finite_night_reach", "Boolean matrix products of a time-varying graph (Fischer and Meyer 1971)",
         "[(no, no, toggle)] and [(edge, no, toggle)] both give (True, True, False); after a toggle to day the "
         "forward edge reaches node 1 in the second only",
         ([(False, False, True)], [(True, False, True)], [(False, False, True)]), domain="nonneg",
         klass="finite-linear", lift=None),
    _not("finite_sticky_coupled_decay", LINEAR, "[] and [(0, go)] both give (False, 0, 0); after (1, go) the 1 "
         "decays once more in the second", ([], [(0.0, False)], [(1.0, False)]), domain="nonneg",
         klass="finite-linear", lift=None),
]

# The smallest lift by copies of the state (see the docstring), per non-homomorphism above.
COPY_LIFTS: dict[str, int] = {
    "finite_contains_101": 2,       # st from "1" and from "10" (from "101" it stays 3)
    "finite_ends_with_01": 2,       # both fields from "last bit 0"
    "finite_clamp_walk": 3,         # s from 1, 2 and 3 (the sum and the largest prefix sum do it in 2)
    "finite_mode_reset": 1,         # m from mode 1: a rotation or a constant, and which
    "finite_ones_in_brackets": 1,   # the count from inside (inside from inside is not inside)
    "finite_sum_after_marker": 1,   # the sum from after the marker (the flag stays true there)
    "finite_ones_after_zero": 1,    # the count from after the zero
    "finite_first_three_sum": 2,    # the sums from n = 1 and n = 2 (n's copies are functions of n)
    "finite_mode_scale": 3,         # the sum from mode 1 and the slope from each mode (2 ** steps in mode 1)
    "finite_delay_line": 2,         # both bits from (1, 1): [] and [0] and [0, 0] differ there
    "finite_sign_since_one": 1,     # v from 1: the start's sign turned by the parity, or constant
    "finite_sorted_bits": 2,        # prev and ok from (1, True)
    "finite_warmup_flag": 1,        # f from a warmed-up state: whether the last element is a one
    "finite_hash_mod7": 1,          # h from 1: slope plus offset of the composed affine map
    "finite_phase_sum": 3,          # the sum from each other phase (the phase itself is rotated by n % 4)
    "finite_hysteresis_count": 2,   # on from "on" (a constant or the identity), the count from "on"
    "finite_record_moments": 3,     # rec from "recording", both moments from there
    "finite_paused_ema": 3,         # ema from "paused", the slope lam ** (running steps) from each state
    "finite_gated_decay": 4,        # open and level from "open", the level's slope from each state
    "finite_armed_high_water": 1,   # the mark from "armed" (armed from armed is not armed from disarmed)
    "finite_phase_peaks": 2,        # the peak from phases 1 and 2 (the phase's copies are rotations)
    "finite_toggled_peak_reset": 2,  # the peak from "recording" and whether a clear came (its slope, 0 or -inf)
    "finite_phase_min_int": 2,      # the low from slots 1 and 2, each from 1000
}

# Composition lifts found and proved whose minimality is not worked out by hand (so no
# `lift` in the catalog): the fields the fewest copies take.
UNCATALOGUED_COPY_LIFTS: dict[str, int] = {
    "finite_saturating_confident_sum": 6,   # c from 1, 2 and 3 (17 transition functions), s from each
    "finite_escape_scale": 4,               # esc and h from "escaped", the slope 3 ** k from each state
    "finite_escape_hash_mod": 4,            # the same, every one a remainder mod 251
    "finite_gated_fletcher": 4,             # both sums from "on", the count of bytes taken from each state
    "finite_quoted_hash_mod": 3,            # h from "quoted", the slope 7 ** k from each state
    "finite_string_escape_hash": 7,         # mode and h from "inside" and "escaped", the slope 31 ** k from each mode
    "finite_two_switch_ema": 8,             # armed from (on, off), the level from the three other states, a ** k from each
    "finite_gated_momentum": 8,             # run, v and pos from a run of one, the slopes of v and pos in v from two states
    "finite_flushed_ones": 8,               # buf from three phases, its slope from four and total's once (buf read as data): total's copies are buf + total less buf's copy
    "finite_comment_scanner": 9,            # the mode and both counts from the three other modes (57 lifted control states)
    "finite_holt_warmup": 9,                # level and trend from phases 1 and 2, the slopes less 4 that are sums of the others
    "finite_token_bucket": 15,              # the level from five levels, sent and n from each (61 states): dropped is sent + dropped less sent
    "finite_debounce_five": 34,             # level and streak from 9 other states less 2 read back, energy and flips from each (81 states)
    "finite_code_hash_four_modes": 10,      # the mode from three modes, h and its slope 7 ** k from each (88 states)
    "finite_base64_quanta": 18,             # pos and padded from the five other states, both counts from each
    "finite_retry_breaker": 32,             # streak, open and cool-down from the five other states, the data from four (171 lifted states): ok + failed + dropped is kept
    "finite_csv_columns": 35,               # quoted and column from the five other states, the data from each (196 lifted states)
    "finite_wire_type_fields": 13,          # key flag and wire type from the other states, the data from each less one sum of two others
    "finite_hot_streak_min": 4,             # the streak from 1 and 2, the best from each (from inf)
    "finite_outage_worst": 3,               # the mode, the worst level and the count from "in an outage"
    "finite_armed_mps": 3,                  # the best's slope in the total from each state, the total's from "open" (the copies from -inf stay there)
    "finite_gear_odometer": 3,              # the distance from each other gear (the gear read straight off the shift bit)
    "finite_sweep_arrival": 4,              # the time's offset (from inf) and its slope, from each direction
    "finite_two_lane_gate": 6,              # the 2 x 2 slopes from "open", and the two the toggle changes from "closed"
    "finite_mixed_session": 6,              # both fields from "open", each group's slope from each state
    "finite_phase_viterbi": 10,             # the 2 x 2 slopes from each phase, less the two the fields themselves give
    "finite_sentence_viterbi": 6,           # the offsets from -inf (the reset's 0) and the 2 x 2 slopes
    "finite_toll_int": 6,                   # the cost's offset (from inf) and slope, from each tick
    "finite_release_peak": 3,               # "quiet" from "quiet", the decays' product from each state
    "finite_clip_peak": 3,                  # the peak from "clipped", the decays' product from each state
    "finite_gated_compound": 3,             # the best from "open", the gains' product from each state
    "finite_scan_phase_peak": 5,            # the peak from phases 1 and 2, decay's power from each phase
    "finite_min_ratio_market": 4,           # the cheapest (from inf) and the rates' product, from each state
    "finite_phase_weighted_peak": 3,        # the peak from phases 1 and 2, the decays' product once
    "finite_phase_weighted_best": 3,        # the best from phases 1 and 2 (from -inf), the age's slope once
    "finite_frame_checksum": 13,            # the mode from four modes, the data from two, ck's slope from three (64 states)
    "finite_gap_phase_viterbi": 10,         # the 2 x 2 slopes from each phase, less the two the fields give
    "finite_storm_viterbi": 6,              # the 2 x 2 slopes from "storm", the column of s1 from "calm"
    "finite_momentum_phase": 6,             # pos and vel from phase 1, the velocity's column from each phase
    "finite_fib_mode": 5,                   # the mode and both counts from "fast", one column of the slopes (the other is (u, v) less the copies)
    "finite_two_lane_stop": 2,              # the column of c1 (from inf) of the composed (min, +) step
    "finite_night_reach": 1,                # r1 from "night" (r0 from night is r0)
    "finite_sticky_coupled_decay": 2,       # the column of y of the composed matrix
    "finite_prob_viterbi_phase": 6,         # the other column from phase 0, the whole product from phase 1
}

# The named field read back in place of the copies (`thm3.synth.readback`), by its name in
# the lifted loop, where one is as small as the fewest copies: its size is the entry's `lift`.
NAMED_LIFTS: dict[str, tuple[str, ...]] = {
    "finite_ends_with_01": ("n_cap2",),         # past two elements the start is forgotten
    "finite_delay_line": ("n_cap2",),           # likewise: the register holds two
    "finite_sign_since_one": ("n_mod2",),       # without a one, the start's sign turns n times
    "finite_sorted_bits": ("first_x",),         # the first element meets the start's last one
    "finite_warmup_flag": ("last_p",),          # a warmed-up start reads the last element
    "finite_hash_mod7": ("pw",),                # the composed map's slope 3 ** n mod 7
}
