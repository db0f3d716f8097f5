"""Layer 5, pipeline: the ``punctgen`` component and what only it needs.

The component (:mod:`.component`) with its registered architecture (:mod:`.architectures`)
and scorer (:mod:`.scorers`); converting spaCy Docs to and from the model's sentences
(:mod:`.doc_convert`); restoring parsed Docs (:mod:`.restore`); correction's glue
(:mod:`.correct`); and where the models that ship inside the package are (:mod:`.shipped`).
User-facing entry points (``load``, ``restore_text``, ...) live one layer up, in
:mod:`spacy_punctgen.api`.
"""
