"""Proofs over all states: the laws (`laws`, symbolic evaluation on every feasible path)
and the verdict on a candidate combine (`combine`)."""
from thm3.prove.laws import (Outcome, Setting, identity_nan_free, no_nan_outputs, preserved_atoms,  # noqa: F401
                             exp_arguments_nonpositive, prove_associativity, prove_bird, prove_commutativity,
                             prove_homomorphism, prove_identity)
