"""Test tiers: the default run needs no GPU; `gpu` tests run only where CuPy sees a CUDA
device and are skipped elsewhere with the reason shown; `slow` marks heavy work (deselect
with -m "not slow").  The markers are registered here as well as in pyproject.toml, so a
run from another rootdir knows them too."""
from __future__ import annotations

import functools

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skipped without one)")
    config.addinivalue_line("markers", "slow: heavy solver or large-n work")


@functools.cache
def _no_gpu_reason() -> str | None:
    try:
        import cupy
    except Exception as err:            # not installed, or its CUDA libraries do not load
        return f"no CuPy ({type(err).__name__}: {err})"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as err:            # no driver
        return f"CuPy sees no CUDA device ({type(err).__name__}: {err})"
    return None if count > 0 else "CuPy sees no CUDA device"


def pytest_collection_modifyitems(config, items):
    # the marker itself, not a keyword: keywords hold the path's folder names too (a checkout
    # in a folder named gpu would skip every test)
    gpu_items = [item for item in items if item.get_closest_marker("gpu") is not None]
    if gpu_items and (reason := _no_gpu_reason()):
        for item in gpu_items:
            item.add_marker(pytest.mark.skip(reason=reason))
