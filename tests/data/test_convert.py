"""The ``convert`` command: normal and depunctuated trees as CoNLL-U for spaCy parser training."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from spacy_punctgen import cli
from spacy_punctgen.data.conllu import read_conllu
from spacy_punctgen.data.convert import convert_file, select_fraction, surface_text
from spacy_punctgen.data.preprocess import preprocess_file, preprocess_sentences

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures"
EN = FIX / "en_fixture-ud-train.conllu"
ES = FIX / "es_fixture-ud-test.conllu"
SAMPLE = ROOT / "assets" / "sample"
SAMPLE_TRAIN = SAMPLE / "en_sample-ud-train.conllu"
SAMPLE_DEV = SAMPLE / "en_sample-ud-dev.conllu"


def run_json(capsys, *args):
    code = cli.main(["convert", *map(str, args), "--json"])
    out = capsys.readouterr().out.strip().splitlines()
    return code, json.loads(out[-1])


def comments(path: Path, key: str):
    prefix = f"# {key} = "
    return [ln[len(prefix):].rstrip("\n") for ln in path.open(encoding="utf-8") if ln.startswith(prefix)]


def token_lines(path: Path):
    return [ln.rstrip("\n").split("\t") for ln in path.open(encoding="utf-8") if ln.strip() and not ln.startswith("#")]


def test_depunct_fixture_counts_and_trees(tmp_path, capsys):
    out = tmp_path / "sub" / "dir" / "train.conllu"  # parent folders are created
    code, data = run_json(capsys, EN, out, "--depunct")
    assert code == 0
    assert data["mode"] == "depunct" and data["output"] == str(out)
    assert (data["sentences_in"], data["selected"], data["written"]) == (7, 7, 5)
    assert (data["omitted_nonleaf"], data["omitted_empty"], data["omitted"], data["nonprojective"]) == (1, 1, 2, 1)
    assert data["quote_xpos"] is True  # EWT-style `` '' detected on the input file

    expected, _ = preprocess_file(EN)
    back = read_conllu(out)
    assert len(back) == len(expected) == 5
    for ud, ps in zip(back, expected):
        assert ud.sent_id == ps.sent_id
        assert ud.forms == ps.words
        assert ud.upos == ps.upos and ud.xpos == ps.xpos and ud.deprels == ps.deprels
        assert [h - 1 for h in ud.heads] == ps.heads  # 0 = root  <->  -1 = root
        assert ud.text == " ".join(ps.words)
        assert all(ud.space_after)  # unpunctuated text: words separated by spaces
    first = back[0]
    assert first.forms == ["We", "sell", "apples", "pears", "etc", "at", "Acme", "Inc"]  # ABBR. split off
    assert first.deprels[1] == "root" and first.heads[1] == 0
    slots = [json.loads(s) for s in comments(out, "punct_slots")]
    assert slots == [[list(x) for x in ps.slots] for ps in expected]
    assert slots[-1] == [[], [], ["\u201c"], [".", "\u201d"]]  # He said “no.”
    # no PUNCT token survives, no MWT range or empty node is written
    rows = token_lines(out)
    assert all(r[3] != "PUNCT" and r[0].isdigit() and len(r) == 10 for r in rows)
    assert not list(tmp_path.rglob(".*.tmp*"))


def test_depunct_nonprojective_sentence_is_projectivised(tmp_path):
    out = tmp_path / "d.conllu"
    convert_file(EN, out, depunct=True)
    sent = {s.sent_id: s for s in read_conllu(out)}["en-6-nonprojective"]
    # "issue" (7) hangs from "hearing" (2) in UD, crossing "scheduled"; the model's tree lifts it
    assert sent.heads[6] == 4
    original = {s.sent_id: s for s in read_conllu(EN)}["en-6-nonprojective"]
    assert original.heads[6] == 2


def test_depunct_output_is_a_fixed_point_of_preprocessing(tmp_path):
    """Depunctuating the depunctuated sample again changes nothing and omits nothing."""
    out = tmp_path / "train.conllu"
    info = convert_file(SAMPLE_TRAIN, out, depunct=True)
    first, _ = preprocess_file(SAMPLE_TRAIN)
    again, stats = preprocess_sentences(read_conllu(out))
    assert info["written"] == len(first) == len(again) == stats.kept
    assert stats.omitted_nonleaf == stats.omitted_empty == stats.nonprojective == stats.removed_tokens == 0
    for a, b in zip(first, again):
        assert (a.words, a.heads, a.deprels, a.upos) == (b.words, b.heads, b.deprels, b.upos)
        assert all(slot == () for slot in b.slots)


def test_punct_fixture_basic_trees(tmp_path, capsys):
    out = tmp_path / "p.conllu"
    code, data = run_json(capsys, EN, out)
    assert code == 0 and data["mode"] == "punct"
    assert (data["sentences_in"], data["written"], data["omitted"]) == (7, 7, 0)
    rows = token_lines(out)
    assert all(r[0].isdigit() for r in rows)  # no "4-5" range, no "5.1" empty node
    assert all(r[2] == r[5] == r[8] == "_" for r in rows)  # LEMMA, FEATS, DEPS
    orig, back = read_conllu(EN), read_conllu(out)
    assert len(orig) == len(back)
    for o, b in zip(orig, back):
        assert (o.sent_id, o.forms, o.upos, o.xpos, o.heads, o.deprels) == (
            b.sent_id, b.forms, b.upos, b.xpos, b.heads, b.deprels)
        assert o.space_after[:-1] == b.space_after[:-1]
        assert b.text == surface_text(b.forms, b.space_after) == o.text
    mwt = {s.sent_id: s for s in back}["en-2-mwt-quote"]
    assert mwt.forms == ["(", '"', "I", "ca", "n't", "."] and mwt.text == '("I can\'t.'


def test_spanish_fixture_both_modes(tmp_path):
    p, d = tmp_path / "p.conllu", tmp_path / "d.conllu"
    ip = convert_file(ES, p)
    idp = convert_file(ES, d, depunct=True)
    assert ip["written"] == 5 and idp["written"] == 5 and idp["quote_xpos"] is False
    back = read_conllu(p)
    assert back[0].xpos[0] == "_" and back[3].sent_id is None
    assert read_conllu(d)[0].forms == ["Dijo", "sí", "ayer"]
    assert json.loads(comments(d, "punct_slots")[0]) == [[], ["\u201c"], ["\u201d"], ["."]]


def test_sample_text_comments_match_the_words(tmp_path):
    out = tmp_path / "p.conllu"
    convert_file(SAMPLE_TRAIN, out)
    orig = read_conllu(SAMPLE_TRAIN)
    back = read_conllu(out)
    assert len(back) == len(orig) == 170
    assert sum(b.text == o.text for o, b in zip(orig, back)) == 170


def test_fraction_is_reproducible_and_shared_between_modes(tmp_path):
    a, b, c, d = (tmp_path / f"{x}.conllu" for x in "abcd")
    ia = convert_file(SAMPLE_TRAIN, a, fraction=0.25, seed=0)
    convert_file(SAMPLE_TRAIN, b, fraction=0.25, seed=0)
    convert_file(SAMPLE_TRAIN, c, fraction=0.25, seed=1)
    idp = convert_file(SAMPLE_TRAIN, d, fraction=0.25, seed=0, depunct=True)
    assert ia["selected"] == ia["written"] == round(0.25 * 170) == 42
    assert a.read_bytes() == b.read_bytes()
    ids = lambda p: [s.sent_id for s in read_conllu(p)]  # noqa: E731
    assert ids(a) != ids(c)
    all_ids = [s.sent_id for s in read_conllu(SAMPLE_TRAIN)]
    assert ids(a) == [i for i in all_ids if i in set(ids(a))]  # original order kept
    assert idp["selected"] == 42 and set(ids(d)) <= set(ids(a))  # same sentences, minus omitted ones
    assert len(ids(d)) == idp["written"] == 42 - idp["omitted"]


def test_select_fraction_edges():
    assert select_fraction(10, 1.0, 3) == list(range(10))
    assert select_fraction(0, 0.5, 0) == []
    assert len(select_fraction(3, 0.01, 0)) == 1  # never empty
    for bad in (0.0, -0.5, 1.5):
        with pytest.raises(ValueError):
            select_fraction(10, bad, 0)


def test_cli_errors(tmp_path, capsys):
    code, data = run_json(capsys, SAMPLE_TRAIN, tmp_path / "x.conllu", "--fraction", "0")
    assert code == 1 and "--fraction" in data["error"]
    code, data = run_json(capsys, SAMPLE, tmp_path / "x.conllu")
    assert code == 1 and "--split" in data["error"]
    code, data = run_json(capsys, FIX / "missing.conllu", tmp_path / "x.conllu")
    assert code == 1 and "missing.conllu" in data["error"]
    bad = FIX / "malformed" / "bad_head_range-ud-test.conllu"
    code, data = run_json(capsys, bad, tmp_path / "x.conllu", "--depunct")
    assert code == 1 and f"{bad}:10:" in data["error"]
    assert not (tmp_path / "x.conllu").exists()


def test_folder_input_with_split(tmp_path, capsys):
    code, data = run_json(capsys, SAMPLE, tmp_path / "dev.conllu", "--split", "dev", "--depunct",
                          "--no-slots-comment")
    assert code == 0 and data["input"] == str(SAMPLE_DEV)
    assert data["sentences_in"] == 35 and data["written"] == 34 and data["omitted_empty"] == 1
    assert comments(tmp_path / "dev.conllu", "punct_slots") == []


def test_spacy_convert_reads_both_outputs(tmp_path):
    """`python -m spacy convert --converter conllu` accepts both files, with the right trees."""
    from spacy.tokens import DocBin
    from spacy.vocab import Vocab

    src = tmp_path / "conllu"
    convert_file(SAMPLE_DEV, src / "punct.conllu")
    convert_file(SAMPLE_DEV, src / "depunct.conllu", depunct=True)
    out = tmp_path / "spacy"
    out.mkdir()
    proc = subprocess.run([sys.executable, "-m", "spacy", "convert", str(src), str(out), "--converter", "conllu",
                           "--n-sents", "1"], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    vocab = Vocab()
    for name in ("punct", "depunct"):
        sents = read_conllu(src / f"{name}.conllu")
        docs = list(DocBin().from_disk(out / f"{name}.spacy").get_docs(vocab))
        assert len(docs) == len(sents) == (35 if name == "punct" else 34)
        for doc, ud in zip(docs, sents):
            assert [t.text for t in doc] == ud.forms
            assert [t.pos_ for t in doc] == ud.upos
            assert [0 if t.head.i == t.i else t.head.i + 1 for t in doc] == ud.heads
            assert [t.dep_ for t in doc] == ["ROOT" if d == "root" else d for d in ud.deprels]
            assert doc.text.strip() == ud.text


def test_dev_as_train_protocol_splits_dev_into_disjoint_parts(tmp_path, capsys):
    """Treebanks without train: train = UD dev minus a seeded held-out share, dev = that share."""
    outs = {}
    for split in ("train", "dev", "test"):
        out = tmp_path / f"{split}.conllu"
        code, data = run_json(capsys, SAMPLE, out, "--split", split, "--protocol", "dev-as-train",
                              "--heldout", "0.2", "--seed", "3")
        assert code == 0 and data["protocol"] == "dev-as-train" and data["split"] == split
        outs[split] = data
    assert outs["train"]["input"] == outs["dev"]["input"] == str(SAMPLE_DEV)
    assert outs["test"]["input"].endswith("en_sample-ud-test.conllu") and outs["test"]["part"] == "all"
    assert (outs["train"]["part"], outs["dev"]["part"]) == ("rest", "heldout")
    assert outs["dev"]["selected"] == round(0.2 * 35) == 7 and outs["train"]["selected"] == 28
    ids = {k: [s.sent_id for s in read_conllu(tmp_path / f"{k}.conllu")] for k in ("train", "dev")}
    assert not set(ids["train"]) & set(ids["dev"])
    assert sorted(ids["train"] + ids["dev"]) == sorted(s.sent_id for s in read_conllu(SAMPLE_DEV))
    # the same parts with --depunct (minus omitted sentences), and again with the same seed
    d = tmp_path / "dev_depunct.conllu"
    run_json(capsys, SAMPLE, d, "--split", "dev", "--protocol", "dev-as-train", "--heldout", "0.2", "--seed", "3",
             "--depunct")
    assert set(s.sent_id for s in read_conllu(d)) <= set(ids["dev"])
    again = tmp_path / "again.conllu"
    run_json(capsys, SAMPLE, again, "--split", "dev", "--protocol", "dev-as-train", "--heldout", "0.2", "--seed", "3")
    assert again.read_bytes() == (tmp_path / "dev.conllu").read_bytes()
    other = tmp_path / "other.conllu"
    run_json(capsys, SAMPLE, other, "--split", "dev", "--protocol", "dev-as-train", "--heldout", "0.2", "--seed", "4")
    assert [s.sent_id for s in read_conllu(other)] != ids["dev"]


def test_dev_as_train_fraction_applies_within_the_part(tmp_path):
    info = convert_file(SAMPLE_DEV, tmp_path / "t.conllu", part="rest", heldout=0.2, fraction=0.5, seed=3)
    assert info["selected"] == round(0.5 * 28) == 14 and info["part"] == "rest"


def test_protocol_errors(tmp_path, capsys):
    code, data = run_json(capsys, SAMPLE_DEV, tmp_path / "x.conllu", "--split", "train", "--protocol", "dev-as-train")
    assert code == 1 and "UD folder" in data["error"]
    code, data = run_json(capsys, SAMPLE, tmp_path / "x.conllu", "--split", "dev", "--protocol", "dev-as-train",
                          "--heldout", "1.0")
    assert code == 1 and "--heldout" in data["error"]
    code, data = run_json(capsys, SAMPLE, tmp_path / "x.conllu", "--protocol", "dev-as-train")
    assert code == 1 and "--split" in data["error"]
    assert not (tmp_path / "x.conllu").exists()


def _ids(path: Path):
    return [s.sent_id for s in read_conllu(path)]


def test_cv_protocol_cuts_the_pooled_splits_into_blocks(tmp_path, capsys):
    """--protocol cv: train+dev+test pooled; test = block J, dev = block J+1, train = the rest."""
    pooled = [s.sent_id for name in ("train", "dev", "test")
              for s in read_conllu(SAMPLE / f"en_sample-ud-{name}.conllu")]
    assert len(set(pooled)) == len(pooled)
    k = 4
    tests, devs = [], []
    for fold in range(k):
        parts = {}
        for split in ("train", "dev", "test"):
            out = tmp_path / f"f{fold}" / f"{split}.conllu"
            code, data = run_json(capsys, SAMPLE, out, "--split", split, "--protocol", "cv",
                                  "--cv-folds", k, "--cv-fold", fold)
            assert code == 0, data
            assert data["protocol"] == "cv" and (data["cv_folds"], data["cv_fold"]) == (k, fold)
            assert data["sentences_in"] == len(pooled) and len(data["input"]) == 3
            parts[split] = _ids(out)
        assert not (set(parts["train"]) & set(parts["dev"]) or set(parts["train"]) & set(parts["test"])
                    or set(parts["dev"]) & set(parts["test"]))
        assert sorted(parts["train"] + parts["dev"] + parts["test"]) == sorted(pooled)
        # contiguous blocks, in the pooled order
        start = pooled.index(parts["test"][0])
        assert parts["test"] == pooled[start:start + len(parts["test"])]
        assert len(parts["test"]) in (len(pooled) // k, len(pooled) // k + 1)
        tests.append(parts["test"])
        devs.append(parts["dev"])
    assert [i for t in tests for i in t] == pooled  # every sentence tested exactly once
    assert devs == tests[1:] + tests[:1]  # dev = the next fold's test block
    # --depunct keeps the same blocks (minus omitted sentences)
    d = tmp_path / "depunct_test.conllu"
    code, _ = run_json(capsys, SAMPLE, d, "--split", "test", "--protocol", "cv", "--cv-folds", k,
                       "--cv-fold", 1, "--depunct")
    assert code == 0 and set(_ids(d)) <= set(tests[1])


def test_cv_protocol_errors(tmp_path, capsys):
    x = tmp_path / "x.conllu"
    for args, words in ((["--cv-folds", 2], "--cv-folds"), (["--cv-fold", 10], "--cv-fold"),
                        (["--cv-fold", -1], "--cv-fold"), (["--cv-folds", 1000], "cannot make")):
        code, data = run_json(capsys, SAMPLE, x, "--split", "dev", "--protocol", "cv", *args)
        assert code == 1 and words in data["error"], data
    code, data = run_json(capsys, SAMPLE_DEV, x, "--split", "dev", "--protocol", "cv")
    assert code == 1 and "UD folder" in data["error"]
    code, data = run_json(capsys, SAMPLE, x, "--protocol", "cv")
    assert code == 1 and "--split" in data["error"]
    empty = tmp_path / "empty_ud"
    empty.mkdir()
    code, data = run_json(capsys, empty, x, "--split", "dev", "--protocol", "cv")
    assert code == 1 and "pool" in data["error"]
    assert not x.exists()
