"""BiLSTM-CRF slot tagger (Xu et al. 2016; the "CRF" baseline of Li, Wang & Eisner (2019) §4).

A BiLSTM over the slots (:mod:`.neural`) gives label scores ``E[t, y]``; a linear-chain
CRF adds transition scores ``A[y, y']`` and start/end scores, so

    p(y | w) = exp(start[y_0] + Σ_t E[t, y_t] + Σ_t A[y_{t-1}, y_t] + end[y_n]) / Z(w).

The forward algorithm gives ``log Z``, forward-backward the gradients (node and edge
marginals minus gold counts), Viterbi the best labelling — all in NumPy, with the CRF
parameters in a parameter-only thinc Model so thinc's Adam updates them with the rest.
"""
from __future__ import annotations

from typing import List, Tuple

import numpy as np
from thinc.api import Linear, Model, with_array

from spacy_punctgen.baselines.neural import NeuralSlotTagger


def _lse(x: np.ndarray, axis: int) -> np.ndarray:
    m = x.max(axis=axis, keepdims=True)
    return np.squeeze(m, axis) + np.log(np.exp(x - m).sum(axis=axis))


def crf_params(n_labels: int) -> Model:
    """A thinc Model that only holds the CRF's transition/start/end scores."""

    def init(model, X=None, Y=None):
        L = model.get_dim("nL")
        model.set_param("A", model.ops.alloc2f(L, L))
        model.set_param("start", model.ops.alloc1f(L))
        model.set_param("end", model.ops.alloc1f(L))

    def forward(model, X, is_train):
        return X, lambda dY: dY

    return Model("crf", forward, init=init, dims={"nL": n_labels},
                 params={"A": None, "start": None, "end": None})


def forward_backward(E: np.ndarray, A: np.ndarray, start: np.ndarray, end: np.ndarray):
    """``log Z``, node marginals ``(T, L)`` and summed edge marginals ``(L, L)``."""
    T, L = E.shape
    alpha = np.empty((T, L))
    beta = np.empty((T, L))
    alpha[0] = start + E[0]
    for t in range(1, T):
        alpha[t] = _lse(alpha[t - 1][:, None] + A, 0) + E[t]
    beta[T - 1] = end
    for t in range(T - 2, -1, -1):
        beta[t] = _lse(A + (E[t + 1] + beta[t + 1])[None, :], 1)
    logZ = float(_lse(alpha[T - 1] + end, 0))
    node = np.exp(alpha + beta - logZ)
    edges = np.zeros((L, L))
    for t in range(1, T):
        edges += np.exp(alpha[t - 1][:, None] + A + (E[t] + beta[t])[None, :] - logZ)
    return logZ, node, edges


def path_score(E, A, start, end, y: List[int]) -> float:
    s = start[y[0]] + end[y[-1]] + E[np.arange(len(y)), y].sum()
    return float(s + sum(A[a, b] for a, b in zip(y[:-1], y[1:])))


def viterbi(E, A, start, end) -> List[int]:
    T, L = E.shape
    delta = start + E[0]
    back = np.zeros((T, L), dtype=np.int64)
    for t in range(1, T):
        cand = delta[:, None] + A
        back[t] = cand.argmax(0)
        delta = cand.max(0) + E[t]
    y = [int((delta + end).argmax())]
    for t in range(T - 1, 0, -1):
        y.append(int(back[t, y[-1]]))
    return y[::-1]


class BiLSTMCRFTagger(NeuralSlotTagger):
    name = "crf_tagger"
    defaults = {}

    def build_head(self, n_labels: int) -> Model:
        self._crf = crf_params(n_labels)
        return with_array(Linear(n_labels))

    def extra_layers(self) -> List[Model]:
        return [self._crf]

    def _p(self):
        c = self._crf
        return c.get_param("A"), c.get_param("start"), c.get_param("end")

    def loss_grad(self, scores, gold) -> Tuple[float, np.ndarray]:
        E = np.asarray(scores, dtype=np.float64)
        A, start, end = (np.asarray(p, dtype=np.float64) for p in self._p())
        logZ, node, edges = forward_backward(E, A, start, end)
        loss = logZ - path_score(E, A, start, end, gold)
        onehot = np.zeros_like(node)
        onehot[np.arange(len(gold)), gold] = 1.0
        dA = edges.copy()
        for a, b in zip(gold[:-1], gold[1:]):
            dA[a, b] -= 1.0
        dstart = node[0] - onehot[0]
        dend = node[-1] - onehot[-1]
        c = self._crf
        c.inc_grad("A", dA.astype("f"))
        c.inc_grad("start", dstart.astype("f"))
        c.inc_grad("end", dend.astype("f"))
        return loss, (node - onehot).astype("f")

    def decode(self, scores) -> List[int]:
        A, start, end = self._p()
        return viterbi(np.asarray(scores, dtype=np.float64), A, start, end)

    def marginals(self, scores) -> np.ndarray:
        A, start, end = (np.asarray(p, dtype=np.float64) for p in self._p())
        return forward_backward(np.asarray(scores, dtype=np.float64), A, start, end)[1]

    def gold_logprob(self, scores, gold) -> float:
        E = np.asarray(scores, dtype=np.float64)
        A, start, end = (np.asarray(p, dtype=np.float64) for p in self._p())
        logZ, _, _ = forward_backward(E, A, start, end)
        return path_score(E, A, start, end, gold) - logZ
