"""The IR: one closed set of operations (`Op`) over typed, immutable expression trees,
and the passes over it (`simplify`)."""
from thm3.ir.core import *  # noqa: F401,F403
