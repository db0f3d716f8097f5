"""Shared pieces of the fuzz tests (tests/fuzz/): hypothesis settings for the bounded default run
and the ``slow`` long run, strategies of random spaCy Docs, what a Doc's documented outcome is,
and the checks every processed Doc must pass.

Settings.  The default run (``pytest tests/fuzz``) is bounded and reproducible: a few dozen
examples per property, ``derandomize=True``.  The long run (``pytest tests/fuzz -m slow``) runs
the same properties with fresh random seeds and many more examples:

* ``PUNCTGEN_FUZZ_EXAMPLES``: examples per property in the long run (default 5000);
* ``PUNCTGEN_FUZZ_SECONDS``: stop trying new inputs of one property after this many seconds
  (default: no limit), unless one has failed (it is then shrunk and reported);
* ``PUNCTGEN_FUZZ_REPORT``: a JSON file to write, per property, how many inputs were tried.

Every property counts the inputs it actually ran (:data:`COUNTS`); the terminal summary of a
run prints them (tests/fuzz/conftest.py).
"""
from __future__ import annotations

import functools
import json
import math
import os
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from spacy.tokens import Doc

from spacy_punctgen.errors import Errors
from spacy_punctgen.pipeline.doc_convert import UD_RELATIONS

COUNTS: Counter = Counter()
#: parametrize a property with this: the bounded default run, and the long run (marked slow)
RUNS = ["default", pytest.param("long", marks=pytest.mark.slow)]

_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
           HealthCheck.function_scoped_fixture, HealthCheck.large_base_example]


def long_examples() -> int:
    return int(os.environ.get("PUNCTGEN_FUZZ_EXAMPLES", "5000"))


def run_settings(run: str, default_examples: int, long_examples_: Optional[int] = None):
    """The hypothesis settings of a property: ``run`` is "default" (bounded, derandomized) or
    "long" (``-m slow``: fresh seeds, PUNCTGEN_FUZZ_EXAMPLES examples or ``long_examples_``)."""
    if run == "default":
        return settings(max_examples=default_examples, deadline=None, derandomize=True, database=None,
                        suppress_health_check=_HEALTH, print_blob=True)
    n = long_examples_ if long_examples_ is not None and "PUNCTGEN_FUZZ_EXAMPLES" not in os.environ \
        else long_examples()
    return settings(max_examples=n, deadline=None, derandomize=False, database=None,
                    suppress_health_check=_HEALTH, print_blob=True, report_multiple_bugs=True)


class BudgetSpent(pytest.skip.Exception):
    """Raised by :func:`tried` once the long run's time for a property is spent: hypothesis
    re-raises pytest's skip exceptions at once, and :func:`run_property` ends the test there."""


_CURRENT = {"key": None, "start": 0.0, "failed": False}


def run_property(key: str, prop) -> None:
    """Run the hypothesis test ``prop`` (decorated with :func:`guarded`) as property ``key``;
    with PUNCTGEN_FUZZ_SECONDS it stops trying new inputs after that many seconds, unless an
    input has failed (then hypothesis shrinks and reports it, whatever the time)."""
    _CURRENT.update(key=key, start=time.monotonic(), failed=False)
    try:
        prop()
    except BudgetSpent:
        pass


def guarded(fn):
    """Under ``@given``: notes that an input failed, so that the time budget never cuts short the
    shrinking and reporting of a failure."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except BudgetSpent:
            raise
        except BaseException:
            _CURRENT["failed"] = True
            raise

    return wrapper


def tried(name: str) -> bool:
    """Count one input of property ``name`` (always True: running it is the caller's job);
    BudgetSpent once the long run's time budget for the current property is spent."""
    budget = os.environ.get("PUNCTGEN_FUZZ_SECONDS")
    if budget is not None and not _CURRENT["failed"] and time.monotonic() - _CURRENT["start"] > float(budget):
        raise BudgetSpent(f"fuzz time budget of {budget} s spent")
    COUNTS[name] += 1
    return True


def write_report() -> None:
    path = os.environ.get("PUNCTGEN_FUZZ_REPORT")
    if path and COUNTS:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(dict(sorted(COUNTS.items())), f, indent=1)


# ------------------------------------------------------------------ documented errors
_CODE = re.compile(r"^\[(E\d{3})\]")


def error_code(err: BaseException) -> Optional[str]:
    """The code of one of our documented errors (a ValueError whose message starts with
    ``[Ennn]``, a code of :class:`Errors`), else None."""
    if not isinstance(err, ValueError):
        return None
    m = _CODE.match(str(err))
    if m is None or not hasattr(Errors, m.group(1)):
        return None
    return m.group(1)


def assert_documented(err: BaseException, allowed=None) -> str:
    code = error_code(err)
    if code is None:
        raise AssertionError(f"undocumented exception {type(err).__name__}: {err}") from err
    if allowed is not None and code not in allowed:
        raise AssertionError(f"{code} raised, expected one of {sorted(allowed)}: {err}") from err
    return code


# ------------------------------------------------------------------ random Docs
UPOS_WORDS = ["NOUN", "VERB", "PROPN", "PRON", "ADJ", "ADV", "ADP", "DET", "AUX", "CCONJ", "SCONJ", "NUM",
              "PART", "INTJ", "SYM", "X", ""]
UD_LABELS = sorted(UD_RELATIONS - {"punct"}) + ["nsubj:pass", "nmod:poss", "obl:tmod", "ROOT", "Nsubj",
                                                  "acl:relcl", "compound:prt"]
UNKNOWN_LABELS = ["foo", "nn", "prep", "pobj", "attr", "ROOT2", "subj", "dobjx", "npadvmod", "", "p:unct"]
SEEN_WORDS = ["the", "a", "he", "she", "said", "went", "home", "and", "but", "when", "I", "came", "left",
              "U.S.", "etc.", "Mr.", "Dr.", "e.g.", "i.e.", "don't", "'s", "n't", "Google", "2004", "3.5",
              "what", "if", "is", "question", "known", "coming", "of", "in", "to", "New", "York", "ok",
              "..", ".", "a.", "-", "x-ray", "e-mail"]
ODD_WORDS = ["naïve", "Straße", "我", "来", "了", "кот", "🙂", "a b", "\u200b", "A\u0301", "ǅ", "ﬁ", "٣",
             "‽", "¿", "—", "«", "^", "<unk>", "ABBR.", "@", "#tag", "http://x.y/z", "C++", "..."]
PUNCT_SEEN = [",", ".", "?", "!", ";", ":", "-", "--", "—", "(", ")", '"', "'", "``", "''", "“", "”", "‘",
              "’", "...", "/", "&", "*", "[", "]"]
PUNCT_UNSEEN = ["‽", "¿", "，", "«", "»", "。", "——", "^", "<unk>", "ABBR.", "¡", "、", "…", "‐", "§",
                "!!", "?!", "{", "}", "|", "~", "<", ">"]
SPACES = [" ", "\n", "\t", "\n\n", "  ", "\u3000", "\r\n", "\u00a0"]

_word_chars = st.characters(codec="utf-8", exclude_categories=("Cs", "Zs", "Zl", "Zp", "Cc"))
random_words = st.text(_word_chars, min_size=1, max_size=8).filter(lambda s: not s.isspace())


@st.composite
def word_texts(draw):
    kind = draw(st.integers(0, 9))
    if kind < 6:
        return draw(st.sampled_from(SEEN_WORDS))
    if kind < 8:
        return draw(st.sampled_from(ODD_WORDS))
    return draw(random_words)


@st.composite
def punct_texts(draw):
    kind = draw(st.integers(0, 9))
    if kind < 6:
        return draw(st.sampled_from(PUNCT_SEEN))
    if kind < 9:
        return draw(st.sampled_from(PUNCT_UNSEEN))
    return draw(st.text(st.sampled_from(list(".,;:!?-()[]\"'‽¿，«»。—^*&%$#@")), min_size=1, max_size=4))


@dataclass
class DocSpec:
    """The arguments of ``Doc(vocab, ...)`` (heads absolute, or None for a Doc without a parse)."""
    words: List[str]
    spaces: List[bool]
    pos: List[str]
    heads: Optional[List[int]]
    deps: Optional[List[str]]
    kinds: List[str] = field(default_factory=list)  # "word", "punct" or "space" per token

    def make(self, vocab) -> Doc:
        if self.heads is None:
            return Doc(vocab, words=list(self.words), spaces=list(self.spaces), pos=list(self.pos))
        return Doc(vocab, words=list(self.words), spaces=list(self.spaces), pos=list(self.pos),
                   heads=list(self.heads), deps=list(self.deps),
                   sent_starts=[i == 0 for i in range(len(self.words))])


@st.composite
def doc_specs(draw, mode: str = "analyze", valid: bool = False, max_tokens: int = 12):
    """A random Doc: words (seen, unseen, odd), punctuation marks (seen and unseen, many in
    ``analyze`` mode, few in ``restore`` mode: PUNCT tokens there are set aside), whitespace
    tokens; heads of a random forest (several roots, ROOT in odd places, so that spaCy's sentence
    starts cut arcs: heads outside the sentence), or, unless ``valid``, arbitrary heads (cycles),
    unknown labels, no parse at all, empty Docs."""
    n = draw(st.integers(0 if not valid else 1, max_tokens))
    p_punct = 0.35 if mode == "analyze" else 0.06
    kinds, words, pos = [], [], []
    for _ in range(n):
        r = draw(st.floats(0, 1))
        kind = "punct" if r < p_punct else ("space" if r < p_punct + 0.07 else "word")
        kinds.append(kind)
        if kind == "word":
            words.append(draw(word_texts()))
            pos.append(draw(st.sampled_from(UPOS_WORDS)))
        elif kind == "punct":
            words.append(draw(punct_texts()))
            pos.append("PUNCT")
        else:
            words.append(draw(st.sampled_from(SPACES)))
            pos.append("SPACE")
    spaces = [draw(st.booleans()) for _ in range(n)]
    if n == 0:
        return DocSpec([], [], [], [], [], [])
    shape = "forest" if valid else draw(st.sampled_from(["forest"] * 7 + ["chain", "any", "any", "none"]))
    if shape == "none":
        return DocSpec(words, spaces, pos, None, None, kinds)
    if shape == "any":  # arbitrary heads: cycles possible
        heads = [draw(st.integers(0, n - 1)) for _ in range(n)]
    elif shape == "chain":  # a deep chain, left or right branching
        if draw(st.booleans()):
            heads = [i + 1 if i + 1 < n else i for i in range(n)]
        else:
            heads = [i - 1 if i > 0 else 0 for i in range(n)]
    else:  # a random forest: heads point earlier in a random order of the tokens
        order = draw(st.permutations(range(n)))
        heads = [0] * n
        for k, tok in enumerate(order):
            if k == 0 or draw(st.floats(0, 1)) < 0.15:
                heads[tok] = tok
            else:
                heads[tok] = order[draw(st.integers(0, k - 1))]
    deps = []
    for i in range(n):
        if kinds[i] == "punct":
            deps.append(draw(st.sampled_from(["punct", "punct", "punct", "dep", "ROOT"])))
            continue
        r = draw(st.floats(0, 1))
        if heads[i] == i and r < 0.7:
            deps.append("ROOT")
        elif not valid and r > 0.98:
            deps.append(draw(st.sampled_from(UNKNOWN_LABELS)))
        else:
            deps.append(draw(st.sampled_from(UD_LABELS)))
    return DocSpec(words, spaces, pos, heads, deps, kinds)


# ------------------------------------------------------------------ documented outcome
def _cycle(heads: List[int]) -> bool:
    state = [0] * len(heads)
    for i in range(len(heads)):
        path, j = [], i
        while j >= 0 and state[j] == 0:
            state[j] = 1
            path.append(j)
            j = heads[j]
        if j >= 0 and state[j] == 1:
            return True
        for k in path:
            state[k] = 2
    return False


def expected_error(doc: Doc) -> Optional[str]:
    """The documented outcome of running ``punctgen`` on ``doc``: None (it must succeed), or the
    code of the error it must raise: E001 (no parse), E002 (a label that is not UD), E016 (a
    cycle among the heads of one sentence, heads outside the sentence counting as roots)."""
    toks = [t for t in doc if not t.is_space]
    if not toks:
        return None
    if not doc.has_annotation("DEP"):
        return "E001"
    if any(t.dep_.split(":", 1)[0].lower() not in UD_RELATIONS for t in toks):
        return "E002"
    for sent in doc.sents:
        heads = [-1 if (t.head.i == t.i or not sent.start <= t.head.i < sent.end) else t.head.i - sent.start
                 for t in sent]
        if _cycle(heads):
            return "E016"
    return None


def is_word(tok) -> bool:
    """A word of the depunctuated sentence: neither whitespace nor punctuation (the strategies
    never give a word token UPOS PUNCT or the relation ``punct``; a PUNCT token is punctuation
    whatever its relation)."""
    return not tok.is_space and tok.pos_ != "PUNCT" and tok.dep_.split(":")[0].lower() != "punct"


def sentence_words(doc: Doc) -> List[List[int]]:
    return [[t.i for t in sent if is_word(t)] for sent in doc.sents] if len(doc) else []


# ------------------------------------------------------------------ checks of one Doc
def _is_str_tuple(x) -> bool:
    return isinstance(x, tuple) and all(isinstance(t, str) for t in x)


def check_slots(doc: Doc, entries, what: str) -> None:
    """Per sentence with words, one entry per slot, ``after`` the word before it: every word of
    the input, in order, and nothing else."""
    assert isinstance(entries, list), f"{what} is {type(entries)}"
    by_sent = {}
    for e in entries:
        by_sent.setdefault(e["sentence"], []).append(e)
    sents = sentence_words(doc)
    for si, words in enumerate(sents):
        got = by_sent.pop(si, [])
        if not words:
            assert got == [], f"{what}: entries for sentence {si} without words"
            continue
        assert [e["slot"] for e in got] == list(range(len(words) + 1)), f"{what}: slots of sentence {si}"
        assert [e["after"] for e in got] == [None] + words, \
            f"{what}: sentence {si} has words {words}, the slots follow {[e['after'] for e in got]}"
        for e in got:
            assert _is_str_tuple(e["surface"]), f"{what}: surface {e['surface']!r}"
    assert not by_sent, f"{what}: entries for sentences {sorted(by_sent)} that do not exist"


def check_analyzed(doc: Doc) -> None:
    entries = doc._.underlying_punct
    check_slots(doc, entries, "underlying_punct")
    for e in entries:
        assert e["underlying"] is None or _is_str_tuple(e["underlying"]), e
    words = {i for ws in sentence_words(doc) for i in ws}
    for tok in doc:
        left, right = tok._.punct_left, tok._.punct_right
        if tok.i not in words:
            assert left is None and right is None, f"token {tok.i} {tok.text!r} is no word but has {left}, {right}"
        else:
            assert (left is None) == (right is None)
            assert left is None or (_is_str_tuple(left) and _is_str_tuple(right)), (left, right)
    lp = doc._.punct_logprob
    assert isinstance(lp, float) and math.isfinite(lp), f"punct_logprob {lp!r}"
    assert lp <= 1e-6, f"punct_logprob {lp} > 0"


def check_restored(doc: Doc) -> None:
    entries = doc._.restored_punct
    check_slots(doc, entries, "restored_punct")
    for e in entries:
        p = e["prob"]
        assert isinstance(p, float) and math.isfinite(p) and -1e-9 <= p <= 1 + 1e-9, f"prob {p!r}"
    text = doc._.restored_text
    assert isinstance(text, str)
    check_words_in_order([doc[i].text for ws in sentence_words(doc) for i in ws], text)


def check_words_in_order(words: List[str], text: str) -> None:
    """Every word occurs in ``text``, in order, whole; an abbreviation's dot is not doubled."""
    pos = 0
    for k, w in enumerate(words):
        at = text.find(w, pos)
        assert at >= 0, f"word {k} {w!r} missing from {text!r} (after position {pos})"
        pos = at + len(w)
        if w.endswith(".") and not w.endswith(".."):
            rest = text[pos:]
            nxt = words[k + 1] if k + 1 < len(words) else None
            if rest.startswith(".") and not rest.startswith("..") and not (nxt and rest.startswith(nxt)):
                raise AssertionError(f"the dot of {w!r} is doubled in {text!r}")


def snapshot(doc: Doc, mode: str):
    """Everything the component wrote, types included (a tuple is not a list)."""
    if mode == "restore":
        return (repr(doc._.restored_punct), doc._.restored_text)
    return (repr(doc._.underlying_punct), repr([(t._.punct_left, t._.punct_right) for t in doc]),
            repr(doc._.punct_logprob))
