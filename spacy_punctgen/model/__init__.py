"""Layer 2, model: ATTACH + NOISYCHANNEL with its parameters.

The log-linear ATTACH distribution over punctemes (:mod:`.attach`, over the features of
:mod:`spacy_punctgen.features`), the channel's edit probabilities (:mod:`.channel`), and the
trained model (:mod:`.punct_model`) with, beside it, its settings (:mod:`.settings`), training
objective (:mod:`.objective`), back-off mixture (:mod:`.backoff`), analyses (:mod:`.analysis`)
and saved format (:mod:`.serialize`); and the second log-linear model of correction, corrected
punctemes given erroneous ones (:mod:`.correction`); and the two experts restoration may
multiply in beside the tree: what the words around a gap say (:mod:`.lexical`) and what a whole
sentence's words say about its final mark (:mod:`.sentence_end`).
"""
