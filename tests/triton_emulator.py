"""A NumPy stand-in for the part of Triton's language that the modules of
`thm3 emit --target triton` use, so that their kernels and host functions run on the CPU
here (Triton's own interpreter needs PyTorch, which CI does not install).

It runs each program of a launch in turn, a block as a NumPy array.  `tl.associative_scan`
keeps operands in order (Hillis and Steele's doubling, the earlier on the left), as
Triton's does.  `tl.reduce` combines in an order of its own: the block reversed, later
lanes on the left, since Triton's may reorder (triton-lang/triton#4962): a module that
used it for a combine that is not commutative computes the wrong thing here too.

`load(text)` executes a module's text with this stand-in in place of `triton`, and its
host helpers (PyTorch tensors in the module) replaced by NumPy ones."""
from __future__ import annotations

import sys
import types

import numpy as np


class T(np.ndarray):
    """A block: a NumPy array with Triton's `.to(dtype)`; a 0-d result stays a block."""

    def to(self, dtype):
        return np.asarray(self).astype(_np(dtype)).view(T)

    def __array_wrap__(self, array, context=None, return_scalar=False):
        return np.asarray(array).view(T)


def _t(x) -> T:
    return np.asarray(x).view(T)


class Dtype:
    def __init__(self, name: str, np_type):
        self.name, self.np = name, np.dtype(np_type)

    def __repr__(self):
        return self.name


def _np(d):
    return d.np if isinstance(d, Dtype) else np.dtype(d)


class Ptr:
    """An array and the positions a kernel addresses in it."""

    def __init__(self, array: np.ndarray, index=0):
        self.array, self.index = array, index

    def __add__(self, k):
        return Ptr(self.array, np.asarray(self.index) + np.asarray(k))

    __radd__ = __add__


class JitFunction:
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            args = [Ptr(a.reshape(-1)) if isinstance(a, np.ndarray) else a for a in args]   # contiguous: a view
            for pid in range(int(grid[0])):
                _PROGRAM[0] = pid
                with np.errstate(all="ignore"):
                    self.fn(*args, **kwargs)
        return launch


_PROGRAM = [0]


def _language() -> types.ModuleType:
    tl = types.ModuleType("triton.language")

    class constexpr:                                    # an annotation only
        pass

    tl.constexpr = constexpr
    tl.float32, tl.float64 = Dtype("float32", np.float32), Dtype("float64", np.float64)
    tl.int64, tl.int32, tl.int1 = Dtype("int64", np.int64), Dtype("int32", np.int32), Dtype("int1", np.bool_)
    tl.program_id = lambda axis: _t(np.int32(_PROGRAM[0]))
    tl.arange = lambda a, b: _t(np.arange(a, b, dtype=np.int32))
    tl.full = lambda shape, value, dtype: _t(np.full(tuple(shape), value, dtype=_np(dtype)))
    tl.where = lambda c, a, b: _t(np.where(c, a, b))
    for name, f in (("exp", np.exp), ("exp2", np.exp2), ("log", np.log), ("log2", np.log2),
                    ("sqrt", np.sqrt), ("abs", np.abs)):
        setattr(tl, name, (lambda f: lambda x: _t(f(x)))(f))
    tl.reshape = lambda x, shape: _t(np.reshape(x, tuple(int(s) for s in shape)))
    tl.split = lambda x: (_t(np.asarray(x)[..., 0]), _t(np.asarray(x)[..., 1]))
    tl.static_range = range
    tl.broadcast_to = lambda x, shape: _t(np.broadcast_to(x, tuple(shape)).copy())

    def load(ptr, mask=None, other=0):
        index = np.asarray(ptr.index)
        mask = np.ones(index.shape, bool) if mask is None else np.broadcast_to(mask, index.shape)
        values = np.zeros(index.shape, ptr.array.dtype)
        values[mask] = ptr.array[index[mask]]
        values[~mask] = other
        return _t(values)

    def store(ptr, value, mask=None):
        index = np.asarray(ptr.index)
        mask = np.ones(index.shape, bool) if mask is None else np.broadcast_to(mask, index.shape)
        value = np.broadcast_to(np.asarray(value), index.shape)
        ptr.array[index[mask]] = value[mask]

    def associative_scan(values, axis, fn):
        values, k, count = tuple(values), 1, len(values[0])
        while k < count:
            merged = fn(*(v[:-k] for v in values), *(v[k:] for v in values))
            values = tuple(_t(np.concatenate([v[:k], np.asarray(m)])) for v, m in zip(values, merged))
            k *= 2
        return values

    def reduce(values, axis, fn):
        values = tuple(_t(np.asarray(v)[::-1]) for v in values)       # an order of its own
        while len(values[0]) > 1:
            half = len(values[0]) // 2
            merged = fn(*(v[0:2 * half:2] for v in values), *(v[1:2 * half:2] for v in values))
            values = tuple(_t(np.concatenate([np.asarray(m), v[2 * half:]])) for m, v in zip(merged, values))
        return tuple(_t(v[0]) for v in values)

    tl.load, tl.store, tl.associative_scan, tl.reduce = load, store, associative_scan, reduce
    return tl


def load(text: str, name: str = "emulated_triton_module") -> types.ModuleType:
    """The module of `text`, run with the NumPy stand-in for Triton and NumPy host helpers."""
    triton = types.ModuleType("triton")
    tl = _language()
    extra = types.ModuleType("triton.language.extra")
    libdevice = types.ModuleType("triton.language.extra.libdevice")
    libdevice.pow = lambda a, b: _t(np.power(a, b))
    extra.libdevice = libdevice
    tl.extra = extra
    triton.language = tl
    triton.jit = JitFunction
    triton.cdiv = lambda a, b: -(-a // b)
    saved = {k: sys.modules.get(k) for k in ("triton", "triton.language", "triton.language.extra",
                                              "triton.language.extra.libdevice")}
    sys.modules.update({"triton": triton, "triton.language": tl, "triton.language.extra": extra,
                        "triton.language.extra.libdevice": libdevice})
    try:
        module = types.ModuleType(name)
        exec(compile(text, f"<{name}>", "exec"), module.__dict__)      # thm3's rendering, under test
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    kinds = {"Real": None, "Int": np.int64, "Bool": np.bool_}
    module._real_of = lambda arrays: np.float64
    module._as_input = lambda a, kind, real: np.ascontiguousarray(a, dtype=kinds[kind] or real)
    module._empty = lambda count, kind, real, like: np.empty(count, dtype=kinds[kind] or real)
    module._tl_real = lambda real: tl.float64 if np.dtype(real) == np.float64 else tl.float32
    return module


KERNELS = ("reduce_kernel", "reduce_states_kernel", "scan_kernel", "scan_states_kernel",
           "rows_reduce_kernel", "rows_scan_kernel")


def compile_kernels(path, arch: int, real: str = "fp32") -> dict:
    """Every kernel of the module at `path` compiled by Triton's own compiler for
    sm_`arch`, with no GPU and no driver: kernel name -> its TTIR.  The argument types
    follow the names the module gives its arguments."""
    import importlib.util
    import inspect
    import re

    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    spec = importlib.util.spec_from_file_location(f"triton_module_{arch}_{real}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    kind = {"Real": real, "Int": "i64", "Bool": "i1"}
    out = {}
    for name in KERNELS:
        fn = getattr(mod, name)
        sig, const = {}, {}
        for a in inspect.signature(fn.fn).parameters:
            if a == "BLOCK":
                sig[a], const[a] = "constexpr", mod.BLOCK
            elif a == "REAL":
                sig[a], const[a] = "constexpr", {"fp32": tl.float32, "fp64": tl.float64}[real]
            elif m := re.fullmatch(r"x(\d+)_ptr", a):
                sig[a] = "*" + kind[mod.ALL_ELEMENT_TYPES[int(m.group(1))]]
            elif m := re.fullmatch(r"(?:out_|c_)?(?:s(\d+)|bad)_ptr", a):
                sig[a] = "*" + ("i1" if m.group(1) is None else kind[mod.FIELD_TYPES[int(m.group(1))]])
            elif m := re.fullmatch(r"q(\d+)", a):
                sig[a] = {"Real": "fp32", "Int": "i64", "Bool": "i1"}[mod.PARAM_TYPES[int(m.group(1))]]
            else:
                sig[a] = "i64"
        compiled = triton.compile(ASTSource(fn=fn, signature=sig, constexprs=const),
                                  target=GPUTarget("cuda", arch, 32))
        out[name] = compiled.asm["ttir"]
    return out

