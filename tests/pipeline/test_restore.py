"""`restore` (plain text -> parsed -> punctuated text) and `evaluate-restore` (AED on a treebank)."""
import json
from pathlib import Path

import pytest
import spacy

from spacy_punctgen.cli import main
from spacy_punctgen.data.convert import convert_file
from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.decode.render import render_text
from spacy_punctgen.evaluation.metrics import edit_distance
from spacy_punctgen.evaluation.predictions import read_predictions
from spacy_punctgen.training.train import TrainConfig, train_model

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"
TEST = SAMPLE / "en_sample-ud-test.conllu"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    train, _ = preprocess_file(SAMPLE / "en_sample-ud-train.conllu")
    dev, _ = preprocess_file(SAMPLE / "en_sample-ud-dev.conllu")
    model, _ = train_model(train, dev, TrainConfig(psi_keep_bias=0.0, psi_lr_scale=1.0, epochs=2, sentences_per_epoch=0, direction="r2l",
                                                   progress=False, jobs=1))
    out = tmp_path_factory.mktemp("model")
    model.to_disk(out)
    return out


@pytest.fixture(scope="module")
def parser_dir(tiny_parser):
    """A tiny parser of depunctuated text (three passes over 60 of the sample's depunctuated trees)."""
    return tiny_parser(60, 3)


@pytest.mark.parametrize("words,spaces,slots,text", [
    (["He", "said", "hi"], [" ", " ", ""], [(), (), ("\u201c",), ("\u201d", ".")], "He said \u201chi\u201d."),
    (["我", "来", "了"], ["", "", ""], [(), ("，",), (), ("。",)], "我，来了。"),
    (["Bob", "my", "friend", "left"], [" ", " ", " ", ""], [(), ("(",), (), (")",), (".",)],
     "Bob (my friend) left."),
    (["etc", "ok"], [" ", ""], [(), ("ABBR.", ","), ("!",)], "etc., ok!"),
    (["Yes"], [""], [("\u00bf",), ("?",)], "\u00bfYes?"),
    (["a", "b"], [" ", ""], [(), (",", "\u201c"), ()], "a, \u201cb"),
])
def test_render_text_attaches_marks(words, spaces, slots, text):
    assert render_text(words, spaces, slots) == text


def test_render_text_checks_the_slot_count():
    with pytest.raises(ValueError, match="slots"):
        render_text(["a"], [""], [()])


def test_restore_cli_end_to_end(model_dir, parser_dir, tmp_path, capsys):
    gold, _ = preprocess_file(TEST)
    lines = [" ".join(s.words) for s in gold[:5]]
    src = tmp_path / "in.txt"
    src.write_text("\n".join(lines[:2]) + "\n\n" + "\n".join(lines[2:]) + "\n", encoding="utf-8")
    rc = main(["restore", str(src), "--parser", str(parser_dir), "--model", str(model_dir),
               "--n-samples", "100", "--json"])
    out = capsys.readouterr().out.strip().splitlines()
    assert rc == 0
    res = json.loads(out[-1])
    assert res["lines"] == 6 and res["sentences"] >= 5
    texts = res["texts"]
    assert texts[2] == ""
    for got, want in zip(texts[:2] + texts[3:], lines):
        # the input's characters survive in order; restoration only inserts marks (and maybe
        # a space before an opening mark)
        assert len(got) >= len(want)
        it = iter(got)
        assert all(ch in it for ch in want.replace(" ", "")), (got, want)
    # file output, and the method flag
    dest = tmp_path / "out.txt"
    rc = main(["restore", str(src), "--parser", str(parser_dir), "--model", str(model_dir),
               "--method", "marginal", "--output", str(dest), "--json"])
    assert rc == 0
    assert len(dest.read_text(encoding="utf-8").splitlines()) == 6
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["method"] == "marginal"


def test_restore_cli_errors(model_dir, tmp_path, capsys):
    rc = main(["restore", str(tmp_path / "missing.txt"), "--parser", "blank_no_such_pipeline",
               "--model", str(model_dir), "--json"])
    assert rc == 1
    err = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["error"]
    assert "no_such_pipeline" in err or "missing.txt" in err
    blank = tmp_path / "blank"
    spacy.blank("en").to_disk(blank)
    (tmp_path / "in.txt").write_text("a b\n", encoding="utf-8")
    rc = main(["restore", str(tmp_path / "in.txt"), "--parser", str(blank), "--model", str(model_dir), "--json"])
    assert rc == 1
    assert "no dependency parser" in json.loads(capsys.readouterr().out.strip().splitlines()[-1])["error"]


def test_evaluate_restore_gold_and_parsed(model_dir, tmp_path, capsys):
    preds = tmp_path / "pred.jsonl"
    rc = main(["evaluate-restore", str(model_dir), str(TEST), "--n-samples", "100", "--predictions", str(preds),
               "--json"])
    assert rc == 0
    res = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    gold, _ = preprocess_file(TEST)
    assert res["n_sentences"] == len(gold) and res["trees"] == "gold"
    recs = read_predictions(preds)
    assert len(recs) == len(gold)
    edits = sum(edit_distance(g, p) for s, r in zip(gold, recs) for g, p in zip(s.slots, r["slots"]))
    assert res["edits"] == edits and res["aed"] == pytest.approx(edits / res["n_slots"])
    assert all(len(r["slot_probs"]) == len(r["slots"]) for r in recs)
    assert 0 <= res["comma"]["f1"] <= 1
    # the gold trees written as a "parsed" depunctuated file give the same result and LAS 1
    parsed = tmp_path / "parsed.conllu"
    convert_file(TEST, parsed, depunct=True)
    rc = main(["evaluate-restore", str(model_dir), str(TEST), "--parsed", str(parsed), "--n-samples", "100",
               "--json"])
    res2 = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert rc == 0 and res2["aed"] == res["aed"] and res2["parser"]["las"] == 1.0


def test_evaluate_restore_misaligned_parse_is_a_clear_error(model_dir, tmp_path, capsys):
    parsed = tmp_path / "parsed.conllu"
    convert_file(TEST, parsed, depunct=True)
    blocks = parsed.read_text(encoding="utf-8").strip().split("\n\n")
    short = tmp_path / "short.conllu"
    text = "\n\n".join("\n".join(l for l in b.splitlines() if not l.startswith("# sent_id")) for b in blocks[1:])
    short.write_text(text + "\n\n", encoding="utf-8")
    rc = main(["evaluate-restore", str(model_dir), str(TEST), "--parsed", str(short), "--json"])
    assert rc == 1
    assert "cannot align" in json.loads(capsys.readouterr().out.strip().splitlines()[-1])["error"]
