"""Each catalog sample analysed once per test session (the analyses take seconds)."""
from __future__ import annotations

from functools import lru_cache

import thm3


@lru_cache(maxsize=None)
def analysis(path: str, lift: bool = False):
    return thm3.analyze(path, timeout=60.0, lift=lift)
