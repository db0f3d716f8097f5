"""``punctgen convert --stream`` (the workflow's ``preprocess-stream``) writes exactly what
:func:`spacy_punctgen.data.stream.convert_stream_file` writes for the same inputs, split,
protocol and options; options of the other mode are refused, not ignored."""
from pathlib import Path

import pytest

from spacy_punctgen import cli
from spacy_punctgen.data.conllu import find_split, resolve_split
from spacy_punctgen.data.convert import SPLITS, protocol_part
from spacy_punctgen.data.stream import convert_stream_file

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "assets" / "sample"
TRAIN = SAMPLE / "en_sample-ud-train.conllu"

CASES = [
    # (command-line options, keyword arguments of convert_stream_file)
    (["--split", "train"], {}),
    (["--split", "dev", "--min-sents", "2", "--max-sents", "5", "--lower", "0.3", "--seed", "7"],
     {"min_sents": 2, "max_sents": 5, "lower": 0.3, "seed": 7}),
    (["--split", "test", "--min-sents", "10", "--max-sents", "10", "--lower", "1.0"],
     {"min_sents": 10, "max_sents": 10, "lower": 1.0}),
    (["--split", "train", "--protocol", "dev-as-train", "--heldout", "0.2", "--seed", "3"],
     {"protocol": "dev-as-train", "heldout": 0.2, "seed": 3}),
    (["--split", "dev", "--protocol", "dev-as-train", "--heldout", "0.2", "--seed", "3"],
     {"protocol": "dev-as-train", "heldout": 0.2, "seed": 3}),
    (["--split", "train", "--protocol", "cv", "--cv-folds", "5", "--cv-fold", "2"],
     {"protocol": "cv", "cv": (5, 2)}),
    (["--split", "test", "--protocol", "cv", "--cv-folds", "5", "--cv-fold", "2"],
     {"protocol": "cv", "cv": (5, 2)}),
]


def expected_file(path: Path, argv, kwargs) -> Path:
    """The library's own output for the same selection (the source files and part as the UD
    folder, --split and --protocol give them)."""
    kwargs = dict(kwargs)
    split = argv[argv.index("--split") + 1]
    protocol = kwargs.pop("protocol", "standard")
    split, part = protocol_part(split, protocol)
    if protocol == "cv":
        src = [f for f in (find_split(SAMPLE, s) for s in SPLITS) if f is not None]
    else:
        src = resolve_split(SAMPLE, split)
    convert_stream_file(src, path, part=part, **kwargs)
    return path


@pytest.mark.parametrize("argv,kwargs", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_convert_stream_writes_what_the_library_writes(tmp_path, capsys, argv, kwargs):
    out = tmp_path / "cli" / "stream.conllu"
    assert cli.main(["convert", "--stream", str(SAMPLE), str(out), *argv]) == 0, capsys.readouterr().err
    want = expected_file(tmp_path / "lib.conllu", argv, kwargs)
    assert out.read_bytes() == want.read_bytes()
    assert out.read_text(encoding="utf-8").startswith("# newdoc id = stream-0\n")


def test_convert_stream_of_a_file_and_its_json(tmp_path, capsys):
    import json

    out = tmp_path / "stream.conllu"
    assert cli.main(["convert", "--stream", str(TRAIN), str(out), "--json"]) == 0
    result = json.loads(capsys.readouterr().out.splitlines()[-1])
    want = convert_stream_file(TRAIN, tmp_path / "lib.conllu")
    assert out.read_bytes() == (tmp_path / "lib.conllu").read_bytes()
    assert {k: result[k] for k in ("mode", "documents", "lowercased", "words", "sentences")} == \
        {k: want[k] for k in ("mode", "documents", "lowercased", "words", "sentences")}
    assert result["mode"] == "stream" and result["documents"] > 1


@pytest.mark.parametrize("argv,code", [
    (["--lower", "0.3"], "[E632] --lower"),
    (["--min-sents", "2", "--max-sents", "4"], "[E632] --min-sents, --max-sents"),
    (["--stream", "--depunct"], "[E633]"),
    (["--stream", "--fraction", "0.5"], "[E633]"),
    (["--stream", "--min-sents", "5", "--max-sents", "2"], "[E535]"),
    (["--stream", "--lower", "1.5"], "[E536]"),
])
def test_options_of_the_other_mode_are_refused(tmp_path, capsys, argv, code):
    out = tmp_path / "x.conllu"
    assert cli.main(["convert", str(TRAIN), str(out), *argv]) == 1
    err = capsys.readouterr().err
    assert err.startswith("punctgen convert: error: ") and code in err and "Traceback" not in err, err
    assert not out.exists()


def test_the_workflow_calls_convert_stream():
    """project.yml's preprocess-stream writes its stream documents with ``convert --stream``."""
    import srsly

    commands = {c["name"]: c for c in srsly.read_yaml(ROOT / "project.yml")["commands"]}
    outputs = ("/joint/train/stream.conllu", "/joint/dev/stream.conllu", "/stream-lower/test.conllu")
    writers = [s for s in commands["preprocess-stream"]["script"]
               if "${vars.ud_dir}" in s.split() and any(s.split()[s.split().index("${vars.ud_dir}") + 1].endswith(o)
                                                        for o in outputs)]
    assert len(writers) == 3, writers  # train and dev documents, lowercased test streams
    for line in writers:
        assert line.startswith("python -m spacy_punctgen convert --stream ${vars.ud_dir} "), line
