"""The trivial baseline of Li, Wang & Eisner (2019) §6.1: a period at the end, nothing else.

"Period" is taken from the data: the most frequent final-slot string of the training
sentences (``.`` for English/Chinese, ``।`` for Hindi), so one rule serves every language.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import List

from spacy_punctgen.baselines.base import Baseline, Prediction, sentences_or_fail, state_field
from spacy_punctgen.baselines.slots import check_sentences, is_label, label_of, slot_of
from spacy_punctgen.errors import Errors


class TrivialBaseline(Baseline):
    name = "trivial"

    def __init__(self, final=(".",)):
        self.final = tuple(final)

    def fit(self, train_sents, dev_sents=None, **hyper) -> "TrivialBaseline":
        if hyper:
            raise ValueError(Errors.E586.format(hyper=sorted(hyper)))
        train = sentences_or_fail(train_sents, "training")
        check_sentences(train)
        counts = Counter(tuple(s.slots[-1]) for s in train)
        self.final = max(counts, key=lambda s: (counts[s], label_of(s)))
        return self

    def predict(self, sents) -> List[Prediction]:
        sents = list(sents)
        check_sentences(sents)
        return [[()] * len(s.words) + [self.final] for s in sents]

    def _state(self) -> dict:
        return {"final": label_of(self.final)}

    def _load_state(self, state: dict, path: Path) -> None:
        final = state_field(state, "final", is_label, "a slot label (a JSON list of strings)", path)
        self.final = slot_of(final)
