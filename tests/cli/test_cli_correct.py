"""``punctgen correct`` (spacy_punctgen/cli/correct.py) through the real entry point."""
import json
from pathlib import Path

import spacy_punctgen
from spacy_punctgen import cli

ROOT = Path(__file__).resolve().parents[2]
TEST = ROOT / "assets" / "sample" / "en_sample-ud-test.conllu"
MODEL = Path(spacy_punctgen.__file__).resolve().parent / "shipped" / "en_ewt"


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out.strip().splitlines(), err


def _first(n, tmp_path, drop_final=False, start=0):
    blocks = TEST.read_text(encoding="utf-8").strip().split("\n\n")[start:start + n]
    if drop_final:  # drop each sentence's last token when it is a period
        fixed = []
        for b in blocks:
            lines = b.split("\n")
            if lines[-1].split("\t")[1] == ".":
                lines = lines[:-1]
            fixed.append("\n".join(lines))
        blocks = fixed
    path = tmp_path / "in.conllu"
    path.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    return path


def test_correct_conllu(capsys, tmp_path):
    path = _first(12, tmp_path, drop_final=True, start=20)
    code, out, err = run(capsys, "correct", path, "--model", MODEL, "--json")
    assert code == 0, err
    res = json.loads(out[-1])
    assert res["sentences"] == 12 and len(res["texts"]) == 12
    dropped = sum(b.strip().split("\n")[-1].split("\t")[1] == "." for b in
                  TEST.read_text(encoding="utf-8").strip().split("\n\n")[20:32])
    restored = [c for c in res["changes"] if c["corrected"] == ["."] and c["observed"] == []]
    assert dropped >= 6 and len(restored) >= dropped - 2


def test_correct_output_file(capsys, tmp_path):
    path = _first(3, tmp_path)
    out_file = tmp_path / "out" / "fixed.txt"
    code, out, err = run(capsys, "correct", path, "--model", MODEL, "-o", out_file)
    assert code == 0, err
    assert len(out_file.read_text(encoding="utf-8").splitlines()) == 3


def test_text_needs_parser(capsys, tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("He left\n", encoding="utf-8")
    code, out, err = run(capsys, "correct", src, "--model", MODEL)
    assert code == 1 and "E835" in err and "Traceback" not in err


def test_bad_noise_file(capsys, tmp_path):
    bad = tmp_path / "noise.json"
    bad.write_text('{"rates": {"missing_comma": 3}}', encoding="utf-8")
    code, out, err = run(capsys, "correct", _first(2, tmp_path), "--model", MODEL, "--noise", bad)
    assert code == 1 and "E833" in err


def test_empty_conllu(capsys, tmp_path):
    empty = tmp_path / "empty.conllu"
    empty.write_text("# sent_id = p1\n# text = !\n1\t!\t!\tPUNCT\t.\t_\t0\troot\t_\t_\n\n", encoding="utf-8")
    code, out, err = run(capsys, "correct", empty, "--model", MODEL)
    assert code == 1 and "E834" in err


def test_correct_conllu_by_the_papers_method(capsys, tmp_path):
    import numpy as np

    from spacy_punctgen.data.preprocess import preprocess_file
    from spacy_punctgen.decode.correct import correct_sentences_paper
    from spacy_punctgen.model.correction import CorrectionModel
    from spacy_punctgen.model.punct_model import PunctModel

    cm = CorrectionModel(["same"], np.array([3.0]), attach_scale=1.0, top_k=8)
    cm.to_disk(tmp_path / "cm")
    path = _first(6, tmp_path, drop_final=True, start=20)
    code, out, err = run(capsys, "correct", path, "--model", MODEL, "--paper-model", tmp_path / "cm", "--json")
    assert code == 0, err
    res = json.loads(out[-1])
    assert res["method"] == "paper" and res["paper_model"] == str(tmp_path / "cm")
    sents, _ = preprocess_file(path)
    expect = [(s.sent_id, i, list(c.observed), list(c.surface))
              for s, ch in zip(sents, correct_sentences_paper(PunctModel.from_disk(MODEL), cm, sents))
              for i, c in enumerate(ch) if c.surface != c.observed]
    assert [(c["sent_id"], c["slot"], c["observed"], c["corrected"]) for c in res["changes"]] == expect
    code, out, err = run(capsys, "correct", path, "--model", MODEL, "--paper-model", tmp_path / "nothing")
    assert code == 1 and "E840" in err and "Traceback" not in err
