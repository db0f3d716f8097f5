"""Trigram language models over tokens, to score rephrased text (docs/rephrasing.md): an
interpolated Kneser–Ney model (:class:`KneserNeyTrigram`) and the add-k model the published
rephrasing experiment used (:class:`AddKTrigram`, ``k = 0.001``).

Why here: the rephrasing evaluation asks how natural a punctuated token sequence is; no
n-gram library is installed in this environment (``nltk.lm`` is not), so this is the
textbook model (Chen & Goodman's interpolated Kneser–Ney, one absolute discount per
order, ``D = n1 / (n1 + 2 n2)``), small enough to check by hand in the tests.

Every sentence is padded with two ``<s>`` and ends with ``</s>``; the vocabulary is the
training tokens plus ``</s>`` and ``<unk>``, and a token never seen in training is
scored as ``<unk>`` (Kneser–Ney: the unigram level's uniform share gives it a small
probability; add-k: its count is 0, like any unseen trigram).
"""
from __future__ import annotations

import math
from collections import Counter
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from spacy_punctgen.errors import Errors

BOS, EOS, UNK = "<s>", "</s>", "<unk>"


def _discount(counts: Iterable[int]) -> float:
    """``n1 / (n1 + 2 n2)`` from the counts of counts; 0.75 when it is undefined or outside (0, 1)."""
    cc = Counter(c for c in counts if c <= 2)
    n1, n2 = cc.get(1, 0), cc.get(2, 0)
    d = n1 / (n1 + 2 * n2) if n1 + 2 * n2 else 0.75
    return d if 0.0 < d < 1.0 else 0.75


def _trigrams(sentences: Iterable[Sequence[str]]) -> Counter:
    tri: Counter = Counter()
    for sent in sentences:
        toks = [BOS, BOS] + [str(t) for t in sent] + [EOS]
        for i in range(2, len(toks)):
            tri[toks[i - 2], toks[i - 1], toks[i]] += 1
    if not tri:
        raise ValueError(Errors.E860)
    return tri


class _TrigramLM:
    """What both models share: per-sentence log-probabilities and perplexity from ``prob``."""

    vocab: List[str]

    def prob(self, w: str, context: Tuple[str, str]) -> float:  # pragma: no cover - overridden
        raise NotImplementedError

    def sentence_logprobs(self, sent: Sequence[str]) -> List[float]:
        """Natural-log ``p`` of every token of ``sent`` and of the final ``</s>``."""
        toks = [BOS, BOS] + [str(t) for t in sent] + [EOS]
        return [math.log(self.prob(toks[i], (toks[i - 2], toks[i - 1]))) for i in range(2, len(toks))]

    def perplexity(self, sentences: Iterable[Sequence[str]],
                   keep: Optional[Callable[[Tuple[str, str, str]], bool]] = None) -> Dict[str, float]:
        """Per-token perplexity (``</s>`` counted) over the sentences; ``keep(trigram)`` limits
        it to the trigrams it accepts (e.g. those holding punctuation)."""
        total, n = 0.0, 0
        for sent in sentences:
            toks = [BOS, BOS] + [str(t) for t in sent] + [EOS]
            for i, lp in enumerate(self.sentence_logprobs(sent), start=2):
                if keep is None or keep((toks[i - 2], toks[i - 1], toks[i])):
                    total += lp
                    n += 1
        if not n:
            raise ValueError(Errors.E862)
        return {"perplexity": math.exp(-total / n), "tokens": n, "mean_logprob": total / n}



class KneserNeyTrigram(_TrigramLM):
    """``p(w | u v)``, interpolated Kneser–Ney; :meth:`fit` on token lists, then :meth:`prob`."""

    def __init__(self) -> None:
        self.vocab: List[str] = []

    def fit(self, sentences: Iterable[Sequence[str]]) -> "KneserNeyTrigram":
        tri = _trigrams(sentences)
        self._tri = tri
        self._ctx2: Counter = Counter()  # c(u v ·)
        self._fan2: Counter = Counter()  # N1+(u v ·)
        cont2: Counter = Counter()  # N1+(· v w)
        for (u, v, w), c in tri.items():
            self._ctx2[u, v] += c
            self._fan2[u, v] += 1
            cont2[v, w] += 1
        self._cont2 = cont2
        self._ctx1: Counter = Counter()  # N1+(· v ·) = sum_w N1+(· v w)
        self._fan1: Counter = Counter()  # N1+(v ·) over continuation bigrams
        cont1: Counter = Counter()  # N1+(· w)
        for (v, w), c in cont2.items():
            self._ctx1[v] += c
            self._fan1[v] += 1
            cont1[w] += 1
        self._cont1 = cont1
        self._total1 = sum(cont1.values())  # N1+(· ·)
        self.d3 = _discount(tri.values())
        self.d2 = _discount(cont2.values())
        self.d1 = _discount(cont1.values())
        self.vocab = sorted(set(cont1) | {EOS, UNK})
        self._known = set(self.vocab)
        return self

    def _check(self) -> None:
        if not self.vocab:
            raise ValueError(Errors.E861)

    def token(self, w: str) -> str:
        """``w`` itself if seen in training, else ``<unk>``."""
        return w if w in self._known else UNK

    def _p1(self, w: str) -> float:
        c = self._cont1.get(w, 0)
        return (max(c - self.d1, 0.0) + self.d1 * len(self._cont1) / len(self.vocab)) / self._total1

    def _p2(self, v: str, w: str) -> float:
        ctx = self._ctx1.get(v, 0)
        if not ctx:
            return self._p1(w)
        c = self._cont2.get((v, w), 0)
        return (max(c - self.d2, 0.0) + self.d2 * self._fan1[v] * self._p1(w)) / ctx

    def prob(self, w: str, context: Tuple[str, str]) -> float:
        """``p(w | u v)``; ``context = (u, v)``, ``<s>`` for positions before the sentence."""
        self._check()
        u, v = (t if t == BOS else self.token(t) for t in context)
        w = self.token(w)
        ctx = self._ctx2.get((u, v), 0)
        if not ctx:
            return self._p2(v, w)
        c = self._tri.get((u, v, w), 0)
        return (max(c - self.d3, 0.0) + self.d3 * self._fan2[u, v] * self._p2(v, w)) / ctx


class AddKTrigram(_TrigramLM):
    """``p(w | u v) = (c(u v w) + k) / (c(u v) + k |V|)``: a trigram model with add-k
    smoothing and no back-off (``|V|``: the vocabulary, ``</s>`` and ``<unk>`` included; an
    unseen context gives every token ``1 / |V|``)."""

    def __init__(self, k: float = 0.001) -> None:
        if not (isinstance(k, (int, float)) and math.isfinite(k) and k > 0):
            raise ValueError(Errors.E869.format(k=k))
        self.k = float(k)
        self.vocab: List[str] = []

    def fit(self, sentences: Iterable[Sequence[str]]) -> "AddKTrigram":
        self._tri = _trigrams(sentences)
        self._ctx: Counter = Counter()
        for (u, v, _), c in self._tri.items():
            self._ctx[u, v] += c
        self.vocab = sorted({w for _, _, w in self._tri} | {EOS, UNK})
        self._known = set(self.vocab)
        return self

    def token(self, w: str) -> str:
        """``w`` itself if seen in training, else ``<unk>``."""
        return w if w in self._known else UNK

    def prob(self, w: str, context: Tuple[str, str]) -> float:
        """``p(w | u v)``; ``context = (u, v)``, ``<s>`` for positions before the sentence."""
        if not self.vocab:
            raise ValueError(Errors.E861)
        u, v = (t if t == BOS else self.token(t) for t in context)
        w = self.token(w)
        return (self._tri.get((u, v, w), 0) + self.k) / (self._ctx.get((u, v), 0) + self.k * len(self.vocab))
