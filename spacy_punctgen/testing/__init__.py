"""Reference implementations for the tests: brute force over every underlying tree
(:mod:`.reference`), the NumPy decoder the compiled ``"marginal"`` one is held to
(:mod:`.exact_mbr`), and the NumPy formulations the compiled training path is held to --
ATTACH's backward (:mod:`.numpy_attach`), the objective (:mod:`.numpy_objective`), the lazy
Adam step (:mod:`.numpy_adam`); small seeded test data (:mod:`.problems`, :mod:`.toy`, deep
chains: :mod:`.deep_chain`) and a subprocess's environment (:mod:`.env`).  Slow on purpose, and
never imported by library code."""
