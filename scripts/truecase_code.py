"""Registers the ``punctgen_truecase`` factory and its scorer for ``spacy train --code``
(workflow ``train-truecaser``), where the package's ``spacy_factories`` entry point is not
installed (the package only on ``PYTHONPATH``)."""
import spacy_punctgen.truecasing.truecaser  # noqa: F401  (import registers the factory and scorer)
