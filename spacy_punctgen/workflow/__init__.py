"""The helpers of the ``spacy project`` workflow's scripts (``scripts/*.py``, run by
``project.yml``): the code more than one script needs, so that scripts import it from here
and never from each other.

* :mod:`.metrics_files`: the metrics folder (``metrics/<treebank>/<system>.json``) read,
  its figures formatted, and per-sentence losses of a predictions file.
* :mod:`.cv`: cross-validation folds (``<treebank>_cv<k>``), what ``keep-fold`` keeps of
  each (its committed record ``kept.json`` and its local copies of the test file and
  predictions) and the word-weighted pooling of the folds' figures.
* :mod:`.jackknife`: the jackknife folds of a training file, split and merged back.
* :mod:`.conllu_files`: CoNLL-U files read and written whole with the ``conllu`` library.
* :mod:`.parsing_files`: a CoNLL-U file's words re-parsed (one tree, or the K trees of the
  beam or of draws from the parser), for ``parse_conllu.py`` and ``sampled_trees_curve.py``.
* :mod:`.kbest_eval`: restoration from those K trees, weighed, for ``kbest_weighting.py`` and
  ``sampled_trees_curve.py``.
* :mod:`.adapt`: ``punctgen adapt``, a restoration model adapted to the user's own punctuated
  text (plain text or ``word<TAB>label``), parsed as restoration parses it.

Library code never imports this package (``tests/test_architecture.py``: it is a top layer).
"""
