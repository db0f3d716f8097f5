"""The bench command runs end to end in quick mode and reports well-formed figures
(no timing thresholds here: timings depend on the machine)."""
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from spacy_punctgen.bench.suite import (BUCKETS, SECTIONS, bucket_sentences, chain_sentences, transcript_runs,
                                        transcript_words)
from spacy_punctgen.inference.dp import tree_structure
from spacy_punctgen.data.preprocess import preprocess_file

from spacy_punctgen.testing.env import package_env

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"
FIGURES = {"train_epoch", "train_peak_rss", "cython_vs_numpy_inside", "analysis_throughput",
           "analysis_rss_growth", "scaling", "pipe_n_process_2", "trees_sample_4", "trees_sample_6", "trees_sample_8",
           "trees_beam_2", "transcript_shipped", "transcript_shipped_vs_parser", "transcript_shipped_peak_rss"}


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    md = out / "bench.md"
    proc = subprocess.run([sys.executable, "-m", "spacy_punctgen", "bench", "--quick", "--json",
                           "--data", str(SAMPLE), "--markdown", str(md)],
                          cwd=out, env=package_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), md.read_text(encoding="utf-8")


def test_quick_bench_reports_every_figure(quick):
    result, _ = quick
    figures = result["figures"]
    expected = set(FIGURES) | {"restore_slot", "restore_sample"}
    assert expected <= set(figures)
    for name, fig in figures.items():
        for key in ("value", "unit", "reference", "ratio", "ratio_meaning", "target", "met"):
            assert key in fig, (name, key)
        assert isinstance(fig["ratio"], float) and math.isfinite(fig["ratio"]) and fig["ratio"] > 0, name
    assert figures["pipe_n_process_2"]["identical_outputs"] is True
    for name in ("trees_sample_4", "trees_sample_6", "trees_sample_8", "trees_beam_2"):
        k = int(name.rsplit("_", 1)[1])
        assert 1 <= figures[name]["mean_distinct_trees"] <= k
    assert figures["cython_vs_numpy_inside"]["max_relative_difference"] < 1e-8
    assert [b["bucket"] for b in figures["scaling"]["buckets"]] == [f"{lo}-{hi}" for lo, hi in BUCKETS]
    assert result["command"].startswith("python -m spacy_punctgen bench") and "--quick" in result["command"]
    assert result["parser"]["pipe_names"] and "parser" in result["parser"]["pipe_names"]
    t = figures["transcript_shipped"]
    assert t["n_words"] == 1000 and t["model"] == "shipped" and t["expert"] is False
    assert t["met"] is None and figures["transcript_shipped_peak_rss"]["met"] is None  # judged at 100,000 words only
    assert t["added_chars"] > 0  # marks were restored
    assert figures["restore_marginal"]["target"] == ">= 1.0"


def test_markdown_table_names_the_command_and_every_figure(quick):
    result, md = quick
    assert result["command"] in md
    for name in result["figures"]:
        assert f"| {name} |" in md


def test_unknown_section_is_refused():
    from spacy_punctgen.bench.suite import run_bench

    with pytest.raises(ValueError, match="unknown section 'nope'"):
        run_bench(str(SAMPLE), quick=True, sections=["nope"])
    assert "training" in SECTIONS


def test_chained_sentences_are_projective_trees_of_the_right_length():
    sents, _ = preprocess_file(SAMPLE / "en_sample-ud-dev.conllu")
    for lo, hi in BUCKETS:
        out = bucket_sentences(sents, lo, hi, words=400, seed=1)
        assert sum(len(s) for s in out) >= 400
        for s in out:
            assert lo <= len(s) <= hi
            assert len(s.slots) == len(s) + 1
            tree_structure(s.heads)  # raises unless a projective forest
    s = chain_sentences(sents[:3])
    assert s.words == [w for t in sents[:3] for w in t.words]
    assert sum(h < 0 for h in s.heads) == sum(h < 0 for h in sents[0].heads)


def test_transcript_words_from_each_source(tmp_path):
    dev = SAMPLE / "en_sample-ud-dev.conllu"
    words = transcript_words(None, dev, 5000)
    assert len(words) == 5000 and all(w == w.lower() for w in words)
    assert not {",", ".", "?"} & set(words)  # the punctuation is gone
    tsv = tmp_path / "talk.tsv"
    tsv.write_text("Hello\tCOMMA\nworld\tPERIOD\n", encoding="utf-8")
    assert transcript_words(str(tsv), dev, 5) == ["hello", "world", "hello", "world", "hello"]
    txt = tmp_path / "talk.txt"
    txt.write_text("So I came\nhome\n", encoding="utf-8")
    assert transcript_words(str(txt), dev, 3) == ["so", "i", "came"]
    with pytest.raises(FileNotFoundError, match="E607"):
        transcript_words(str(tmp_path / "nope.txt"), dev, 3)
    (tmp_path / "empty.txt").write_text(" \n", encoding="utf-8")
    with pytest.raises(ValueError, match="E608"):
        transcript_words(str(tmp_path / "empty.txt"), dev, 3)


def test_transcript_runs_add_the_model_and_its_expert_off(tmp_path):
    assert transcript_runs(None) == [("shipped", None, {})]
    plain = tmp_path / "plain"
    plain.mkdir()
    assert [r[0] for r in transcript_runs(str(plain))] == ["shipped", "model"]
    (plain / "lexical.json").write_text("{}", encoding="utf-8")
    assert transcript_runs(str(plain))[2] == ("model_expert_off", str(plain), {"lexical_weight": 0.0})
