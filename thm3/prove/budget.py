"""A computation with no time limit of its own (SymPy's `solve`, Groebner bases) run within
the analysis' deadline: in a forked child process that is killed when the deadline
passes, so a hard system costs at most the time left and answers `SolverTimeout`, never
a hang."""
from __future__ import annotations

import multiprocessing
import time

from thm3.errors import SolverTimeout


def within(deadline: float, fn, *args):
    """`fn(*args)`, computed in a child process, or `SolverTimeout` once `deadline`
    (a `time.monotonic()` value) passes.  An exception in the child is raised here."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise SolverTimeout("no time left for the computation")
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_run, args=(send, fn, args), daemon=True)
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
        raise value
    return value


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
