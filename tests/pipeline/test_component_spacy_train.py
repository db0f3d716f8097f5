"""punctgen inside real spaCy workflows: `spacy train` + `spacy evaluate`, and a pipeline of
spacy.blank + a parser trained with `spacy train` + punctgen on raw text.

One module fixture trains the (tiny, few-step) tagger/morphologizer/parser of
configs/parser.cfg on assets/sample; its parses are poor, which is fine: punctgen must
work on whatever UD-labelled tree it gets.
"""
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
import spacy

from spacy_punctgen.testing.env import package_env
from spacy_punctgen.data.conllu import read_conllu
from spacy_punctgen.data.preprocess import is_punct

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "assets" / "sample"
CODE = ROOT / "scripts" / "punctgen_code.py"


def run(args, cwd):
    proc = subprocess.run([sys.executable, "-m", *args], cwd=cwd, env=package_env(), capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """`spacy convert` of the sample (10 sentences per Doc) and a parser trained for 40 steps."""
    work = tmp_path_factory.mktemp("spacy_train")
    for split in ("train", "dev", "test"):
        run(["spacy", "convert", str(SAMPLE / f"en_sample-ud-{split}.conllu"), str(work), "--converter",
             "conllu", "--n-sents", "10"], work)
    run(["spacy", "train", str(ROOT / "configs" / "parser.cfg"), "--output", "parser",
         "--paths.train", "en_sample-ud-train.spacy", "--paths.dev", "en_sample-ud-dev.spacy",
         "--training.max_steps", "40", "--training.eval_frequency", "40"], work)
    return work


def test_spacy_train_then_spacy_evaluate(work):
    # 20 restoration samples keep each evaluation's punct_aed short
    log = run(["spacy", "train", str(ROOT / "configs" / "punctgen_train.cfg"), "--output", "punctgen",
               "--paths.train", "en_sample-ud-train.spacy", "--paths.dev", "en_sample-ud-dev.spacy",
               "--paths.parser", "parser/model-last", "--training.max_steps", "16",
               "--training.eval_frequency", "8", "--components.punctgen.n_samples", "20",
               "--code", str(CODE)], work)
    header = next(line for line in log.splitlines() if "PUNCT_LP" in line).split()
    rows = [line.split() for line in log.splitlines() if re.match(r"^\s*\d+\s+\d+\s+[\d.]", line)]
    assert [int(r[1]) for r in rows] == [0, 8, 16]
    lp = [float(r[header.index("PUNCT_LP")]) for r in rows]
    assert lp[-1] > lp[0]  # training raised the dev log-likelihood
    assert (work / "punctgen" / "model-best" / "punctgen" / "model" / "params.npz").is_file()

    # spacy evaluate prints only the metrics it knows; --output has every component's scores
    run(["spacy", "evaluate", "punctgen/model-best", "en_sample-ud-test.spacy", "--output", "metrics.json",
         "--code", str(CODE)], work)
    metrics = json.loads((work / "metrics.json").read_text())
    assert 1.0 < metrics["punct_ppl"] < 3.0
    assert metrics["punct_lp"] == pytest.approx(-math.log(metrics["punct_ppl"]))
    assert 0.0 <= metrics["punct_aed"] < 1.0

    nlp = spacy.load(work / "punctgen" / "model-best")
    doc = nlp("Yes, I think so.")
    assert len(doc._.underlying_punct) >= 2 and math.isfinite(doc._.punct_logprob)


@pytest.fixture(scope="module")
def punct_model_dir(tmp_path_factory):
    from spacy_punctgen.data.preprocess import preprocess_file
    from spacy_punctgen.training.train import TrainConfig, train_model

    train, _ = preprocess_file(SAMPLE / "en_sample-ud-train.conllu")
    dev, _ = preprocess_file(SAMPLE / "en_sample-ud-dev.conllu")
    model, _ = train_model(train, dev, TrainConfig(psi_keep_bias=0.0, psi_lr_scale=1.0, epochs=2, sentences_per_epoch=0, direction="r2l",
                                                   progress=False))
    return model.to_disk(tmp_path_factory.mktemp("punct_model"))


def test_blank_plus_trained_parser_plus_punctgen_on_real_sentences(work, punct_model_dir):
    trained = spacy.load(work / "parser" / "model-last")
    nlp = spacy.blank("en")
    for name in ("tok2vec", "tagger", "morphologizer", "parser"):
        nlp.add_pipe(name, source=trained)
    nlp.add_pipe("punctgen", config={"model": str(punct_model_dir)})
    texts = [ud.text for ud in read_conllu(SAMPLE / "en_sample-ud-test.conllu")[:10]]
    for text in texts:
        parsed = nlp.make_doc(text)
        for name, proc in nlp.pipeline[:-1]:
            parsed = proc(parsed)
        before = [(t.text, t.pos_, t.dep_, t.head.i) for t in parsed]
        doc = nlp.get_pipe("punctgen")(parsed)
        assert [(t.text, t.pos_, t.dep_, t.head.i) for t in doc] == before
        entries = doc._.underlying_punct
        sents = list(doc.sents)
        for sent_i, sent in enumerate(sents):
            words = [t for t in sent if not is_punct(t.pos_, t.dep_) and not t.is_space]
            mine = [e for e in entries if e["sentence"] == sent_i]
            if not words:
                assert mine == []
                continue
            assert [e["slot"] for e in mine] == list(range(len(words) + 1))
            assert [e["after"] for e in mine[1:]] == [t.i for t in words]
            # a sentence of punctuation only right after it is its final slot (doc_convert)
            span = list(sent)
            for nxt in sents[sent_i + 1:]:
                if any(not is_punct(t.pos_, t.dep_) and not t.is_space for t in nxt):
                    break
                span += list(nxt)
            punct = [t.text for t in span if is_punct(t.pos_, t.dep_)]
            surface = [m for e in mine for m in e["surface"]]
            assert len(surface) == len(punct)
        assert doc._.punct_logprob <= 0.0
        assert doc.text == text
