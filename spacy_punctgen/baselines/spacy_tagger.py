"""spaCy's own ``tagger`` as a slot tagger: the baseline a spaCy user would build first.

Each token is tagged with the string of the slot *after* it (``label_of``: JSON of the
tokens, ``[]`` = nothing); slot 0 (before the first word) rides on the first token: when
it is non-empty that token's tag is the JSON pair ``[slot0, slot1]``.  Tags seen fewer
than ``min_label`` times become ``<unk>``.  Training converts the sentences to
``.spacy`` DocBins and runs ``spacy train`` (``spacy.cli.train.train``) with
``spacy_punctgen/baselines/slot_tagger.cfg``; the trained pipeline (``model-best``) is what predicts.

Perplexity: the tagger's softmax over tags per token; a gold tag outside the tag set
gets ``p(<unk>) * Π q(x)`` over its non-empty slots (``q``: :mod:`.slots` back-off);
without an ``<unk>`` tag, the least likely tag's probability takes the place of ``p(<unk>)``.
"""
from __future__ import annotations

import json
import shutil
import tempfile
from collections import Counter
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np

from spacy_punctgen.baselines.base import (Baseline, Prediction, load_hyper, load_labels, sentences_or_fail,
                                           state_field)
from spacy_punctgen.baselines.neural import log_softmax
from spacy_punctgen.baselines.slots import UNK, SlotLabels, check_sentences, label_of, short, slot_of
from spacy_punctgen.errors import Errors

CONFIG = Path(__file__).resolve().parent / "slot_tagger.cfg"  # package data: installed with the package
_PIPELINE = "pipeline"
DEFAULTS = {"min_label": 2, "max_steps": 3000, "eval_frequency": 200, "patience": 1000,
            "dropout": 0.1, "learn_rate": 0.001, "seed": 0, "config": None}


def sentence_tags(sent) -> List[str]:
    """One tag per word: the slot after it, the first also carrying a non-empty slot 0."""
    tags = [label_of(s) for s in sent.slots[1:]]
    if sent.slots[0]:
        tags[0] = json.dumps([list(sent.slots[0]), list(sent.slots[1])], ensure_ascii=False)
    return tags


def tag_slots(tag: str) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    """``(slot before, slot after)`` a token from its tag (slot before is () unless a pair)."""
    val = json.loads(tag)
    if val and isinstance(val[0], list):
        return tuple(val[0]), tuple(val[1])
    return (), slot_of(tag)


def _is_tag(tag: str) -> bool:
    """``tag`` is :data:`UNK` or a tag of :func:`sentence_tags` (:func:`tag_slots` reads it)."""
    if tag == UNK:
        return True
    try:
        val = json.loads(tag)
    except json.JSONDecodeError:
        return False
    if isinstance(val, list) and len(val) == 2 and all(isinstance(v, list) for v in val):
        return all(isinstance(t, str) for v in val for t in v)
    return isinstance(val, list) and all(isinstance(t, str) for t in val)


def to_docbin(nlp, sents, tagset: Optional[set] = None):
    """Docs with the words and slot tags of ``sents`` (rare tags -> ``<unk>``)."""
    from spacy.tokens import Doc, DocBin

    db = DocBin(attrs=["ORTH", "TAG"])
    for s in sents:
        tags = sentence_tags(s)
        if tagset is not None:
            tags = [t if t in tagset else UNK for t in tags]
        db.add(Doc(nlp.vocab, words=list(s.words), tags=tags))
    return db


class SpacySlotTagger(Baseline):
    name = "spacy_tagger"
    probabilistic = True

    def __init__(self):
        self.hyper: Dict = dict(DEFAULTS)
        self.nlp = None
        self.tagset: set = set()
        self.labels: Optional[SlotLabels] = None  # for the back-off q and UNK fallback

    def fit(self, train_sents, dev_sents=None, **hyper) -> "SpacySlotTagger":
        import spacy
        from spacy.cli.train import train as spacy_train

        unknown = set(hyper) - set(DEFAULTS)
        if unknown:
            raise ValueError(Errors.E576.format(name="spacy_tagger", unknown=sorted(unknown)))
        self.hyper = {**DEFAULTS, **hyper}
        h = self.hyper
        train = sentences_or_fail(train_sents, "training")
        check_sentences(train)
        dev = list(dev_sents) if dev_sents else train[: max(1, len(train) // 10)]
        check_sentences(dev)
        counts = Counter(t for s in train for t in sentence_tags(s))
        self.tagset = {t for t, c in counts.items() if c >= int(h["min_label"])}
        self.labels = SlotLabels.from_sentences(train, int(h["min_label"]))
        blank = spacy.blank("xx")
        config = Path(h["config"]) if h["config"] else CONFIG
        if not config.exists():
            raise ValueError(Errors.E585.format(config=config))
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            to_docbin(blank, train, self.tagset).to_disk(tmp / "train.spacy")
            to_docbin(blank, dev, self.tagset).to_disk(tmp / "dev.spacy")
            overrides = {"paths.train": str(tmp / "train.spacy"), "paths.dev": str(tmp / "dev.spacy"),
                         "training.max_steps": int(h["max_steps"]),
                         "training.eval_frequency": int(h["eval_frequency"]),
                         "training.patience": int(h["patience"]),
                         "training.dropout": float(h["dropout"]),
                         "training.optimizer.learn_rate": float(h["learn_rate"]),
                         "system.seed": int(h["seed"])}
            spacy_train(config, tmp / "out", overrides=overrides, use_gpu=-1)
            self.nlp = spacy.load(tmp / "out" / "model-best")
        return self

    def _docs(self, sents):
        from spacy.tokens import Doc

        return [Doc(self.nlp.vocab, words=list(s.words)) for s in sents]

    def _decode_tags(self, sent, tags: List[str]) -> Prediction:
        slots: List[Tuple[str, ...]] = [()]
        for j, t in enumerate(tags):
            if t == UNK:
                before, after = (), self.labels.fallback
            else:
                before, after = tag_slots(t)
            if j == 0:
                slots[0] = before
            slots.append(after)
        return slots

    def predict(self, sents) -> List[Prediction]:
        sents = list(sents)
        check_sentences(sents)
        if self.nlp is None:
            raise ValueError(Errors.E577.format(name="spacy_tagger"))
        docs = self.nlp.pipe(self._docs(sents), batch_size=256)
        return [self._decode_tags(s, [tok.tag_ for tok in doc]) for s, doc in zip(sents, docs)]

    def slot_log_probs(self, sents) -> List[float]:
        sents = list(sents)
        check_sentences(sents)
        tagger = self.nlp.get_pipe("tagger")
        tag_index = {t: k for k, t in enumerate(tagger.labels)}
        out = []
        for b in range(0, len(sents), 256):
            batch = sents[b:b + 256]
            docs = list(self.nlp.get_pipe("tok2vec").pipe(self._docs(batch)))
            scores = tagger.model.predict(docs)
            for s, sc in zip(batch, scores):
                lp = log_softmax(np.asarray(sc, dtype=np.float64))
                total = 0.0
                for j, t in enumerate(sentence_tags(s)):
                    if t in tag_index:
                        total += lp[j, tag_index[t]]
                    else:
                        # no <unk> tag (no rare tags in training): as likely as the least likely tag
                        total += lp[j, tag_index[UNK]] if UNK in tag_index else lp[j].min()
                        total += sum(self.labels.backoff_logprob(x) for x in tag_slots(t) if x)
                out.append(float(total))
        return out

    def _state(self) -> dict:
        return {"hyper": self.hyper, "tagset": sorted(self.tagset), "labels": self.labels.to_dict()}

    def _save_files(self, path: Path) -> None:
        if self.nlp is None:
            raise ValueError(Errors.E578.format(name="spacy_tagger"))
        if (path / _PIPELINE).exists():
            shutil.rmtree(path / _PIPELINE)
        self.nlp.to_disk(path / _PIPELINE)

    def _load_state(self, state: dict, path: Path) -> None:
        import spacy

        self.hyper = load_hyper(state, DEFAULTS, path)
        self.tagset = set(state_field(state, "tagset", lambda v: isinstance(v, list) and all(
            isinstance(t, str) for t in v), "a list of tags", path))
        self.labels = load_labels(state, path)
        pipeline = path / _PIPELINE
        if not pipeline.is_dir():
            raise ValueError(Errors.E579.format(path=pipeline))
        try:
            nlp = spacy.load(pipeline)
        except Exception as err:  # spaCy's E050/E053, msgpack, UnicodeDecodeError, config errors...
            raise ValueError(Errors.E592.format(path=pipeline, what="spaCy pipeline",
                                                err=f"{type(err).__name__}: {short(err)}")) from None
        missing = [name for name in ("tok2vec", "tagger") if name not in nlp.pipe_names]
        if missing:
            raise ValueError(Errors.E593.format(path=pipeline, problem=f"it has no pipe(s) {missing}"))
        bad = next((t for t in nlp.get_pipe("tagger").labels if not _is_tag(t)), None)
        if bad is not None:
            raise ValueError(Errors.E593.format(path=pipeline, problem=f"the tagger label {bad!r} is not a slot tag"))
        self.nlp = nlp
