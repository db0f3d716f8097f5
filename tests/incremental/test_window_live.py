"""Live mode over the shipped pipeline (api/window_live.py, a sliding window with look-ahead), the
same contract as the incremental live mode: the emitted text is the input words in order with
marks only between them, nothing is revised, the delay is never exceeded, and a stream cut
anywhere (even mid-word) ends cleanly; plus what the window itself promises (emitted marks are
written into the next window's text, about one restoration per ``step`` words)."""
import json
import random
import re
import subprocess
import sys

import pytest

import spacy_punctgen
from spacy_punctgen.api import stream
from spacy_punctgen.api.window_live import WindowLivePunctuator, default_step, window_live
from spacy_punctgen.testing.env import package_env

WORDS = ("when i came home he left i was sad and then we went out to eat but the place was closed so we "
         "went home again where are you going tonight i asked him").split()


@pytest.fixture(scope="module")
def nlp(shipped_parser):
    return spacy_punctgen.load("en")


def check_output(text, words):
    """``text`` is ``words`` in order, joined by whitespace, with only marks (no letters or
    digits) added before, between and after them."""
    marks = r"[^\w]*"
    pattern = marks + (marks + r"\s" + marks).join(re.escape(w) for w in words) + marks
    assert re.fullmatch(pattern, text), text


def rebuilt(log):
    return "".join((" " if e.index else "") + e.opening + e.word + e.mark for e in log)


@pytest.mark.parametrize("delay", [0, 1, 4, 1000])
def test_words_in_order_delay_kept_nothing_revised(nlp, delay):
    lp = WindowLivePunctuator(nlp, delay, words_in=True)
    out = ""
    for k, w in enumerate(WORDS):
        out += lp.push(w)
        assert lp.n_emitted >= k + 1 - delay  # the delay is never exceeded
        assert rebuilt(lp.log) == out  # what was emitted is what the log says, and stays so
    out += lp.close()
    check_output(out, WORDS)
    assert lp.n_emitted == len(WORDS)
    for e in lp.log:
        assert e.emitted_at - e.arrived_at <= delay or e.emitted_at == len(WORDS)
    assert rebuilt(lp.log) == out
    assert any(e.mark for e in lp.log) or delay == 0  # delay 0: test_the_window_end_is_not_the_streams


def test_restorations_every_step_words(nlp):
    lp = WindowLivePunctuator(nlp, 6, words_in=True)
    assert lp.step == default_step(6) == 3
    for w in WORDS:
        lp.push(w)
    lp.close()
    assert lp.n_restorations <= len(WORDS) // 3 + 2
    waits = [e.emitted_at - e.arrived_at for e in lp.log[:-6]]
    assert max(waits) == 6 and min(waits) == 6 - 3 + 1  # the words written together: 4 to 6 words seen after them
    every_word = WindowLivePunctuator(nlp, 6, words_in=True, step=1)
    for w in WORDS:
        every_word.push(w)
    every_word.close()
    assert every_word.n_restorations >= len(WORDS) - 6
    assert all(e.emitted_at - e.arrived_at == 6 for e in every_word.log[:-6])


def test_emitted_marks_are_written_into_the_next_window(nlp, monkeypatch):
    """The left context is the text as emitted: each window's text starts with the end of what
    was emitted, marks included, then the pending words as they came."""
    seen = []
    original = stream.restore_edits

    def recording(nlp_, text, *args, **kwargs):
        seen.append((text, rebuilt(lp.log), list(lp.words[lp.n_emitted:])))
        return original(nlp_, text, *args, **kwargs)

    lp = WindowLivePunctuator(nlp, 3, words_in=True, context=1000)
    monkeypatch.setattr(stream, "restore_edits", recording)
    for w in WORDS:
        lp.push(w)
    lp.close()
    with_marks = 0
    assert len(seen) == lp.n_restorations
    for text, emitted, pending in seen:
        pending_text = " ".join(pending)
        assert text.endswith(pending_text)
        context = text[:len(text) - len(pending_text)].rstrip()
        if context:
            assert emitted.endswith(context)
            with_marks += bool(re.search(r"[,.?!;:]", context))
    assert with_marks  # the context did hold emitted marks


def test_the_window_end_is_not_the_streams(nlp):
    """Delay 0 emits each word as the last of its window, where restoration ends a text with a
    full stop: while the stream is open that one is left out (with one word of look-ahead, full
    stops come back); at the close, the words still pending get the stream's end."""
    out = "".join(window_live(nlp, WORDS, delay=0, words=True))
    check_output(out, WORDS)
    assert not re.search(r"[.?!]", out)
    assert re.search(r"[.?!]", "".join(window_live(nlp, WORDS, delay=1, words=True, step=1))[:-1])
    lp = WindowLivePunctuator(nlp, delay=5, words_in=True)
    for w in WORDS:
        lp.push(w)
    assert re.search(r"[.?!]$", lp.close())


def test_the_generator_over_text_chunks(nlp):
    text = " ".join(WORDS)
    rng = random.Random(0)
    chunks, k = [], 0
    while k < len(text):
        step = rng.randint(1, 9)
        chunks.append(text[k:k + step])
        k += step
    pieces = list(spacy_punctgen.live(nlp, iter(chunks), delay=5))
    assert all(pieces)
    check_output("".join(pieces), WORDS)
    assert "".join(spacy_punctgen.live(nlp, WORDS, delay=5, words=True)) == "".join(pieces)


def test_a_stream_cut_anywhere_ends_cleanly(nlp):
    text = " ".join(WORDS[:14])
    for cut in range(0, len(text) + 1, 7):
        head = text[:cut]
        out = "".join(window_live(nlp, [head[i:i + 4] for i in range(0, len(head), 4)], delay=3))
        expected = head.split()
        if not expected:
            assert out == ""
            continue
        check_output(out, expected)


def test_the_users_own_marks_stay(nlp):
    words = "hello, i said. when i came home he left".split()
    out = "".join(window_live(nlp, words, delay=2, words=True))
    check_output(out, words)
    assert out.startswith("hello, i said.")


def test_bad_arguments(nlp):
    import spacy

    with pytest.raises(ValueError, match="E931"):
        WindowLivePunctuator(nlp, delay=-1)
    with pytest.raises(ValueError, match="E938"):
        WindowLivePunctuator(nlp, delay=3, step=0)
    with pytest.raises(ValueError, match="E938"):
        WindowLivePunctuator(nlp, delay=3, context=-1)
    with pytest.raises(TypeError, match="E932"):
        WindowLivePunctuator(nlp).push(3)
    with pytest.raises(TypeError, match="E939"):
        spacy_punctgen.live(object(), ["a"])
    with pytest.raises(ValueError, match="E058"):  # a pipeline that does not restore
        WindowLivePunctuator(spacy.blank("en"))


def test_live_takes_an_incremental_model_too(sample_model):
    model = sample_model("upp")
    from spacy_punctgen.incremental.live import live as incremental_live

    assert "".join(spacy_punctgen.live(model, WORDS, delay=3, words=True)) == \
        "".join(incremental_live(model, WORDS, delay=3, words=True))


def test_restore_live_shipped_writes_every_word_in_order_within_the_delay(shipped_parser):
    text = "when i came home he left\ni was sad\nwhere are you going tonight\n"
    proc = subprocess.run([sys.executable, "-m", "spacy_punctgen", "restore", "--live", "shipped", "--delay", "3",
                           "--json"], input=text.encode("utf-8"), env=package_env(), capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    lines = proc.stdout.decode("utf-8").strip().splitlines()
    summary = json.loads(lines[-1])
    check_output("\n".join(lines[:-1]), text.split())
    assert summary["words"] == len(text.split()) and summary["max_delay_words"] <= 3
    assert summary["step"] == 1 and summary["restorations"] >= len(text.split()) - 3
