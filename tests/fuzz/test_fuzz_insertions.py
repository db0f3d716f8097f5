"""Fuzz: restoration's insertions keep the user's text, whatever the text and whatever the
decoder chose (``pipeline.restore.slot_insertions`` on random texts and random slot choices,
no model needed, so the long run can try many inputs: ``PUNCTGEN_FUZZ_EXAMPLES``)."""
import spacy
from hypothesis import given
from hypothesis import strategies as st

from fuzz_strategies import RUNS, guarded, run_property, run_settings, tried
from spacy_punctgen.decode.mbr import SlotChoice
from spacy_punctgen.pipeline.restore import slot_insertions
from spacy_punctgen.testing.insertion_rule import rule_violations

import pytest

TOKENS = st.one_of(
    st.text(st.characters(categories=("Ll", "Lu", "Nd", "Lo", "So")), min_size=1, max_size=6),
    st.sampled_from(["it's", "e-mail", "2013-2014", "U.S.", "etc.", "3.14", "🍕🍺", "https://x.org/a?b=1", "a@b.co",
                     "'67", "rock'n'roll", "â™?now", "hello,world", "wait...what", "(x)", "“hi”", "!", "--", "?",
                     "\"", "'", "(", ")", "...", "a,b,c", "६", "中文"]),
)
SPACES = st.sampled_from([" ", " ", " ", "  ", "\t", "\r\n", "\n", " \n\n ", "\u00a0", "\u2028", ""])
MARKS = st.lists(st.sampled_from([",", ".", "?", "!", ":", ";", "“", "”", "(", ")", "-", "—", "ABBR.", "'", "\""]),
                 max_size=3)

_NLP = {}


def blank(lang):
    if lang not in _NLP:
        _NLP[lang] = spacy.blank(lang)
    return _NLP[lang]


@pytest.mark.parametrize("run", RUNS)
def test_insertions_keep_the_text(request, run):
    @run_settings(run, 200, 1_000_000)
    @given(st.lists(st.tuples(TOKENS, SPACES), min_size=1, max_size=30), st.data(), st.sampled_from(["en", "zh"]),
           st.booleans())
    @guarded
    def prop(parts, data, lang, repunctuate):
        text = "".join(w + s for w, s in parts)
        doc = blank(lang)(text)
        words = [t.i for t in doc if not t.is_space and not t.is_punct]
        if not words:
            return
        cut = sorted(set(data.draw(st.lists(st.integers(1, len(words)), max_size=3)))) if len(words) > 1 else []
        sentences, start = [], 0
        for c in cut + [len(words)]:
            if c > start:
                sentences.append(words[start:c])
                start = c
        decoded = [(wt, [SlotChoice(tuple(data.draw(MARKS)), 0.5) for _ in range(len(wt) + 1)]) for wt in sentences]
        if tried("insertions.random_texts"):
            entries, ins, dels = slot_insertions(doc, list(range(len(sentences))), decoded, repunctuate)
            from spacy_punctgen.pipeline.restore import apply_edits

            out = apply_edits(doc.text, ins, dels)
            assert rule_violations(doc.text, out, ins, dels, lang, repunctuate) == []
            assert len(entries) == sum(len(wt) + 1 for wt in sentences)

    run_property(request.node.name, prop)
