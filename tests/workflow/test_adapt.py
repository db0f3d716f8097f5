"""``spacy_punctgen.workflow.adapt``: punctuated text split into words and marks, TSV detection,
the shares, the refusals, and one adaptation of a tiny text (from the sample treebank) that
``spacy_punctgen.load`` then restores with."""
import io
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_punctgen.data.ted import read_ted, split_blocks
from spacy_punctgen.workflow import adapt as A

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "assets" / "sample" / "en_sample-ud-train.conllu"
IWSLT = ROOT.parent / "shared" / "iwslt" / "dev2012.tsv"


def sample_text(n_sentences: int) -> str:
    """The first sentences of the sample treebank as punctuated text (their ``# text``), two a line."""
    texts = [line[len("# text = "):] for line in SAMPLE.read_text(encoding="utf-8").splitlines()
             if line.startswith("# text = ")][:n_sentences]
    return "\n".join(" ".join(texts[i:i + 2]) for i in range(0, len(texts), 2)) + "\n"


def pairs(text, lowercase=False):
    got = A.split_punctuated(text, lowercase=lowercase)
    return list(zip(got.words, got.marks)), got.dropped


# ------------------------------------------------------------------ splitting
@pytest.mark.parametrize("text, expected, dropped", [
    ("word, next", [("word", ","), ("next", "")], 0),
    ('the end." Then', [("the", ""), ("end", ". \u201d"), ("Then", "")], 0),
    ('he said "no" (twice)', [("he", ""), ("said", ""), ("no", "\u201d"), ("twice", ")")], 2),
    ("Al-Zaman : American", [("Al-Zaman", ":"), ("American", "")], 0),
    ("wait -- what?! really...", [("wait", "--"), ("what", "? !"), ("really", "...")], 0),
    ("e-mail 3.14. don't U.S. e.g., Mr. Smith", [("e-mail", ""), ("3.14", "."), ("don't", ""), ("U.S.", ""),
                                                 ("e.g.", ","), ("Mr.", ""), ("Smith", "")], 0),
    ("students' books 'cause 50%, AT&T.", [("students'", ""), ("books", ""), ("'cause", ""), ("50%", ","),
                                           ("AT&T", ".")], 0),
    ("one.\n\ntwo\tthree", [("one", "."), ("two", ""), ("three", "")], 0),
    ("\" ( start ( mid", [("start", ""), ("mid", "")], 3),  # punctuation-only: openers left out
    ("end . ,", [("end", ". ,")], 0),
    ("!!! ?", [], 4),
])
def test_split_punctuated(text, expected, dropped):
    assert pairs(text) == (expected, dropped)


def test_split_lowercases_words_only():
    got = A.split_punctuated("Hello, World. I'M here\u201d", lowercase=True)
    assert got.words == ["hello", "world", "i'm", "here"]
    assert got.marks == [",", ".", "", "\u201d"]


_UNDIRECT = str.maketrans({"\u201d": '"', "\u2019": "'"})
_ALPHABET = list("abcXYZ019 .,;:!?'\"()[]-\u2026%&/\n\t\u2014\u201c\u201d\u2019\u00bf")


def _is_subsequence(small: str, big: str) -> bool:
    it = iter(big)
    return all(ch in it for ch in small)


@settings(max_examples=300, deadline=None)
@given(st.text(st.one_of(st.sampled_from(_ALPHABET), st.characters(exclude_categories=("Cs",))), max_size=80))
def test_split_keeps_every_character_but_the_dropped_leading_marks(text):
    got = A.split_punctuated(text, lowercase=False)
    assert len(got.words) == len(got.marks)
    assert all(w and w == w.strip() and not any(c.isspace() for c in w) for w in got.words)
    for marks in got.marks:
        assert marks == " ".join(marks.split())  # single spaces between mark tokens
        assert all(A.is_mark(c) for c in marks.replace(" ", ""))
    joined = "".join(w + m.replace(" ", "") for w, m in zip(got.words, got.marks)).translate(_UNDIRECT)
    source = "".join(text.split()).translate(_UNDIRECT)
    assert _is_subsequence(joined, source)
    assert len(source) - len(joined) == got.dropped
    lower = A.split_punctuated(text, lowercase=True)
    assert lower.words == [w.lower() for w in got.words] and lower.marks == got.marks


def test_split_without_leading_marks_is_exact():
    text = sample_text(40).replace("(", "").replace("[", "").replace('"', "").replace("'", "")
    got = A.split_punctuated(text, lowercase=False)
    assert got.dropped == 0
    assert "".join(w + m.replace(" ", "") for w, m in zip(got.words, got.marks)) == "".join(text.split())


# ------------------------------------------------------------------ formats and shares
def _tsv(n_sentences=20, words=6):
    lines = []
    for s in range(n_sentences):
        for k in range(words):
            label = "PERIOD" if k == words - 1 else ("COMMA" if k == 2 else "O")
            lines.append(f"w{s}x{k}\t{label}")
    return "\n".join(lines) + "\n"


def test_tsv_detection():
    assert A.is_tsv_text("hello\tO\nworld\tPERIOD\n\n")
    assert A.is_tsv_text("a\tCOMMA\r\nb\tQUESTION\r\n\tO\n")  # CRLF, and the file's empty-word lines
    assert not A.is_tsv_text("hello\tO\nworld\tEXCLAMATION\n")
    assert not A.is_tsv_text("hello world.\tO\n")
    assert not A.is_tsv_text("Hello, world.\n")
    assert not A.is_tsv_text("\n \n")


def test_read_file_detects_each_format(tmp_path):
    tsv = tmp_path / "a.tsv"
    tsv.write_text("\ufeffHello\tCOMMA\nworld\tPERIOD\n", encoding="utf-8")
    txt = tmp_path / "a.tsv.txt"
    txt.write_text("\ufeffHello, world.\n", encoding="utf-8")
    for path in (tsv, txt):
        part, kind = A.read_file(path)
        assert (part.words, part.marks) == (["hello", "world"], [",", "."])
        assert kind == ("tsv" if path == tsv else "text")
    forced, kind = A.read_file(tsv, "text", lowercase=False)
    assert kind == "text" and forced.words[:2] == ["Hello", "COMMA"]
    with pytest.raises(ValueError, match=r"\[E768\]"):
        A.read_file(txt, "tsv")


def test_tsv_share_is_the_evaluate_stream_training_block(tmp_path):
    path = tmp_path / "talks.tsv"
    path.write_text(_tsv(), encoding="utf-8")
    (a, b), _ = split_blocks(read_ted(path), 0.7, path)
    text = A.read_adaptation_text([path], share=0.7, dev_share=0.25)
    f = text.files[0]
    assert (f.fmt, f.words, f.used) == ("tsv", 120, b)
    ted = read_ted(path)
    assert f.train.words + f.dev.words == ted.words[a:b]
    assert f.train.marks + f.dev.marks == ted.marks[a:b]
    assert f.train.marks[-1] == "." and len(f.dev) > 0  # the dev part starts a sentence


@pytest.mark.skipif(not IWSLT.is_file(), reason=f"needs {IWSLT} (the IWSLT 2012 dev file)")
def test_iwslt_share_matches_split_blocks():
    (_, b), _ = split_blocks(read_ted(IWSLT), 0.8, IWSLT)
    text = A.read_adaptation_text([IWSLT], share=0.8)
    assert text.files[0].used == b
    assert text.n_words("train") + text.n_words("dev") == b


def test_text_share_and_dev_cut_at_sentence_starts(tmp_path):
    path = tmp_path / "minutes.txt"
    path.write_text(sample_text(30), encoding="utf-8")
    whole = A.read_file(path)[0]
    text = A.read_adaptation_text([path, path], share=0.5, dev_share=0.2)
    assert len(text.files) == 2 and len(text.train) == 2 and len(text.dev) == 2
    f = text.files[0]
    assert round(0.5 * len(whole)) <= f.used < len(whole)
    assert A.ends_sentence(whole.marks[f.used - 1])
    assert A.ends_sentence(f.train.marks[-1])
    assert f.train.words + f.dev.words == whole.words[:f.used]
    none = A.read_adaptation_text([path], dev_share=0)
    assert none.dev == [] and none.n_words("train") == len(whole)


def test_a_tiny_file_is_split_at_the_word(tmp_path):
    path = tmp_path / "one.txt"
    path.write_text("one sentence, with no end but a comma and twelve words here", encoding="utf-8")
    f = A.read_adaptation_text([path], dev_share=0.2).files[0]
    assert (len(f.train), len(f.dev)) == (10, 2)


# ------------------------------------------------------------------ refusals
def test_refusals(tmp_path):
    good = tmp_path / "good.txt"
    good.write_text("Yes, it works. Then it stops.\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"\[E983\]"):
        A.read_adaptation_text([])
    with pytest.raises(ValueError, match=r"\[E984\].*missing.txt"):
        A.read_adaptation_text([good, tmp_path / "missing.txt"])
    with pytest.raises(ValueError, match=r"\[E984\].*not UTF-8"):
        (tmp_path / "latin.txt").write_bytes("caf\xe9, ok.".encode("latin-1"))
        A.read_adaptation_text([tmp_path / "latin.txt"])
    with pytest.raises(ValueError, match=r"\[E984\]"):
        A.read_adaptation_text([tmp_path])
    for content in ("", "  \n\n", "... !!! --\n"):
        (tmp_path / "empty.txt").write_text(content, encoding="utf-8")
        with pytest.raises(ValueError, match=r"\[E985\].*empty.txt"):
            A.read_adaptation_text([tmp_path / "empty.txt"])
    (tmp_path / "bare.txt").write_text("no marks at all in this text\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"\[E986\].*bare.txt"):
        A.read_adaptation_text([tmp_path / "bare.txt"])
    with pytest.raises(ValueError, match=r"\[E989\]"):
        A.read_adaptation_text([good], share=0.9)
    for kwargs in ({"share": 0}, {"share": 1.5}, {"dev_share": 1.0}, {"fmt": "srt"}):
        with pytest.raises(ValueError, match=r"\[E988\]"):
            A.read_adaptation_text([good], **kwargs)
    with pytest.raises(ValueError, match=r"\[E988\].*epochs"):
        A.adapt([good], tmp_path / "out", epochs=0)


def test_output_check(tmp_path):
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(FileExistsError, match=r"\[E987\].*is a file"):
        A.check_output(tmp_path / "file")
    with pytest.raises(FileExistsError, match=r"\[E987\]"):
        A.check_output(tmp_path / "file" / "model")
    full = tmp_path / "full"
    full.mkdir()
    (full / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(FileExistsError, match=r"\[E987\].*no adapt.json"):
        A.check_output(full)
    assert A.check_output(full, force=True) == full
    (tmp_path / "empty").mkdir()
    assert A.check_output(tmp_path / "empty") == tmp_path / "empty"
    (full / A.RECORD_FILE).write_text("{}", encoding="utf-8")
    assert A.check_output(full) == full  # written by adapt: may be written again


def test_output_is_checked_before_reading(tmp_path):
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(FileExistsError, match=r"\[E987\]"):
        A.adapt([tmp_path / "missing.txt"], tmp_path / "file")


# ------------------------------------------------------------------ one adaptation
@pytest.fixture(scope="module")
def adapted(tmp_path_factory, shipped_parser):
    root = tmp_path_factory.mktemp("adapt")
    path = root / "own.txt"
    path.write_text(sample_text(60), encoding="utf-8")
    out = root / "model"
    record = A.adapt([path], out, epochs=1)
    return path, out, record


def test_adapt_writes_a_model_with_its_record(adapted):
    path, out, record = adapted
    assert {p.name for p in out.iterdir()} >= {"cfg.json", "inventory.json", "params.npz", "adapt.json", "LICENSE"}
    assert json.loads((out / "adapt.json").read_text(encoding="utf-8")) == json.loads(json.dumps(record))
    assert record["files"][0]["path"] == str(path) and record["files"][0]["format"] == "text"
    assert record["sentences"]["train"] > 0 and record["sentences"]["dev"] > 0
    assert record["alignment"]["train"]["placed"] == record["alignment"]["train"]["marks"] > 0
    assert record["settings"]["epochs"] == 1 and record["training"]["epochs_run"] == 1
    assert record["spacy_punctgen_version"]
    license_text = (out / "LICENSE").read_text(encoding="utf-8")
    assert str(path) in license_text and "inherit its licence" in license_text
    inventory = json.loads((out / "inventory.json").read_text(encoding="utf-8"))
    assert [","] in inventory["punctemes"] and ["."] in inventory["punctemes"]


def test_the_adapted_model_restores(adapted):
    import spacy_punctgen

    _, out, _ = adapted
    nlp = spacy_punctgen.load("en", model=out)
    source = "when i came home he left and i was sad so i called my mother she said it was fine"
    restored = spacy_punctgen.restore_text(nlp, source)
    assert restored.split() != source.split()  # some mark was put in
    assert "".join(c for c in restored if not A.is_mark(c)).split() == source.split()


def test_adapt_writes_again_into_its_own_folder(adapted):
    path, out, _ = adapted
    shown = io.StringIO()
    record = A.adapt([path], out, epochs=1, dev_share=0, progress=shown)
    assert record["sentences"]["dev"] == 0 and record["training"]["best_epoch"] == 0
    assert "parsing" in shown.getvalue()


# ------------------------------------------------------------------ treebanks, dev files, the expert
def test_conllu_is_read_as_its_punctuated_text():
    part, kind = A.read_file(SAMPLE)
    assert kind == "conllu" and A.is_conllu_text(SAMPLE.read_text(encoding="utf-8"))
    assert not A.is_conllu_text("Yes, it works.\n") and not A.is_conllu_text("")
    want = A.split_punctuated(A.conllu_as_text(SAMPLE))
    assert (part.words, part.marks) == (want.words, want.marks)
    assert part.n_marked() > 0 and all(w == w.lower() for w in part.words)
    first = SAMPLE.read_text(encoding="utf-8").split("# text = ", 1)[1].split("\n", 1)[0]
    assert A.conllu_as_text(SAMPLE).startswith(first)


def test_the_expert_is_chosen_on_dev_and_saved(adapted):
    from spacy_punctgen.evaluation.lexical import WEIGHT_GRID

    _, _, record = adapted
    lex = record["lexical"]
    assert [r["weight"] for r in lex["dev_table"]] == list(WEIGHT_GRID)
    best = max(r["f1"] for r in lex["dev_table"])
    assert lex["weight"] == min(r["weight"] for r in lex["dev_table"] if r["f1"] == best)
    assert lex["kept"] == (lex["weight"] > 0)
    assert set(A.CLAUSE_TEMPLATES) <= set(record["settings"]["templates"])


def test_without_dev_text_the_expert_gets_the_default_weight(tmp_path, shipped_parser):
    from spacy_punctgen.model.punct_model import PunctModel

    path = tmp_path / "own.txt"
    path.write_text(sample_text(30), encoding="utf-8")
    record = A.adapt([path], tmp_path / "m", epochs=1, dev_share=0)
    assert record["lexical"]["weight"] == A.LEXICAL_WEIGHT_WITHOUT_DEV and record["lexical"]["dev_table"] == []
    model = PunctModel.from_disk(tmp_path / "m")
    assert model.lexical.weight == A.LEXICAL_WEIGHT_WITHOUT_DEV
    assert list(model.feature_config.templates) == record["settings"]["templates"]
    again = A.adapt([path], tmp_path / "m", epochs=1, dev_share=0, lexical=False)
    assert again["lexical"] is None and PunctModel.from_disk(tmp_path / "m").lexical is None


def test_a_base_model_keeps_its_punctuation_model(tmp_path, shipped_parser):
    from spacy_punctgen.model.punct_model import PunctModel
    from spacy_punctgen.pipeline.shipped import restore_model_path

    dev = SAMPLE.with_name("en_sample-ud-dev.conllu")
    record = A.adapt([SAMPLE], tmp_path / "m", base_model="shipped", dev_paths=[dev])
    assert record["training"] is None and record["base_model"] == "shipped"
    assert record["files"][-1]["path"] == str(dev) and record["files"][-1]["train_words"] == 0
    assert record["words"]["dev"] == record["files"][-1]["dev_words"] > 0
    got, base = PunctModel.from_disk(tmp_path / "m"), PunctModel.from_disk(restore_model_path("en"))
    assert (got.theta == base.theta).all() and (got.psi == base.psi).all()
    with pytest.raises(ValueError, match=r"\[E988\].*lexical"):
        A.adapt([SAMPLE], tmp_path / "n", base_model="shipped", lexical=False)
