"""A parser's trees of sentences whose gold words we know: read, checked against the gold
words, and made into :class:`PunctSentence` objects with every token a word."""
from __future__ import annotations

from pathlib import Path
from typing import List, Sequence

from spacy_punctgen.data.conllu import UDSentence, read_conllu
from spacy_punctgen.data.preprocess import PunctSentence, preprocess_sentence
from spacy_punctgen.errors import Errors


def as_words(ud: UDSentence) -> UDSentence:
    """The sentence with every token treated as a word: a parser of unpunctuated text may
    still tag a word ``PUNCT`` or attach it as ``punct``, which must not delete the word."""
    upos = ["X" if u == "PUNCT" else u for u in ud.upos]
    deprels = ["dep" if d.split(":")[0].lower() == "punct" else d for d in ud.deprels]
    return UDSentence(ud.ids, ud.forms, upos, ud.xpos, ud.heads, deprels, ud.space_after, ud.sent_id,
                      ud.text, ud.path, ud.line)


def parsed_sentences(path, gold: Sequence[PunctSentence]) -> List[PunctSentence]:
    """The parsed trees of PATH, one per gold sentence, with the gold words checked."""
    path = Path(path)
    uds = read_conllu(path)
    by_id = {ud.sent_id: ud for ud in uds if ud.sent_id is not None}
    use_ids = all(g.sent_id is not None for g in gold) and all(g.sent_id in by_id for g in gold)
    if not use_ids and len(uds) != len(gold):
        raise ValueError(Errors.E528.format(path=path, n_parsed=len(uds), n_gold=len(gold)))
    out = []
    for k, g in enumerate(gold):
        ud = by_id[g.sent_id] if use_ids else uds[k]
        ps, reason = preprocess_sentence(as_words(ud), split_abbreviations=False)  # already depunctuated
        where = f"{path}:{ud.line} (sent_id {ud.sent_id!r})"
        if ps is None:
            raise ValueError(Errors.E529.format(where=where, reason=reason))
        if ps.words != g.words:
            raise ValueError(Errors.E530.format(where=where, words=ps.words[:8], sent_id=g.sent_id,
                                                 gold_words=g.words[:8]))
        out.append(ps)
    return out


def attachment_scores(gold: Sequence[PunctSentence], pred: Sequence[PunctSentence]) -> dict:
    n = uas = las = 0
    for g, p in zip(gold, pred):
        for hg, hp, dg, dp in zip(g.heads, p.heads, g.deprels, p.deprels):
            n += 1
            if hg == hp:
                uas += 1
                las += dg.lower() == dp.lower()
    return {"uas": uas / n if n else 0.0, "las": las / n if n else 0.0, "n_words": n}
