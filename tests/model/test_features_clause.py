"""The optional clause-type templates ``clause_seq``, ``clause_start`` and ``clause_end`` (added
so that a node can see a question: subject-auxiliary inversion, an opening wh-word, a tag
question): the contexts they fire on hand-built trees, that the defaults and restoration's
refusal list leave them alone, and that ``scripts/ted_punctgen.py --templates`` trains with them."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from spacy_punctgen.data.inventory import PunctInventory
from spacy_punctgen.data.preprocess import PunctSentence, load_split
from spacy_punctgen.features.templates import (DEFAULT_TEMPLATES, SURFACE_TEMPLATES, FeatureConfig,
                                               FeatureExtractor, node_contexts)
from spacy_punctgen.testing.toy import toy_sentences

NEW = ("clause_seq", "clause_start", "clause_end")
ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "assets" / "sample"


def _sentence(rows, final):
    """``rows``: (word, upos, xpos, head, deprel); no marks but ``final`` after the last word."""
    words, upos, xpos, heads, rels = (list(c) for c in zip(*rows))
    return PunctSentence(words=words, upos=upos, xpos=xpos, deprels=rels, heads=heads,
                         slots=[()] * len(words) + [tuple(final)])


def can_you():
    """can you see it ?"""
    return _sentence([("can", "AUX", "MD", 2, "aux"), ("you", "PRON", "PRP", 2, "nsubj"),
                      ("see", "VERB", "VB", -1, "root"), ("it", "PRON", "PRP", 2, "obj")], ["?"])


def you_can():
    """you can see it ."""
    return _sentence([("you", "PRON", "PRP", 2, "nsubj"), ("can", "AUX", "MD", 2, "aux"),
                      ("see", "VERB", "VB", -1, "root"), ("it", "PRON", "PRP", 2, "obj")], ["."])


def so_what():
    """so what do you think , right ?"""
    return _sentence([("so", "ADV", "RB", 4, "advmod"), ("what", "PRON", "WP", 4, "obj"),
                      ("do", "AUX", "VBP", 4, "aux"), ("you", "PRON", "PRP", 4, "nsubj"),
                      ("think", "VERB", "VB", -1, "root"), ("right", "INTJ", "UH", 4, "discourse")], ["?"])


def is_it_true():
    """is it true ?  (copula before the subject)"""
    return _sentence([("is", "AUX", "VBZ", 2, "cop"), ("it", "PRON", "PRP", 2, "nsubj"),
                      ("true", "ADJ", "JJ", -1, "root")], ["?"])


def _ctx(sentence, template, inventory=None):
    """Contexts of ``rel`` + ``template``; by default every word of ``sentence`` is known."""
    inventory = inventory or PunctInventory.from_sentences([sentence], min_count=1)
    return node_contexts(sentence, inventory, ["rel", template])


def test_not_default_and_not_surface():
    assert not set(NEW) & set(DEFAULT_TEMPLATES)
    assert not set(NEW) & SURFACE_TEMPLATES  # trees, tags and words only: restoration may use them
    assert FeatureConfig(templates=list(DEFAULT_TEMPLATES) + list(NEW)).templates[-3:] == list(NEW)


def test_clause_seq_shows_inversion():
    q = _ctx(can_you(), "clause_seq")
    assert q[2] == ["root", "root|seq=aux+nsubj+HEAD+obj", "root|inv=1"]
    assert q[0] == ["aux"] and q[3] == ["obj"]  # leaves: no clause
    s = _ctx(you_can(), "clause_seq")
    assert s[2] == ["root", "root|seq=nsubj+aux+HEAD+obj", "root|inv=0"]
    assert _ctx(is_it_true(), "clause_seq")[2] == ["root", "root|seq=cop+nsubj+HEAD", "root|inv=1"]
    w = _ctx(so_what(), "clause_seq")
    assert w[4] == ["root", "root|seq=advmod+obj+aux+nsubj+HEAD+discourse", "root|inv=1"]


def test_clause_seq_without_a_subject_has_no_inversion_context():
    come = _sentence([("come", "VERB", "VB", -1, "root"), ("here", "ADV", "RB", 0, "advmod")], ["."])
    assert _ctx(come, "clause_seq")[0] == ["root", "root|seq=HEAD+advmod"]


def test_clause_start_reads_the_opening_words_and_tags():
    q = _ctx(can_you(), "clause_start")
    assert q[2] == ["root", "root|fx=MD", "root|f2=can+you", "root|fx2=MD+PRP"]
    assert q[1] == ["nsubj", "nsubj|fx=PRP"]  # one word: its tag only (span_words has the word)
    w = _ctx(so_what(), "clause_start")
    assert w[4] == ["root", "root|fx=RB", "root|f2=so+what", "root|fx2=RB+WP", "root|wh=WP|at=1"]
    assert w[1] == ["obj", "obj|fx=WP", "obj|wh=WP|at=0"]
    assert _ctx(you_can(), "clause_start")[2] == ["root", "root|fx=PRP", "root|f2=you+can", "root|fx2=PRP+MD"]


def test_clause_start_wh_word_only_among_the_first_three():
    late = _sentence([("and", "CCONJ", "CC", 4, "cc"), ("then", "ADV", "RB", 4, "advmod"),
                      ("you", "PRON", "PRP", 4, "nsubj"), ("ask", "VERB", "VBP", 4, "aux"),
                      ("what", "PRON", "WP", -1, "root")], ["."])
    assert not any("|wh=" in c for c in _ctx(late, "clause_start")[4])


def test_clause_end_reads_a_tag_question():
    w = _ctx(so_what(), "clause_end")
    assert w[4] == ["root", "root|l2=think+right", "root|lx2=VB+UH"]
    assert w[5] == ["discourse"]  # one word: nothing (span_words has it)
    tag = _sentence([("it", "PRON", "PRP", 1, "nsubj"), ("is", "AUX", "VBZ", -1, "root"),
                     ("n't", "PART", "RB", 1, "advmod"), ("it", "PRON", "PRP", 1, "nsubj")], ["?"])
    assert _ctx(tag, "clause_end")[1] == ["root", "root|l2=n't+it", "root|lx2=RB+PRP"]


def test_rare_words_are_unk_but_their_tags_are_not():
    inv = PunctInventory.from_sentences(toy_sentences(), min_count=2)
    c = _ctx(can_you(), "clause_start", inv)
    assert c[2] == ["root", "root|fx=MD", "root|f2=UNK+UNK", "root|fx2=MD+PRP"]
    assert _ctx(can_you(), "clause_end", inv)[2] == ["root", "root|l2=UNK+UNK", "root|lx2=VB+PRP"]


def test_the_sample_gets_units_for_every_new_template():
    train, _, _ = load_split(SAMPLE / "en_sample-ud-train.conllu")
    inv = PunctInventory.from_sentences(train, min_count=2)
    ex = FeatureExtractor(inv, FeatureConfig(templates=list(DEFAULT_TEMPLATES) + list(NEW)))
    for s in train[:40]:
        ex.sentence_units(s)
    kinds = {ex.unit_string(u).split("|")[1].split("=")[0] for u in range(ex.n_units) if "|" in ex.unit_string(u)}
    assert {"seq", "inv", "fx", "f2", "fx2", "wh", "l2", "lx2"} <= kinds


def _ted_tsv(tmp_path):
    from spacy_punctgen.data.preprocess import preprocess_file

    sents, _ = preprocess_file(SAMPLE / "en_sample-ud-train.conllu")
    lines = []
    for s in sents[:80]:
        words = [w.lower() for w in s.words if any(c.isalnum() for c in w)]
        for i, w in enumerate(words):
            last = i == len(words) - 1
            lines.append(f"{w}\t{('QUESTION' if len(words) % 3 == 0 else 'PERIOD') if last else 'O'}")
    tsv = tmp_path / "ted.tsv"
    tsv.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tsv


def test_ted_punctgen_trains_with_the_clause_templates(tiny_parser, tmp_path):
    from spacy_punctgen.model.punct_model import PunctModel

    tsv = _ted_tsv(tmp_path)
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "ted_punctgen.py"), str(tsv), str(tmp_path / "m"),
                          "--trees", "stream", "--parser", str(tiny_parser(40, 2)), "--epochs", "1",
                          "--templates", "default,clause_seq,clause_start,clause_end"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    record = json.loads(out.stdout.strip().splitlines()[-1])
    assert record["templates"] == list(DEFAULT_TEMPLATES) + list(NEW)
    assert PunctModel.from_disk(tmp_path / "m").feature_config.templates == list(DEFAULT_TEMPLATES) + list(NEW)


def test_ted_punctgen_refuses_an_unknown_template_before_parsing(tmp_path):
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "ted_punctgen.py"), str(tmp_path / "absent.tsv"),
                          str(tmp_path / "m"), "--templates", "default,clause_shape"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.returncode != 0 and "E217" in out.stderr and "clause_shape" in out.stderr
    assert not (tmp_path / "m").exists()
