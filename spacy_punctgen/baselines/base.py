"""The interface every restoration baseline implements, and save/load of its metadata.

A system is fitted on preprocessed training (and dev) sentences, predicts every slot
string of a sentence, and — if it is probabilistic — gives ``log p(gold slots | words)``
per sentence so per-slot perplexity can be reported beside AED.
"""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Tuple, Union

from spacy_punctgen.baselines.slots import read_json, write_json
from spacy_punctgen.errors import Errors

Prediction = List[Tuple[str, ...]]
_META = "baseline.json"


class Baseline:
    name = "baseline"
    probabilistic = False

    def fit(self, train_sents, dev_sents=None, **hyper) -> "Baseline":
        raise NotImplementedError

    def predict(self, sents) -> List[Prediction]:
        raise NotImplementedError

    def slot_log_probs(self, sents) -> List[float]:
        """``log p(x_0..x_n | words)`` of each sentence's gold slots (finite)."""
        raise ValueError(Errors.E571.format(name=self.name))

    DECODERS = ("viterbi", "mbr")

    def set_decoder(self, decoder: str) -> "Baseline":
        """Switch a trained system between Viterbi/argmax and minimum-Bayes-risk decoding."""
        hyper = getattr(self, "hyper", None)
        if hyper is None or "decoder" not in hyper:
            raise ValueError(Errors.E572.format(name=self.name))
        if decoder not in self.DECODERS:
            raise ValueError(Errors.E573.format(decoder=decoder, decoders=", ".join(self.DECODERS)))
        hyper["decoder"] = decoder
        return self

    # --- persistence: subclasses write their own files next to baseline.json ---
    def _state(self) -> dict:
        raise NotImplementedError

    def _load_state(self, state: dict, path: Path) -> None:
        raise NotImplementedError

    def _save_files(self, path: Path) -> None:
        """Extra files (model weights); none by default."""

    def to_disk(self, path: Union[str, Path]) -> Path:
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        self._save_files(path)
        write_json(path / _META, {"system": self.name, "state": self._state()})
        return path


def load_baseline(path: Union[str, Path]) -> Baseline:
    """Load any saved baseline; the directory says which system it is."""
    from spacy_punctgen.baselines import get_system

    path = Path(path)
    meta = read_json(path / _META)
    system = get_system(meta["system"])()
    system._load_state(meta["state"], path)
    return system


def sentences_or_fail(sents, what: str) -> list:
    sents = list(sents)
    if not sents:
        raise ValueError(Errors.E574.format(what=what))
    return sents


def maybe(x: Optional[list]) -> list:
    return list(x) if x else []
