"""The scripts that train restoration models for streams (scripts/stream_punctgen.py,
scripts/ted_punctgen.py --trees stream) end to end on the shipped sample, with a tiny parser."""
import json
import subprocess
import sys
from pathlib import Path

from spacy_punctgen.model.punct_model import PunctModel

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"

ROOT = Path(__file__).resolve().parents[2]


def _run(args, cwd):
    out = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_stream_punctgen_trains_a_compacted_model_on_the_parsers_streams(tiny_parser, tmp_path):
    parser = tiny_parser(40, 2)
    out, metrics = tmp_path / "model", tmp_path / "m" / "training.json"
    record = _run([str(ROOT / "scripts" / "stream_punctgen.py"), str(SAMPLE / "en_sample-ud-train.conllu"),
                   str(SAMPLE / "en_sample-ud-dev.conllu"), str(out), "--parser", str(parser), "--epochs", "1",
                   "--stream-sents", "5", "--lower", "0.5", "--average", "--compact", "0.001",
                   "--metrics", str(metrics)], tmp_path)
    assert json.loads(metrics.read_text(encoding="utf-8")) == record
    for split in ("train", "dev"):
        a = record["alignment"][split]
        assert a["marks"] > 0 and a["placed"] == a["marks"] - a["unplaced"] and a["unplaced"] <= a["marks"] // 20
    assert record["sentences_train"] == record["alignment"]["train"]["sentences"] > 0
    compacted = record["train_info"]["compacted"]
    assert compacted["n_features_after"] <= compacted["n_features_before"]
    model = PunctModel.from_disk(out)
    assert model.meta["compacted"] == compacted and model.theta_dtype == "float16"
    assert len(model.theta) == compacted["n_features_after"]


def test_ted_punctgen_stream_trees(tiny_parser, tmp_path):
    from spacy_punctgen.data.preprocess import preprocess_file

    sents, _ = preprocess_file(SAMPLE / "en_sample-ud-train.conllu")
    lines = []
    for s in sents[:120]:
        words = [w.lower() for w in s.words if any(c.isalnum() for c in w)]
        for i, w in enumerate(words):
            label = "PERIOD" if i == len(words) - 1 else ("COMMA" if i % 7 == 3 else "O")
            lines.append(f"{w}\t{label}")
    tsv = tmp_path / "ted.tsv"
    tsv.write_text("\n".join(lines) + "\n", encoding="utf-8")
    record = _run([str(ROOT / "scripts" / "ted_punctgen.py"), str(tsv), str(tmp_path / "model"), "--trees", "stream",
                   "--parser", str(tiny_parser(40, 2)), "--epochs", "1"], tmp_path)
    a = record["alignment"]
    assert record["trees"] == "stream" and a["words"] == record["words"] > 0
    assert a["placed"] == a["marks"] - a["unplaced"] and a["unplaced"] <= a["marks"] // 20
    assert record["sentences_train"] + record["sentences_dev"] == a["sentences"]
    assert PunctModel.from_disk(tmp_path / "model").inventory is not None
