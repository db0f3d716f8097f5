"""Layer 5.8, api: what users call.

The shipped pipelines (:mod:`.load`: ``spacy_punctgen.load``), text of any length in windows
(:mod:`.stream`: ``restore_text``, the streaming ``Language``), training data for a
restoration model from the restore pipeline's own analysis (:mod:`.stream_training`), many
texts over a Dask cluster (:mod:`.distributed`), re-rendering after rephrasing
(:mod:`.rephrase`), the picture of a sentence's underlying tree (:mod:`.picture`) and live
punctuation (:mod:`.window_live`: ``spacy_punctgen.live``, a pipeline over a sliding window, or
an incremental model). These sit
above the component (:mod:`spacy_punctgen.pipeline`), the parser helpers
(:mod:`spacy_punctgen.parsing`) and the truecaser (:mod:`spacy_punctgen.truecasing`).
"""
