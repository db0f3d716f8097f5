"""The interface every restoration baseline implements, and save/load of its metadata.

A system is fitted on preprocessed training (and dev) sentences, predicts every slot
string of a sentence, and — if it is probabilistic — gives ``log p(gold slots | words)``
per sentence so per-slot perplexity can be reported beside AED.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple, Union

from spacy_punctgen.baselines.slots import SlotLabels, read_json, short, write_json
from spacy_punctgen.errors import Errors
from spacy_punctgen.model.serialize import is_finite_number

Prediction = List[Tuple[str, ...]]
META_FILE = "baseline.json"


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
        write_json(path / META_FILE, {"system": self.name, "state": self._state()})
        return path


def load_baseline(path: Union[str, Path]) -> Baseline:
    """Load any saved baseline; the directory says which system it is.

    Every file is checked as it is read, and a corrupted, truncated or binary one gives a
    ValueError naming it: E579 (missing), E590 (not JSON), E591 (a field of baseline.json),
    E592 (weights), E593 (spaCy pipeline)."""
    from spacy_punctgen.baselines import SYSTEMS, get_system

    path = Path(path)
    meta = read_json(path / META_FILE)
    name = state_field(meta, "system", lambda v: isinstance(v, str) and v in SYSTEMS,
                       "one of " + ", ".join(SYSTEMS), path, prefix="")
    state = state_field(meta, "state", lambda v: isinstance(v, dict), "an object", path, prefix="")
    system = get_system(name)()
    system._load_state(state, path)
    return system


_MISSING = object()


def state_field(obj, key: str, ok: Callable[[object], bool], expected: str, path: Path,
                prefix: str = "state."):
    """``obj[key]`` if ``ok`` accepts it, else E591 naming ``path``'s baseline.json and the
    field (``prefix + key``)."""
    value = obj.get(key, _MISSING) if isinstance(obj, dict) else _MISSING
    if value is _MISSING or not ok(value):
        shown = "nothing (missing)" if value is _MISSING else short(repr(value))
        raise ValueError(Errors.E591.format(path=Path(path) / META_FILE, field=prefix + key, expected=expected,
                                            value=shown))
    return value


def load_labels(state: dict, path: Path) -> SlotLabels:
    """The saved label vocabulary ``state["labels"]``, checked (E591)."""
    problem = SlotLabels.dict_problem(state.get("labels", _MISSING))
    if problem is not None:
        field, expected, value = problem
        shown = "nothing (missing)" if value is _MISSING else short(repr(value))
        raise ValueError(Errors.E591.format(path=Path(path) / META_FILE, field="state.labels" + field,
                                            expected=expected, value=shown))
    return SlotLabels.from_dict(state["labels"])


def load_hyper(state: dict, defaults: Dict, path: Path) -> Dict:
    """``defaults`` updated with the saved ``state["hyper"]``, each value of the type its default
    has (a number for a number, true/false for a flag, a decoder name for ``decoder``), so a
    corrupted value fails here and not, silently or not, when the system runs (E591)."""
    saved = state_field(state, "hyper", lambda v: isinstance(v, dict), "an object", path)
    for key, value in saved.items():
        default = defaults.get(key, _MISSING)
        if default is _MISSING:
            expected = "free of unknown hyperparameters (known: " + ", ".join(sorted(defaults)) + ")"
            ok = False
        elif key == "decoder":
            expected, ok = "one of " + ", ".join(Baseline.DECODERS), value in Baseline.DECODERS
        elif isinstance(default, bool):
            expected, ok = "true or false", isinstance(value, bool) or (type(value) is int and value in (0, 1))
        elif isinstance(default, (int, float)):
            expected, ok = "a finite number", is_finite_number(value)
        else:  # str or None (a path)
            expected, ok = "a string or null", value is None or isinstance(value, str)
        if not ok:
            raise ValueError(Errors.E591.format(path=Path(path) / META_FILE, field=f"state.hyper.{key}",
                                                expected=expected, value=short(repr(value))))
    return {**defaults, **saved}


def sentences_or_fail(sents, what: str) -> list:
    sents = list(sents)
    if not sents:
        raise ValueError(Errors.E574.format(what=what))
    return sents


def maybe(x: Optional[list]) -> list:
    return list(x) if x else []
