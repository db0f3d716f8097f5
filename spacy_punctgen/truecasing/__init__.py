"""Layer 5.2, truecasing: the ``punctgen_truecase`` component (:mod:`.truecaser`), which
re-cases lowercased text after restoration, with its training data, evaluation and shipping.
"""
