"""The IR: one closed set of operations (`ops`) over typed, immutable expression trees
(`core`), their text form (`printer`), and the passes over them (`simplify`)."""
from thm3.ir.core import *  # noqa: F401,F403
