"""Layer 2, model: ATTACH + NOISYCHANNEL with its parameters.

Feature templates (:mod:`.features`), the log-linear ATTACH distribution over
punctemes (:mod:`.attach`), the channel's edit probabilities (:mod:`.channel`), and the
trained model (:mod:`.punct_model`) with, beside it, its training objective
(:mod:`.objective`), feature dictionary (:mod:`.dictionary`), back-off mixture
(:mod:`.backoff`), analyses (:mod:`.analysis`) and saved format (:mod:`.serialize`); and the
second log-linear model of correction, corrected punctemes given erroneous ones
(:mod:`.correction`).
"""
