"""A bounded memo for the module-level caches: keyed by values that hash by structure
(interned `Expr` nodes, tuples of them, frozen `Loop`s and `Fn`s, texts), never by `id()`,
and holding at most `size` entries, the oldest dropped first."""
from __future__ import annotations

import threading
from collections import OrderedDict


class Bounded:
    """A mapping that keeps its newest `size` entries (thread-safe)."""

    def __init__(self, size: int):
        self.size = size
        self._entries: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key, default=None):
        return self._entries.get(key, default)

    def put(self, key, value):
        """Remember `value` under `key` and return it."""
        with self._lock:
            self._entries[key] = value
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return value

    def pop(self, key, default=None):
        with self._lock:
            return self._entries.pop(key, default)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key) -> bool:
        return key in self._entries
