"""Semantics: one evaluator over the IR with its tables (`evaluate`: the evaluator and the
NumPy and Python-float tables; `sympy_table`: exact SymPy values; `symbolic`: the prover's
extended reals), and the concrete lists, folds and state comparisons of `samples`."""
