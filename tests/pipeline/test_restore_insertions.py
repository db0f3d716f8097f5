"""Restoration inserts marks into the user's text and changes nothing else
(``pipeline.restore.slot_insertions``), with the shipped pipeline and on hand-built Docs."""
import pytest
import spacy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc

import spacy_punctgen
from spacy_punctgen.decode.mbr import SlotChoice
from spacy_punctgen.pipeline.restore import apply_edits, slot_insertions, token_edits
from spacy_punctgen.testing.insertion_rule import rule_violations


def choices(*slots):
    return [SlotChoice(tuple(s), 0.5) for s in slots]


def test_marks_go_into_free_gaps_before_the_whitespace():
    doc = Doc(spacy.blank("en").vocab, words=["when", "i", "came", "he", "left"], spaces=[True, True, True, True, False])
    entries, ins, dels = slot_insertions(doc, [0], [([0, 1, 2, 3, 4], choices((), (), (), (",",), (), (".",)))])
    assert apply_edits(doc.text, ins, dels) == "when i came, he left."
    assert ins == [(11, ","), (19, ".")] and dels == []
    assert [e["fixed"] for e in entries] == [False] * 6


def test_a_gap_inside_a_token_gets_nothing_and_written_marks_stay():
    # "credit's" is two tokens with no space; "hello,world" holds a written comma
    vocab = spacy.blank("en").vocab
    doc = Doc(vocab, words=["credit", "'s", "hello", ",", "world"], spaces=[False, True, False, False, False])
    entries, ins, _ = slot_insertions(doc, [0], [([0, 1, 2, 4], choices((), (".",), (",",), ("!",), (".",)))])
    out = apply_edits(doc.text, ins)
    assert out == "credit's, hello,world."
    fixed = {e["slot"]: (e["fixed"], e["surface"]) for e in entries}
    assert fixed[1] == (True, ()) and fixed[3] == (True, (",",))


def test_openers_go_after_the_space_and_close_up_to_the_next_word():
    doc = Doc(spacy.blank("en").vocab, words=["he", "said", "hi"], spaces=[True, True, False])
    _, ins, _ = slot_insertions(doc, [0], [([0, 1, 2], choices((), (), (",", "“"), ("”", ".")))])
    assert apply_edits(doc.text, ins) == "he said, “hi”."


def test_repunctuate_deletes_only_marks_at_token_edges():
    vocab = spacy.blank("en").vocab
    doc = Doc(vocab, words=["hi", "!", "there", "a", ",", "b"], spaces=[False, True, True, False, False, False])
    _, ins, dels = slot_insertions(doc, [0], [([0, 2, 3, 5], choices((), (",",), (), (), (".",)))], repunctuate=True)
    assert apply_edits(doc.text, ins, dels) == "hi, there a,b."
    assert dels == [(2, 3)]


def test_unspaced_languages_take_marks_between_words():
    doc = Doc(spacy.blank("zh").vocab, words=["我", "来", "了", "他", "走", "了"], spaces=[False] * 6)
    _, ins, _ = slot_insertions(doc, [0], [([0, 1, 2, 3, 4, 5], choices((), (), (), ("，",), (), (), ("。",)))])
    assert apply_edits(doc.text, ins) == "我来了，他走了。"


def test_token_edits_map_marks_to_whitespace_tokens():
    edits = token_edits("when i came he left\n", [(11, ","), (19, ".")])
    assert [(t["start"], t["end"], t["after"]) for t in edits["tokens"]] == [
        (0, 4, ""), (5, 6, ""), (7, 11, ","), (12, 14, ""), (15, 19, ".")]


# ------------------------------------------------------------ the shipped pipeline
@pytest.fixture(scope="module")
def nlp():
    return spacy_punctgen.load("en")


#: inputs of issue 38's report: each must come back with every character it had
HOSTILE = [
    "'quoted' words and \"double quoted\" (in parens) and more",
    "Is it raining? Yes, it is.",
    "argghhh! what a day",
    "of '67 by march of '68 we left",
    "someone 's credit's gone and peter cox ' as well",
    "rock 'n' roll in 2013-2014 with a4-0090/99 and 3.14 in the U.S. today",
    "mail me at a.b@example.com or see https://example.com/x?y=1 now",
    "pizza 🍕🍺 tonight â™?now ok",
    "hello,world 3...4 wait...what a,b,c,d",
    "apple i,d it's 30°C 1.5-kg 853-7408 y'all the cats' toys the '90s 6'2\"",
    "para one\n\npara two\ttabbed\r\nwindows line\x0cform feed",
    "   leading and trailing spaces   ",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_the_text_is_kept_exactly(nlp, text):
    doc = nlp(text)
    edits = doc._.restored_edits
    assert rule_violations(text, doc._.restored_text, edits["insertions"], edits["deletions"]) == []
    restored = spacy_punctgen.restore_text(nlp, text)
    got = spacy_punctgen.restore_edits(nlp, text)
    assert rule_violations(text, restored, got["insertions"], got["deletions"]) == []


def test_written_marks_stay_where_they_are(nlp):
    out = nlp("is it raining? yes, it is")._.restored_text
    assert out.startswith("is it raining? yes, it is")


def test_restore_text_keeps_whitespace_only_and_newlines(nlp):
    assert spacy_punctgen.restore_text(nlp, "   ") == "   "
    assert spacy_punctgen.restore_text(nlp, "\n") == "\n"
    out = spacy_punctgen.restore_text(nlp, "when i came home he left\n")
    assert out.endswith("\n") and not out.endswith(" \n")


def test_a_long_run_without_whitespace_gets_nothing_inside(nlp):
    text = "a" * 7000 + " b"
    assert spacy_punctgen.restore_text(nlp, text).startswith("a" * 7000)


WORD = st.one_of(
    st.text(st.characters(categories=("Ll", "Lu", "Nd")), min_size=1, max_size=8),
    st.sampled_from(["it's", "e-mail", "2013-2014", "U.S.", "3.14", "🍕🍺", "https://x.org/a?b=1", "a@b.co",
                     "'67", "rock'n'roll", "â™?now", "hello,world", "wait...what", "(x)", "“hi”", "!", "--"]),
)
SPACE = st.sampled_from([" ", " ", " ", "  ", "\t", "\r\n", "\n", " \n\n "])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(st.lists(st.tuples(WORD, SPACE), min_size=1, max_size=25), st.booleans())
def test_property_only_marks_are_inserted(nlp, parts, lead):
    text = (" " if lead else "") + "".join(w + s for w, s in parts)
    restored = spacy_punctgen.restore_text(nlp, text)
    got = spacy_punctgen.restore_edits(nlp, text)
    assert rule_violations(text, restored, got["insertions"], got["deletions"]) == []


def test_the_loaded_pipeline_pickles(nlp):
    import pickle

    again = pickle.loads(pickle.dumps(nlp))
    text = "when i came home he left i was sad"
    assert type(again).__name__ == type(nlp).__name__
    assert again(text)._.restored_text == nlp(text)._.restored_text


def test_a_model_given_in_the_config_is_used(model_dir):
    nlp = spacy_punctgen.load("en", config={"model": str(model_dir)})
    assert nlp.get_pipe("punctgen").cfg["model"] == str(model_dir)


def test_inserted_paired_marks_pair_with_something():
    doc = Doc(spacy.blank("en").vocab, words=["fun", "i", "think", "so"], spaces=[True, True, True, False])
    entries, ins, _ = slot_insertions(doc, [0], [([0, 1, 2, 3], choices((), (",", "”"), (), ("(",), (".",)))])
    assert apply_edits(doc.text, ins) == "fun, i think so."
    assert [e["surface"] for e in entries] == [(), (",",), (), (), (".",)]
    # a closer the text opened is kept
    doc = Doc(spacy.blank("en").vocab, words=["“", "fun", "i", "think"], spaces=[False, True, True, False])
    _, ins, _ = slot_insertions(doc, [0], [([1, 2, 3], choices((), (",", "”"), (), (".",)))])
    assert apply_edits(doc.text, ins) == "“fun,” i think."


def test_text_in_another_language_gets_a_warning_once():
    import warnings

    nlp = spacy_punctgen.load("en")
    french = "est-ce que tout le monde a reçu le message de la directrice hier soir nous devons répondre avant demain"
    with pytest.warns(UserWarning, match=r"\[W002\].*spacy_udpipe"):
        nlp(french)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nlp(french)  # once per component
        spacy_punctgen.load("en")("okay so um welcome back everyone today we will talk about the roadmap")


def test_a_lone_surrogate_is_a_clear_error(nlp):
    for call in (nlp, lambda t: spacy_punctgen.restore_text(nlp, t), lambda t: spacy_punctgen.restore_edits(nlp, t)):
        with pytest.raises(ValueError, match=r"\[E982\].*U\+D800 at character 6"):
            call("hello \ud800 there")


def test_a_long_text_without_the_parser_is_our_error(nlp):
    with nlp.select_pipes(disable=["parser"]):
        with pytest.raises(ValueError, match=r"\[E001\]"):
            nlp("word " * 2000)


def test_a_symbol_with_a_letter_or_digit_is_never_written():
    """EWT's inventory holds the "mark" 1?!?!?, and every inventory <unk>: restoration writes
    neither (it would add characters that are not marks); the rest of the slot's marks stay."""
    doc = Doc(spacy.blank("en").vocab, words=["really", "now"], spaces=[True, False])
    entries, ins, dels = slot_insertions(doc, [0], [([0, 1], choices((), ("1?!?!?", ","), ("<unk>", "ABBR.")))])
    out = apply_edits(doc.text, ins, dels)
    assert out == "really, now."
    assert [e["surface"] for e in entries] == [(), (",",), ("ABBR.",)]
    assert rule_violations(doc.text, out, ins, dels, "en", False) == []
