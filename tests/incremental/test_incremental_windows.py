"""A long stream decoded window by window: one window is exactly ``predict``; longer streams are
cut only right after a predicted full stop (or, failing one, at the restart point), each window's
analysis is that of a fresh decoding from its first word, and its trees stay inside it."""
import pytest

from spacy_punctgen.incremental.windows import predict_windows


@pytest.fixture(params=["upp", "cpp"])
def trained(request, sample_model):
    return sample_model(request.param)


def _stream(sample_docs):
    _, docs, dev, test = sample_docs
    return [w for d in (*dev, *test, *docs[:4]) for w in d.words]


def test_a_stream_within_one_window_is_one_decoding(trained, sample_docs):
    words = sample_docs[3][0].words
    got = predict_windows(trained, words, window=len(words), margin=5)
    assert (got.heads, got.marks) == tuple(trained.predict(words)) and got.starts == [0]
    assert predict_windows(trained, []).marks == []


@pytest.mark.parametrize("window, margin", [(60, 10), (24, 16)])
def test_windows_restart_after_full_stops(trained, sample_docs, window, margin):
    words = _stream(sample_docs)
    n, full = len(words), trained.labels.is_full
    got = predict_windows(trained, words, window, margin)
    assert len(got.heads) == len(got.marks) == n and got.starts[0] == 0 and len(got.starts) > 3
    kinds = set()
    for s, e in zip(got.starts, got.starts[1:] + [n]):
        heads, marks = trained.predict(words[s:s + window])
        assert got.marks[s:e] == marks[:e - s]  # a fresh decoding from the window's first word
        assert all(h == -1 or s <= h < e for h in got.heads[s:e])  # its trees stay inside
        assert all(g == (h + s if 0 <= h < e - s else -1) for g, h in zip(got.heads[s:e], heads))
        if e == n:
            continue
        stops = [i for i in range(window - margin) if full[marks[i]]]
        if stops:  # cut right after the last full stop with `margin` words after it
            assert e - s == stops[-1] + 1 and full[got.marks[e - 1]]
            kinds.add("full stop")
        else:  # no such full stop: the restart
            assert e - s == window - margin
            kinds.add("restart")
    assert "full stop" in kinds


def test_both_kinds_of_cut_happen(sample_model, sample_docs):
    """The cases above are not vacuous: a short kept span gives restarts, a long one full stops."""
    model, words = sample_model("upp"), _stream(sample_docs)
    few = predict_windows(model, words, 24, 20)
    assert any(not model.labels.is_full[few.marks[e - 1]] for e in few.starts[1:])
    many = predict_windows(model, words, 80, 10)
    assert any(model.labels.is_full[many.marks[e - 1]] for e in many.starts[1:])


@pytest.mark.parametrize("window, margin", [(1, 0), (10, 10), (10, -1), (True, 0), (10.0, 2), (10, None)])
def test_bad_windows_are_errors(sample_model, window, margin):
    with pytest.raises(ValueError, match="E934"):
        predict_windows(sample_model("upp"), ["a", "b"], window, margin)
