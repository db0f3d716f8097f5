"""Restoration baselines (Li, Wang & Eisner (2019) §4, §6.1; shared/docs/baselines.md).

Each system predicts every slot string of a depunctuated sentence; see
:mod:`.base` for the interface and :mod:`.slots` for the labelling they share.
Systems are imported lazily so that e.g. ``trivial`` needs neither crfsuite nor spaCy.
"""
import importlib

from spacy_punctgen.errors import Errors

SYSTEMS = {
    "trivial": "spacy_punctgen.baselines.trivial:TrivialBaseline",
    "crf_lexical": "spacy_punctgen.baselines.crf_lexical:LexicalCRF",
    "crf_tagger": "spacy_punctgen.baselines.crf_tagger:BiLSTMCRFTagger",
    "attn_tagger": "spacy_punctgen.baselines.attn_tagger:AttentionTagger",
    "spacy_tagger": "spacy_punctgen.baselines.spacy_tagger:SpacySlotTagger",
}


def get_system(name: str):
    """The class of baseline ``name`` (one of :data:`SYSTEMS`)."""
    if name not in SYSTEMS:
        raise ValueError(Errors.E570.format(name=name, systems=", ".join(SYSTEMS)))
    mod, cls = SYSTEMS[name].split(":")
    return getattr(importlib.import_module(mod), cls)
