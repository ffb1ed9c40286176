"""A computation with no time limit of its own (SymPy's `solve`, Groebner bases) run within
the analysis' deadline: in a forked child process that is killed when the deadline
passes, so a hard system costs at most the time left and answers `SolverTimeout`, never
a hang.

`memory_bound` caps the address space of the process (and so of the children it forks)
for the length of a block: an allocation past it raises `MemoryError`, which the CLI
turns into an honest "unknown" (`--memory`), and Z3 is told the same bound.

`hard_deadline` stops a block with `PastDeadline` when its deadline passes (SIGALRM):
the backstop of every analysis, in the library as on the command line.  The alarm's
handler runs between bytecodes, so one long C call delays it; the longest such call was a
full garbage collection, and `young_collections_only` holds those back for the block."""
from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
import time

from thm3.errors import SolverTimeout


def within(deadline: float, fn, *args, daemon: bool = True):
    """`fn(*args)`, computed in a child process, or `SolverTimeout` once `deadline`
    (a `time.monotonic()` value) passes or when the child ends without an answer.  An
    exception in the child is raised here.  A `daemon` child cannot fork children of its
    own; `daemon=False` lets it (the child is killed here all the same)."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise SolverTimeout("no time left for the computation")
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_run, args=(send, fn, args), daemon=daemon)
    child.start()
    send.close()
    try:
        if not receive.poll(left):
            raise SolverTimeout(f"{getattr(fn, '__name__', 'the computation')} ran past the deadline")
        ok, value = receive.recv()
    except EOFError:
        raise SolverTimeout("the computation's process ended without an answer") from None
    finally:
        receive.close()
        if child.is_alive():
            child.kill()
        child.join()
    if not ok:
        if isinstance(value, MemoryError):
            raise SolverTimeout(f"{getattr(fn, '__name__', 'the computation')} ran out of memory "
                                "(the --memory bound)")
        raise value
    return value


@contextlib.contextmanager
def memory_bound(mib: int | None):
    """Within the block, this process may map at most `mib` MiB more than it holds on
    entry (RLIMIT_AS; a child forked inside gets the same allowance over the same base),
    and Z3 may use at most `mib` MiB.  None, or a platform without `resource` or
    /proc, sets no bound.  The previous limits come back on exit."""
    try:
        import resource
        with open("/proc/self/statm") as f:     # address space in pages, Linux
            held = int(f.read().split()[0]) * resource.getpagesize()
    except (ImportError, OSError, ValueError):  # Windows, macOS (which does not enforce RLIMIT_AS)
        resource = None
    if mib is None or resource is None:
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = held + mib * 1024 * 1024
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    import numpy as np
    import z3
    z3.set_param("memory_max_size", int(mib))
    # OpenBLAS maps its thread buffers on the first large product and exits the process
    # when it cannot: map them now, before the bound.
    w = np.ones((256, 256))
    np.linalg.qr(w @ w)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        z3.set_param("memory_max_size", 0)      # 0: no bound, Z3's default


def within_memory(memory: int, deadline: float, fn, *args):
    """`fn(*args)` in a forked child under `memory_bound(memory)`, as `--memory` runs the
    analysis: ("done", value), or (why, None) with why "memory" (an allocation past the
    bound), "ended" (the child ended without an answer: a native library that aborts when
    an allocation fails) or "timeout" (`deadline`, a `time.monotonic()` value, passed).
    Linux only: the caller runs `fn` itself elsewhere."""
    try:
        got = within(deadline, _bounded_call, memory, fn, args, daemon=False)
    except SolverTimeout as err:
        return ("ended" if "without an answer" in str(err) else "timeout"), None
    return ("memory", None) if got == _OUT_OF_MEMORY else ("done", got)


_OUT_OF_MEMORY = "thm3: out of the memory bound"


def _bounded_call(memory: int, fn, args):
    try:
        with memory_bound(memory):
            return fn(*args)
    except MemoryError:
        return _OUT_OF_MEMORY
    except Exception as err:                # Z3 raises its own error when an allocation fails
        if _z3_out_of_memory(err):
            return _OUT_OF_MEMORY
        raise


def _z3_out_of_memory(err: BaseException) -> bool:
    """Z3's "out of memory" (a `Z3Exception`, not a MemoryError): under the bound, the
    bound was hit, which is an honest "unknown", not a bug in thm3."""
    z3 = sys.modules.get("z3")
    return z3 is not None and isinstance(err, z3.Z3Exception) and "out of memory" in str(err).lower()


def _run(send, fn, args):
    try:
        send.send((True, fn(*args)))
    except BaseException as err:            # noqa: BLE001 - handed to the parent as it is
        import traceback
        try:                                # where it was raised, for an internal error's report
            err.thm3_frames = [(f.filename, f.lineno, f.name) for f in traceback.extract_tb(err.__traceback__)]
            err.thm3_traceback = "".join(traceback.format_exception(err))
        except AttributeError:              # an exception type without a __dict__
            pass
        try:
            send.send((False, err))
        except Exception:                   # an exception that does not pickle
            send.send((False, RuntimeError(repr(err))))
    finally:
        send.close()


@contextlib.contextmanager
def young_collections_only():
    """Within the block, the garbage collector runs its young generations only: no full
    collection, which is one C call over every object the process holds.  On a 150-field
    state the invariants step grew 500,000 IR nodes and paid a full collection of 0.1-0.25 s
    every 0.3 s, a quarter of the step's time, and a deadline that fell in one waited for
    it (0.5 s past `timeout=5` once in CI, where the test process holds more).  Cycles that
    outlive two young collections wait for the first full collection after the block; the
    peak memory of that analysis did not change (565 MB either way).  Blocks nest; the
    threshold in force before comes back on exit."""
    import gc
    before = gc.get_threshold()
    gc.set_threshold(before[0], before[1], 1 << 30)
    try:
        yield
    finally:
        gc.set_threshold(*before)


class PastDeadline(BaseException):
    """Raised by the alarm of `hard_deadline`: a BaseException, so that no stage's
    `except Exception` swallows it."""


GRACE = 0.08        # of the timeout: how long a forked analysis may take past it to hand its answer back
_ARMED: list["hard_deadline"] = []    # the open blocks, outermost first
_FIRED = [False]                # raised once for the innermost block's deadline
_AGAIN = 0.02                   # seconds: the alarm repeats until it is raised where it counts


class hard_deadline:
    """`with hard_deadline(at):` raises `PastDeadline` in the block once `at` (a
    `time.monotonic()` value) passes, whatever the block is doing: every step keeps to its
    deadline by itself, this bounds a solver or SymPy call that does not.  Blocks nest (a
    lifted loop's analysis inside the lifting search): the inner one ends at the earlier
    of the two deadlines, and the outer alarm is armed again on leaving it.  An alarm set
    before the outermost block (a test runner's) is restored after it.  POSIX main thread
    only (SIGALRM); elsewhere a no-op, and the cooperative deadlines alone hold."""

    def __init__(self, at: float):
        self.at = at
        self.active = False

    def __enter__(self):
        import signal
        import threading
        if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
            return self
        self.active = True
        if _ARMED:
            self.at = min(self.at, _ARMED[-1].at)
        else:
            self.entered = time.monotonic()
            self.before, _ = signal.getitimer(signal.ITIMER_REAL)
            self.previous = signal.signal(signal.SIGALRM, _alarm)
            self.hook = sys.unraisablehook
            sys.unraisablehook = _swallowed
        _ARMED.append(self)
        _arm(self.at)
        return self

    def __exit__(self, *exc):
        # `_alarm` never raises in this frame, so the stack is always put back
        import signal
        if not self.active:
            return False
        signal.setitimer(signal.ITIMER_REAL, 0)
        self.active = False
        if self in _ARMED:
            _ARMED.remove(self)
        if _ARMED:
            _arm(_ARMED[-1].at)
        elif hasattr(self, "previous"):
            signal.signal(signal.SIGALRM, self.previous)
            if sys.unraisablehook is _swallowed:
                sys.unraisablehook = self.hook
            if self.before > 0:         # the earlier alarm, less the time spent here
                signal.setitimer(signal.ITIMER_REAL, max(1e-4, self.before - (time.monotonic() - self.entered)))
        return False


def _arm(at: float) -> None:
    import signal
    _FIRED[0] = False
    signal.setitimer(signal.ITIMER_REAL, max(1e-4, at - time.monotonic()), _AGAIN)


def _swallowed(unraisable) -> None:
    """Where Python dropped the alarm's exception (a gc callback, a weakref callback, a
    finalizer: it calls `sys.unraisablehook` and goes on), the deadline is not spent: the
    repeating timer raises it again a moment later, in the block's own code.  Anything else
    goes to the hook that was there before."""
    if isinstance(unraisable.exc_value, PastDeadline) or unraisable.exc_type is PastDeadline:
        _FIRED[0] = False
        return
    for block in _ARMED[:1]:
        getattr(block, "hook", sys.__unraisablehook__)(unraisable)
        return
    sys.__unraisablehook__(unraisable)


_IN_Z3 = f"{os.sep}z3{os.sep}"


def _alarm(signum, frame):
    """Raise once per deadline, but not inside a finalizer (`__del__`, where Python would
    print the exception and drop it), nor in Z3's own Python code (an exception between a
    native call and the wrapper that owns its result left a later call with a bad
    argument: a z3 `ArgumentError` in place of the deadline, once on this tree's tests),
    nor while a block is being left: the repeating timer comes back a moment later where
    it must."""
    if _FIRED[0] or not _ARMED:
        return
    if frame is not None and _IN_Z3 in frame.f_code.co_filename:
        return      # inside Z3's Python layer (its objects half made): 20 ms later, outside it
    f = frame
    while f is not None:
        if f.f_code.co_name == "__del__" or f.f_code is hard_deadline.__exit__.__code__:
            return
        f = f.f_back
    _FIRED[0] = True
    raise PastDeadline()
