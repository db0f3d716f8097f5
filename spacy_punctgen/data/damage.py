"""Seeded punctuation damage: the errors writers make, applied to gold treebank sentences, so that
punctuation *correction* can be evaluated on text whose correct punctuation is known
(docs/correction.md).

Only the slot strings change: the words, tags and tree of every sentence are kept, so the gold
(depunctuated) tree of a damaged sentence is the gold tree of the original.  Six error types, each a
Bernoulli draw per *opportunity* (a place where the error can happen):

=====================  =====================================================  ============  =====
type                   what happens                                           opportunity   rate
=====================  =====================================================  ============  =====
``missing_comma``      a comma is left out                                    each comma    0.20
``spurious_comma``     a comma is added where there was no mark               each empty    0.006
                                                                              interior slot
``comma_splice``       a semicolon between clauses becomes a comma            each ``;``    0.25
``missing_final``      the sentence-final ``. ? !`` is left out               each sentence 0.05
                                                                              ending in one
``quote_transposition`` a closing quote or bracket and an adjacent ``. ,``    each such     0.30
                       change places (``.”`` <-> ``”.``)                      adjacent pair
``dropped_quote``      one quotation mark or bracket is left out              each quote or 0.05
                                                                              bracket
=====================  =====================================================  ============  =====

Where the types and rates come from.  Lunsford & Lunsford (2008, "Mistakes are a fact of life: a
national comparative study", College Composition and Communication 59(4)) rank the twenty most
frequent formal errors in 877 US first-year student papers: missing comma after an introductory
element (2nd), mechanical error with a quotation (6th), unnecessary comma (7th), missing comma with a
nonrestrictive element (11th), missing comma in a compound sentence (13th), comma splice (16th);
learner corpora such as the FCE (Yannakoudakis et al. 2011) annotate punctuation as missing,
unnecessary and replaced marks, and Li, Wang & Eisner (2019, §6.2) name missing commas around
non-restrictive relative clauses and quote transposition as common learner errors.  Those sources give
the *types* and their *order*; they do not give rates per opportunity, so the rates above are our
**assumptions**, set so that a missing comma is the most frequent error per sentence, an unnecessary
comma the next, and so that the text keeps a learner-like few errors per hundred slots (with the
defaults 1.5 % of the slots of en_ewt test change, 2.7 % of zh_gsd_ud14 test).  Every rate is a parameter
(:class:`DamageConfig`).

Determinism: sentence ``k`` of a call draws from ``numpy.random.default_rng([seed, k])``, so its
damage depends on the seed and its position only.  Draw order within a sentence: deletions and
substitutions of tokens first (missing comma, comma splice, missing final mark, dropped quote; one
draw per token, in slot order), then transpositions among the pairs whose two tokens survived, then
insertions into slots that were empty in the gold.  Zero-width languages (Chinese) use their own
marks: ``，`` ``；`` ``。`` ``？`` ``！`` count like ``,`` ``;`` ``.`` ``?`` ``!`` and a spurious or
spliced comma is written in the script of the sentence (``，`` when the sentence has full-width
marks).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Dict, List, Sequence, Tuple

import numpy as np

from spacy_punctgen.data.preprocess import PunctSentence
from spacy_punctgen.errors import Errors

ERROR_TYPES = ("missing_comma", "spurious_comma", "comma_splice", "missing_final", "quote_transposition",
               "dropped_quote")
COMMAS = frozenset({",", "\uff0c", "\u3001"})
SEMICOLONS = {";": ",", "\uff1b": "\uff0c"}
FINALS = frozenset({".", "?", "!", "\u3002", "\uff1f", "\uff01"})
QUOTES = frozenset({"\u201c", "\u201d", "\u2018", "\u2019", '"', "'", "(", ")", "[", "]", "\u300c", "\u300d",
                    "\u300e", "\u300f", "\uff08", "\uff09", "\u300a", "\u300b", "-LRB-", "-RRB-", "``", "''"})
CLOSERS = frozenset({"\u201d", "\u2019", ")", "]", "\u300d", "\u300f", "\uff09", "\u300b", "-RRB-", "''", '"'})
#: marks a closing quote or bracket can be transposed with
SWAPPABLE = frozenset({".", ",", "\u3002", "\uff0c"})
_FULLWIDTH = frozenset({"\uff0c", "\u3001", "\uff1b", "\u3002", "\uff1f", "\uff01"})


@dataclass(frozen=True)
class DamageConfig:
    """Rate per opportunity of each error type (module docstring: the defaults are assumptions
    ordered by the learner-error literature)."""

    missing_comma: float = 0.20
    spurious_comma: float = 0.006
    comma_splice: float = 0.25
    missing_final: float = 0.05
    quote_transposition: float = 0.30
    dropped_quote: float = 0.05

    def __post_init__(self):
        for name in ERROR_TYPES:
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= float(v) <= 1.0:
                raise ValueError(Errors.E820.format(name=name, value=v))

    def rates(self) -> Dict[str, float]:
        return {name: float(getattr(self, name)) for name in ERROR_TYPES}


DEFAULT_CONFIG = DamageConfig()


@dataclass
class DamageReport:
    """Per error type: how many opportunities there were and how many errors were made."""

    opportunities: Counter = field(default_factory=Counter)
    applied: Counter = field(default_factory=Counter)

    def rates(self) -> Dict[str, float]:
        return {t: self.applied[t] / self.opportunities[t] for t in ERROR_TYPES if self.opportunities[t]}

    def to_dict(self) -> dict:
        return {t: {"opportunities": self.opportunities[t], "applied": self.applied[t]} for t in ERROR_TYPES}


def sentence_comma(sentence: PunctSentence) -> str:
    """The comma a spurious comma is written as: full-width in text with full-width marks."""
    return "\uff0c" if any(t in _FULLWIDTH for s in sentence.slots for t in s) else ","


def _final_index(slot: Tuple[str, ...]) -> int:
    """Position of the last sentence-final mark of the last slot, or -1."""
    for j in range(len(slot) - 1, -1, -1):
        if slot[j] in FINALS:
            return j
    return -1


def damage_sentence(sentence: PunctSentence, rng: np.random.Generator, config: DamageConfig = DEFAULT_CONFIG,
                    report: DamageReport = None) -> PunctSentence:
    """A copy of ``sentence`` with damaged slots (same words and tree); counts go to ``report``."""
    report = report if report is not None else DamageReport()
    r = config.rates()
    n = len(sentence.words)
    slots = [list(s) for s in sentence.slots]
    comma = sentence_comma(sentence)
    fin = _final_index(tuple(slots[n])) if slots else -1
    # 1. token deletions and substitutions, one draw per eligible token in slot order
    new: List[List[str]] = []
    for i, slot in enumerate(slots):
        out = []
        for j, tok in enumerate(slot):
            if tok in COMMAS:
                kind = "missing_comma"
            elif tok in SEMICOLONS and 0 < i < n:
                kind = "comma_splice"
            elif i == n and j == fin:
                kind = "missing_final"
            elif tok in QUOTES:
                kind = "dropped_quote"
            else:
                out.append(tok)
                continue
            report.opportunities[kind] += 1
            if rng.random() < r[kind]:
                report.applied[kind] += 1
                if kind == "comma_splice":
                    out.append(SEMICOLONS[tok])
                continue
            out.append(tok)
        new.append(out)
    # 2. transpositions of a closing quote/bracket with an adjacent point or comma
    for out in new:
        j = 0
        while j + 1 < len(out):
            a, b = out[j], out[j + 1]
            if (a in CLOSERS and b in SWAPPABLE) or (a in SWAPPABLE and b in CLOSERS):
                report.opportunities["quote_transposition"] += 1
                if rng.random() < r["quote_transposition"]:
                    report.applied["quote_transposition"] += 1
                    out[j], out[j + 1] = b, a
                j += 2
            else:
                j += 1
    # 3. spurious commas in interior slots that were empty in the gold
    for i in range(1, n):
        if not slots[i]:
            report.opportunities["spurious_comma"] += 1
            if rng.random() < r["spurious_comma"]:
                report.applied["spurious_comma"] += 1
                new[i] = [comma]
    return replace(sentence, slots=[tuple(s) for s in new])


def damage_sentences(sentences: Sequence[PunctSentence], seed: int = 0, config: DamageConfig = DEFAULT_CONFIG
                     ) -> Tuple[List[PunctSentence], DamageReport]:
    """Damage every sentence (sentence ``k`` with ``default_rng([seed, k])``); the damaged copies and
    the counts of opportunities and errors per type."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(Errors.E821.format(seed=seed))
    report = DamageReport()
    out = []
    for k, s in enumerate(sentences):
        if len(s.slots) != len(s.words) + 1:
            raise ValueError(Errors.E822.format(k=k, sent_id=s.sent_id, n_slots=len(s.slots), n=len(s.words)))
        out.append(damage_sentence(s, np.random.default_rng([int(seed), k]), config, report))
    return out, report
