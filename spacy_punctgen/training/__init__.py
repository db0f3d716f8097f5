"""Layer 3, training: fitting a :class:`~spacy_punctgen.model.punct_model.PunctModel`.

Epochs of the objective with dev-based model selection and the choice of channel
direction (:mod:`.train`), the sparse Adam optimiser (:mod:`.lazy_adam`), and the training
data and L-BFGS fit of the correction model (:mod:`.correction`).
"""
