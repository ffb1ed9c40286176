"""What every emitted module needs before it launches anything: CuPy, imported on first
use, and a clear error naming the extra that installs it.  Copied verbatim into each
emitted module (`gpu/render/module.py`), ahead of the module's own runtime."""
from __future__ import annotations


class BackendUnavailable(RuntimeError):
    """CuPy is not installed here, or it sees no CUDA device."""


def _cupy():
    """CuPy, or BackendUnavailable naming the extra that installs it."""
    try:
        import cupy
    except ImportError as err:
        raise BackendUnavailable(
            f"CuPy is not installed ({err}): pip install 'thm3[cuda12]' for CUDA 12 or "
            f"'thm3[cuda13]' for CUDA 13, or call reduce, reduce_state or scan with "
            f"backend='numpy'") from None
    return cupy


def _device(cupy) -> int:
    """The current device's id; BackendUnavailable when CuPy sees none."""
    try:
        return cupy.cuda.runtime.getDevice()
    except Exception as err:          # no driver, no device, or CuPy built for another CUDA
        raise BackendUnavailable(f"CuPy sees no CUDA device ({type(err).__name__}: {err}); check "
                                 f"the driver, and that the extra (thm3[cuda12] / thm3[cuda13]) "
                                 f"matches it") from None
