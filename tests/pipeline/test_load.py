"""spacy_punctgen.load: the shipped pipelines, offline (spacy_punctgen/api/load.py).

The tests that run the shipped parser (spacy_punctgen/shipped/en_ewt_parser/, trained by the
workflow `stream` + `ship-parser`) skip with a reason only where its files are absent."""
import re
import socket
from pathlib import Path

import pytest
from spacy.language import Language

import spacy_punctgen
from spacy_punctgen.api import load as load_module
from spacy_punctgen.api.load import PARSER_FILES, load, shipped_parser_path

try:
    PARSER = shipped_parser_path("en")
except ValueError as err:  # the shipped parser's files are absent from this checkout
    PARSER, WHY = None, str(err)
else:
    WHY = ""
needs_parser = pytest.mark.skipif(PARSER is None, reason=f"no shipped parser: {WHY}")

UD_TEST = Path(__file__).resolve().parents[3] / "shared" / "ud" / "en_ewt" / "en_ewt-ud-test.conllu"


@pytest.fixture(scope="module")
def offline():
    """No network while the pipelines load and run: every socket connection fails."""
    mp = pytest.MonkeyPatch()

    def refuse(*args, **kwargs):
        raise OSError("network access attempted in an offline test")

    mp.setattr(socket.socket, "connect", refuse)
    mp.setattr(socket, "create_connection", refuse)
    yield
    mp.undo()


@pytest.fixture(scope="module")
def restorer(offline):
    return load("en")


@needs_parser
def test_load_restore_is_an_ordinary_pipeline(restorer):
    assert isinstance(restorer, Language) and restorer.lang == "en"
    assert restorer.pipe_names == ["tok2vec", "tagger", "morphologizer", "parser", "punctgen_words", "punctgen"]
    assert restorer.get_pipe("punctgen").cfg["mode"] == "restore"
    assert spacy_punctgen.load is load
    assert restorer.meta["license"] == "CC BY-SA 4.0"


@needs_parser
def test_load_restores_a_sentence(restorer):
    doc = restorer("when i came home he left")
    out = doc._.restored_text
    assert re.findall(r"[a-z]+", out.lower()) == "when i came home he left".split()
    assert out.rstrip()[-1] in ".!?"  # the sentence-final mark
    assert len(doc._.restored_punct) == len(doc) + 1


@needs_parser
@pytest.mark.parametrize("text,kept", [
    ("dear mr. lavorato following up on our call", ["mr.", "lavorato"]),
    ("the u.s. muslim group met", ["u.s.", "muslim"]),
    ("pears apples etc. he bought them", ["etc.", "he"]),
    ("smith inc. 202 main st. is the address", ["inc.", "202", "st."]),
])
def test_lowercase_abbreviations_keep_their_dot_and_their_space(restorer, text, kept):
    """An ASR-style abbreviation stays one word: its dot is not punctuation to replace, and the
    word after it stays a separate word (no ``mrlavorato``)."""
    out = restorer(text)._.restored_text
    words = [w.strip("\"“”‘’()[],;:!?-") for w in out.split()]
    words = [w if w in kept else w.rstrip(".") for w in words]
    assert words == [w if w in kept else w.rstrip(".") for w in text.split()], out


#: more than single_sentence_words (40) words: a stream, which the parser segments (a shorter line is
#: parsed as one sentence, tests/pipeline/test_single_sentence.py)
STREAM = ("i went to the store yesterday they did not have any milk so i came back home "
          "my sister called me in the evening she wants to visit us next week "
          "we will cook dinner together and then we will watch a film")


@needs_parser
def test_cased_stream_is_segmented_and_every_word_kept(restorer):
    text = STREAM.replace("i ", "I ").replace("my sister", "My sister")
    out = spacy_punctgen.restore_text(restorer, text)
    assert re.findall(r"[A-Za-z]+", out) == text.split()
    # the parser finds more than one sentence in the unpunctuated stream, each with its final mark
    assert len(re.findall(r"[.!?](\s|$)", out)) >= 2


@needs_parser
def test_lowercased_stream_is_segmented(restorer):
    """A lowercased stream without punctuation comes back as several sentences (the shipped
    parser learnt sentence boundaries from unpunctuated, lowercased documents)."""
    out = spacy_punctgen.restore_text(restorer, STREAM)
    assert re.findall(r"[a-z]+", out.lower()) == STREAM.split()
    assert len(re.findall(r"[.!?](\s|$)", out)) >= 2


@pytest.mark.ud
@needs_parser
@pytest.mark.skipif(not UD_TEST.is_file(), reason=f"{UD_TEST} absent")
def test_long_lowercased_transcript(restorer):
    from spacy_punctgen.data.preprocess import preprocess_file

    sents, _ = preprocess_file(UD_TEST)
    # about 2,000 words on one line, as a speech recogniser writes them: lowercased, and only
    # the words made of letters, digits and apostrophes (EWT also has words like "argghhh!")
    words = [w.lower() for s in sents[:160] for w in s.words if re.fullmatch(r"[\w']+", w)]
    text = " ".join(words)
    restorer.punctgen_chunk_chars = 2000
    try:
        doc = restorer(text)  # longer than chunk_chars: parsed window by window
    finally:
        restorer.punctgen_chunk_chars = load_module.DEFAULT_CHUNK_CHARS
    assert [t.text for t in doc if not t.is_space] == [t.text for t in restorer.make_doc(text)]
    out = doc._.restored_text
    assert re.sub(r"[^\w\s]", " ", out).split() == re.sub(r"[^\w\s]", " ", text).split()
    n_sents = len(list(doc.sents))
    assert 0.2 * 160 <= n_sents <= 2 * 160  # the parser finds at least some of the sentences there


@needs_parser
def test_load_analyze(offline):
    nlp = load("en", mode="analyze")
    assert nlp.get_pipe("punctgen").cfg["mode"] == "analyze"
    doc = nlp("When I came, he left.")
    assert [t.text for t in doc] == ["When", "I", "came", ",", "he", "left", "."]
    assert doc[6]._.punct_right is None  # a punctuation token
    sprouted = [m for t in doc if t._.punct_right for m in t._.punct_right]
    assert "." in sprouted and "," in sprouted
    assert doc._.underlying_punct


def test_words_stay_words():
    """A word the parser labels as punctuation keeps being a word (restoration would drop it)."""
    import spacy
    from spacy.tokens import Doc

    from spacy_punctgen.parsing.words import words_stay_words

    doc = Doc(spacy.blank("en").vocab, words=["sunni", "muslims", ",", "pray"], heads=[1, 1, 1, 1],
              deps=["punct", "ROOT", "punct", "punct"], pos=["PUNCT", "NOUN", "PUNCT", "VERB"])
    words_stay_words(doc)
    assert [(t.pos_, t.dep_) for t in doc] == [("X", "dep"), ("NOUN", "ROOT"), ("PUNCT", "punct"),
                                                 ("VERB", "dep")]
    assert [t.head.i for t in doc] == [1, 1, 1, 1]


def test_load_errors(monkeypatch, tmp_path):
    with pytest.raises(ValueError, match="E050"):
        load("en", mode="explain")
    with pytest.raises(ValueError, match="E051"):
        load("xx")
    monkeypatch.setattr(load_module, "MODELS_DIR", tmp_path)
    (tmp_path / "en_ewt_parser").mkdir()
    (tmp_path / "en_ewt_parser" / "config.cfg").write_text("")
    with pytest.raises(ValueError, match="E052") as err:
        shipped_parser_path("en")
    assert "parser/model" in str(err.value) and "config.cfg" not in str(err.value).split("lacks")[1]
    assert set(PARSER_FILES) >= {"config.cfg", "parser/model"}


def test_load_refuses_a_pipeline_without_parser(tmp_path):
    import spacy

    spacy.blank("en").to_disk(tmp_path / "blank")
    with pytest.raises(ValueError, match="E053"):
        load("en", parser=tmp_path / "blank")


@needs_parser
def test_load_correct(offline):
    nlp = load("en", mode="correct")
    assert nlp.get_pipe("punctgen").cfg["mode"] == "correct" and "punctgen_words" not in nlp.pipe_names
    # a spurious comma after the complementiser and a missing final mark
    doc = nlp("He said that, he would come back tomorrow")
    assert doc._.corrected_text == "He said that he would come back tomorrow."
    assert [e["observed"] for e in doc._.corrected_punct if e["observed"]] == [(",",)]


@needs_parser
def test_ship_parser_writes_a_loadable_pipeline_with_its_licence(tmp_path):
    import spacy

    from spacy_punctgen.api.load import ship_parser

    dest = ship_parser(shipped_parser_path("en"), tmp_path / "en_x_parser", name="en_x_parser")
    nlp = spacy.load(dest)
    assert nlp.meta["name"] == "x_parser" and nlp.meta["license"] == "CC BY-SA 4.0"
    assert nlp.meta["sources"] == [{"name": "UD English EWT", "license": "CC BY-SA 4.0"}]
    assert "parser" in nlp.pipe_names and not (tmp_path / ".en_x_parser.tmp").exists()
    with pytest.raises(ValueError, match="E053"):
        blank = tmp_path / "blank"
        spacy.blank("en").to_disk(blank)
        ship_parser(blank, tmp_path / "nothing")


@needs_parser
def test_restore_uses_the_model_trained_on_the_shipped_parsers_streams(restorer, offline, tiny_parser):
    """Restore mode with the shipped parser: the restoration model trained on that parser's
    analysis of unpunctuated streams; analysis, correction and another parser: the model of
    gold trees (the component's default)."""
    from spacy_punctgen.pipeline.shipped import SHIPPED_RESTORE, default_model_path, restore_model_path

    stream_model = restore_model_path("en")
    assert stream_model.name == SHIPPED_RESTORE["en"] and stream_model != default_model_path("en")
    assert restorer.get_pipe("punctgen").cfg["model"] == str(stream_model)
    assert load("en", mode="analyze").get_pipe("punctgen").cfg["model"] is None  # the default model
    same = load("en", parser=PARSER)  # the shipped parser's folder named: the same pipeline
    assert same.get_pipe("punctgen").cfg["model"] == str(stream_model)
    other = load("en", parser=tiny_parser())  # another parser: its trees are not the stream model's
    assert other.get_pipe("punctgen").cfg["model"] is None
    own = load("en", model=default_model_path("en"))
    assert own.get_pipe("punctgen").cfg["model"] == str(default_model_path("en"))


def test_restore_model_path_falls_back_and_refuses_like_the_default(monkeypatch, tmp_path):
    from spacy_punctgen.pipeline import shipped

    monkeypatch.setattr(shipped, "SHIPPED_RESTORE", {})
    assert shipped.restore_model_path("en") == shipped.default_model_path("en")
    with pytest.raises(ValueError, match="E010"):
        shipped.restore_model_path("xx")
    monkeypatch.setattr(shipped, "SHIPPED_RESTORE", {"en": "no_such_model"})
    with pytest.raises(ValueError, match="E011"):
        shipped.restore_model_path("en")


@needs_parser
def test_restore_parser_is_the_parsing_half_of_the_restore_pipeline(restorer, offline):
    """What the stream restoration models are trained on: the restore pipeline without punctgen."""
    from spacy_punctgen.api.load import restore_parser

    nlp = restore_parser("en")
    assert nlp.pipe_names == restorer.pipe_names[:-1] and "punctgen" not in nlp.pipe_names
    text = "we sent an e-mail to mr. smith and/or his team"
    assert [t.text for t in nlp(text)] == [t.text for t in restorer(text)][:len(nlp(text))]
    assert "e-mail" in [t.text for t in nlp(text)]


def test_keep_words_whole_joins_a_token_match_with_global_flags_and_skips_other_tokenizers(tmp_path):
    """French's token_match starts with ``(?iu)``: joined to the initialism pattern as a scoped
    group (a plain join raised re.error), matching what it matched before; the tokenizer saves and
    loads; a tokenizer without rules (Chinese word segmentation) is left alone."""
    import re as _re

    import spacy

    from spacy_punctgen.parsing.words import keep_words_whole, scoped_pattern

    nlp = spacy.blank("fr")
    before = nlp.tokenizer.token_match
    keep_words_whole(nlp)
    for word in ("e-mail", "E-MAIL", "u.s.", "aujourd'hui", "A-t-il"):
        assert bool(nlp.tokenizer.token_match(word)) == (bool(before(word)) or word == "u.s.")
    assert [t.text for t in nlp("il a envoyé un e-mail aux u.s.")][-2:] == ["aux", "u.s."]
    nlp.tokenizer.to_disk(tmp_path / "tok")
    again = spacy.blank("fr")
    again.tokenizer.from_disk(tmp_path / "tok")
    assert [t.text for t in again("un e-mail aux u.s.")] == ["un", "e-mail", "aux", "u.s."]
    assert scoped_pattern(_re.compile("(?iu)ab")) == "(?i:ab)"
    assert scoped_pattern(_re.compile("ab", _re.I | _re.S)) == "(?is:ab)"
    assert scoped_pattern(_re.compile("ab")) == "(?:ab)"
    zh = spacy.blank("zh")
    keep_words_whole(zh)  # no error, nothing to do


def test_restore_model_for_follows_the_parser(tiny_parser):
    from spacy_punctgen.api.load import restore_model_for
    from spacy_punctgen.pipeline.shipped import default_model_path, restore_model_path

    assert restore_model_for("en") == restore_model_path("en")
    if PARSER is not None:
        assert restore_model_for("en", PARSER) == restore_model_path("en")
    assert restore_model_for("en", tiny_parser()) == default_model_path("en")
    assert restore_model_for("en", "not-a-folder") == default_model_path("en")
