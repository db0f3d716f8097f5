"""Fuzz: restoration's insertions keep the user's text, over many more texts than hypothesis
can try (issue 38): the cases of tests/fuzz/fast_texts.py, each checked exactly as
tests/fuzz/test_fuzz_insertions.py checks its examples.

* default run: 2,000 texts of a fixed seed, in this process (a few seconds);
* long run (``-m slow``): ``PUNCTGEN_FUZZ_FAST_TEXTS`` texts (default 10^6) of the seed
  ``PUNCTGEN_FUZZ_FAST_SEED`` (default: a fresh one, printed) in ``PUNCTGEN_FUZZ_FAST_WORKERS``
  processes (default: every core this process may use); ``PUNCTGEN_FUZZ_SECONDS`` stops it
  early, as it does the hypothesis properties.  It prints the texts checked and the rate; the
  count also goes to the fuzz summary (``insertions.fast_texts``) and ``PUNCTGEN_FUZZ_REPORT``.

A failure prints its seed, index and text, and the command that replays it alone.
"""
import os
import random
import re
import sys
import unicodedata

import pytest

import fast_texts
from fuzz_strategies import COUNTS

DEFAULT_TEXTS = 2000
DEFAULT_SEED = 38


def long_texts() -> int:
    return int(os.environ.get("PUNCTGEN_FUZZ_FAST_TEXTS", "1000000"))


def long_seed() -> int:
    seed = os.environ.get("PUNCTGEN_FUZZ_FAST_SEED")
    return int(seed) if seed is not None else random.SystemRandom().randrange(2 ** 31)


def long_workers() -> int:
    return int(os.environ.get("PUNCTGEN_FUZZ_FAST_WORKERS", str(fast_texts.default_workers())))


def test_insertions_keep_the_text_fast():
    result = fast_texts.run(DEFAULT_TEXTS, DEFAULT_SEED, workers=1)
    COUNTS["insertions.fast_texts"] += result.checked
    assert result.failure is None, result.failure.describe()
    assert result.checked + result.skipped == DEFAULT_TEXTS
    assert result.checked >= 0.95 * DEFAULT_TEXTS  # nearly every text has a word to check
    # the random choices really insert, and with repunctuate really delete, marks
    assert result.insertions > 5 * result.checked
    assert result.deletions > result.checked


@pytest.mark.slow
def test_insertions_keep_the_text_fast_long(capsys):
    n, seed, workers = long_texts(), long_seed(), long_workers()
    budget = os.environ.get("PUNCTGEN_FUZZ_SECONDS")

    def progress(totals, seconds):
        with capsys.disabled():
            print(f"  {totals.checked + totals.skipped} of {n} texts, {seconds:.0f} s, "
                  f"{totals.checked / max(seconds, 1e-9):.0f} texts/s", file=sys.stderr, flush=True)

    with capsys.disabled():
        print(f"\nfast insertion fuzz: {n} texts, seed {seed}, {workers} workers", file=sys.stderr, flush=True)
    result = fast_texts.run(n, seed, workers, chunk=10_000, budget_s=float(budget) if budget else None,
                            progress=progress)
    COUNTS["insertions.fast_texts"] += result.checked
    with capsys.disabled():
        print(result.summary(), file=sys.stderr, flush=True)
    assert result.failure is None, result.failure.describe()
    if budget is None:
        assert result.checked + result.skipped == n


# ------------------------------------------------------------------ the corpus is hostile
_CJK = re.compile(r"[\u4e00-\u9fff]")
_EMOJI = re.compile(r"[\U0001F300-\U0001FAFF\u2600-\u27BF]")
_CATEGORIES = {
    "emoji": lambda lang, t: bool(_EMOJI.search(t)),
    "emoji ZWJ sequence": lambda lang, t: bool(re.search(r"[\U0001F300-\U0001FAFF]\u200d[\U0001F300-\U0001FAFF]", t)),
    "emoji skin tone": lambda lang, t: bool(re.search(r"[\U0001F3FB-\U0001F3FF]", t)),
    "flag": lambda lang, t: bool(re.search(r"[\U0001F1E6-\U0001F1FF]{2}", t)),
    "URL": lambda lang, t: bool(re.search(r"(https?|ftp)://\S|www\.\S", t)),
    "e-mail": lambda lang, t: bool(re.search(r"[\w.+-]+@[\w-]+(\.[\w-]+)+", t)),
    "CRLF": lambda lang, t: "\r\n" in t,
    "tab": lambda lang, t: "\t" in t,
    "U+2028": lambda lang, t: "\u2028" in t,
    "no-break space": lambda lang, t: "\u00a0" in t,
    "run of whitespace": lambda lang, t: bool(re.search(r"\s{3,}", t)),
    "inner apostrophe": lambda lang, t: bool(re.search(r"[^\W\d_]['’ʼ][^\W\d_]", t)),
    "inner hyphen": lambda lang, t: bool(re.search(r"\w[-‐‑–]\w", t)),
    "existing marks": lambda lang, t: any(unicodedata.category(c).startswith("P") for c in t),
    "mark inside a token": lambda lang, t: bool(re.search(r"[^\W\d_][,;:!?…/(\"“]+[^\W\d_]", t)),
    "mark standing alone": lambda lang, t: any(tok and all(unicodedata.category(c)[0] in "PS" for c in tok)
                                               for tok in t.split()),
    "long token": lambda lang, t: max(map(len, t.split()), default=0) >= 200,
    "long text": lambda lang, t: len(t.split()) >= 60,
    "zh": lambda lang, t: lang == "zh" and bool(_CJK.search(t)),
    "zh text without CJK": lambda lang, t: lang == "zh" and not _CJK.search(t),
    "en": lambda lang, t: lang == "en",
    "Cyrillic": lambda lang, t: bool(re.search(r"[\u0400-\u04ff]", t)),
    "Arabic": lambda lang, t: bool(re.search(r"[\u0620-\u064a]", t)),
    "Devanagari": lambda lang, t: bool(re.search(r"[\u0900-\u097f]", t)),
    "Hangul": lambda lang, t: bool(re.search(r"[\uac00-\ud7a3]", t)),
    "non-ASCII digits": lambda lang, t: any(c.isdigit() and not c.isascii() for c in t),
    "zero-width or format character": lambda lang, t: any(unicodedata.category(c) == "Cf" for c in t),
    "leading whitespace": lambda lang, t: t[:1].isspace(),
}


def test_the_corpus_holds_every_hostile_kind():
    found = {name: 0 for name in _CATEGORIES}
    for index in range(5000):
        lang, text = fast_texts.make_text(fast_texts.case_rng(DEFAULT_SEED, index))
        for name, holds in _CATEGORIES.items():
            found[name] += holds(lang, text)
    missing = [name for name, count in found.items() if count == 0]
    assert not missing, f"kinds never generated in 5000 texts: {missing} (counts: {found})"


# ------------------------------------------------------------------ the property can fail
def test_a_case_replays_from_its_seed_and_index():
    a, b = fast_texts.check_case(7, 123), fast_texts.check_case(7, 123)
    assert (a.lang, a.text, a.repunctuate, a.n_insertions) == (b.lang, b.text, b.repunctuate, b.n_insertions)
    assert fast_texts.check_case(7, 124).text != a.text


def test_an_insertion_inside_a_token_is_caught(monkeypatch):
    real = fast_texts.slot_insertions

    def inside(doc, *args, **kwargs):
        entries, ins, dels = real(doc, *args, **kwargs)
        text = doc.text
        at = next((i for i in range(1, len(text)) if not text[i - 1].isspace() and not text[i].isspace()), None)
        if at is not None:
            ins = sorted(ins + [(at, ",")], key=lambda x: x[0])
        return entries, ins, dels

    monkeypatch.setattr(fast_texts, "slot_insertions", inside)
    result = fast_texts.run(300, DEFAULT_SEED, workers=1)
    assert result.failure is not None
    assert any("inside a token" in p for p in result.failure.problems)
    report = result.failure.describe()
    assert f"seed={DEFAULT_SEED} index={result.failure.index}" in report and repr(result.failure.text) in report


def test_an_exception_is_caught(monkeypatch):
    def broken(doc, *args, **kwargs):
        raise KeyError("slot")

    monkeypatch.setattr(fast_texts, "slot_insertions", broken)
    result = fast_texts.run(50, DEFAULT_SEED, workers=1)
    assert result.failure is not None and result.failure.index < 5
    assert "KeyError" in result.failure.problems[0]
