"""One text policy: the ``restore`` command's text and the component's ``restored_text`` agree,
and restored text keeps every character of the words."""
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc

import spacy_punctgen.pipeline.component  # noqa: F401  (registers the Doc extensions)
from spacy_punctgen.decode.render import gap_marks, gap_spacing, render_text
from spacy_punctgen.pipeline.doc_convert import insert_punctuation

VOCAB = spacy.blank("en").vocab
MARKS = [",", ".", "ABBR.", "(", ")", "\u201c", "\u201d", "\u2014", "-", "?", "!", ";", ":", "\u00bf", "\u3002"]
WORDS = ["a", "U.S.", "etc.", "Mr.", "b", "x.y", "I"]


def _component_text(words, spaces, slots):
    """``insert_punctuation`` on a one-sentence Doc whose restoration says ``slots``."""
    n = len(words)
    doc = Doc(VOCAB, words=words, spaces=[bool(s) for s in spaces], heads=[0] * n,
              deps=["ROOT"] + ["dep"] * (n - 1), sent_starts=[True] + [False] * (n - 1))
    doc._.restored_punct = [{"sentence": 0, "slot": i, "surface": tuple(s), "prob": 1.0}
                            for i, s in enumerate(slots)]
    return insert_punctuation(doc).text


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_command_and_component_print_the_same_text(data):
    n = data.draw(st.integers(1, 5))
    words = data.draw(st.lists(st.sampled_from(WORDS), min_size=n, max_size=n))
    spaced = data.draw(st.booleans())
    spaces = [" " if spaced else ""] * (n - 1) + [""]
    slots = data.draw(st.lists(st.lists(st.sampled_from(MARKS), max_size=3), min_size=n + 1, max_size=n + 1))
    assert render_text(words, spaces, slots) == _component_text(words, spaces, slots)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5), st.data())
def test_every_character_of_every_word_is_kept_in_order(words, data):
    slots = data.draw(st.lists(st.lists(st.sampled_from(MARKS), max_size=3),
                               min_size=len(words) + 1, max_size=len(words) + 1))
    text = render_text(words, [" "] * (len(words) - 1) + [""], slots)
    pos = 0
    for w in words:
        pos = text.index(w, pos) + len(w)


def test_an_abbreviations_dot_is_never_doubled():
    assert render_text(["He", "works", "in", "the", "U.S."], [" "] * 4 + [""], [()] * 5 + [(".",)]) == \
        "He works in the U.S."
    assert render_text(["pears", "etc."], [" ", ""], [(), (), ("ABBR.",)]) == "pears etc."
    assert render_text(["Mr.", "Smith", "left"], [" ", " ", ""], [(), ("ABBR.",), (), (".",)]) == "Mr. Smith left."
    assert render_text(["etc"], [""], [(), ("ABBR.", ",")]) == "etc.,"
    assert gap_marks("U.S.", [".", "\u201d"]) == ["\u201d"]
    assert gap_marks("U.S.", ["\u201d", "."]) == ["\u201d", "."]  # a point after the quote stays


def test_spacing_of_openers_and_dashes():
    assert gap_spacing([",", "\u201c"], True) == [False, True, False]
    assert gap_spacing(["\u2014"], True) == [True, True]
    assert gap_spacing([",", "\u201c"], False) == [False, False, False]
    assert render_text(["a", "b"], [" ", ""], [(), ("\u2014",), ()]) == "a \u2014 b"
