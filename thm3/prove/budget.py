"""A computation with no time limit of its own (SymPy's `solve`, Groebner bases) run within
the analysis' deadline: in a forked child process that is killed when the deadline
passes, so a hard system costs at most the time left and answers `SolverTimeout`, never
a hang.

`memory_bound` caps the address space of the process (and so of the children it forks)
for the length of a block: an allocation past it raises `MemoryError`, which the CLI
turns into an honest "unknown" (`--memory`), and Z3 is told the same bound."""
from __future__ import annotations

import contextlib
import multiprocessing
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


def _run(send, fn, args):
    try:
        send.send((True, fn(*args)))
    except BaseException as err:            # noqa: BLE001 - handed to the parent as it is
        try:
            send.send((False, err))
        except Exception:                   # an exception that does not pickle
            send.send((False, RuntimeError(repr(err))))
    finally:
        send.close()
