"""Treebank sentences as a speech transcript: one lowercased line, punctuation removed.

Why: the shipped sample transcript (``spacy_punctgen/shipped/samples/en_transcript.txt``, what
``punctgen demo`` punctuates) and the long-input checks are made from UD sentences this way,
so that they are regenerated, not edited by hand.  Words keep UD's spacing (``we've``, not
``we 've``); a dropped mark always leaves a space (``search-engine`` becomes ``search engine``,
as a recogniser would write it).
"""
from __future__ import annotations

from typing import Iterable, List

from spacy_punctgen.data.conllu import UDSentence
from spacy_punctgen.data.preprocess import is_punct


def transcript_text(sentences: Iterable[UDSentence], lower: bool = True) -> str:
    """The sentences' words without punctuation, joined into one line."""
    out: List[str] = []
    for ud in sentences:
        space = True  # between sentences
        for form, upos, deprel, after in zip(ud.forms, ud.upos, ud.deprels, ud.space_after):
            if is_punct(upos, deprel):
                space = True
                continue
            if out and space:
                out.append(" ")
            out.append(form.lower() if lower else form)
            space = after
    return "".join(out)
