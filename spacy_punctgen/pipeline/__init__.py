"""Layer 5, pipeline: the spaCy side.

The ``punctgen`` component (:mod:`.component`) with its registered architecture
(:mod:`.architectures`) and scorer (:mod:`.scorers`), converting spaCy Docs to and from the
model's sentences (:mod:`.doc_convert`), restoring parsed Docs (:mod:`.restore`) and
the models that ship inside the package (:mod:`.shipped`).
"""
