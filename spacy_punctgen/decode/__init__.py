"""Layer 3, decode: choosing punctuation for unpunctuated sentences.

Minimum-Bayes-risk decoding of every slot from the model's posterior over
surface strings, for one tree or a mixture of trees (:mod:`.mbr`).
"""
