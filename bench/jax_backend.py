"""The JAX backend's scan on the CPU (thm3[jax]), every ratio against a baseline timed in
the same run: the sum's scan against `jnp.cumsum`, and Welford's and the affine
recurrence's against a sequential `jax.lax.scan` of the loop's own `left` (the module's
`step`, one element at a time), at n = 10**6 and 10**7, float64 (`jax_enable_x64`).
Each function is compiled before it is timed.  Writes bench/results/jax_backend-*."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # this checkout's thm3, not an installed one
import thm3                                        # noqa: E402
from common import best, write                           # noqa: E402


def _sequential(mod, jax, jnp):
    """The loop's left fold as a sequential jax.lax.scan, one element a step, every state kept."""
    @jax.jit
    def run(*xs):
        start = mod.identity(1, 1, xs[0].dtype)

        def one(state, at):
            j, vs = at
            new = mod.step(state, tuple(v.reshape(1, 1) for v in vs), {}, j.reshape(1, 1))
            return new, new
        _, kept = jax.lax.scan(one, start, (jnp.arange(xs[0].shape[0]), xs))
        return tuple(k[:, 0, 0] for k in kept)
    return run


def main(argv=None) -> None:
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[10**6, 10**7])
    args = parser.parse_args(argv)
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from thm3.backends.jax_tree import module
    rows = []
    for n in args.sizes:
        x = jnp.asarray(np.random.default_rng(0).standard_normal(n))
        for name in ("sum", "welford", "affine"):
            a = thm3.analyze(thm3.sample_path(name), lift=False)
            mod = module(a.loop, a.combine_fn)
            arrays = [x] * len([p for p in a.loop.elements if not p.index])
            ours = lambda: jax.block_until_ready(mod.scan(*arrays))             # noqa: E731
            if name == "sum":
                cumsum = jax.jit(jnp.cumsum)
                base = lambda: jax.block_until_ready(cumsum(x))                  # noqa: E731
                label, check = "jnp.cumsum", lambda: np.allclose(mod.scan(x)[0], cumsum(x))   # noqa: E731
            else:
                seq = _sequential(mod, jax, jnp)
                base = lambda: jax.block_until_ready(seq(*arrays))                # noqa: E731
                label = "sequential lax.scan of left"
                check = lambda: all(np.allclose(u, v, rtol=1e-7, atol=1e-9)      # noqa: E731
                                    for u, v in zip(mod.scan(*arrays), seq(*arrays)))
            ours(), base()                          # compile both
            assert check(), name
            t_ours, t_base = best(ours, 3), best(base, 3)
            rows.append((name, label, n, t_ours, t_base, t_base / t_ours))
            print(rows[-1], flush=True)
    table = "| loop | baseline | n | thm3 JAX scan s | baseline s | speed-up |\n| --- | --- | --- | --- | --- | --- |\n"
    table += "\n".join(f"| {c} | {b} | {n} | {t:.4f} | {u:.4f} | {r:.2f} |" for c, b, n, t, u, r in rows)
    table += (f"\n\nJAX {jax.__version__} on {jax.devices()[0].platform}, float64.  Load average at the end "
              f"(the machine is shared): {', '.join(f'{v:.2f}' for v in os.getloadavg())}.")
    print(table)
    print(write("jax_backend", {"rows": rows, "jax": jax.__version__, "load": os.getloadavg()}, table))


if __name__ == "__main__":
    main()
