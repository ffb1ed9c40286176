"""Key-value bytes: a key byte whose low two bits are the wire type, then one value byte; count keys, values of type 0, sum values of type 1, count the rest.

Source: protobuf-style wire types read off a key byte. The control reads the element
through a value, not a predicate: the wire type x % 4 (4 values), kept as control beside
the key flag (8 reachable states); the counts and the sum are data. Not a homomorphism:
[0, 0] and [0, 1] end alike, but after [0] the first 0 is a value and the 1 a key of
wire type 1 whose value is summed. The copies lift (14 fields, 13 where one
data copy is read as a sum of two others) is found and proved.
"""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    expect_key: Bool = True
    wt: Int = 0
    keys: Int = 0
    varints: Int = 0
    fixed_sum: Int = 0
    other: Int = 0


def left(acc: State, x: Int) -> State:
    assert 0 <= x <= 255
    if acc.expect_key:
        return State(False, x % 4, acc.keys + 1, acc.varints, acc.fixed_sum, acc.other)
    if acc.wt == 0:
        return State(True, acc.wt, acc.keys, acc.varints + 1, acc.fixed_sum, acc.other)
    if acc.wt == 1:
        return State(True, acc.wt, acc.keys, acc.varints, acc.fixed_sum + x, acc.other)
    return State(True, acc.wt, acc.keys, acc.varints, acc.fixed_sum, acc.other + 1)
