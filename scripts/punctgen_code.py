"""Registers the ``punctgen`` factory for ``spacy package --code`` and ``spacy evaluate --code``.

A pipeline saved with a ``punctgen`` component can only be loaded where the factory is
registered. An installed ``spacy-punctgen`` registers it through its ``spacy_factories``
entry point; this file also makes it work where the package is only on ``PYTHONPATH``
(as in this repository), and ``spacy package`` copies it into the built package so that
loading the package imports it.
"""
import spacy_punctgen.pipeline.component  # noqa: F401  (import registers the factory)
import spacy_punctgen.api.load  # noqa: F401  (the restore pipeline's punctgen_words factory)
import spacy_punctgen.truecasing.truecaser  # noqa: F401  (the punctgen_truecase factory)
