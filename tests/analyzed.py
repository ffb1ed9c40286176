"""Each catalog sample analysed once per test session (the analyses take seconds)."""
from __future__ import annotations

from functools import lru_cache

import thm3


@lru_cache(maxsize=None)
def analysis(path: str, lift: bool = False):
    return thm3.analyze(path, timeout=60.0, lift=lift)


class OnDemand(dict):
    """A mapping that makes each value on first use (`make(key)`) and keeps it: a module's
    analyses, of which a tier that keeps one case needs one."""

    def __init__(self, make):
        super().__init__()
        self.make = make

    def __missing__(self, key):
        value = self[key] = self.make(key)
        return value
