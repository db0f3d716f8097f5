"""Reference implementations for the tests: brute force over every underlying tree
(:mod:`.reference`), and the NumPy formulations the compiled training path is held to --
ATTACH's backward (:mod:`.numpy_attach`), the objective (:mod:`.numpy_objective`), the lazy
Adam step (:mod:`.numpy_adam`).  Slow on purpose, and never imported by library code."""
