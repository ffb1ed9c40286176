"""A client with a circuit breaker: three failures in a row open it; while open, requests are dropped for two steps, then one probe is let through. x < 0 is a failure, else the latency.

Source: retry and circuit-breaker policies of RPC clients. Control: the failure streak
(0..3), the open flag and the cool-down (0..2), 6 reachable states and 170 transition
functions; data: five counts and sums. Not a homomorphism: [0, -1, -1, 0] and
[-1, -1, 0, 0] end alike, but after [-1] the first holds three failures in a row and
opens the breaker. The copies lift (36 fields; 32 where the conserved ok + failed + dropped
and one state's copies equal to another's are read so) is found and proved by composition.
"""
from typing import NamedTuple
from thm3.lang import Bool, Int, Real


class State(NamedTuple):
    fails: Int = 0
    open_: Bool = False
    cool: Int = 0
    ok: Int = 0
    failed: Int = 0
    latency: Real = 0.0
    dropped: Int = 0
    probe_lat: Real = 0.0


def left(acc: State, x: Real) -> State:
    if acc.open_:
        if acc.cool < 2:
            return State(acc.fails, True, acc.cool + 1, acc.ok, acc.failed, acc.latency, acc.dropped + 1, acc.probe_lat)
        if x < 0:
            return State(3, True, 0, acc.ok, acc.failed + 1, acc.latency, acc.dropped, acc.probe_lat)
        return State(0, False, 0, acc.ok + 1, acc.failed, acc.latency + x, acc.dropped, acc.probe_lat + x)
    if x < 0:
        if acc.fails >= 2:
            return State(3, True, 0, acc.ok, acc.failed + 1, acc.latency, acc.dropped, acc.probe_lat)
        return State(acc.fails + 1, False, 0, acc.ok, acc.failed + 1, acc.latency, acc.dropped, acc.probe_lat)
    return State(0, False, 0, acc.ok + 1, acc.failed, acc.latency + x, acc.dropped, acc.probe_lat)
