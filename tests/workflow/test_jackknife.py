"""Training on jackknifed parses: scripts/folds.py, scripts/jackknife.py and ``train --parsed-train``."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from spacy_punctgen.cli import main
from spacy_punctgen.data.conllu import read_conllu
from spacy_punctgen.data.convert import convert_file
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.training.train import with_parsed_trees

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "assets" / "sample"
TRAIN = SAMPLE / "en_sample-ud-train.conllu"
DEV = SAMPLE / "en_sample-ud-dev.conllu"


def _chain_trees(src: Path, dest: Path) -> None:
    """A different, valid tree for every sentence: word i+1 heads word i, the last word is the root."""
    out, block = [], []

    def flush():
        for cols in block:
            i = int(cols[0])
            cols[6], cols[7] = ("0", "root") if i == len(block) else (str(i + 1), "dep")
            out.append("\t".join(cols))
        block.clear()

    for line in src.read_text(encoding="utf-8").splitlines():
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            block.append(cols)
            continue
        flush()
        out.append(line)
    flush()
    dest.write_text("\n".join(out) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def depunct(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("jk")
    files = {}
    for split, src in (("train", TRAIN), ("dev", DEV)):
        files[split] = tmp / f"{split}.conllu"
        convert_file(src, files[split], depunct=True)
        files[f"{split}_chain"] = tmp / f"{split}.chain.conllu"
        _chain_trees(files[split], files[f"{split}_chain"])
    return files


def test_folds_split_then_merge_gives_back_the_input(depunct, tmp_path, load_script):
    folds = load_script("folds")
    info = folds.split(depunct["train"], tmp_path, 3)
    n = len(read_conllu(depunct["train"]))
    assert info["n_sentences"] == n and sum(info["heldout_sizes"]) == n
    for j in range(3):
        held, rest = read_conllu(tmp_path / f"heldout.fold{j}.conllu"), read_conllu(tmp_path / f"train.fold{j}.conllu")
        assert len(held) + len(rest) == n
        assert not {s.sent_id for s in held} & {s.sent_id for s in rest}  # a fold parser never sees its fold
        shutil.copy(tmp_path / f"heldout.fold{j}.conllu", tmp_path / f"heldout.fold{j}.parsed.conllu")
    folds.merge(depunct["train"], tmp_path, tmp_path / "merged.conllu", 3)
    assert (tmp_path / "merged.conllu").read_text() == depunct["train"].read_text()


def test_folds_merge_refuses_changed_words_and_missing_sentences(depunct, tmp_path, capsys, load_script):
    folds = load_script("folds")
    folds.split(depunct["train"], tmp_path, 2)
    shutil.copy(tmp_path / "heldout.fold0.conllu", tmp_path / "heldout.fold0.parsed.conllu")
    text = (tmp_path / "heldout.fold1.conllu").read_text(encoding="utf-8")
    first = [ln for ln in text.splitlines() if ln.split("\t")[0] == "1"][0]
    cols = first.split("\t")
    (tmp_path / "heldout.fold1.parsed.conllu").write_text(
        text.replace(first, "\t".join([cols[0], cols[1] + "X"] + cols[2:]), 1), encoding="utf-8")
    with pytest.raises(ValueError, match=r"heldout.fold1.parsed.conllu: sentence 1 has words"):
        folds.merge(depunct["train"], tmp_path, tmp_path / "m.conllu", 2)
    blocks = text.strip().split("\n\n")
    (tmp_path / "heldout.fold1.parsed.conllu").write_text("\n\n".join(blocks[:-1]) + "\n\n", encoding="utf-8")
    assert folds.main(["merge", str(depunct["train"]), str(tmp_path), str(tmp_path / "m.conllu"), "--k", "2"]) == 1
    assert "but fold 1 of" in capsys.readouterr().err
    assert folds.main(["split", str(depunct["train"]), str(tmp_path), "--k", "1"]) == 1
    assert "--k must be at least 2" in capsys.readouterr().err


def test_with_parsed_trees_takes_the_tree_and_keeps_the_punctuation(depunct):
    gold = preprocess_file(TRAIN)[0]
    parsed = with_parsed_trees(gold, depunct["train_chain"])
    assert len(parsed) == len(gold)
    for g, p in zip(gold, parsed):
        assert (p.words, p.slots, p.sent_id) == (g.words, g.slots, g.sent_id)
        assert p.heads[:-1] == list(range(1, len(p.words)))  # 0-based: word i+1 heads word i
        assert p.deprels[-1] == "root" and set(p.deprels[:-1]) <= {"dep"}
    assert any(g.heads != p.heads for g, p in zip(gold, parsed))


def test_with_parsed_trees_refuses_a_parse_of_other_sentences(depunct):
    gold = preprocess_file(TRAIN)[0]
    with pytest.raises(ValueError, match="dev.chain.conllu"):
        with_parsed_trees(gold, depunct["dev_chain"])


def test_train_on_parsed_trees_cli(depunct, tmp_path, capsys):
    base = ["train", str(TRAIN), str(DEV), "--epochs", "1", "--sentences-per-epoch", "0", "--direction", "l2r",
            "--quiet", "--json"]
    assert main(base + ["--output", str(tmp_path / "gold")]) == 0
    gold = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert main(base + ["--output", str(tmp_path / "parsed"), "--parsed-train", str(depunct["train_chain"]),
                        "--keep-gold", "--parsed-dev", str(depunct["dev_chain"])]) == 0
    parsed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert parsed["n_train"] == 2 * gold["n_train"]  # gold trees and parsed trees
    model = PunctModel.from_disk(tmp_path / "parsed")
    assert model.meta["parsed_train"] == str(depunct["train_chain"]) and model.meta["keep_gold"] is True
    assert model.meta["parsed_dev"] == str(depunct["dev_chain"])
    # dev perplexity was measured on the chain trees, so it differs from the gold-tree run's
    assert parsed["dev_perplexity_per_slot"] != gold["dev_perplexity_per_slot"]
    assert main(base + ["--output", str(tmp_path / "x"), "--keep-gold"]) == 1
    assert "--keep-gold needs --parsed-train" in capsys.readouterr().err


def test_train_on_several_parsed_files(depunct, tmp_path, capsys):
    """Each --parsed-train file (e.g. trees drawn from the fold parsers) adds every sentence once more."""
    base = ["train", str(TRAIN), str(DEV), "--epochs", "1", "--sentences-per-epoch", "0", "--direction", "l2r",
            "--quiet", "--json"]
    chain = str(depunct["train_chain"])
    assert main(base + ["--output", str(tmp_path / "one"), "--parsed-train", chain]) == 0
    one = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert main(base + ["--output", str(tmp_path / "two"), "--parsed-train", chain, chain, "--keep-gold"]) == 0
    two = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert two["n_train"] == 3 * one["n_train"]
    assert PunctModel.from_disk(tmp_path / "two").meta["parsed_train"] == [chain, chain]
    assert PunctModel.from_disk(tmp_path / "one").meta["parsed_train"] == chain
    # a file of other sentences is refused, whichever place it has in the list
    assert main(base + ["--output", str(tmp_path / "bad"), "--parsed-train", chain, str(depunct["dev_chain"])]) == 1
    assert "dev.chain.conllu" in capsys.readouterr().err


def test_jackknife_script_on_the_sample(tmp_path, monkeypatch, load_script):
    """Two fold parsers (a few steps each) parse the folds they did not see; a rerun skips them."""
    # `python -m spacy train` puts the working directory first on sys.path and loads our
    # entry point: from the repository root that is the source tree, unbuilt where the
    # package was installed (CI); run it from elsewhere
    monkeypatch.chdir(tmp_path)
    jk = load_script("jackknife")
    corpus = tmp_path / "depunct"
    corpus.mkdir()
    convert_file(TRAIN, corpus / "train.conllu", depunct=True)
    convert_file(DEV, corpus / "dev.conllu", depunct=True)
    subprocess.run([sys.executable, "-m", "spacy", "convert", str(corpus / "dev.conllu"), str(corpus),
                    "--converter", "conllu", "--n-sents", "1"], check=True, capture_output=True)
    args = [str(corpus), str(tmp_path / "training"), "--k", "2", "--lang", "en", "--max-steps", "4",
            "--eval-frequency", "2", "--dropout", "0.3"]
    assert jk.main(args) == 0
    from spacy.util import load_config  # the fold parsers were trained with the dropout asked for
    assert load_config(tmp_path / "training" / "parser-depunct-fold0" / "model-best" / "config.cfg")["training"]["dropout"] == pytest.approx(0.3)
    gold, parsed = read_conllu(corpus / "train.conllu"), read_conllu(corpus / "train.parsed.conllu")
    assert [s.forms for s in parsed] == [s.forms for s in gold]
    assert all(sum(h == 0 for h in s.heads) == 1 for s in parsed)
    for j in range(2):
        assert (tmp_path / "training" / f"parser-depunct-fold{j}" / "model-best").is_dir()
    stamp = os.path.getmtime(corpus / "folds" / "heldout.fold0.parsed.conllu")
    assert jk.main(args) == 0  # resumes: both folds already parsed
    assert os.path.getmtime(corpus / "folds" / "heldout.fold0.parsed.conllu") == stamp
