"""Restoration from a *weighted* mixture of a sentence's trees (the ``punctgen_kbest``
component's beam probabilities, ``kbest_weights = "beam"``): the ``"marginal"`` decoder with
one weight per tree instead of the uniform mixture of :func:`.mbr.restore_mixtures`."""
from __future__ import annotations

from typing import List, Sequence

from spacy_punctgen.data.preprocess import PunctSentence
from spacy_punctgen.decode.marginal import marginal_slot_choices
from spacy_punctgen.decode.priors import mixture_priors
from spacy_punctgen.decode.risk import SlotChoice, check_empty_weight


def restore_weighted_mixtures(model, tree_sets: Sequence[Sequence[PunctSentence]],
                              weights: Sequence[Sequence[float]], empty_weight: float = 1.0
                              ) -> List[List[SlotChoice]]:
    """Per-slot MBR punctuation of each sentence under the *weighted* mixture
    ``p(x_i) = Σ_j w_j p(x_i | T_j)`` of its trees (``weights[k]``: sentence ``k``'s, one per
    tree, >= 0 and not all 0; normalised here; E099 otherwise), decoded as the ``marginal``
    decoder decodes the uniform mixture (:func:`.marginal.marginal_choices` with ``weights``:
    the same pruning, candidates and support, in compiled code; trees of weight 0 are not read).
    Equal weights give :func:`.mbr.restore_mixtures`' choices; all the weight on one tree,
    that tree's own.  ``empty_weight``: the empty string's weight in the risk
    (:func:`.risk.risk_weights`)."""
    empty_weight = check_empty_weight(empty_weight)
    prior_sets, channel = mixture_priors(model, [list(ts) for ts in tree_sets])
    return marginal_slot_choices(model, prior_sets, channel, empty_weight, weights)
