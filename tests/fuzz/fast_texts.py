"""A fast, seeded generator of hostile texts for the insertion rule, and its long run over
several processes (issue 38).

Why: the hypothesis property of tests/fuzz/test_fuzz_insertions.py spends most of its time on
hypothesis itself (~67 texts/s), so 10^6 texts would take hours.  Here every case is drawn with
plain ``random.Random`` and checked exactly as that property checks it: a blank spaCy pipeline
(``en`` or ``zh``) tokenizes the text, its words are cut into sentences at random, every slot gets
a random choice of marks, and ``slot_insertions`` → ``apply_edits`` → ``rule_violations`` must
find nothing (and every slot must have its entry).

The texts hold what breaks naive code: letters and digits of many scripts (and of any Unicode
letter, digit or symbol category, as the hypothesis strategy draws them), emoji and emoji
sequences (ZWJ, skin tones, flags, keycaps, tag sequences), apostrophes and hyphens inside
words, URLs, e-mail addresses, marks already in the text (standalone, at token edges, inside
tokens), runs of whitespace, tabs, CRLF, U+2028, no-break and other Unicode spaces, tokens glued
without space, very long tokens, English and Chinese.

Reproducible: case ``index`` of run ``seed`` draws from ``random.Random(seed * 2**32 + index)``
alone, so a failure is replayed by ``python tests/fuzz/fast_texts.py --seed S --index I``
whatever worker met it.  ``python tests/fuzz/fast_texts.py --texts N [--seed S] [--workers W]``
runs the long run outside pytest; ``--profile N`` profiles N cases in one process.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import sys
import time
import traceback
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

import numpy as np
import spacy
from spacy.attrs import IS_PUNCT, IS_SPACE

sys.path.insert(0, str(Path(__file__).resolve().parent))  # fuzz_strategies, when run as a script

from fuzz_strategies import ODD_WORDS, PUNCT_SEEN, PUNCT_UNSEEN, SEEN_WORDS  # noqa: E402
from spacy_punctgen.decode.mbr import SlotChoice  # noqa: E402
from spacy_punctgen.pipeline.restore import apply_edits, slot_insertions  # noqa: E402
from spacy_punctgen.testing.insertion_rule import rule_violations  # noqa: E402

# ------------------------------------------------------------------ characters
_WORD_CATEGORIES = frozenset({"Ll", "Lu", "Lt", "Lm", "Lo", "Nd", "Mn", "Mc"})
#: the categories the hypothesis strategy draws its random tokens from
_ANY_CATEGORIES = frozenset({"Ll", "Lu", "Nd", "Lo", "So"})


def _chars(*ranges: Tuple[int, int], categories=_WORD_CATEGORIES) -> str:
    return "".join(chr(c) for lo, hi in ranges for c in range(lo, hi + 1)
                   if unicodedata.category(chr(c)) in categories)


#: letters (with their combining signs) and digits of several scripts
SCRIPTS = {
    "latin": _chars((0x41, 0x5A), (0x61, 0x7A), (0xC0, 0x24F)),
    "greek": _chars((0x370, 0x3FF)),
    "cyrillic": _chars((0x400, 0x4FF)),
    "hebrew": _chars((0x5D0, 0x5EA)),
    "arabic": _chars((0x620, 0x64A), (0x660, 0x669)),
    "devanagari": _chars((0x900, 0x97F)),
    "thai": _chars((0xE01, 0xE5B)),
    "hangul": _chars((0xAC00, 0xD7A3)),
    "kana": _chars((0x3041, 0x30FF)),
    "cjk": _chars((0x4E00, 0x9FFF)),
    "digits": _chars((0x30, 0x39), (0x660, 0x669), (0x966, 0x96F), (0x9E6, 0x9EF), (0xFF10, 0xFF19),
                     categories={"Nd"}),
}
ASCII_LOWER = "abcdefghijklmnopqrstuvwxyz"


@lru_cache(maxsize=1)
def any_chars() -> str:
    """Every character of the categories Ll, Lu, Nd, Lo, So (as the hypothesis strategy)."""
    return "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF
                   and unicodedata.category(chr(c)) in _ANY_CATEGORIES)


EMOJI = _chars((0x1F300, 0x1F5FF), (0x1F600, 0x1F64F), (0x1F680, 0x1F6FF), (0x1F900, 0x1F9FF), (0x2600, 0x26FF),
               categories={"So"})
SKIN_TONES = "".join(chr(c) for c in range(0x1F3FB, 0x1F400))
REGIONAL = "".join(chr(c) for c in range(0x1F1E6, 0x1F200))
ZWJ, VS16, KEYCAP = "\u200d", "\ufe0f", "\u20e3"
EMOJI_FIXED = ["👨\u200d👩\u200d👧\u200d👦", "🏳\ufe0f\u200d🌈", "👍🏽", "🇫🇷", "🇯🇵🇺🇸", "1\ufe0f\u20e3", "#\ufe0f\u20e3",
               "*\ufe0f\u20e3", "🏴\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F", "☺\ufe0f", "❤️\u200d🔥",
               "🍕🍺", "🙂🙂🙂", "🧑🏿\u200d🤝\u200d🧑🏻"]

#: the tokens of the hypothesis strategy (tests/fuzz/test_fuzz_insertions.py) and more of their kind
TRICKY = ["it's", "e-mail", "2013-2014", "U.S.", "etc.", "3.14", "🍕🍺", "https://x.org/a?b=1", "a@b.co", "'67",
          "rock'n'roll", "â™?now", "hello,world", "wait...what", "(x)", "“hi”", "!", "--", "?", "\"", "'", "(", ")",
          "...", "a,b,c", "६", "中文", "o'clock", "y'all", "ma'am", "don’t", "l'homme", "x-ray", "co-op", "—", "-",
          "«oui»", "¿qué?", "¡hola!", "C++", "C#", ".NET", "node.js", "#hashtag", "@mention", "$5", "5%", "10:30",
          "1,000,000", "3/4", "A/B", "a.m.", "p.m.", "Ph.D.", "...?", "?!", "!!!", "(((", ")))", "[1]", "{x}", "<br>",
          "&amp;", "‘quoted’", "„Zitat“", "「引用」", "『書名』", "（注）", "，", "。", "、", "！", "？", "…", "——"]
COMMON = ["the", "a", "I", "i", "he", "she", "it", "we", "they", "said", "went", "home", "and", "but", "or", "so",
          "when", "if", "what", "who", "is", "was", "be", "not", "no", "yes", "ok", "hello", "well", "oh", "Mr",
          "Dr", "New", "York", "Google", "John", "Mary", "today", "tomorrow", "because", "however", "then", "there",
          "here", "this", "that", "of", "in", "to", "for", "with", "on", "at", "by", "from", "up", "about", "into",
          "2004", "42", "one", "two"] + SEEN_WORDS
MARKS_ALONE = PUNCT_SEEN + PUNCT_UNSEEN + ["…", "‘", "’", "„", "‹", "›", "·", "•", "※", "@", "#", "%", "&", "+", "=",
                                           "_", "`", "´", "\\", "†", "‡", "°", "©", "®", "™", "€", "£", "¥"]
EDGE_OPEN = ["(", "[", "{", "“", "‘", "\"", "'", "«", "¿", "¡", "-", "*", "<", "„", "「", "（", "#", "@", "$"]
EDGE_CLOSE = [",", ".", "?", "!", ";", ":", ")", "]", "}", "”", "’", "\"", "'", "»", "...", "…", "?!", "!!", "-",
              "—", "*", ">", "%", "，", "。", "」", "）", ".)", ".”", ",”", "'s", "’s"]
INSIDE = [",", ".", "...", ";", ":", "!", "?", "/", "-", "—", "–", "(", ")", "'", "’", "\"", "“", "&", "+", "=", "_",
          "@", "#", "*", "，", "。", "、", "·", "…", "|", "~", "^"]
APOSTROPHES = ["'", "’", "ʼ", "‘", "`"]
HYPHENS = ["-", "‐", "‑", "–", "—", "-", "-"]
APOSTROPHE_TAILS = ["s", "t", "ll", "re", "ve", "d", "m", "n", "clock", "homme", "all", "am"]

#: whitespace between tokens: weights favour one space; ``""`` glues tokens together
SPACES = ([" "] * 30 + ["", "", "", "", "  ", "   ", "\t", "\t\t", " \t ", "\n", "\r\n", "\r\n\r\n", " \n\n ",
                         "\n\n", "\u00a0", "\u00a0 ", "\u2028", "\u2029", "\u3000", "\u2009", "\u202f", "\u200a",
                         "\x0b", "\x0c", "\x85", "\x1c", "\x1f", " \u2028 ", "\r", "\t\r\n"])
#: odd characters that are not whitespace for ``str.isspace`` (zero width, soft hyphen, bidi marks, ...)
NOT_SPACES = ["\u200b", "\u00ad", "\u200c", "\u200e", "\u200f", "\u2060", "\ufeff", "\u0301", "\u034f", "\u180e"]

#: the marks a slot may choose: the hypothesis property's and more of the model's inventory
SLOT_MARKS = [",", ".", "?", "!", ":", ";", "“", "”", "(", ")", "-", "—", "ABBR.", "'", "\"", "‘", "’", "[", "]",
              "{", "}", "...", "…", "--", "–", "!!", "?!", "/", "*", "«", "»", "‹", "›", "¿", "¡", "「", "」", "（",
              "）", "，", "。", "、", "|", "~", "_", "`", "<", ">", "''", "``", "!!!!!", "...........", "·"]


# ------------------------------------------------------------------ tokens
def _word(rng: random.Random, pool: str, lo: int = 1, hi: int = 8) -> str:
    return "".join(rng.choices(pool, k=rng.randint(lo, hi)))


def _script_word(rng: random.Random) -> str:
    return _word(rng, SCRIPTS[rng.choice(_SCRIPT_NAMES)])


_SCRIPT_NAMES = sorted(SCRIPTS)


def _emoji(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.35:
        return rng.choice(EMOJI)
    if r < 0.5:
        return rng.choice(EMOJI) + rng.choice(SKIN_TONES)
    if r < 0.65:
        return ZWJ.join(rng.choice(EMOJI) for _ in range(rng.randint(2, 4)))
    if r < 0.75:
        return rng.choice(REGIONAL) + rng.choice(REGIONAL)
    if r < 0.8:
        return rng.choice("0123456789#*") + VS16 + KEYCAP
    if r < 0.9:
        return "".join(rng.choice(EMOJI) + (VS16 if rng.random() < 0.3 else "") for _ in range(rng.randint(2, 5)))
    return rng.choice(EMOJI_FIXED)


def _host(rng: random.Random) -> str:
    labels = [_word(rng, ASCII_LOWER + "0123456789-" if rng.random() < 0.9 else SCRIPTS["cjk"], 1, 10)
              for _ in range(rng.randint(1, 3))]
    return ".".join(labels + [rng.choice(["com", "org", "co.uk", "io", "de", "jp", "中国", "xn--p1ai"])])


def _url(rng: random.Random) -> str:
    url = rng.choice(["https://", "http://", "ftp://", "", "www.", "https://www."]) + _host(rng)
    if rng.random() < 0.2:
        url += f":{rng.randint(1, 65535)}"
    for _ in range(rng.randint(0, 4)):
        url += "/" + _word(rng, ASCII_LOWER + "0123456789-_.~%", 0, 8)
    if rng.random() < 0.3:
        url += "?" + "&".join(f"{_word(rng, ASCII_LOWER, 1, 4)}={_word(rng, ASCII_LOWER + '0123456789', 0, 5)}"
                              for _ in range(rng.randint(1, 3)))
    if rng.random() < 0.15:
        url += "#" + _word(rng, ASCII_LOWER, 1, 6)
    r = rng.random()
    if r < 0.1:
        return f"({url})"
    if r < 0.2:
        return f"<{url}>"
    if r < 0.35:
        return url + rng.choice([".", ",", ")", "!", "?", "”", "..."])
    return url


def _email(rng: random.Random) -> str:
    local = _word(rng, ASCII_LOWER + "0123456789._+-", 1, 12)
    address = f"{local}@{_host(rng)}"
    return rng.choice(["", "", "", "<", "(", "mailto:"]) + address + rng.choice(["", "", "", ">", ")", ".", ","])


def _inner_apostrophe_or_hyphen(rng: random.Random) -> str:
    head = _word(rng, ASCII_LOWER if rng.random() < 0.6 else SCRIPTS[rng.choice(_SCRIPT_NAMES)], 1, 6)
    r = rng.random()
    if r < 0.45:
        return head + rng.choice(APOSTROPHES) + (rng.choice(APOSTROPHE_TAILS) if rng.random() < 0.6
                                                 else _word(rng, ASCII_LOWER, 1, 5))
    if r < 0.55:  # rock'n'roll, l'état-major
        return rng.choice(APOSTROPHES).join(_word(rng, ASCII_LOWER, 1, 4) for _ in range(rng.randint(3, 4)))
    return rng.choice(HYPHENS).join(_word(rng, ASCII_LOWER + "0123456789", 1, 6) for _ in range(rng.randint(2, 4)))


def _number(rng: random.Random) -> str:
    n = rng.randint(0, 10 ** rng.randint(1, 9))
    return rng.choice([str(n), f"{n:,}", f"{n / 100:.2f}", f"{n}%", f"${n}", f"'{n % 100:02d}", f"{n}th",
                       f"{n % 2000}-{n % 2000 + 1}", f"{n % 24}:{n % 60:02d}", f"{n % 10}/{n % 7 + 1}",
                       f"+{n}", f"-{n}", f"{n}.", f"№{n}", f"{n}km", "".join(rng.choice(SCRIPTS['digits'])
                                                                           for _ in range(rng.randint(1, 5)))])


def _marked_edge(rng: random.Random) -> str:
    word = _script_word(rng) if rng.random() < 0.5 else rng.choice(COMMON)
    r = rng.random()
    if r < 0.4:
        return word + rng.choice(EDGE_CLOSE)
    if r < 0.7:
        return rng.choice(EDGE_OPEN) + word
    return rng.choice(EDGE_OPEN) + word + rng.choice(EDGE_CLOSE)


def _marked_inside(rng: random.Random) -> str:
    pieces = [_script_word(rng) if rng.random() < 0.4 else _word(rng, ASCII_LOWER, 1, 6)
              for _ in range(rng.randint(2, 4))]
    out = pieces[0]
    for piece in pieces[1:]:
        out += "".join(rng.choice(INSIDE) for _ in range(rng.randint(1, 2))) + piece
    return out


def _odd(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return rng.choice(ODD_WORDS)
    word = _word(rng, ASCII_LOWER, 1, 5)
    at = rng.randint(0, len(word))
    return word[:at] + rng.choice(NOT_SPACES) + word[at:]


def _long(rng: random.Random, top: int = 3000) -> str:
    """A very long token (100 to ``top`` characters, log-uniform): letters, digits, a URL, marks
    inside a long run, emoji or a mark run."""
    size = int(100 * (top / 100) ** rng.random())
    r = rng.random()
    if r < 0.3:
        return _word(rng, SCRIPTS[rng.choice(_SCRIPT_NAMES)], size, size)
    if r < 0.45:
        return "https://example.org/" + "/".join(_word(rng, ASCII_LOWER, 1, 9) for _ in range(size // 6))
    if r < 0.65:
        return "".join(rng.choice(pool) for pool in rng.choices([ASCII_LOWER, INSIDE], [0.85, 0.15], k=size))
    if r < 0.75:
        return "".join(_emoji(rng) for _ in range(size // 20))
    if r < 0.85:
        return rng.choice(["!", ".", "?", "-", "*", "=", "…", "，"]) * min(size, 300)
    return _word(rng, "0123456789", size, size)


def _long_zh(rng: random.Random) -> str:
    """A long token for the zh pipeline, which makes a word of every character: up to 600."""
    return _long(rng, 600)


def _any_word(rng: random.Random) -> str:
    return _word(rng, any_chars(), 1, 6)


def _cjk_run(rng: random.Random) -> str:
    pool = SCRIPTS["cjk"] if rng.random() < 0.85 else SCRIPTS["kana"]
    run = _word(rng, pool, 1, 6)
    if rng.random() < 0.2:
        at = rng.randint(0, len(run))
        run = run[:at] + rng.choice(["，", "。", "、", "！", "？", "：", "；", "「", "」", "《", "》", ",", "."]) + run[at:]
    return run


_KINDS = [(_script_word, 20), (lambda rng: rng.choice(COMMON), 14), (_any_word, 6), (_inner_apostrophe_or_hyphen, 8),
          (_number, 5), (_emoji, 6), (_url, 3), (_email, 2), (lambda rng: rng.choice(MARKS_ALONE), 10),
          (_marked_edge, 9), (_marked_inside, 5), (lambda rng: rng.choice(TRICKY), 6), (_odd, 3), (_long, 0.3),
          (_cjk_run, 2)]
#: the zh pipeline makes a word of every character: shorter long tokens there
_ZH_ANY_KINDS = [(_long_zh if fn is _long else fn, w) for fn, w in _KINDS]
_ZH_KINDS = [(_cjk_run, 50)] + [(fn, w / 2) for fn, w in _ZH_ANY_KINDS if fn is not _cjk_run]


def _cumulative(kinds):
    total, out = 0.0, []
    for _, w in kinds:
        total += w
        out.append(total)
    return [fn for fn, _ in kinds], out


_EN_TOKENS, _EN_CUM = _cumulative(_KINDS)
_ZH_ANY_TOKENS, _ZH_ANY_CUM = _cumulative(_ZH_ANY_KINDS)
_ZH_TOKENS, _ZH_CUM = _cumulative(_ZH_KINDS)
_ZH_SPACES = [""] * 20 + SPACES


# ------------------------------------------------------------------ texts and cases
def case_rng(seed: int, index: int) -> random.Random:
    return random.Random(seed * 2 ** 32 + index)


def make_text(rng: random.Random) -> Tuple[str, str]:
    """A language (``en`` or ``zh``) and a text: 1 to 30 tokens (sometimes up to 150) with the
    whitespace after each, sometimes whitespace first; in zh, whose pipeline makes a word of every
    character, 1 to 15 tokens (sometimes up to 60)."""
    lang = "zh" if rng.random() < 0.35 else "en"
    if lang == "en":
        tokens, cum, spaces, top = _EN_TOKENS, _EN_CUM, SPACES, 30
    elif rng.random() < 0.6:
        tokens, cum, spaces, top = _ZH_TOKENS, _ZH_CUM, _ZH_SPACES, 15
    else:  # a zh pipeline on text of any kind
        tokens, cum, spaces, top = _ZH_ANY_TOKENS, _ZH_ANY_CUM, SPACES, 15
    n = rng.randint(1, top) if rng.random() < 0.95 else rng.randint(top + 1, 5 * top)
    parts = [rng.choice(spaces)] if rng.random() < 0.05 else []
    for fn in rng.choices(tokens, cum_weights=cum, k=n):
        parts.append(fn(rng))
        parts.append(rng.choice(spaces))
    return lang, "".join(parts)


def cut_sentences(rng: random.Random, words: List[int]) -> List[List[int]]:
    """The words cut into consecutive sentences: up to 3 random cuts (as the hypothesis
    property), or now and then a cut after each word with a random probability."""
    if len(words) < 2:
        cuts: Sequence[int] = []
    elif rng.random() < 0.9:
        cuts = sorted({rng.randint(1, len(words)) for _ in range(rng.randint(0, 3))})
    else:
        p = rng.random()
        cuts = [c for c in range(1, len(words)) if rng.random() < p]
    sentences, start = [], 0
    for c in list(cuts) + [len(words)]:
        if c > start:
            sentences.append(words[start:c])
            start = c
    return sentences


def _slot_choices():
    """The choices a slot draws from, with their cumulative weights: nothing (half the slots),
    every single mark, every pair of marks, and 8192 triples (drawn once, seed 0)."""
    singles = [(m,) for m in SLOT_MARKS]
    pairs = [(m, n) for m in SLOT_MARKS for n in SLOT_MARKS]
    triple_rng = random.Random(0)
    triples = [tuple(triple_rng.choices(SLOT_MARKS, k=3)) for _ in range(8192)]
    choices, cum, total = [SlotChoice((), 0.5)], [0.5], 0.5
    for group, weight in ((singles, 0.2), (pairs, 0.15), (triples, 0.15)):
        for surface in group:
            total += weight / len(group)
            choices.append(SlotChoice(surface, 0.5))
            cum.append(total)
    return choices, cum


SLOT_CHOICES, _SLOT_CUM = _slot_choices()


def slot_choices(rng: random.Random, n: int) -> List[SlotChoice]:
    """Random choices of ``n`` slots."""
    return rng.choices(SLOT_CHOICES, cum_weights=_SLOT_CUM, k=n)


_NLP = {}


def blank(lang: str):
    if lang not in _NLP:
        _NLP[lang] = spacy.blank(lang)
    return _NLP[lang]


@dataclass
class Outcome:
    """What checking one case found: ``problems`` empty when the rule held."""
    seed: int
    index: int
    lang: str
    text: str
    repunctuate: bool
    checked: bool = False  # False: the text has no word, nothing to check
    n_insertions: int = 0
    n_deletions: int = 0
    problems: List[str] = field(default_factory=list)

    def describe(self) -> str:
        return (f"insertion rule broken: seed={self.seed} index={self.index} lang={self.lang} "
                f"repunctuate={self.repunctuate}\n  text={self.text!r}\n  "
                + "\n  ".join(self.problems)
                + f"\n  replay: python tests/fuzz/fast_texts.py --seed {self.seed} --index {self.index}")


def check_case(seed: int, index: int) -> Outcome:
    """Draw case ``index`` of run ``seed`` and check it as tests/fuzz/test_fuzz_insertions.py does."""
    rng = case_rng(seed, index)
    lang, text = make_text(rng)
    repunctuate = rng.random() < 0.5
    out = Outcome(seed, index, lang, text, repunctuate)
    try:
        doc = blank(lang)(text)
        # the tokens neither space nor punctuation: [t.i for t in doc if not t.is_space and not t.is_punct]
        words = np.flatnonzero(~doc.to_array([IS_SPACE, IS_PUNCT]).any(axis=1)).tolist() if len(doc) else []
        if not words:
            return out
        sentences = cut_sentences(rng, words)
        decoded = [(wt, slot_choices(rng, len(wt) + 1)) for wt in sentences]
        out.checked = True
        entries, ins, dels = slot_insertions(doc, list(range(len(sentences))), decoded, repunctuate)
        doc_text = doc.text  # spaCy builds it anew on every read
        restored = apply_edits(doc_text, ins, dels)
        out.problems = rule_violations(doc_text, restored, ins, dels, lang, repunctuate)
        if len(entries) != sum(len(wt) + 1 for wt in sentences):
            out.problems.append(f"{len(entries)} entries for {sum(len(wt) + 1 for wt in sentences)} slots")
        out.n_insertions, out.n_deletions = len(ins), len(dels)
    except Exception:  # noqa: BLE001 - any exception breaks the property; report it with the case
        out.checked = True
        out.problems = [traceback.format_exc()]
    return out


@dataclass
class RangeResult:
    """The cases ``start .. stop`` of one run: how many were checked, how many had no word,
    the insertions and deletions made, and the first failure (None: none)."""
    start: int
    stop: int
    checked: int = 0
    skipped: int = 0
    insertions: int = 0
    deletions: int = 0
    failure: Optional[Outcome] = None


def check_range(seed: int, start: int, stop: int) -> RangeResult:
    """Check cases ``start .. stop - 1``, with fresh blank pipelines: their vocabularies grow by
    every new word (some 6 kB a text), so a long run's memory stays flat."""
    _NLP.clear()
    result = RangeResult(start, stop)
    for index in range(start, stop):
        out = check_case(seed, index)
        if not out.checked:
            result.skipped += 1
            continue
        result.checked += 1
        result.insertions += out.n_insertions
        result.deletions += out.n_deletions
        if out.problems:
            result.failure = out
            result.stop = index + 1
            break
    return result


def _check_chunk(args) -> RangeResult:
    return check_range(*args)


@dataclass
class RunResult:
    seed: int
    checked: int
    skipped: int
    insertions: int
    deletions: int
    seconds: float
    failure: Optional[Outcome]

    @property
    def rate(self) -> float:
        return self.checked / self.seconds if self.seconds > 0 else float("inf")

    def summary(self) -> str:
        return (f"fast insertion fuzz: {self.checked} texts checked ({self.skipped} without a word skipped), "
                f"{self.insertions} insertions, {self.deletions} deletions, seed {self.seed}, "
                f"{self.seconds:.1f} s, {self.rate:.0f} texts/s")


def run(n_texts: int, seed: int, workers: int = 1, chunk: int = 5000, budget_s: Optional[float] = None,
        progress=None) -> RunResult:
    """Check cases ``0 .. n_texts - 1`` of run ``seed`` in ``workers`` processes (chunks of
    ``chunk`` cases), stopping at the first failure or once ``budget_s`` seconds are spent."""
    t0 = time.monotonic()
    chunks = [(seed, lo, min(lo + chunk, n_texts)) for lo in range(0, n_texts, chunk)]
    totals = RangeResult(0, n_texts)
    failures: List[Outcome] = []

    def add(r: RangeResult) -> bool:
        for name in ("checked", "skipped", "insertions", "deletions"):
            setattr(totals, name, getattr(totals, name) + getattr(r, name))
        if r.failure is not None:
            failures.append(r.failure)
        if progress is not None:
            progress(totals, time.monotonic() - t0)
        return bool(failures) or (budget_s is not None and time.monotonic() - t0 > budget_s)

    if workers <= 1:
        for c in chunks:
            if add(check_range(*c)):
                break
    else:
        any_chars()  # built once, inherited by forked workers
        methods = multiprocessing.get_all_start_methods()
        ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        with ctx.Pool(workers) as pool:
            for r in pool.imap_unordered(_check_chunk, chunks):
                if add(r):
                    pool.terminate()
                    break
    failure = min(failures, key=lambda f: f.index) if failures else None
    return RunResult(seed, totals.checked, totals.skipped, totals.insertions, totals.deletions,
                     time.monotonic() - t0, failure)


def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _print_progress(totals: RangeResult, seconds: float) -> None:
    print(f"  {totals.checked} checked, {seconds:.0f} s, {totals.checked / max(seconds, 1e-9):.0f} texts/s",
          file=sys.stderr, flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--index", type=int, default=None, help="replay this one case and print it")
    parser.add_argument("--texts", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=default_workers())
    parser.add_argument("--profile", type=int, default=None, help="profile this many cases in one process")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2 ** 31)
    if args.index is not None:
        out = check_case(seed, args.index)
        print(out.describe() if out.problems else f"seed={seed} index={args.index} lang={out.lang} "
              f"repunctuate={out.repunctuate} checked={out.checked}: the rule holds\n  text={out.text!r}")
        return 1 if out.problems else 0
    if args.profile is not None:
        import cProfile
        import pstats

        any_chars()
        profiler = cProfile.Profile()
        profiler.runcall(check_range, seed, 0, args.profile)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
        return 0
    result = run(args.texts, seed, args.workers, progress=_print_progress)
    print(result.summary())
    if result.failure is not None:
        print(result.failure.describe())
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
