"""Restoration reads the sentence-end expert for the inputs the pipeline parses as one sentence
(``doc._.one_sentence_input``), and only for them: its final-slot evidence and its inner factor
enter the compiled product; weight 0, ``sentence_end=False`` or a longer input restore exactly as
before; the setting travels with the pipeline; bad folders are named."""
import numpy as np
import pytest
import spacy

import spacy_punctgen
from spacy_punctgen.api.stream import restore_text
from spacy_punctgen.model.lexical import CLASSES
from spacy_punctgen.model.sentence_end import SentenceEndExpert

QUESTION = "where are you going tonight with all your friends"
#: longer than single_sentence_words=5: parsed as the parser cuts it, not one sentence
LIMIT = 5


def _expert(path, mark="?", inner=1.0, weight=1.0):
    """An expert whose bias alone puts ``mark`` at the end of every sentence."""
    expert = SentenceEndExpert(length=64, weight=weight, inner_factor=inner)
    params = expert.params()
    params["b"] = np.zeros(len(CLASSES), np.float32)
    params["b"][CLASSES.index(mark)] = 30.0
    expert.set_params(params)
    return expert.to_disk(path)


def _end(text):
    return text.rstrip()[-1]


def test_the_flag_marks_only_one_sentence_inputs(shipped_parser):
    nlp = spacy_punctgen.load("en", sentence_end=False)
    assert nlp(QUESTION)._.one_sentence_input is True
    assert nlp(QUESTION + "\nand then") ._.one_sentence_input is False
    assert spacy_punctgen.load("en", sentence_end=False, single_sentence_words=LIMIT)(QUESTION)._.one_sentence_input is False


def test_the_expert_decides_the_end_of_one_sentence_inputs_only(shipped_parser, tmp_path):
    path = _expert(tmp_path / "q")
    plain = spacy_punctgen.load("en", sentence_end=False)
    used = spacy_punctgen.load("en", sentence_end=path)
    assert _end(restore_text(used, QUESTION)) == "?"
    assert _end(restore_text(used, "i am going home now")) == "?"  # the bias says so, whatever the words
    # not one sentence: exactly as without the expert
    long_text = " ".join([QUESTION] * 6)
    short_limit = spacy_punctgen.load("en", sentence_end=path, single_sentence_words=LIMIT)
    assert restore_text(short_limit, QUESTION) == restore_text(
        spacy_punctgen.load("en", sentence_end=False, single_sentence_words=LIMIT), QUESTION)
    assert restore_text(used, long_text) == restore_text(plain, long_text)
    # weight 0 turns it off
    off = spacy_punctgen.load("en", sentence_end=path, config={"sentence_end_weight": 0.0})
    for text in (QUESTION, "i am going home now", "thank you so much"):
        assert restore_text(off, text) == restore_text(plain, text)
    with pytest.raises(ValueError, match="E026"):
        spacy_punctgen.load("en", sentence_end=path, config={"sentence_end_weight": -1.0})


def test_the_inner_factor_keeps_sentence_ends_out_of_one_sentence(shipped_parser, tmp_path):
    text = "hello everyone thank you for coming today we will start with the budget"
    plain = spacy_punctgen.load("en", sentence_end=False)
    assert any(c in restore_text(plain, text)[:-1] for c in ".?!")  # the stream model ends sentences inside it
    rare = spacy_punctgen.load("en", sentence_end=_expert(tmp_path / "dot", mark=".", inner=1e-9))
    restored = restore_text(rare, text)
    assert not any(c in restored[:-1] for c in ".?!") and _end(restored) == "."


def test_written_marks_still_win(shipped_parser, tmp_path):
    nlp = spacy_punctgen.load("en", sentence_end=_expert(tmp_path / "q"))
    restored = restore_text(nlp, "i am going home now.")
    assert restored.endswith("now.") and "?" not in restored


def test_the_setting_travels_with_the_pipeline(shipped_parser, tmp_path):
    path = _expert(tmp_path / "q")
    nlp = spacy_punctgen.load("en", sentence_end=path)
    assert nlp.get_pipe("punctgen").cfg["sentence_end_model"] == str(path)
    nlp.to_disk(tmp_path / "pipe")
    back = spacy.load(tmp_path / "pipe")
    assert back.get_pipe("punctgen").cfg["sentence_end_model"] == str(path)


def test_bad_folders_are_named(shipped_parser, tmp_path):
    nlp = spacy_punctgen.load("en", sentence_end=tmp_path / "nothing")
    with pytest.raises(ValueError, match="E004.*nothing"):
        restore_text(nlp, QUESTION)


def test_the_shipped_expert_is_the_default(shipped_parser):
    from spacy_punctgen.pipeline.shipped import sentence_end_expert_path

    path = sentence_end_expert_path("en")
    if path is None:
        pytest.skip("no sentence-end expert ships in this checkout")
    assert spacy_punctgen.load("en").get_pipe("punctgen").cfg["sentence_end_model"] == str(path)
    assert spacy_punctgen.load("en", sentence_end=False).get_pipe("punctgen").cfg["sentence_end_model"] is None
    # another model: not by default (its odds were not the ones the expert's weights were chosen for)
    from spacy_punctgen.pipeline.shipped import default_model_path
    assert spacy_punctgen.load("en", model=default_model_path("en")).get_pipe("punctgen").cfg["sentence_end_model"] is None
    nlp = spacy_punctgen.load("en")
    assert _end(restore_text(nlp, "where are you going tonight")) == "?"


@pytest.mark.parametrize("kwargs", [{"kbest": 2}, {"kbest": 3, "kbest_search": "sample"}, {"lexical": True}])
def test_with_several_trees_or_the_lexical_expert(shipped_parser, tmp_path, kwargs):
    """The expert's rows enter the same product whatever else does: the beam's trees, drawn trees,
    the lexical expert's rows (raised to its weight first)."""
    if kwargs.get("lexical"):
        from spacy_punctgen.pipeline.shipped import lexical_expert_path
        try:
            lexical_expert_path("en")
        except ValueError as err:
            pytest.skip(str(err))
    path = _expert(tmp_path / "q")
    used = spacy_punctgen.load("en", sentence_end=path, **kwargs)
    plain = spacy_punctgen.load("en", sentence_end=False, **kwargs)
    assert _end(restore_text(used, "i am going home now")) == "?"
    long_text = " ".join([QUESTION] * 6)
    assert restore_text(used, long_text) == restore_text(plain, long_text)
