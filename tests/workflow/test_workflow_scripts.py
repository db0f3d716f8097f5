"""The workflow's helper scripts: parse_conllu, evaluate_parser, save_metrics --merge, results_table, plot_aed_las."""
import json
import sys
from pathlib import Path

import pytest

from spacy_punctgen.data.conllu import read_conllu
from spacy_punctgen.data.convert import convert_file
from spacy_punctgen.evaluation.predictions import record, write_predictions
from spacy_punctgen.data.preprocess import preprocess_file

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "assets" / "sample"


@pytest.fixture(scope="module")
def tiny_parser(tmp_path_factory):
    """configs/parser.cfg initialised on the sample's depunctuated dev trees (a few updates; untrained quality)."""
    import spacy
    from spacy.training import Example
    from spacy.util import load_config, load_model_from_config

    tmp = tmp_path_factory.mktemp("parser")
    dev = tmp / "dev.conllu"
    convert_file(SAMPLE / "en_sample-ud-dev.conllu", dev, depunct=True)
    nlp = load_model_from_config(load_config(ROOT / "configs" / "parser.cfg"), auto_fill=True)
    examples = []
    for ud in read_conllu(dev):
        pred = spacy.tokens.Doc(nlp.vocab, words=ud.forms)
        heads = [h - 1 if h else i for i, h in enumerate(ud.heads)]
        deps = ["ROOT" if d == "root" else d for d in ud.deprels]
        examples.append(Example.from_dict(pred, {"words": ud.forms, "heads": heads, "deps": deps,
                                                 "tags": ud.xpos, "pos": ud.upos, "morphs": [f"POS={u}" for u in ud.upos]}))
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(2):
        nlp.update(examples, sgd=optimizer)
    model = tmp / "model"
    nlp.to_disk(model)
    from spacy.tokens import DocBin

    DocBin(docs=[e.reference for e in examples]).to_disk(tmp / "dev.spacy")
    return {"model": model, "dev": dev, "dev_spacy": tmp / "dev.spacy"}


def test_parse_conllu_one_tree_per_sentence_comments_kept(tiny_parser, tmp_path, load_script):
    pc = load_script("parse_conllu")
    out = tmp_path / "parsed.conllu"
    info = pc.parse_file(str(tiny_parser["model"]), tiny_parser["dev"], out)
    gold, parsed = read_conllu(tiny_parser["dev"]), read_conllu(out)  # read_conllu checks the trees
    assert info["n_sentences"] == len(gold) == len(parsed) == 34
    for g, p in zip(gold, parsed):
        assert (g.sent_id, g.forms) == (p.sent_id, p.forms)
        assert sum(h == 0 for h in p.heads) == 1 and p.deprels[p.heads.index(0)] == "root"
    comments = lambda f: [ln for ln in f.read_text().splitlines() if ln.startswith("#")]  # noqa: E731
    assert comments(out) == comments(tiny_parser["dev"])  # sent_id, text, punct_slots
    # the parsed file is what evaluate-restore / baselines read: same depunctuated words
    assert [s.words for s in preprocess_file(out)[0]] == [s.words for s in preprocess_file(tiny_parser["dev"])[0]]


def test_parse_conllu_cli_error(tmp_path, capsys, load_script):
    pc = load_script("parse_conllu")
    assert pc.main([str(tmp_path / "nomodel"), str(tmp_path / "missing.conllu"), str(tmp_path / "o.conllu")]) == 1
    assert "parse_conllu:" in capsys.readouterr().err


def test_evaluate_parser_writes_scores_and_protocol(tiny_parser, tmp_path, load_script):
    ep = load_script("evaluate_parser")
    out = tmp_path / "m" / "parser_depunct.json"
    code = ep.main([str(tiny_parser["model"]), str(tiny_parser["dev_spacy"]), str(out), "--train-data",
                    str(tiny_parser["dev_spacy"]), "--set", "protocol=dev-as-train", "--set", "train_fraction=0.5"])
    assert code == 0
    data = json.loads(out.read_text())
    assert 0.0 <= data["dep_las"] <= data["dep_uas"] <= 1.0
    assert data["protocol"] == "dev-as-train" and data["train_fraction"] == 0.5
    assert data["n_test_docs"] == data["n_train_docs"] == 34
    assert ep.main([str(tiny_parser["model"]), str(tmp_path / "none.spacy"), str(tmp_path / "x.json")]) == 1


def test_save_metrics_merge_without_command(tmp_path, load_script):
    sm = load_script("save_metrics")
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({"test": {"aed": 0.25, "comma": {"f1": 0.5}}}))
    parser = tmp_path / "parser.json"
    parser.write_text(json.dumps({"dep_las": 0.8, "dep_uas": 0.85}))
    out = tmp_path / "out.json"
    code = sm.main([str(out), "--parser", str(parser), "--merge", f"aed_gold={gold}:test.aed",
                    "--merge", f"comma_f1_gold={gold}:test.comma.f1", "--merge", f"perplexity_per_slot={gold}:test.ppl?",
                    "--require", "aed_gold,perplexity_per_slot", "--set", "system=trivial"])
    assert code == 0
    data = json.loads(out.read_text())
    assert (data["aed_gold"], data["comma_f1_gold"], data["parser_las"], data["system"]) == (0.25, 0.5, 0.8, "trivial")
    assert data["perplexity_per_slot"] is None and data["missing"] == ["perplexity_per_slot"]
    assert sm.main([str(out), "--merge", f"x={gold}:test.nope"]) == 1  # a required field that is absent


def _metrics(tmp_path, name, aed, preds, **extra):
    folder = tmp_path / "metrics" / "en_x"
    folder.mkdir(parents=True, exist_ok=True)
    data = {"system": name, "aed_gold": aed, "aed_parsed": aed + 0.01, "comma_f1_gold": 0.5,
            "perplexity_per_slot": extra.get("ppl"), "parser_las": 0.8, "protocol": "standard",
            "predictions_gold": str(preds), "predictions_parsed": None}
    (folder / f"{name}.json").write_text(json.dumps(data))


def test_results_table_and_permutation_test(tmp_path, load_script):
    rt = load_script("results_table")
    test = tmp_path / "corpus" / "en_x" / "punct" / "test.conllu"
    convert_file(SAMPLE / "en_sample-ud-test.conllu", test)
    gold = preprocess_file(test)[0]
    good = tmp_path / "good.jsonl"
    write_predictions(good, (record(s.slots, s.sent_id) for s in gold))  # perfect restoration
    bad = tmp_path / "bad.jsonl"
    write_predictions(bad, (record([()] * len(s.slots), s.sent_id) for s in gold))  # no punctuation at all
    _metrics(tmp_path, "punctgen", 0.0, good, ppl=1.2)
    _metrics(tmp_path, "trivial", 0.3, bad)
    (tmp_path / "metrics" / "en_x" / "parser_depunct.json").write_text(json.dumps({"dep_las": 0.8}))
    out = tmp_path / "table.md"
    assert rt.main(["--metrics", str(tmp_path / "metrics"), "--corpus", str(tmp_path / "corpus"),
                    "--output", str(out), "--permutations", "200"]) == 0
    text = out.read_text()
    rows = [ln for ln in text.splitlines() if ln.startswith("| en_x")]
    assert rows == ["| en_x | punctgen | standard | 1.200 | 0.000 | 0.010 | 0.500 | 0.800 |",
                    "| en_x | trivial | standard | – | 0.300 | 0.310 | 0.500 | 0.800 |"]
    sig = [ln for ln in text.splitlines() if ln.startswith("- en_x, gold trees")]
    assert len(sig) == 1 and "vs trivial" in sig[0]
    assert float(sig[0].rsplit("p = ", 1)[1]) == pytest.approx(1 / 201, rel=1e-3)  # every sentence favours punctgen


def test_plot_aed_las_points(tmp_path, load_script):
    pl = load_script("plot_aed_las")
    folder = tmp_path / "en_x"
    (folder / "restore").mkdir(parents=True)
    for suffix, las, aed, frac in (("", 0.8, 0.1, 1.0), ("_frac0.1", 0.6, 0.2, 0.1)):
        (folder / f"parser_depunct{suffix}.json").write_text(json.dumps({"dep_las": las, "train_fraction": frac}))
        (folder / "restore" / f"punctgen_parsed{suffix}.json").write_text(json.dumps({"test": "t.conllu", "aed": aed}))
    (folder / "parser_depunct_frac0.5.json").write_text(json.dumps({"dep_las": 0.7, "train_fraction": 0.5}))
    (folder / "restore" / "punctgen_gold.json").write_text(json.dumps({"aed": 0.05}))
    s = pl.points(tmp_path, "en_x")
    assert [(p["fraction"], p["las"], p["aed"]) for p in s["points"]] == [(0.1, 0.6, 0.2), (1.0, 0.8, 0.1)]
    assert s["aed_gold"] == 0.05 and len(s["skipped"]) == 1
    pytest.importorskip("matplotlib")
    png = tmp_path / "fig.png"
    assert pl.main([str(png), "en_x", "--metrics", str(tmp_path)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
