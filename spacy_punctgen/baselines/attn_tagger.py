"""BiLSTM tagger with attention (after Tilk & Alumäe 2016; the "Attn." baseline of
Li, Wang & Eisner (2019) §4).

Tilk & Alumäe read the words with a BiGRU and let each output step attend over all
encoder states, fusing the attended context with the step's own state before a softmax.
thinc has no GRU, so the encoder is the shared BiLSTM (:mod:`.neural`).  Attention here
is bilinear: ``a_t = softmax_j(h_t W h_j / sqrt(d))``, context ``c_t = Σ_j a_tj h_j``;
the label distribution of slot ``t`` is ``softmax(Linear([h_t; c_t]))``.  Slots are
predicted independently (no transition scores), so ``log p(x|w) = Σ_t log p(x_t|w)``.
"""
from __future__ import annotations

from typing import List, Tuple

import numpy as np
from thinc.api import Linear, Model, chain, with_array

from spacy_punctgen.baselines.neural import NeuralSlotTagger, log_softmax


def self_attention(width: int) -> Model:
    """List[Floats2d (T, d)] -> List[Floats2d (T, 2d)]: each state with its attended context."""

    def init(model, X=None, Y=None):
        d = model.get_dim("nI")
        W = model.ops.alloc2f(d, d)
        W += np.random.normal(0, 1.0 / np.sqrt(d), (d, d)).astype("f")
        model.set_param("W", W)

    def forward(model, Xs, is_train):
        W = model.get_param("W")
        d = W.shape[0]
        cache, out = [], []
        for H in Xs:
            Q = H @ W
            S = (Q @ H.T) / np.sqrt(d)
            S = S - S.max(axis=1, keepdims=True)
            Aw = np.exp(S)
            Aw /= Aw.sum(axis=1, keepdims=True)
            C = Aw @ H
            cache.append((H, Q, Aw))
            out.append(np.hstack([H, C]).astype("f"))

        def backprop(dYs):
            dW = np.zeros_like(W)
            dXs = []
            for (H, Q, Aw), dY in zip(cache, dYs):
                dH = dY[:, :d].copy()
                dC = dY[:, d:]
                dA = dC @ H.T
                dH += Aw.T @ dC
                dS = Aw * (dA - (dA * Aw).sum(axis=1, keepdims=True)) / np.sqrt(d)
                dQ = dS @ H
                dH += dS.T @ Q
                dW += H.T @ dQ
                dH += dQ @ W.T
                dXs.append(dH.astype("f"))
            model.inc_grad("W", dW.astype("f"))
            return dXs

        return out, backprop

    return Model("self_attention", forward, init=init, dims={"nI": width}, params={"W": None})


class AttentionTagger(NeuralSlotTagger):
    name = "attn_tagger"
    defaults = {}

    def build_head(self, n_labels: int) -> Model:
        h = int(self.hyper["hidden"])
        return chain(self_attention(h), with_array(Linear(n_labels, 2 * h)))

    def loss_grad(self, scores, gold) -> Tuple[float, np.ndarray]:
        lp = log_softmax(np.asarray(scores, dtype=np.float64))
        idx = np.arange(len(gold))
        d = np.exp(lp)
        d[idx, gold] -= 1.0
        return float(-lp[idx, gold].sum()), d.astype("f")

    def decode(self, scores) -> List[int]:
        return [int(k) for k in np.asarray(scores).argmax(axis=1)]

    def marginals(self, scores) -> np.ndarray:
        return np.exp(log_softmax(np.asarray(scores, dtype=np.float64)))

    def gold_logprob(self, scores, gold) -> float:
        lp = log_softmax(np.asarray(scores, dtype=np.float64))
        return float(lp[np.arange(len(gold)), gold].sum())
