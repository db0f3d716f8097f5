"""Layer 1.8, features: what ATTACH sees of a node.

The feature templates, pair properties and hashing of node contexts (:mod:`.templates`), and
the feature dictionary built from training data (:mod:`.dictionary`); the list of templates is
in docs/features.md. :mod:`spacy_punctgen.model` scores with them.
"""
