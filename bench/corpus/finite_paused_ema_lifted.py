"""The paused moving average with its lift: the average from the paused state and the power of lam from each state.

Source: the lift of finite_paused_ema (weighted automata with a parameter weight): the
state now holds the list's affine map of the average from both control states, so the
combine composes the maps: b's slope from a's control state times a's average, plus
what b adds from there."""
from typing import NamedTuple
from thm3.lang import Bool, Real

lam: Real


class State(NamedTuple):
    paused: Bool = False
    ema: Real = 0           # from the running start
    ema_p: Real = 0         # from a paused start (data 0)
    pw_r: Real = 1          # lam ** (running steps) from the running start
    pw_p: Real = 1          # lam ** (running steps) from a paused start


def left(acc: State, x: Real) -> State:
    if x == 0:
        return State(not acc.paused, acc.ema, acc.ema_p, acc.pw_r, acc.pw_p)
    # from the running start the flag is `paused`; from a paused one it is its negation
    ema = acc.ema if acc.paused else lam * acc.ema + x
    pw_r = acc.pw_r if acc.paused else lam * acc.pw_r
    ema_p = lam * acc.ema_p + x if acc.paused else acc.ema_p
    pw_p = lam * acc.pw_p if acc.paused else acc.pw_p
    return State(acc.paused, ema, ema_p, pw_r, pw_p)
