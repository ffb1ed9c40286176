"""thm3's GPU stage: CUDA rendering (pure text), NVRTC compilation, and emitted modules that
run on CuPy.  CuPy is imported lazily, inside functions, so this package imports anywhere."""
