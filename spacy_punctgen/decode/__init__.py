"""Layer 3, decode: choosing punctuation for unpunctuated sentences (and correcting it).

Minimum-Bayes-risk decoding of every slot from the model's posterior over surface strings,
for one tree or a mixture of trees.  Its modules:

* :mod:`.mbr` -- the entry points (``restore_sentence(s)``, ``restore_mixtures``, slot
  marginals, samples) and the decoders' names (``METHODS``);
* :mod:`.priors` -- what every decoder starts from: the checked tree, ATTACH's prior per node,
  the channel;
* :mod:`.marginal` -- the ``"marginal"`` decoder (compiled exact slot marginals) and its settings;
* :mod:`.sampling`, :mod:`.sample_choice` -- the ``"slot"`` and ``"sample"`` decoders: ancestral
  draws, and the choice among them;
* :mod:`.mixture` -- the ``"marginal"`` decoder under a weighted mixture of trees (the k-best
  parser's beam probabilities);
* :mod:`.risk` -- edit distances and the per-slot risk;
* :mod:`.correct` -- correction of punctuation that may hold errors;
* :mod:`.rephrase` -- the channel's surface strings of given underlying punctuation;
* :mod:`.render` -- the one text-rendering policy (marks and spaces);
* :mod:`.incremental_evidence` -- an incremental model's (UPP's) soft marks as class factors on
  the slots, beside or instead of the lexical expert's (:mod:`.lexical`).
"""
