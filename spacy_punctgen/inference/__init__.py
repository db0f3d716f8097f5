"""Layer 1, inference: the exact dynamic program over one sentence (``docs/model.md`` §3).

The compiled core ``_dp`` (source ``cython_ext/dp.pyx``, its structs in
``cython_ext/dp.pxd``, its Python signatures in ``_dp.pyi``) runs inside/outside,
Viterbi and posterior sampling over any semiring; :mod:`.dp` is its Python wrapper
(grammar, lattice, input checks).  ``_train`` holds the compiled sparse-gradient
kernels used by ATTACH and the lazy Adam optimiser.  ``_slot_mbr`` (source
``cython_ext/slot_mbr.pyx``, C++) computes the restoration's slot marginals and per-slot MBR
choices for a whole batch; its wrapper is :mod:`spacy_punctgen.decode.marginal`.
"""
