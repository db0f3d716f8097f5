"""Long input through a pipeline in windows (spacy_punctgen.api.stream).

The parser here is a rule: a sentence starts at every word "so" (and at the text's start), its
first word is the root and the others hang from it. Its boundaries depend only on the words,
so a text parsed window by window must get exactly the sentences it gets parsed whole, and the
component records the longest Doc it was given, which is what bounds the parser's memory.
The punctuation model is the one shipped for English (restore mode)."""
import random
import re

import pytest
import spacy
from spacy.language import Language
from spacy.tokens import Doc

import spacy_punctgen
from spacy_punctgen.api.stream import (
    iter_pieces, process_long, restore_text, streaming, window_end,
)

LONGEST = {"tokens": 0}


@Language.component("test_so_parser")
def so_parser(doc: Doc) -> Doc:
    LONGEST["tokens"] = max(LONGEST["tokens"], len(doc))
    heads, root = [], None
    for t in doc:
        if not t.is_space and (root is None or t.lower_ == "so"):
            root = t.i
        heads.append(t.i if root is None else root)
    pos = ["PRON" if t.lower_ in ("i", "you", "we") else "VERB" if t.lower_.endswith("ed") else "NOUN"
           for t in doc]
    # a new Doc with every head at once (spaCy starts a sentence at each root's subtree)
    return Doc(doc.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc],
               heads=heads, deps=["ROOT" if h == i else "dep" for i, h in enumerate(heads)], pos=pos,
               tags=["NN"] * len(doc))


VOCAB = ["the", "cat", "walked", "home", "we", "talked", "about", "rain", "i", "liked", "it", "so", "then",
         "you", "played", "music", "all", "day"]


def transcript(n_words: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(VOCAB) for _ in range(n_words))


@pytest.fixture(scope="module")
def nlp():
    nlp = spacy.blank("en")
    nlp.add_pipe("test_so_parser")
    # the model shipped for English; exact marginals: the fastest decoder on these long sentences
    nlp.add_pipe("punctgen", config={"mode": "restore", "restore_method": "marginal"})
    return nlp


def sentences(doc):
    return [[t.text for t in s if not t.is_space] for s in doc.sents]


def test_window_end_cuts_at_whitespace():
    text = "aaaa bbbb cccc dddd"
    assert window_end(text, 0, 6) == 9  # "aaaa bbbb" ends at the space after the 6th character
    assert text[window_end(text, 0, 6)].isspace()
    assert window_end(text, 10, 100) == len(text)
    assert window_end("x" * 50, 0, 10) == 10  # no whitespace anywhere: cut where the window is full


def test_pieces_are_the_text_and_the_whole_parse(nlp):
    text = transcript(1500)
    pieces = list(iter_pieces(nlp, text, chunk_chars=500))
    assert len(pieces) > 10
    assert "".join(p.text for p in pieces) == text  # contiguous slices, nothing lost or repeated
    whole = nlp.get_pipe("test_so_parser")(nlp.make_doc(text))
    long_doc = process_long(nlp, text, chunk_chars=500)
    assert long_doc.text == text
    # the sentence cut by each window's end was carried into the next window, so the
    # boundaries equal those of one parse of the whole text
    assert sentences(long_doc) == sentences(whole)
    assert [t.head.i for t in long_doc] == [t.head.i for t in whole]


def test_memory_bound_is_the_window(nlp):
    text = transcript(4000, seed=1)  # about 20,000 characters
    LONGEST["tokens"] = 0
    out = restore_text(nlp, text, chunk_chars=500)
    # the parser never saw more than a window (about 500 characters + the carried sentence
    # of a few words: ~100 + ~20 words), whatever the length of the text
    assert 0 < LONGEST["tokens"] < 200
    words = re.findall(r"[a-z]+", out.lower())
    assert words == text.split()


def test_long_sentence_is_cut_by_force_and_nothing_is_lost(nlp):
    text = " ".join(["the"] * 1000)  # one "sentence" far longer than a window
    LONGEST["tokens"] = 0
    doc = process_long(nlp, text, chunk_chars=400)
    assert [t.text for t in doc if not t.is_space] == text.split()
    assert LONGEST["tokens"] < 200
    assert len(list(doc.sents)) > 1  # forced breaks


def test_restore_keeps_lines_and_restores_every_sentence(nlp):
    text = "so i liked it so we talked about rain\n\nthe cat walked home so you played music"
    out = restore_text(nlp, text, chunk_chars=100)
    lines = out.split("\n")
    assert len(lines) == 3 and lines[1] == ""
    assert re.findall(r"[a-z]+", lines[0].lower()) == text.split("\n")[0].split()
    assert re.findall(r"[a-z]+", lines[2].lower()) == text.split("\n")[2].split()
    # each sentence the parser found ends with the sentence-final mark the model chose
    doc = process_long(nlp, text.split("\n")[0] * 40, chunk_chars=200)
    final = {e["sentence"]: e for e in doc._.restored_punct if e["slot"] == sum(
        1 for t in list(doc.sents)[e["sentence"]] if not t.is_space)}
    assert final and all(e["surface"] for e in final.values())


def test_streaming_nlp_call_and_pipe(nlp):
    text = transcript(800, seed=2)
    short = "so we talked about rain"
    s = streaming(nlp, chunk_chars=600)
    assert isinstance(s, Language)
    doc = s(text)
    assert [t.text for t in doc if not t.is_space] == text.split()
    assert doc._.restored_text and re.findall(r"[a-z]+", doc._.restored_text.lower()) == text.split()
    docs = list(s.pipe([short, text, short]))
    assert [d.text for d in docs] == [short, text, short]
    assert all(d._.restored_text for d in docs)
    assert spacy_punctgen.restore_text is restore_text


def test_bad_arguments(nlp):
    with pytest.raises(ValueError, match="E056"):
        list(iter_pieces(nlp, "so we talked", chunk_chars=10))
    with pytest.raises(TypeError, match="E057"):
        restore_text(nlp, b"bytes")
    analyser = spacy.blank("en")
    analyser.add_pipe("test_so_parser")
    with pytest.raises(ValueError, match="E058"):
        restore_text(analyser, "so we talked")


# ------------------------------------------ stream training data (spacy_punctgen.data.stream)
def test_stream_documents_for_parser_training(tmp_path):
    """Multi-sentence, partly lowercased documents whose sentences spaCy's converter keeps apart."""
    from pathlib import Path

    from spacy.training.converters import conllu_to_docs

    from spacy_punctgen.data.preprocess import preprocess_file
    from spacy_punctgen.data.stream import convert_stream_file, document_spans, lowercase_choices

    spans = document_spans(100, 1, 20, seed=0)
    assert spans[0][0] == 0 and spans[-1][1] == 100
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    assert all(1 <= e - s <= 20 for s, e in spans)
    assert spans == document_spans(100, 1, 20, seed=0) != document_spans(100, 1, 20, seed=1)
    assert sum(lowercase_choices(10, 0.5, seed=0)) == 5
    with pytest.raises(ValueError, match="E535"):
        document_spans(10, 3, 2, seed=0)
    with pytest.raises(ValueError, match="E536"):
        lowercase_choices(10, 1.5, seed=0)

    src = Path(__file__).resolve().parents[2] / "assets" / "sample" / "en_sample-ud-train.conllu"
    out = tmp_path / "stream.conllu"
    res = convert_stream_file(src, out, min_sents=2, max_sents=5, lower=0.5, seed=3)
    kept, _ = preprocess_file(src)
    assert res["sentences"] == len(kept) and res["documents"] == out.read_text().count("# newdoc id")
    assert res["lowercased"] == round(0.5 * res["documents"])
    docs = list(conllu_to_docs(out.read_text(), n_sents=1, no_print=True))
    assert len(docs) == res["documents"]
    # every document holds its consecutive sentences, with their own roots and no punctuation
    words = [[t.text for t in s] for d in docs for s in d.sents]
    assert [[w.lower() for w in s] for s in words] == [[w.lower() for w in k.words] for k in kept]
    cased = sum(d.text != d.text.lower() for d in docs)
    assert 0 < cased <= res["documents"] - res["lowercased"]  # the lowercased half has no capitals
    assert all(len(list(d.sents)) >= 2 for d in docs[:-1])
    assert not any(t.dep_ == "punct" for d in docs for t in d)
