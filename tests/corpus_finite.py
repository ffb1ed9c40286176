"""Corpus entries of issue 21's classes: finite-state steps (transition tables) and finite control with linear data.

Same conventions as tests/corpus.py (which adds these to CORPUS): each entry carries its
`klass`, and a non-homomorphism its smallest lift's size in `lift` where one is known."""
from __future__ import annotations

from corpus import INF, Entry, _hom, _not  # noqa: F401

ENTRIES: list[Entry] = [
]
