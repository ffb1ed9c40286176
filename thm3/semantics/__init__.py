"""Semantics: one evaluator over the IR with its tables (NumPy and Python floats in
`evaluate`, the prover's extended reals in `symbolic`), and the concrete lists, folds and
state comparisons of `samples`."""
