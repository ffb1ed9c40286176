"""The fuzzer of issue 15: random valid loop files (generate.py) judged by a brute-force
oracle over small element domains (oracle.py), folding with fold.py.  Independent of
thm3's synthesizer, prover and witness search: only the parsed IR and the reference
evaluator's table are shared."""
