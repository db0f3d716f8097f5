"""spacy-punctgen: punctuation as underlying marks sprouted by dependency constituents.

``import spacy_punctgen`` stays light (no spaCy import); ``insert_punctuation`` is loaded on
first use.  The ``punctgen`` factory is registered by the ``spacy_factories`` entry point
(installed package) or by importing :mod:`spacy_punctgen.pipeline.component`.
"""
from spacy_punctgen.about import __version__

__all__ = ["__version__", "insert_punctuation", "render", "load", "load_pipeline", "restore_text", "restore_edits",
           "rephrase", "live"]


def __getattr__(name):
    if name == "insert_punctuation":
        from spacy_punctgen.pipeline.doc_convert import insert_punctuation

        return insert_punctuation
    if name == "render":  # the picture of the underlying tree (docs/render.md)
        from spacy_punctgen.api.picture import render

        return render
    if name == "load":  # the shipped pipelines (restore / analyze)
        from spacy_punctgen.api.load import load

        return load
    if name == "restore_text":  # text of any length, restored window by window
        from spacy_punctgen.api.stream import restore_text

        return restore_text
    if name == "restore_edits":  # where restore_text puts each mark (offsets into the input)
        from spacy_punctgen.api.stream import restore_edits

        return restore_edits
    if name == "load_pipeline":  # spacy.load for pipelines saved by any version of this package
        from spacy_punctgen.api.load import load_pipeline

        return load_pipeline
    if name == "rephrase":  # reorder a parsed Doc's words, regenerate its punctuation (docs/rephrasing.md)
        from spacy_punctgen.api.rephrase import rephrase

        return rephrase
    if name == "live":  # a stream punctuated as it arrives: an incremental model or a pipeline (docs/usage.md)
        from spacy_punctgen.api.window_live import live

        return live
    raise AttributeError(f"module 'spacy_punctgen' has no attribute {name!r}")
