"""Punctuation restoration: choose surface punctuation ``x̂`` for an unpunctuated tree ``T``
by minimum Bayes risk under ``p(x | T)`` (paper §6.1, docs/model.md §5 "Restoration").

The entry points.  The loss is the token edit distance summed over slots.
:func:`restore_mixtures` decodes from several trees of one sentence at once (their uniform
mixture, paper footnote 20).  Three decoders (:data:`METHODS`):

* ``"marginal"`` (the default) -- per-slot MBR under the exact slot marginals ``p(x_i | T)``,
  in compiled code (:mod:`.marginal`);
* ``"slot"`` -- per slot, the sampled string with the least expected edit distance to that
  slot's ``n_samples`` ancestral samples (:mod:`.sampling`, :mod:`.sample_choice`);
* ``"sample"`` -- the paper's: the *sampled sentence* with the least total expected loss
  against all samples.  ``"slot"`` never has a higher empirical risk, from the same draws.

What every decoder starts from (the checked tree, ATTACH's prior per node, the channel) is in
:mod:`.priors`; the edit distances and the risk in :mod:`.risk`.  Deep trees (a chain of
thousands of words puts thousands of constituents into one slot): every step is linear in the
sentence's length with bounded memory, whatever the tree's shape; such a slot gets many marks
because the model gives each of its hundreds of constituents a fair chance of one (e.g. a comma
before a ``conj``): the decoded string is as long as the model expects the slot's string to be
(tests/decode/test_deep_trees.py).

Models trained with the ``inner`` template condition a node's pair on the surface
punctuation inside its span; their prior does not factorise, and these decoders
refuse them with a ValueError (E104).
"""
from __future__ import annotations

import numbers
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from spacy_punctgen.data.preprocess import PunctSentence
from spacy_punctgen.decode.marginal import (EXACT_BEAM, EXACT_CANDIDATES, EXACT_EXPAND, EXACT_PRUNE,  # noqa: F401
                                            EXACT_RESCALE, EXACT_SUPPORT_MIN, EXACT_WIDE, RESTORE_PRUNE,
                                            marginal_slot_choices, marginal_slot_distributions)
from spacy_punctgen.decode.evidence import evidence_weights
from spacy_punctgen.decode.priors import (Channel, Prior, check_model, check_sentence, check_trees, mixture_priors,
                                          sentence_priors)
from spacy_punctgen.decode.risk import (SlotChoice, Surface, check_empty_weight, edit_matrix,  # noqa: F401
                                        mbr_index, risk_weights)
from spacy_punctgen.decode.sample_choice import SLOT_WORK, sample_pick, slot_picks  # noqa: F401
from spacy_punctgen.decode.sampling import allocation, pool_samples, sample_slots
from spacy_punctgen.errors import Errors

#: the restoration decoders (:func:`restore_mixtures`' ``method``)
METHODS = ("marginal", "slot", "sample")
#: about how many words (of all trees) :func:`restore_mixtures` decodes at once: it scores and decodes
#: the sentences in runs of this many words (a longer sentence alone), so that the priors it holds,
#: and the kernel's arrays, do not grow with the number of sentences (a Doc of 100,000 words has
#: 18 M candidate pairs: 140 MB of priors, and as much again of arrays, at once). Each sentence is
#: decoded on its own, so the runs change nothing in the results
RESTORE_BATCH_WORDS = 2000
#: "slot"/"sample": the most samples a call may draw (the public entry points check ``n_samples``
#: against it, E106/E126, and ``seed``, E127; the component's and the command line's settings
#: should use it too).  Time and memory grow in proportion: about
#: 1 MB and a few milliseconds per 1,000 samples and word (a 5,000-word sentence at 20,000 samples
#: holds about 0.4 GB of samples); 20,000 is what the tests' distribution checks draw
MAX_SAMPLES = 20_000


def _names(model, x: Tuple[int, ...]) -> Surface:
    sym = model.inventory.symbols
    return tuple(sym[s] for s in x)


def _decode_sampled(model, priors: Sequence[Prior], channel: Channel, method: str, n_samples: int,
                    rngs: Sequence[np.random.Generator]) -> List[SlotChoice]:
    """``"slot"`` or ``"sample"`` under the uniform mixture of the trees' ``p(x | T_k)`` (one tree:
    plain MBR): ``n_samples`` draws split evenly over the trees, pooled per slot."""
    weights = evidence_weights([priors], None)  # the trees reweighted by the text's own marks, if any
    split = allocation(n_samples, len(priors), None if weights is None else weights[0])
    slots = pool_samples([sample_slots(prior, model.grammar, channel, m, rng)
                          for prior, m, rng in zip(priors, split, rngs) if m > 0])
    N = float(n_samples)
    if method == "slot":
        picks = slot_picks(slots)
    else:  # "sample": the sampled sentence with the least total risk
        k = sample_pick(slots, n_samples)
        picks = [int(s.ids[k]) for s in slots]
    return [SlotChoice(_names(model, s.strings[j]), float(s.counts[j] / N)) for s, j in zip(slots, picks)]


def sample_punctuation(model, sentence: PunctSentence, n_samples: int = 1000, seed: int = 0
                       ) -> List[List[Surface]]:
    """``n_samples`` ancestral samples ``x ~ p(x|T)``: per sample, the surface string of every slot."""
    n_samples, seed = _check_args("sample", n_samples, seed)
    (prior,), channel = sentence_priors(model, [sentence])
    slots = sample_slots(prior, model.grammar, channel, n_samples, _rng(seed, 0))
    names = [[_names(model, x) for x in s.strings] for s in slots]
    return [[names[i][int(s.ids[k])] for i, s in enumerate(slots)] for k in range(int(n_samples))]


def slot_marginals(model, sentence: PunctSentence) -> List[Dict[Surface, float]]:
    """The exact ``p(x_i | T)`` of every slot (strings below ``EXACT_PRUNE`` dropped)."""
    return mixture_slot_marginals(model, [sentence])


def mixture_slot_marginals(model, trees: Sequence[PunctSentence]) -> List[Dict[Surface, float]]:
    """``(1/K) Σ_k p(x_i | T_k)`` for every slot: the exact slot marginals of the uniform mixture
    of ``K`` trees of one sentence (paper footnote 20; one tree: :func:`slot_marginals`), from the
    compiled decoder (strings below ``EXACT_PRUNE`` dropped), most probable first."""
    prior_sets, channel = mixture_priors(model, [trees])
    return marginal_slot_distributions(model, prior_sets, channel)[0]


def _check_n_samples(n_samples) -> int:
    """``n_samples`` as an int in ``1..MAX_SAMPLES``; ValueError otherwise (E106 below 1, E126)."""
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral):
        raise ValueError(Errors.E126.format(max=MAX_SAMPLES, n_samples=n_samples))
    if n_samples < 1:
        raise ValueError(Errors.E106.format(n_samples=n_samples))
    if n_samples > MAX_SAMPLES:
        raise ValueError(Errors.E126.format(max=MAX_SAMPLES, n_samples=n_samples))
    return int(n_samples)


def _check_seed(seed) -> Optional[int]:
    """``seed`` as a non-negative int, or None (fresh randomness); ValueError otherwise (E127)."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(Errors.E127.format(seed=seed))
    return int(seed)


def _check_args(method: str, n_samples, seed) -> Tuple[int, Optional[int]]:
    """The public entry points' arguments, checked: ``method`` one of :data:`METHODS` (E109;
    E960 for the removed ``"exact"``); ``n_samples`` an int in ``1..MAX_SAMPLES`` for the
    sampling methods (``"marginal"`` ignores it); ``seed`` a non-negative int or None."""
    if method == "exact":
        raise ValueError(Errors.E960)
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(Errors.E109.format(methods=METHODS, method=method))
    n = _check_n_samples(n_samples) if method in ("slot", "sample") else 0
    return n, _check_seed(seed)


def _check_tree_sets(model, tree_sets: Sequence[Sequence[PunctSentence]]) -> None:
    """The checks of :func:`~.priors.mixture_priors` over all of ``tree_sets`` at once, in its order
    (each sentence's trees, the model, every tree), so that a call decoded in batches refuses a bad
    tree before any work and names it by its index in the call."""
    for k, ts in enumerate(tree_sets):
        check_trees(ts, k)
    check_model(model)
    for k, tree in enumerate(t for ts in tree_sets for t in ts):
        check_sentence(tree, k)


def _runs(tree_sets: Sequence[Sequence[PunctSentence]], words: int) -> List[Tuple[int, int]]:
    """``(a, b)``: ``tree_sets`` cut into consecutive runs of at most ``words`` words (counting every
    tree), each of at least one sentence (no sentences: one empty run, which still checks the model)."""
    runs, a, n = [], 0, 0
    for k, ts in enumerate(tree_sets):
        size = sum(len(t.words) for t in ts)
        if k > a and n + size > words:
            runs.append((a, k))
            a, n = k, 0
        n += size
    runs.append((a, len(tree_sets)))
    return runs


def _rng(seed: Optional[int], *key: int) -> np.random.Generator:
    """The random stream of sentence ``key[0]`` (and tree ``key[1]``); fresh entropy without a seed."""
    return np.random.default_rng(None if seed is None else [seed, *key])


def restore_sentence(model, sentence: PunctSentence, method: str = "marginal", n_samples: int = 1000,
                     seed: int = 0, empty_weight: float = 1.0) -> List[SlotChoice]:
    """MBR punctuation for the tree of ``sentence`` (its ``slots`` are ignored): one
    :class:`SlotChoice` per slot ``x_0..x_n`` (``^`` excluded).  Deterministic given ``seed``.
    ``empty_weight`` (``"marginal"``): the empty string's weight in the risk
    (:func:`risk_weights`; 1, the default, is the expected edit distance)."""
    return restore_sentences(model, [sentence], method, n_samples, seed, empty_weight)[0]


def restore_sentences(model, sentences: Sequence[PunctSentence], method: str = "marginal",
                      n_samples: int = 1000, seed: int = 0, empty_weight: float = 1.0) -> List[List[SlotChoice]]:
    """:func:`restore_sentence` for many sentences.  Sentence ``k`` draws from the random stream
    ``default_rng([seed, k])``: its result depends on its position, never on the other sentences."""
    return restore_mixtures(model, [[s] for s in sentences], method, n_samples, seed, empty_weight)


def restore_mixtures(model, tree_sets: Sequence[Sequence[PunctSentence]], method: str = "marginal",
                     n_samples: int = 1000, seed: int = 0, empty_weight: float = 1.0) -> List[List[SlotChoice]]:
    """MBR punctuation of each sentence from several trees of it (``tree_sets[k]``: the trees of
    sentence ``k``, same words), under the uniform mixture ``p(x) = (1/K) Σ_j p(x | T_j)`` (paper
    footnote 20: "several parses instead of one").  ``marginal`` averages the trees' slot marginals;
    ``slot``/``sample`` pool ``n_samples`` draws split evenly over the trees (stratified mixture
    sampling), tree ``j`` of sentence ``k`` drawing from ``default_rng([seed, k])`` (``j = 0``) or
    ``default_rng([seed, k, j])``.  One tree per sentence is exactly :func:`restore_sentences`."""
    n_samples, seed = _check_args(method, n_samples, seed)
    empty_weight = check_empty_weight(empty_weight, method)
    tree_sets = [list(ts) for ts in tree_sets]
    if len(tree_sets) > 1:  # every tree checked, with its index in the call, before any work
        _check_tree_sets(model, tree_sets)
    out: List[List[SlotChoice]] = []
    for a, b in _runs(tree_sets, RESTORE_BATCH_WORDS):
        prior_sets, channel = mixture_priors(model, tree_sets[a:b])
        if method == "marginal":  # (RESTORE_PRUNE read here, so that a sweep may set mbr.RESTORE_PRUNE)
            out.extend(marginal_slot_choices(model, prior_sets, channel, empty_weight, prune=RESTORE_PRUNE))
            continue
        for k, priors in enumerate(prior_sets, a):
            rngs = [_rng(seed, k, *([j] if j else [])) for j in range(len(priors))]
            out.append(_decode_sampled(model, priors, channel, method, n_samples, rngs))
    return out

