"""``punctgen correct FILE.conllu`` keeps every sentence, in order, with its sent_id, and writes each
sentence's text from its FORMs and SpaceAfter (spacy_punctgen/cli/correct.py,
spacy_punctgen/pipeline/correct.py ``correct_ud_sentences``)."""
import json
from pathlib import Path

import pytest

import spacy_punctgen
from spacy_punctgen.data.conllu import read_conllu
from spacy_punctgen.data.convert import surface_text

from cli_helpers import run

MODEL = Path(spacy_punctgen.__file__).resolve().parent / "shipped" / "en_ewt"
EWT_DEV = Path(__file__).resolve().parents[2].parent / "shared" / "ud" / "en_ewt" / "en_ewt-ud-dev.conllu"


def _row(i, form, upos, head, deprel, misc="_", xpos="_"):
    return "\t".join([str(i), form, "_", upos, xpos, "_", str(head), deprel, "_", misc])


def _sentence(rows, sent_id=None, text=None):
    head = ([f"# sent_id = {sent_id}"] if sent_id is not None else []) + ([f"# text = {text}"] if text else [])
    return "\n".join(head + [_row(*r) for r in rows]) + "\n"


#: "The plan works, he said." with no punctuation heading anything
PLAIN = [(1, "The", "DET", 2, "det"), (2, "plan", "NOUN", 3, "nsubj"), (3, "works", "VERB", 6, "ccomp", "SpaceAfter=No"),
         (4, ",", "PUNCT", 3, "punct"), (5, "he", "PRON", 6, "nsubj"), (6, "said", "VERB", 0, "root", "SpaceAfter=No"),
         (7, ".", "PUNCT", 6, "punct")]
#: "We left -- they stayed." where the dash heads the second clause (training omits such a sentence)
PUNCT_HEADS = [(1, "We", "PRON", 2, "nsubj"), (2, "left", "VERB", 0, "root"), (3, "--", "PUNCT", 2, "punct"),
               (4, "they", "PRON", 5, "nsubj"), (5, "stayed", "VERB", 3, "parataxis", "SpaceAfter=No"),
               (6, ".", "PUNCT", 2, "punct")]
#: ":)" alone: no word, nothing to correct
ONLY_PUNCT = [(1, ":)", "PUNCT", 0, "root")]


def _correct(capsys, tmp_path, text, *extra):
    path = tmp_path / "in.conllu"
    path.write_text(text, encoding="utf-8")
    code, out, err = run(capsys, "correct", path, "--model", MODEL, "--json", *extra)
    assert code == 0, err
    return json.loads(out.strip().splitlines()[-1])


def test_every_sentence_comes_out_in_order_with_its_sent_id(capsys, tmp_path):
    text = "\n".join([_sentence(PLAIN, "s1"), _sentence(PUNCT_HEADS, "s2"), _sentence(ONLY_PUNCT, "s3"),
                      _sentence(PLAIN)])
    res = _correct(capsys, tmp_path, text)
    assert res["sentences"] == 4 and res["punct_heads_reattached"] == 1
    ids = [line.split("\t", 1)[0] for line in res["texts"]]
    assert ids == ["s1", "s2", "s3", "_"]
    texts = [line.split("\t", 1)[1] for line in res["texts"]]
    assert texts[2] == ":)"  # passed through as it is
    # the sentence whose dash heads a clause is corrected, its words all there and in order
    assert texts[1].replace(",", "").replace("--", "").split() == ["We", "left", "they", "stayed."]
    assert all(c["sent_id"] in ("s1", "s2", None) for c in res["changes"])


def test_punctuation_heading_words_is_corrected_not_passed_over(tmp_path):
    """The dash's dependents hang from its nearest word above, and the sentence is decoded: one
    entry per slot, the dash and the period observed where the text has them."""
    from spacy_punctgen.model.punct_model import PunctModel
    from spacy_punctgen.pipeline.correct import correct_ud_sentences

    path = tmp_path / "in.conllu"
    path.write_text(_sentence(PUNCT_HEADS, "s2") + "\n" + _sentence(ONLY_PUNCT, "s3"), encoding="utf-8")
    heads_dash, only_punct = correct_ud_sentences(PunctModel.from_disk(MODEL), read_conllu(path))
    assert [e["observed"] for e in heads_dash["corrected_punct"]] == [(), (), ("--",), (), (".",)]
    assert only_punct == {"corrected_punct": [], "corrected_text": ":)"}


def test_space_after_no_is_kept(capsys, tmp_path):
    rows = [(1, "I", "PRON", 4, "nsubj"), (2, "do", "AUX", 4, "aux", "SpaceAfter=No"), (3, "n't", "PART", 4, "advmod"),
            (4, "use", "VERB", 0, "root"), (5, "Google", "PROPN", 9, "nmod:poss", "SpaceAfter=No"),
            (6, "'s", "PART", 5, "case"), (7, "search", "NOUN", 9, "compound", "SpaceAfter=No"),
            (8, "-", "PUNCT", 9, "punct", "SpaceAfter=No"), (9, "engine", "NOUN", 4, "obj", "SpaceAfter=No"),
            (10, ".", "PUNCT", 4, "punct")]
    lines = _sentence(rows, "sa", "I don't use Google's search-engine.").splitlines()
    lines.insert(7, "5-6\tGoogle's\t_\t_\t_\t_\t_\t_\t_\t_")  # a multiword token, as EWT writes it
    res = _correct(capsys, tmp_path, "\n".join(lines) + "\n")
    (line,) = res["texts"]
    assert line == "sa\tI don't use Google's search-engine."


def test_text_comment_is_never_used_for_the_spacing(capsys, tmp_path):
    rows = [(1, "He", "PRON", 2, "nsubj"), (2, "left", "VERB", 0, "root"), (3, "yesterday", "NOUN", 2, "obl:tmod",
                                                                            "SpaceAfter=No"),
            (4, ".", "PUNCT", 2, "punct")]
    text = "\n".join([_sentence(rows, "nospace", "Heleftyesterday."), _sentence(rows, "absent"),
                      _sentence(rows, "other", "Something else entirely")])
    res = _correct(capsys, tmp_path, text)
    assert res["texts"] == ["nospace\tHe left yesterday.", "absent\tHe left yesterday.", "other\tHe left yesterday."]


def test_a_multiword_token_never_fuses_its_words(capsys, tmp_path):
    rows = [(1, "Il", "PRON", 2, "nsubj"), (2, "parle", "VERB", 0, "root"), (3, "de", "ADP", 5, "case"),
            (4, "le", "DET", 5, "det"), (5, "livre", "NOUN", 2, "obl", "SpaceAfter=No"), (6, ".", "PUNCT", 2, "punct")]
    lines = _sentence(rows, "fr").splitlines()
    lines.insert(3, "3-4\tdu\t_\t_\t_\t_\t_\t_\t_\t_")
    res = _correct(capsys, tmp_path, "\n".join(lines) + "\n")
    words = res["texts"][0].split("\t", 1)[1].replace(",", " ").split()
    assert words[:4] == ["Il", "parle", "de", "le"]


def test_a_relation_outside_ud_names_the_sentence(capsys, tmp_path):
    rows = [(1, "He", "PRON", 2, "SBJ"), (2, "left", "VERB", 0, "root")]
    path = tmp_path / "in.conllu"
    path.write_text(_sentence(PLAIN, "ok") + "\n" + _sentence(rows, "clear"), encoding="utf-8")
    code, out, err = run(capsys, "correct", path, "--model", MODEL)
    assert code == 1 and "E017" in err and f"{path}:10" in err and "clear" in err and "Traceback" not in err


def test_a_tag_outside_ud_names_the_sentence(capsys, tmp_path):
    rows = [(1, "He", "PRON", 2, "nsubj"), (2, "left", "VB", 0, "root")]
    path = tmp_path / "in.conllu"
    path.write_text(_sentence(rows, "tag"), encoding="utf-8")
    code, out, err = run(capsys, "correct", path, "--model", MODEL)
    assert code == 1 and "E018" in err and "tag" in err and "Traceback" not in err


@pytest.mark.skipif(not EWT_DEV.is_file(), reason=f"the UD English EWT dev file is not at {EWT_DEV}")
def test_ewt_dev_sentences_in_equal_sentences_out(capsys, tmp_path):
    """Dev sentences 300-599: four all-punctuation sentences and one whose punctuation heads words."""
    blocks = EWT_DEV.read_text(encoding="utf-8").strip().split("\n\n")[300:600]
    path = tmp_path / "dev.conllu"
    path.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    uds = read_conllu(path)
    code, out, err = run(capsys, "correct", path, "--model", MODEL, "--json")
    assert code == 0, err
    res = json.loads(out.strip().splitlines()[-1])
    assert res["sentences"] == len(uds) == 300 and res["punct_heads_reattached"] == 1
    assert [line.split("\t", 1)[0] for line in res["texts"]] == [ud.sent_id for ud in uds]
    changed = {c["sentence"] for c in res["changes"]}
    for k, (ud, line) in enumerate(zip(uds, res["texts"]), 1):
        if k not in changed:  # nothing corrected: exactly the words as SpaceAfter spaces them
            assert line.split("\t", 1)[1] == surface_text(ud.forms, ud.space_after), ud.sent_id
