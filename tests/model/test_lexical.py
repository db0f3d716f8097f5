"""The lexical expert (model/lexical.py): its classes, features, training, and saving."""
import numpy as np
import pytest

from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.model.lexical import (CLASSES, WINDOW_TEMPLATES, LexicalExpert, check_weight, gap_features,
                                          mark_class, sentence_streams)
from spacy_punctgen.model.punct_model import PunctModel
from spacy_punctgen.pipeline.shipped import default_model_path

from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample"


@pytest.mark.parametrize("marks,kind", [((), ""), ((",",), ","), ((".",), "."), ((".", "”"), "."),
                                        (("?", "”"), "?"), (("!",), "!"), (("...",), "."), (("…",), "."),
                                        ((":",), ":"), ((";",), ";"), (("”",), "other"), (("(",), "other"),
                                        (("ABBR.",), ""), (("ABBR.", ","), ","), (("?", "."), "?"),
                                        ((",", "."), ".")])
def test_mark_class(marks, kind):
    assert mark_class(marks) == kind


def test_gap_features_read_only_the_window():
    N = WINDOW_TEMPLATES
    words = "so um we went to the shop and then we came home".split()
    keys, vals, lens = gap_features(words, 0)
    assert keys.dtype == np.uint64 and vals.dtype == np.float32 and lens.dtype == np.int32
    assert keys.shape == (len(words) * N,) and (lens == N).all() and (vals == 1).all()
    per = keys.reshape(len(words), N)
    assert len(set(per[0])) == N  # no two templates collide
    changed = list(words)
    changed[9] = "they"  # 4+ words after gap 4 and 3+ before: gap 4 reads words 2..7
    other = gap_features(changed, 0)[0].reshape(len(words), N)
    assert (other[4] == per[4]).all()
    assert (other[8] != per[8]).any() and (other[6] != per[6]).any() and (other[11] != per[11]).any()
    # case: only the next word's capital is read, the words themselves are lowercased
    assert (gap_features(["So", "um"], 0)[0][:N] != gap_features(["so", "um"], 0)[0][:N]).sum() == 0
    assert (gap_features(["so", "Um"], 0)[0][:N] != gap_features(["so", "um"], 0)[0][:N]).sum() == 1


def test_the_bag_reads_words_further_back_in_any_order():
    words = "what do you think we should do about it now".split()
    bag = 4
    per = gap_features(words, bag)[0].reshape(len(words), WINDOW_TEMPLATES + bag)
    assert (per[:, :WINDOW_TEMPLATES] == gap_features(words, 0)[0].reshape(len(words), -1)).all()
    swapped = list(words)
    swapped[1], swapped[3] = swapped[3], swapped[1]  # words 1 and 3: both in gap 6's bag (words 3..0)
    other = gap_features(swapped, bag)[0].reshape(len(words), -1)
    assert (other[6, :WINDOW_TEMPLATES] == per[6, :WINDOW_TEMPLATES]).all()
    assert sorted(other[6, WINDOW_TEMPLATES:]) == sorted(per[6, WINDOW_TEMPLATES:])
    assert (other[6, WINDOW_TEMPLATES:] != per[6, WINDOW_TEMPLATES:]).any()
    gone = list(words)
    gone[0] = "so"  # word 0 is in gap 6's bag (words 3..0), not in gap 7's (words 4..1)
    g = gap_features(gone, bag)[0].reshape(len(words), -1)
    assert (g[7] == per[7]).all() and (g[6] != per[6]).any()


def _streams(n, seed=0):
    """Synthetic streams where the words decide: ``um`` is followed by a comma, ``thanks`` by a
    period, ``what`` ... ``it`` by a question mark."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        words, marks = [], []
        for _ in range(30):
            kind = rng.integers(3)
            if kind == 0:
                words += ["um", "we", "went"]; marks += [",", "", ""]
            elif kind == 1:
                words += ["thanks"]; marks += ["."]
            else:
                words += ["what", "is", "it"]; marks += ["", "", "?"]
        out.append((words, marks))
    return out


@pytest.fixture(scope="module")
def trained():
    return LexicalExpert.fit(_streams(20), _streams(4, seed=1), epochs=3, lr=0.01, length=2 ** 12)


def test_fit_learns_what_the_words_say(trained):
    expert, info = trained
    p = expert.predict(["um", "we", "went", "thanks", "what", "is", "it"])
    assert p.shape == (7, len(CLASSES)) and np.allclose(p.sum(1), 1)
    best = [CLASSES[k] for k in p.argmax(1)]
    assert best == [",", "", "", ".", "", "", "?"]
    assert info["train_gaps"] == sum(len(w) for w, _ in _streams(20))
    losses = [h["dev_log_loss"] for h in info["history"]]
    assert info["best_dev_log_loss"] == min(losses)
    assert expert.log_loss(_streams(4, seed=1)) == pytest.approx(min(losses), abs=1e-4)
    # the training frequencies, add-one: "" most, then "," "." "?" about equally
    assert expert.prior.sum() == pytest.approx(1) and expert.prior.argmax() == 0 and (expert.prior > 0).all()
    assert np.allclose(expert.evidence(["um"]), expert.predict(["um"]) / expert.prior)


def test_params_round_trip(trained):
    expert, _ = trained
    copy = LexicalExpert(length=expert.length)
    copy.set_params(expert.params())
    words = "um thanks what is it we went".split()
    assert np.array_equal(copy.predict(words), expert.predict(words))


def _model_with(expert):
    model = PunctModel.from_disk(default_model_path("en"))
    model.lexical = expert
    return model


def test_saved_with_the_model(trained, tmp_path):
    expert, _ = trained
    expert.weight = 0.75
    model = _model_with(expert)
    model.to_disk(tmp_path / "m")
    assert (tmp_path / "m" / "lexical.json").is_file() and (tmp_path / "m" / "lexical.npz").is_file()
    words = "um thanks what is it".split()
    for back in (PunctModel.from_disk(tmp_path / "m"), PunctModel.from_bytes(model.to_bytes())):
        assert back.lexical.weight == 0.75
        assert np.array_equal(back.lexical.predict(words), expert.predict(words))
        assert np.array_equal(back.lexical.prior, expert.prior)
    assert PunctModel.from_bytes(model.to_bytes()).to_bytes() == model.to_bytes()  # deterministic
    # a model saved without one leaves none behind in the same folder
    model.lexical = None
    model.to_disk(tmp_path / "m")
    assert not (tmp_path / "m" / "lexical.json").exists() and PunctModel.from_disk(tmp_path / "m").lexical is None


def test_damaged_files_are_named(trained, tmp_path):
    expert, _ = trained
    _model_with(expert).to_disk(tmp_path / "m")
    lex = tmp_path / "m" / "lexical.npz"
    data = lex.read_bytes()
    lex.unlink()
    with pytest.raises(ValueError, match="E994"):
        PunctModel.from_disk(tmp_path / "m")
    lex.write_bytes(data[:100])
    with pytest.raises(ValueError, match="E212"):
        PunctModel.from_disk(tmp_path / "m")
    lex.write_bytes(data)
    cfg = tmp_path / "m" / "lexical.json"
    cfg.write_text(cfg.read_text().replace(f'"n_templates": {WINDOW_TEMPLATES}', '"n_templates": 15'))
    with pytest.raises(ValueError, match="E995"):
        PunctModel.from_disk(tmp_path / "m")
    cfg.write_text("{not json")
    with pytest.raises(ValueError, match="E216"):
        PunctModel.from_disk(tmp_path / "m")


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="E996"):
        check_weight(-1)
    for bad in (float("nan"), float("inf"), True, "1"):
        with pytest.raises(ValueError, match="E996"):
            check_weight(bad)
    with pytest.raises(ValueError, match="E990"):
        LexicalExpert(length=0)
    with pytest.raises(ValueError, match="E990"):
        LexicalExpert(length=16, bag_words=-1)
    with pytest.raises(ValueError, match="E991"):
        LexicalExpert(length=16).predict("a string of words")
    with pytest.raises(ValueError, match="E992"):
        LexicalExpert.fit([(["a", "b"], [""])])
    with pytest.raises(ValueError, match="E993"):
        LexicalExpert.fit([([], [])])
    assert LexicalExpert(length=16).predict([]).shape == (0, len(CLASSES))


def test_sentence_streams_keep_text_order():
    sents, _ = preprocess_file(SAMPLE / "en_sample-ud-dev.conllu")
    streams = sentence_streams(sents, words_per_stream=50)
    assert [w for ws, _ in streams for w in ws] == [w for s in sents for w in s.words]
    marks = [m for _, ms in streams for m in ms]
    assert marks == [" ".join(s.slots[i]) for s in sents for i in range(1, len(s.words) + 1)]
    assert all(len(ws) >= 50 for ws, _ in streams[:-1])
