"""Compile CUDA source to PTX with NVRTC through `cuda-bindings`, with no GPU and no driver:
the check that rendered kernels are valid CUDA, run by the tests on any machine."""
from __future__ import annotations

from thm3.errors import Thm3Error


class CompileError(Thm3Error, RuntimeError):
    """NVRTC rejected the source; the message holds NVRTC's log."""


def available() -> bool:
    """Whether NVRTC can be called here (the `cuda-bindings` package and its library)."""
    try:
        from cuda.bindings import nvrtc
        err, *_ = nvrtc.nvrtcVersion()
        return err == nvrtc.nvrtcResult.NVRTC_SUCCESS
    except Exception:           # no package, or no libnvrtc to load
        return False


def compile_cuda(source: str, arch: str = "sm_90", name: str = "kernel.cu",
                 options: tuple[str, ...] = ()) -> bytes:
    """PTX for `source` compiled for `arch` (e.g. "sm_90", "sm_80"); raises CompileError
    with NVRTC's log when the source does not compile."""
    return _compile(source, arch.replace("sm_", "compute_"), name, options, "PTX")[0]


def compile_cubin(source: str, arch: str = "sm_90", name: str = "kernel.cu",
                  options: tuple[str, ...] = ()) -> tuple[bytes, str]:
    """Machine code (a cubin) for `source` on `arch`, and NVRTC's log: with
    `--ptxas-options=-v` among the options the log holds ptxas's report of registers,
    stack frame and spills per function."""
    return _compile(source, arch, name, options, "CUBIN")


def _compile(source: str, target: str, name: str, options, output: str) -> tuple[bytes, str]:
    from cuda.bindings import nvrtc

    def check(result, what: str):
        err, *rest = result
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise CompileError(f"{name}: {what} failed: {nvrtc.nvrtcGetErrorString(err)[1].decode()}")
        return rest[0] if len(rest) == 1 else rest

    prog = check(nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], []), "nvrtcCreateProgram")
    try:
        opts = [f"--gpu-architecture={target}", "--std=c++17", *options]
        err, = nvrtc.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])
        size = check(nvrtc.nvrtcGetProgramLogSize(prog), "nvrtcGetProgramLogSize")
        log = b" " * size
        check(nvrtc.nvrtcGetProgramLog(prog, log), "nvrtcGetProgramLog")
        log = log.rstrip(b"\x00 ").decode(errors="replace")
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise CompileError(f"{name}: NVRTC could not compile it for {target}:\n{log}")
        get_size, get = getattr(nvrtc, f"nvrtcGet{output}Size"), getattr(nvrtc, f"nvrtcGet{output}")
        size = check(get_size(prog), f"nvrtcGet{output}Size")
        code = b" " * size
        check(get(prog, code), f"nvrtcGet{output}")
        return (code.rstrip(b"\x00") if output == "PTX" else code), log
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
