"""Layer 2, model: ATTACH + NOISYCHANNEL with its parameters.

Feature templates (:mod:`.features`), the log-linear ATTACH distribution over
punctemes (:mod:`.attach`), the channel's edit probabilities (:mod:`.channel`), and the
trained model with its objective, back-off and serialisation (:mod:`.punct_model`).
"""
