"""Live mode: the emitted text is the input words in order with marks only after them, nothing
is revised, the delay is never exceeded, and a stream cut anywhere (even mid-word) ends cleanly."""
import random

import pytest

from spacy_punctgen.incremental.live import LivePunctuator, live


@pytest.fixture(scope="module")
def model_and_text(sample_model, sample_docs):
    return sample_model("upp"), sample_docs[3][0].words


def check_output(text, words):
    tokens = text.split(" ")
    assert len(tokens) == len(words)
    for tok, w in zip(tokens, words):
        assert tok.startswith(w) and tok[len(w):] in ("", ",", ".")


@pytest.mark.parametrize("delay", [0, 1, 5, 10, 1000])
def test_words_in_order_delay_kept_nothing_revised(model_and_text, delay):
    model, words = model_and_text
    lp = LivePunctuator(model, delay, words_in=True)
    out = ""
    for k, w in enumerate(words):
        piece = lp.push(w)
        out += piece
        assert lp.n_emitted >= k + 1 - delay  # the delay is never exceeded
        assert len(out.split(" ") if out else []) == lp.n_emitted  # only whole words with their marks
    out += lp.close()
    check_output(out, words)
    assert lp.n_emitted == len(words)
    for e in lp.log:
        assert e.emitted_at - e.arrived_at <= delay or e.emitted_at == len(words)
    # nothing revised: the marks logged at emission are the final text's
    assert " ".join(e.word + e.mark for e in lp.log) == out
    assert any(e.mark for e in lp.log)


def test_the_generator_over_text_chunks(model_and_text):
    model, words = model_and_text
    text = " ".join(words)
    rng = random.Random(0)
    chunks, k = [], 0
    while k < len(text):
        step = rng.randint(1, 9)
        chunks.append(text[k:k + step])
        k += step
    pieces = list(live(model, iter(chunks), delay=5))
    assert all(pieces)
    check_output("".join(pieces), words)
    by_words = "".join(live(model, words, delay=5, words=True))
    assert by_words == "".join(pieces)


def test_a_stream_cut_anywhere_ends_cleanly(model_and_text):
    model, words = model_and_text
    text = " ".join(words[:25])
    for cut in range(0, len(text) + 1, 3):
        head = text[:cut]
        out = "".join(live(model, [head[i:i + 4] for i in range(0, len(head), 4)], delay=3))
        expected = head.split()
        if not expected:
            assert out == ""
            continue
        check_output(out, expected)


def test_bad_arguments(model_and_text):
    model, _ = model_and_text
    with pytest.raises(ValueError, match="E931"):
        LivePunctuator(model, delay=-1)
    with pytest.raises(TypeError, match="E932"):
        LivePunctuator(model).push(3)
