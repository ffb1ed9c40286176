"""Lifting: auxiliary state that makes a non-homomorphism a homomorphism (`search`), and
the right fold a proved combine gives the lifted loop (`derive`)."""
from thm3.lift.derive import derived_right, with_right_fold  # noqa: F401
from thm3.lift.search import Lift, lift  # noqa: F401
