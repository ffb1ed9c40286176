"""Running the parallel form: blocked left folds, then a tree of combines in list order.
`numpy_tree` is the CPU backend and holds `run_sequential`, the reference fold."""
