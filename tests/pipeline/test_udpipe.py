"""A spacy_udpipe pipeline (UDPipe tokenizer/tagger/parser, UD labels) feeding punctgen.

No internet here, so a tiny UDPipe model is trained on assets/sample with ufal.udpipe's
Trainer (one iteration of each part: poor, but a real UDPipe model). Skips only where
spacy_udpipe / ufal.udpipe are not installed (they are the optional extra
``spacy-punctgen[udpipe]``).
"""
import math
from pathlib import Path

import pytest
import spacy

udpipe = pytest.importorskip("ufal.udpipe", reason="ufal.udpipe is not installed (extra: spacy-punctgen[udpipe])")
spacy_udpipe = pytest.importorskip("spacy_udpipe", reason="spacy_udpipe is not installed (extra: spacy-punctgen[udpipe])")

import spacy_punctgen.pipeline.component  # noqa: E402,F401  (registers "punctgen")
from spacy_punctgen.data.conllu import read_conllu  # noqa: E402
from spacy_punctgen.data.preprocess import is_punct  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"
TOKENIZER = "epochs=1;dimension=16;batch_size=50;segment_size=50;dropout=0.1;early_stopping=0"
TAGGER = ("models=1;templates_1=tagger;iterations_1=1;guesser_suffix_rules_1=2;use_lemma_1=0;"
          "provide_lemma_1=0;use_xpostag_1=1;provide_xpostag_1=1;use_feats_1=0;provide_feats_1=0")
PARSER = ("iterations=1;hidden_layer=32;embedding_upostag=8;embedding_feats=0;embedding_xpostag=0;"
          "embedding_form=16;embedding_lemma=0;embedding_deprel=8;structured_interval=0")


def read_sentences(path):
    fmt = udpipe.InputFormat.newConlluInputFormat()
    fmt.setText(Path(path).read_text(encoding="utf-8"))
    out, err, sent = udpipe.Sentences(), udpipe.ProcessingError(), udpipe.Sentence()
    while fmt.nextSentence(sent, err):
        out.push_back(sent)
        sent = udpipe.Sentence()
    assert not err.occurred(), err.message
    return out


def train_tiny_udpipe(out: Path) -> Path:
    err = udpipe.ProcessingError()
    model = udpipe.Trainer.train("morphodita_parsito", read_sentences(SAMPLE / "en_sample-ud-train.conllu"),
                                 read_sentences(SAMPLE / "en_sample-ud-dev.conllu"), TOKENIZER, TAGGER, PARSER, err)
    assert not err.occurred(), err.message
    out.write_bytes(model if isinstance(model, bytes) else model.encode("latin-1"))
    return out


@pytest.fixture(scope="module")
def nlp(tmp_path_factory):
    from spacy_punctgen.data.preprocess import preprocess_file
    from spacy_punctgen.training.train import TrainConfig, train_model

    tmp = tmp_path_factory.mktemp("udpipe")
    nlp = spacy_udpipe.load_from_path(lang="en", path=str(train_tiny_udpipe(tmp / "en_tiny.udpipe")))
    train, _ = preprocess_file(SAMPLE / "en_sample-ud-train.conllu")
    dev, _ = preprocess_file(SAMPLE / "en_sample-ud-dev.conllu")
    model, _ = train_model(train, dev, TrainConfig(psi_keep_bias=0.0, psi_lr_scale=1.0, epochs=1, sentences_per_epoch=0, direction="r2l",
                                                   progress=False))
    nlp.add_pipe("punctgen", config={"model": str(model.to_disk(tmp / "punct"))})
    return nlp


def test_udpipe_parses_feed_the_analysis(nlp):
    texts = [ud.text for ud in read_conllu(SAMPLE / "en_sample-ud-test.conllu")[:8]]
    doc = nlp(" ".join(texts))  # several sentences in one Doc, segmented by UDPipe
    assert doc.has_annotation("DEP") and len(list(doc.sents)) > 1
    entries = doc._.underlying_punct
    n_words = 0
    sents = list(doc.sents)
    for si, sent in enumerate(sents):
        words = [t for t in sent if not is_punct(t.pos_, t.dep_)]
        mine = [e for e in entries if e["sentence"] == si]
        assert len(mine) == (len(words) + 1 if words else 0)
        assert [e["after"] for e in mine[1:]] == [t.i for t in words]
        if words:  # a sentence of only punctuation has no slots: it is the final slot of the one before
            n_punct = len(sent) - len(words)
            for nxt in sents[si + 1:]:
                if any(not is_punct(t.pos_, t.dep_) for t in nxt):
                    break
                n_punct += len(nxt)
            assert sum(len(e["surface"]) for e in mine) == n_punct
        n_words += len(words)
    assert n_words > 0
    assert doc._.punct_logprob <= 0.0 and math.isfinite(doc._.punct_logprob)
    explained = [t for t in doc if t._.punct_left is not None]
    assert explained and all(isinstance(t._.punct_right, tuple) for t in explained)


def test_udpipe_pipeline_round_trips(nlp, tmp_path):
    """The punctgen weights travel with nlp.to_disk (UDPipe's own model is loaded by path)."""
    doc = nlp("Yes, I think so. Do you?")
    data = nlp.get_pipe("punctgen").to_bytes()
    other = spacy.blank("en")
    other.add_pipe("punctgen").from_bytes(data)
    assert other(nlp.make_doc("Yes, I think so. Do you?"))._.underlying_punct == doc._.underlying_punct
