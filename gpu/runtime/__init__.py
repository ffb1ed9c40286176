"""thm3's GPU stage, part two: compile and launch.

- `common.py`, `reduce.py`, `attention.py`: the runtime of the emitted modules (CuPy
  imported on first use), copied verbatim into each one by `gpu/render/module.py`;
  `attention.py` is also the kernels' configuration and their NumPy twin;
- `nvrtc.py`: CUDA source to PTX or a cubin with NVRTC, without a GPU;
- `sass.py`: the cubin's machine code read back (ptxas's report, `cuobjdump`), for the
  static performance record.
Nothing here imports `gpu/render/`."""
