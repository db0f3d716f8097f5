"""transcript_text, and the shipped sample transcript is what it writes from assets/sample."""
from pathlib import Path

from spacy_punctgen.data.conllu import UDSentence, read_conllu
from spacy_punctgen.data.transcript import transcript_text
from spacy_punctgen.pipeline.shipped import sample_transcript_path

SAMPLE_TEST = Path(__file__).resolve().parents[2] / "assets" / "sample" / "en_sample-ud-test.conllu"


def _ud(forms, upos, deprels, space_after):
    n = len(forms)
    return UDSentence(ids=list(range(1, n + 1)), forms=forms, upos=upos, xpos=["_"] * n, heads=[0] * n,
                      deprels=deprels, space_after=space_after, text="")


def test_marks_go_words_keep_their_spacing_and_a_dropped_mark_leaves_a_space():
    a = _ud(["We", "'ve", "a", "search", "-", "engine", "."], ["PRON", "AUX", "DET", "NOUN", "PUNCT", "NOUN", "PUNCT"],
            ["nsubj", "root", "det", "compound", "punct", "obj", "punct"], [False, True, True, False, False, False, False])
    b = _ud(["“", "Hi", "”"], ["PUNCT", "INTJ", "PUNCT"], ["punct", "root", "punct"], [False, False, False])
    assert transcript_text([a, b]) == "we've a search engine hi"
    assert transcript_text([a, b], lower=False) == "We've a search engine Hi"
    assert transcript_text([]) == ""


def test_the_shipped_transcript_is_regenerated_from_the_sample():
    expected = transcript_text(read_conllu(str(SAMPLE_TEST))[:12])
    assert sample_transcript_path("en").read_text(encoding="utf-8") == expected + "\n"
