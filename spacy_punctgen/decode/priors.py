"""What every restoration decoder starts from: the sentence's tree checked, the prior
``p(T'|T)`` of every node (ATTACH's pair distribution, :meth:`PunctModel.node_priors`) with the
node halves that make up each slot's underlying string, and the model's channel.

Why a module of its own: the marginal decoder (:mod:`.marginal`), the samplers
(:mod:`.sampling`), correction (:mod:`.correct`), mixtures of trees (:mod:`.mixture`) and the
reference decoder (:mod:`spacy_punctgen.testing.exact_mbr`) all read the same priors.
"""
from __future__ import annotations

from typing import List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from spacy_punctgen.data.preprocess import PunctSentence
from spacy_punctgen.data.trees import tree_structure
from spacy_punctgen.data.underlying import slot_parts
from spacy_punctgen.decode.evidence import condition_on_marks, has_evidence
from spacy_punctgen.errors import Errors
from spacy_punctgen.features.templates import SURFACE_TEMPLATES

#: sentences per ATTACH forward batch
CHUNK = 256


class Channel(NamedTuple):
    """The model's channel as the decoders read it."""

    phi: np.ndarray  # float64 (S, S, 4): the model's edit probabilities
    r2l: bool
    cache: dict  # the reference decoder's transition table (testing/exact_mbr.py), built on first use


def channel_for(model) -> Channel:
    return Channel(np.asarray(model.phi(), dtype=np.float64), bool(model.r2l), {})


class Prior:
    """p(T'|T) of one sentence: every node's pairs and probabilities, and which node
    halves make up each slot's underlying string, in order.  Conditioned on the marks a text
    has (:mod:`.evidence`), the probabilities are the posterior ``p(l, r | x_O, T)`` and
    ``log_evidence`` is ``log p(x_O | T)``; None: not conditioned."""

    log_evidence: Optional[float] = None

    def __init__(self, pairs: List[np.ndarray], probs: List[np.ndarray], first: Sequence[int],
                 last: Sequence[int]):
        n = len(pairs)
        self.n = n
        self.pairs = pairs
        self.probs = probs
        self.slot_parts = slot_parts(first, last)  # u_i's order: data/underlying.py


def check_sentence(sentence: PunctSentence, k: Optional[int] = None) -> Tuple[List[int], List[int]]:
    """Validate the tree; return each node's first and last word."""
    name = f"sentence {sentence.sent_id!r}" if sentence.sent_id is not None else \
        (f"sentence #{k}" if k is not None else "sentence")
    n = len(sentence.words)
    if n == 0:
        raise ValueError(Errors.E101.format(name=name))
    for field in ("heads", "deprels", "upos"):
        if len(getattr(sentence, field)) != n:
            raise ValueError(Errors.E102.format(name=name, count=len(getattr(sentence, field)), field=field, n=n))
    try:
        _, _, _, first, last = tree_structure([int(h) for h in sentence.heads])
    except (ValueError, TypeError) as err:
        raise ValueError(Errors.E103.format(name=name, heads=list(sentence.heads), err=err)) from None
    return first, last


def check_model(model) -> None:
    """The decoders need a prior that factorises over nodes: no ``inner`` template (E104)."""
    inner = SURFACE_TEMPLATES & set(model.feature_config.templates)
    if inner:
        raise ValueError(Errors.E104.format(templates=sorted(inner)))


def sentence_priors(model, sentences: Sequence[PunctSentence]) -> Tuple[List[Prior], Channel]:
    """The prior of every sentence's tree and the model's channel; every sentence is checked
    (:func:`check_sentence`) before any work."""
    check_model(model)
    sentences = list(sentences)
    spans = [check_sentence(s, k) for k, s in enumerate(sentences)]
    priors = [Prior(pairs, probs, first, last)
              for (pairs, probs), (first, last) in zip(model.node_priors(sentences, CHUNK), spans)]
    return priors, channel_for(model)


def check_trees(trees: Sequence[PunctSentence], k: int) -> None:
    """The trees of one sentence must exist and share its words."""
    if not trees:
        raise ValueError(Errors.E107.format(k=k))
    words = list(trees[0].words)
    for j, t in enumerate(trees[1:], 1):
        if list(t.words) != words:
            raise ValueError(Errors.E108.format(k=k, sent_id=trees[0].sent_id, j=j, words_j=list(t.words)[:8],
                                                words_0=words[:8]))


def mixture_priors(model, tree_sets: Sequence[Sequence[PunctSentence]]) -> Tuple[List[List[Prior]], Channel]:
    """The priors of every tree, grouped by sentence (one batched ATTACH pass over all trees);
    a sentence with ``observed`` slots gets its priors conditioned on them
    (:func:`.evidence.condition_on_marks`)."""
    tree_sets = [list(ts) for ts in tree_sets]
    for k, ts in enumerate(tree_sets):
        check_trees(ts, k)
    flat, channel = sentence_priors(model, [t for ts in tree_sets for t in ts])
    out, a = [], 0
    for ts in tree_sets:
        out.append(flat[a:a + len(ts)])
        a += len(ts)
    if any(has_evidence(ts[0]) for ts in tree_sets):
        out = condition_on_marks(model, tree_sets, out, channel.phi)
    return out, channel
