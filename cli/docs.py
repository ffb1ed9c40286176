"""`thm3 format`: the loop-file format, read from docs/loop-format.md (shipped in the
wheel as thm3/docs/, beside thm3/ in a checkout)."""
from __future__ import annotations

from pathlib import Path

import thm3


def loop_format() -> str:
    here = Path(thm3.__file__).resolve().parent
    for path in (here / "docs" / "loop-format.md", here.parent / "docs" / "loop-format.md"):
        if path.is_file():
            return path.read_text(encoding="utf-8")
    raise FileNotFoundError("docs/loop-format.md is missing from this installation of thm3")
