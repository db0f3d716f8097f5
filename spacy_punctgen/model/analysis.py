"""What a trained model says about one sentence: its best underlying punctuation, the
``punctgen`` component's per-sentence report, ATTACH's distribution at a node.

Functions of a :class:`~.punct_model.PunctModel` (which exposes them as methods).
"""
from __future__ import annotations

from typing import Any, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from spacy_punctgen.data.preprocess import PunctSentence
from spacy_punctgen.data.underlying import slot_strings
from spacy_punctgen.inference.dp import (Lattice, check_phi, log_prob as dp_log_prob, restrict_lattice,
                                         viterbi_bounded)
from spacy_punctgen.model.backoff import backoff_mixture

Pairs = List[Tuple[Tuple[str, ...], Tuple[str, ...]]]


def _pairs(model, lat: Lattice, best: Sequence[int]) -> Pairs:
    """The ``(l, r)`` punctemes (token tuples) of the lattice candidates ``best``, one per node."""
    best = np.asarray(best, dtype=np.int64)
    return list(zip(map(model.puncteme, lat.cand_l[best].tolist()), map(model.puncteme, lat.cand_r[best].tolist())))


def best_underlying(model, sentence) -> Optional[Pairs]:
    """The best derivation's ``(l, r)`` puncteme per node, or None if ``p(x|T) = 0``."""
    prep = model.as_prepared(sentence)
    fwd, pos, _ = model.forward([prep])
    cand_p = model.candidate_probs(fwd, prep, pos[0])
    logbest, best = viterbi_bounded(prep.lattice, model.grammar, cand_p, model.shared_phi(), model.r2l,
                                    len(model.grammar.punctemes))
    if not np.isfinite(logbest):
        return None
    return _pairs(model, prep.lattice, best)


def analyze(model, sentences: Sequence[PunctSentence], chunk: int = 256, logprob: bool = True
            ) -> List[Tuple[Optional[Pairs], Optional[float]]]:
    """Per sentence, what the ``punctgen`` component reports: the best derivation's pairs
    (:func:`best_underlying` of the unsmoothed model, None if ``p(x|T) = 0``) and
    ``log p'(x|T)`` (``log_probs`` of ``prepare_eval``, with ``backoff``).

    Each sentence is compiled once (smoothed when ``smooth_delta > 0``; the unsmoothed
    lattice is that lattice without the smoothing pairs) and ATTACH-scored once for a
    whole chunk of sentences; the best derivation comes from
    :func:`~spacy_punctgen.inference.dp.viterbi_bounded` (Viterbi over the candidates that
    can be in a best derivation: the same choice as plain Viterbi, a fraction of its work).
    The results equal the separate calls.

    ``logprob=False``: the Viterbi pass only (the log-probability is None): each sentence is
    compiled unsmoothed, and the smoothed inside pass, most of the work, is skipped.
    """
    return [(best, lp) for _, best, lp in _analysed(model, sentences, chunk, logprob)]


def analyze_underlying(model, sentences: Sequence[PunctSentence], chunk: int = 256
                       ) -> List[Tuple[Optional[Pairs], Optional[List[Tuple[str, ...]]]]]:
    """Per sentence, :func:`analyze`'s pairs (``logprob=False``) and the underlying string of
    each slot they make (``underlying_sequences`` of the sentence's tree, as token tuples;
    None where the pairs are), from the spans the sentence's lattice already holds."""
    out: List[Tuple[Optional[Pairs], Optional[List[Tuple[str, ...]]]]] = []
    for prep, best, _ in _analysed(model, sentences, chunk, False):
        lat = prep.lattice
        out.append((best, None if best is None else
                    slot_strings(lat.first.tolist(), lat.last.tolist(), best)))
    return out


def _analysed(model, sentences: Sequence[PunctSentence], chunk: int, logprob: bool
              ) -> Iterator[Tuple[Any, Optional[Pairs], Optional[float]]]:
    """:func:`analyze`'s work: per sentence its compiled form (a ``Prepared``), best pairs and
    log-probability."""
    smoothed = logprob and model.smooth_delta > 0
    phi, g, r2l = model.shared_phi(), model.grammar, model.r2l
    phi = check_phi(g, phi)  # once for the batch, not twice per sentence
    n_pm = len(g.punctemes)
    for a in range(0, len(sentences), max(1, int(chunk))):
        preps = [model.prepare(s, smoothed, tilt=False) for s in sentences[a:a + chunk]]
        fwd, pos, _ = model.forward(preps)
        lp = np.empty(len(preps), dtype=np.float64)
        bests = []
        for j, (prep, ps) in enumerate(zip(preps, pos)):
            lat = prep.lattice
            if logprob:
                lp[j] = dp_log_prob(lat, g, model.candidate_probs(fwd, prep, ps), phi, r2l, phi_checked=True)
            if smoothed and lat.n_candidates:
                plain = ~prep.cand_extra
                lat, ps = restrict_lattice(lat, plain, n_pm), ps[plain]
            logbest, best = viterbi_bounded(lat, g, np.exp(fwd.logp[ps]), phi, r2l, n_pm, phi_checked=True)
            bests.append(_pairs(model, lat, best) if np.isfinite(logbest) else None)
        if logprob:
            yield from zip(preps, bests, backoff_mixture(lp, model.backoff_log_qs(preps), model.backoff_eps).tolist())
        else:
            yield from ((prep, best, None) for prep, best in zip(preps, bests))


def node_distribution(model, sentence, w: int) -> List[Tuple[Tuple[str, ...], Tuple[str, ...], float]]:
    """``p_θ(l, r | w)`` over ``W_d(w)`` for node ``w``, most probable first."""
    prep = model.as_prepared(sentence)
    fwd, _, _ = model.forward([prep])
    a, z = fwd.node_off[w], fwd.node_off[w + 1]
    pairs = model.extractor.rel_tables[int(prep.rel_ids[w])].pairs
    pm = model.inventory.punctemes
    out = [(pm[int(l)], pm[int(r)], float(np.exp(v))) for (l, r), v in zip(pairs, fwd.logp[a:z])]
    return sorted(out, key=lambda t: -t[2])
