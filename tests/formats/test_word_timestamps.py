"""formats/word_timestamps.py: words with times get their punctuation and keep everything else."""
import json

import pytest

from spacy_punctgen.formats.word_timestamps import (parse_word_timestamps, punctuate_words,
                                                    restore_word_timestamps, words_text,
                                                    write_word_timestamps)


def _pair(restorer):
    return lambda text: (restorer(text), None)


def test_the_text_is_the_words_joined_by_spaces(read_fixture):
    parsed = parse_word_timestamps(read_fixture("words.json"))
    text, spans = words_text(parsed.words)
    assert text == "so i think we're ready are you sure e-mail me"
    assert [text[s:e] for s, e in spans] == [w["word"] for w in parsed.words]


def test_no_insertions_give_the_same_bytes_back(read_fixture):
    for name in ("words.json", "words_object.json"):
        source = read_fixture(name)
        assert restore_word_timestamps(source, lambda text: ([], None)) == source
        assert restore_word_timestamps("\ufeff" + source, lambda text: ([], None)) == "\ufeff" + source


def test_each_word_gets_its_trailing_marks_and_nothing_else_changes(read_fixture, fake_restorer):
    source = read_fixture("words.json")
    out = restore_word_timestamps(source, _pair(fake_restorer))
    before, after = json.loads(source), json.loads(out)
    assert [w["word"] for w in after] == ["so", "i", "think,", "we're", "ready", "are,", "you", "sure",
                                          "e-mail,", "me."]
    for old, new in zip(before, after):
        assert list(old) == list(new)  # the same keys in the same order
        assert {k: v for k, v in old.items() if k != "word"} == {k: v for k, v in new.items() if k != "word"}
    # written in place: the layout is the file's own, one word a line
    assert out.splitlines()[3] == '  {"word": "think,", "start": 0.25, "end": 0.52, "probability": 0.98},'


def test_an_object_with_words_keeps_its_other_keys_and_skips_empty_words(read_fixture, fake_restorer):
    source = read_fixture("words_object.json")
    out = json.loads(restore_word_timestamps(source, _pair(fake_restorer)))
    data = json.loads(source)
    assert {k: v for k, v in out.items() if k != "words"} == {k: v for k, v in data.items() if k != "words"}
    assert [w["word"] for w in out["words"]] == [" hello", " there", "", " how,", " are", " you."]


def test_opening_marks_and_case_go_into_the_word(read_fixture):
    parsed = parse_word_timestamps(read_fixture("words_object.json"))
    text, _ = words_text(parsed.words)
    assert text == " hello  there  how  are  you"
    words = punctuate_words(parsed.words, [(1, "“"), (13, ","), (28, ".”")], cased=" Hello  there  How  are  you")
    assert [w["word"] for w in words] == [" “Hello", " there,", "", " How", " are", " you.”"]
    assert parsed.words[0]["word"] == " hello"  # the input is not changed


def test_cased_words_may_be_given_one_per_word(read_fixture):
    parsed = parse_word_timestamps(read_fixture("words.json"))
    cased = [w["word"] for w in parsed.words]
    cased[1] = "I"
    words = punctuate_words(parsed.words, [], cased=cased)
    assert [w["word"] for w in words][:3] == ["so", "I", "think"]
    with pytest.raises(ValueError, match=r"\[E956\]"):
        punctuate_words(parsed.words, [], cased=cased[:-1])
    cased[1] = "you"
    with pytest.raises(ValueError, match=r"\[E952\]"):
        punctuate_words(parsed.words, [], cased=cased)


def test_marks_key_records_the_trailing_marks(read_fixture, fake_restorer):
    source = read_fixture("words.json")
    out = json.loads(restore_word_timestamps(source, _pair(fake_restorer), marks_key="punct"))
    assert [w["punct"] for w in out] == ["", "", ",", "", "", ",", "", "", ",", "."]
    assert list(out[0]) == ["word", "start", "end", "probability", "punct"]
    parsed = parse_word_timestamps('[{"word": "hi"}, {"word": "you"}]')
    words = punctuate_words(parsed.words, [(3, "“"), (6, "”")], marks_key="punct")
    assert [(w["word"], w["punct"]) for w in words] == [("hi", ""), ("“you”", "”")]


def test_a_word_that_lost_a_key_is_written_as_a_whole_new_value(read_fixture):
    parsed = parse_word_timestamps(read_fixture("words.json"))
    words = [dict(w) for w in parsed.words]
    del words[0]["probability"]
    assert json.loads(write_word_timestamps(parsed, words)) == words


def test_empty_and_odd_layouts():
    assert restore_word_timestamps("[]", lambda text: ([], None)) == "[]"
    source = '{"words":[{"word":"a","start":0},{ "start" : 1 , "word" : "b" }],"x":{"words":1}}\n'
    out = restore_word_timestamps(source, lambda text: ([(3, ".")], None), marks_key="p")
    assert out == '{"words":[{"word":"a","start":0, "p": ""},{ "start" : 1 , "word" : "b.", "p": "." }],' \
                  '"x":{"words":1}}\n'
    assert json.loads(out)["words"][1] == {"start": 1, "word": "b.", "p": "."}


@pytest.mark.parametrize("source, code", [
    ("[{'word': 'a'}]", "E953"),
    ("", "E953"),
    ('{"segments": []}', "E954"),
    ('"hello"', "E954"),
    ('[{"word": 3}]', "E955"),
    ('[{"text": "a"}]', "E955"),
    ('["a", "b"]', "E955"),
])
def test_files_that_are_not_word_timestamps_are_refused(source, code):
    with pytest.raises(ValueError, match=rf"\[{code}\]"):
        parse_word_timestamps(source)


def test_insertions_inside_words_are_refused(read_fixture):
    parsed = parse_word_timestamps(read_fixture("words.json"))
    with pytest.raises(ValueError, match=r"\[E943\].*'e-mail'"):
        punctuate_words(parsed.words, [(37, "-")])
