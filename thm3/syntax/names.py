"""The names that mean something in every loop file, and fresh names for what thm3
writes into loop files (lifted fields, locals of a rendered loop)."""
from __future__ import annotations

import keyword

import thm3.lang as lang

LANG_NAMES = frozenset(lang.__all__)
FUNCTIONS = ("left", "right", "result")
# Names a loop file may not bind: they already mean something in every loop file.
# Locals and element parameters may reuse the function names (a local `result` is fine);
# loop parameters may not, since they share the module's namespace with the defs.
NAMES_IN_USE = LANG_NAMES | {"State", "NamedTuple", "max", "min", "abs"}
RESERVED = NAMES_IN_USE | set(FUNCTIONS)
# Names thm3 never generates: the reserved ones, the state parameter `acc` and Python's
# keywords (True, False and None among them).
TAKEN = frozenset(RESERVED | {"acc"} | set(keyword.kwlist))


def fresh(base: str, taken: set[str]) -> str:
    """`base`, or `base2`, `base3`, ... : the first not in `taken` (nor in `TAKEN`)."""
    taken = set(taken) | TAKEN
    if base not in taken:
        return base
    i = 2
    while f"{base}{i}" in taken:
        i += 1
    return f"{base}{i}"
