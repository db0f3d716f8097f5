"""Restoration baselines (Li, Wang & Eisner (2019) §4, §6.1; docs/baselines.md).

Each system predicts every slot string of a depunctuated sentence; see
:mod:`.base` for the interface and :mod:`.slots` for the labelling they share.
Two companion comma systems predict only commas (a comma or nothing per slot):
``trigram_hmm`` (hidden-event trigram LM with subtree end counts, Shieber & Tao 2003) and
``crf_syntax`` (word CRF with dependency features, Cerisara et al.).
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
    "trigram_hmm": "spacy_punctgen.baselines.trigram_hmm:TrigramHMM",
    "crf_syntax": "spacy_punctgen.baselines.crf_syntax:SyntacticCRF",
}


def get_system(name: str):
    """The class of baseline ``name`` (one of :data:`SYSTEMS`)."""
    if name not in SYSTEMS:
        raise ValueError(Errors.E570.format(name=name, systems=", ".join(SYSTEMS)))
    mod, cls = SYSTEMS[name].split(":")
    return getattr(importlib.import_module(mod), cls)
