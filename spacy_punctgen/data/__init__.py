"""Layer 0, data: sentences and trees before any model sees them.

Owns reading CoNLL-U (:mod:`.conllu`), preprocessing a UD sentence into words, a
projective tree and its surface slots (:mod:`.preprocess`), one traversal of a forest
(:mod:`.trees`), the punctuation inventory (:mod:`.inventory`), the underlying slot
string ``u_i`` assembled from per-node punctemes (:mod:`.underlying`, its only owner),
a parser's trees of known sentences (:mod:`.parsed`) and writing normal/depunctuated
CoNLL-U (:mod:`.convert`).  Imports nothing above it (see ``docs/architecture.md``).
"""
