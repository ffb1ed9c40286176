"""thm3's GPU stage, part one: text only.  Nothing here compiles, launches or imports CuPy.

- `c_printer`: the IR printed as CUDA C (the table `CUDA`, keyed by `Op`) and the state's
  layout (`Spec`);
- `cuda`: the loop's `__host__ __device__` functions, and the in-order reduction's kernels;
- `scan`: the inclusive scan's kernels, from the same functions;
- `attention`: the FlashAttention variants, with the derived combine in its split form;
- `module`: the text of the emitted Python modules (the loop's constants, its NumPy
  functions and the rendered sources, then the runtime of `gpu/runtime/` copied verbatim).

The CUDA itself lives in `templates/*.cu`, real CUDA files with `${name}` holes
(`string.Template`) that these modules fill; they ship in the wheel as package data."""
from __future__ import annotations

import functools
from pathlib import Path
from string import Template

TEMPLATES = Path(__file__).resolve().parent / "templates"


@functools.cache
def cuda_text(name: str) -> str:
    """The text of the template file `templates/NAME` (e.g. "reduce.cu"), exactly."""
    return (TEMPLATES / name).read_bytes().decode("utf-8")


def cuda_template(name: str) -> Template:
    """`templates/NAME` as a `string.Template` whose holes the renderers fill."""
    return Template(cuda_text(name))
