"""Layer 4, evaluation: scores and reports (uses decode for restoration).

Per-slot perplexity (:mod:`.perplexity`), restoration AED and comma P/R/F1
(:mod:`.metrics`, :mod:`.restoration`), prediction files (:mod:`.predictions`) and the
treebank statistics of the paper's Table 2 (:mod:`.stats`).
"""
