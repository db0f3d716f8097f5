"""A linear-chain CRF labelling each word "comma after it" or not, with dependency features
(Cerisara, Král & Gardent, paper 004).

Why: the paper's claim is that a few tree features (above all ``DepCross``) lift a lexical CRF's
comma F by 10–30 points in French and Czech; this rebuilds it on UD trees so that the claim
can be checked beside punctgen.  The CRF plumbing (CRFsuite training, tagging, saving and
loading) is :class:`~spacy_punctgen.baselines.crf_lexical.LexicalCRF`'s: this class trains it on
a comma view of the sentences (each slot ``(",",)`` or ``()``) and replaces its features.

Position ``t`` of the chain is slot ``t``; for ``t >= 1`` it is the word ``w_i`` it follows, so
the paper's "word followed by a comma".  Feature groups (hyperparameter ``features``, joined
by ``+``; ``lex`` is always there):

- ``lex``: ``w_{i-1}``, ``w_i``, ``w_{i+1}`` (rare words as ``<rare>``);  ``pos``: their UPOS;
- ``IsCoord``: scanning ``w_{i+1}, w_{i+2} ...`` for the first word whose head is at or before
  ``w_i``: is its relation ``conj`` (UD's name for FTB's ``coord``)?  False when ``w_{i+1}`` is a
  coordinating conjunction (UPOS ``CCONJ``, the paper's "et"/"ou");
- ``IsMod``: the largest ``i - h`` over subtrees headed by ``h`` that end with ``w_i`` and modify a
  word after ``w_i`` (relations in :data:`MODIFIERS`), else -1;
- ``DepCross``: the relation of the first arc from ``w_{i+1}`` or its ancestors to a head at or
  before ``w_i``; failing that ``LEFT`` + the relation of the first arc from ``w_i`` or its
  ancestors to a head after it; else ``NIL``;
- ``DepLabel``: ``w_i``'s own relation;
- ``IsCoordCz``: in the nearest coordination above ``w_i`` (UD: the first conjunct and its
  ``conj`` dependents), if ``w_i`` ends a conjunct (its ``conj`` dependents aside) that precedes
  the coordinating word (the first ``cc`` of a later conjunct), the number of such conjuncts
  between it and that word; else -1.

UD attaches coordination differently from FTB and PDT (the first conjunct heads the others, the
conjunction hangs on the conjunct it precedes), so these are the paper's definitions read on UD
trees; the tests pin their values on hand-built trees.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Dict, List, Sequence

from spacy_punctgen.baselines.base import Baseline, sentences_or_fail, state_field
from spacy_punctgen.baselines.crf_lexical import LexicalCRF
from spacy_punctgen.baselines.slots import BOS, EOS, slot_words
from spacy_punctgen.baselines.trigram_hmm import check_tree, comma_slots, has_comma
from spacy_punctgen.data.preprocess import subtree_spans
from spacy_punctgen.errors import Errors

GROUPS = ("lex", "pos", "IsCoord", "IsMod", "DepCross", "DepLabel", "IsCoordCz")
MODIFIERS = frozenset({"advmod", "amod", "nmod", "obl", "advcl", "acl", "nummod", "appos",
                       "discourse", "vocative", "dislocated"})
_CRF_KEYS = ("min_freq", "c1", "c2", "max_iterations", "feature_minfreq", "decoder")
DEFAULTS = {"features": "lex+pos", "min_freq": 2, "c1": 0.05, "c2": 0.01, "max_iterations": 100,
            "feature_minfreq": 1, "decoder": "viterbi"}


def _rel(deprel: str) -> str:
    return deprel.split(":")[0].lower()


def parse_groups(spec: str) -> List[str]:
    """The feature groups of ``"lex+pos+DepCross"`` (``lex`` added if missing), E905 for others."""
    groups = [g for g in str(spec).split("+") if g]
    for g in groups:
        if g not in GROUPS:
            raise ValueError(Errors.E905.format(name="crf_syntax", group=g, groups=", ".join(GROUPS)))
    return ["lex"] + [g for g in GROUPS[1:] if g in groups]


# ---------------------------------------------------------------- tree features (0-based words)
def is_coord(heads: Sequence[int], deprels: Sequence[str], upos: Sequence[str], i: int) -> bool:
    if i + 1 < len(heads) and upos[i + 1] == "CCONJ":
        return False
    for j in range(i + 1, len(heads)):
        if 0 <= heads[j] <= i:
            return _rel(deprels[j]) == "conj"
    return False


def is_mod(heads: Sequence[int], deprels: Sequence[str], i: int, spans=None) -> int:
    spans = spans or subtree_spans(list(heads))
    dist = [i - h for h, (_, last) in enumerate(spans)
            if last == i and heads[h] > i and _rel(deprels[h]) in MODIFIERS]
    return max(dist) if dist else -1


def dep_cross(heads: Sequence[int], deprels: Sequence[str], i: int) -> str:
    n = len(heads)
    if i + 1 >= n:
        return "NIL"
    a = i + 1
    while a >= 0:
        if 0 <= heads[a] <= i:
            return deprels[a]
        a = heads[a]
    a = i
    while a >= 0:
        if heads[a] > i:
            return "LEFT" + deprels[a]
        a = heads[a]
    return "NIL"


def is_coord_cz(heads: Sequence[int], deprels: Sequence[str], i: int, spans=None) -> int:
    children: Dict[int, List[int]] = {}
    for d, h in enumerate(heads):
        children.setdefault(h, []).append(d)
    a, first = i, None
    while a >= 0:
        if _rel(deprels[a]) == "conj" and heads[a] >= 0:
            first = heads[a]
            break
        if any(_rel(deprels[c]) == "conj" for c in children.get(a, ())):
            first = a
            break
        a = heads[a]
    if first is None:
        return -1
    items = sorted([first] + [c for c in children.get(first, ()) if _rel(deprels[c]) == "conj"])
    keyword = min((c for it in items[1:] for c in children.get(it, ()) if _rel(deprels[c]) == "cc"),
                  default=len(heads))
    kept = [it for it in items if it < keyword]
    spans = spans or subtree_spans(list(heads))
    for k, it in enumerate(kept):
        end = max([it] + [spans[c][1] for c in children.get(it, ()) if _rel(deprels[c]) != "conj"])
        if end == i:
            return len(kept) - k - 1
    return -1


def tree_features(sent, groups: Sequence[str]) -> List[List[str]]:
    """The syntactic features of each word (``w_i``), in the groups asked for."""
    h, d = list(sent.heads), list(sent.deprels)
    spans = subtree_spans(h) if h else []
    out = []
    for i in range(len(sent.words)):
        f = []
        if "IsCoord" in groups:
            f.append(f"IsCoord={is_coord(h, d, sent.upos, i)}")
        if "IsMod" in groups:
            f.append(f"IsMod={is_mod(h, d, i, spans)}")
        if "DepCross" in groups:
            f.append(f"DepCross={dep_cross(h, d, i)}")
        if "DepLabel" in groups:
            f.append(f"DepLabel={d[i]}")
        if "IsCoordCz" in groups:
            f.append(f"IsCoordCz={is_coord_cz(h, d, i, spans)}")
        out.append(f)
    return out


def comma_view(sent):
    """The sentence with each slot reduced to a comma or nothing."""
    return dataclasses.replace(sent, slots=comma_slots([has_comma(s) for s in sent.slots]))


# ---------------------------------------------------------------- the system
class SyntacticCRF(LexicalCRF):
    name = "crf_syntax"
    probabilistic = False
    slot_log_probs = Baseline.slot_log_probs

    def __init__(self):
        super().__init__()
        self.groups: List[str] = parse_groups(DEFAULTS["features"])

    def _xseq(self, sent) -> List[List[str]]:
        words, n = sent.words, len(sent.words)
        syn = tree_features(sent, self.groups)
        pos = "pos" in self.groups
        seq = []
        for t in range(n + 1):
            f = ["b"]
            for off in (-2, -1, 0):  # w_{i-1}, w_i, w_{i+1} around slot t (w_i = word t-1)
                f.append(f"w[{off}]={self._word(slot_words(words, t, off))}")
                if pos:
                    j = t + off
                    f.append(f"p[{off}]={sent.upos[j] if 0 <= j < n else (BOS if j < 0 else EOS)}")
            f.extend(syn[t - 1] if t else ["NOWORD"])
            seq.append(f)
        return seq

    def fit(self, train_sents, dev_sents=None, **hyper) -> "SyntacticCRF":
        unknown = set(hyper) - set(DEFAULTS)
        if unknown:
            raise ValueError(Errors.E576.format(name=self.name, unknown=sorted(unknown)))
        hyper = {**DEFAULTS, **hyper}
        self.groups = parse_groups(hyper["features"])
        train = sentences_or_fail(train_sents, "training")
        for k, s in enumerate(train):
            check_tree(s, k, self.name)
        super().fit([comma_view(s) for s in train], None, min_label=1,
                    **{k: hyper[k] for k in _CRF_KEYS})
        return self

    def predict(self, sents):
        sents = list(sents)
        for k, s in enumerate(sents):
            check_tree(s, k, self.name)
        return super().predict(sents)

    def _state(self) -> dict:
        return {**super()._state(), "features": "+".join(self.groups)}

    def _load_state(self, state: dict, path: Path) -> None:
        spec = state_field(state, "features", lambda v: isinstance(v, str), "a string of feature groups", path)
        self.groups = parse_groups(spec)
        super()._load_state(state, path)
