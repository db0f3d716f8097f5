"""spacy-punctgen: punctuation as underlying marks sprouted by dependency constituents.

``import spacy_punctgen`` stays light (no spaCy import); ``insert_punctuation`` is loaded on
first use.  The ``punctgen`` factory is registered by the ``spacy_factories`` entry point
(installed package) or by importing :mod:`spacy_punctgen.pipeline.component`.
"""
from spacy_punctgen.about import __version__

__all__ = ["__version__", "insert_punctuation"]


def __getattr__(name):
    if name == "insert_punctuation":
        from spacy_punctgen.pipeline.doc_convert import insert_punctuation

        return insert_punctuation
    raise AttributeError(f"module 'spacy_punctgen' has no attribute {name!r}")
