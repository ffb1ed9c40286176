"""thm3's GPU stage (installed as `thm3.gpu`).  Two halves and the door between them:

- `render/`: text only.  The loop's IR printed as CUDA, the kernels filled into the real
  CUDA files of `render/templates/*.cu`, and the text of the emitted Python modules;
- `runtime/`: compile and launch.  The emitted modules' runtime (copied verbatim into each
  one, so an emitted module needs only CuPy and NumPy), NVRTC, and the SASS reader;
- `api.py`: what thm3 calls (emit, run, scan, attention).  `thm3/` reaches it only through
  `thm3.backends.gpu`, imported lazily, so thm3 imports without this stage's needs.
CuPy is imported lazily, inside functions, so every module here imports anywhere."""
