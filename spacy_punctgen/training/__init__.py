"""Layer 3, training: fitting a :class:`~spacy_punctgen.model.punct_model.PunctModel`.

Epochs of the objective with dev-based model selection and the choice of channel
direction (:mod:`.train`), and the sparse Adam optimiser (:mod:`.lazy_adam`).
"""
