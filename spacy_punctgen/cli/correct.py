"""``punctgen correct``: propose corrected punctuation for punctuated text (docs/correction.md).

* A CoNLL-U file (``*.conllu``): every sentence with its own tree (the file's gold trees), in order;
  the output is one line per sentence: its sent_id (``_`` where it has none), a tab, and its text (the
  FORMs spaced as SpaceAfter says) with the corrected punctuation
  (:func:`spacy_punctgen.pipeline.correct.correct_ud_sentences`: words that punctuation heads are
  reattached as in parsed text; a sentence with no word comes out as it is).
* A text file (one paragraph per line, or stdin): each line is parsed by ``--parser``, a spaCy pipeline
  with a UD parser of *punctuated* text, and corrected by
  :func:`spacy_punctgen.pipeline.correct.correct_docs`; the output is ``doc._.corrected_text``
  (unchanged gaps keep their characters).

``--noise`` reads a noise model written by the ``correct-eval`` workflow command (rates fitted on
damaged dev data); by default the noise model has the damage generator's rates.  ``--paper-model``
corrects by the paper's method instead (a correction model written by ``correct-train``).  ``--json`` adds every
changed slot (for CoNLL-U: its sentence's sent_id and 1-based number in the file) and, for CoNLL-U, how many
sentences had punctuation heading words (``punct_heads_reattached``).
"""
from __future__ import annotations

import json
from pathlib import Path

from spacy_punctgen.cli import check_output_file, command, emit_lines
from spacy_punctgen.cli.restore import load_parser_pipeline, read_lines
from spacy_punctgen.decode.correct import SlotNoise, correct
from spacy_punctgen.errors import Errors
from spacy_punctgen.model.correction import CorrectionModel


def _arguments(p) -> None:
    p.add_argument("input", nargs="?", default="-",
                   help="a CoNLL-U file (*.conllu: its own trees) or a text file, one paragraph per line "
                        "(default: stdin)")
    p.add_argument("--model", default=None,
                   help="punctuation model directory written by `train` (default: the one shipped for --lang)")
    p.add_argument("--lang", default="en", help="language of the shipped model used without --model")
    p.add_argument("--parser", default=None,
                   help="text input: spaCy pipeline with a UD parser of punctuated text (required for text)")
    p.add_argument("--noise", default=None, help="noise model JSON (correct-eval's correct_noise.json)")
    p.add_argument("--paper-model", default=None,
                   help="correct by the paper's method with this correction model folder (correct-train's "
                        "training/<treebank>/correct_paper); --noise then only serves sentences it cannot analyse")
    p.add_argument("--output", "-o", default=None, help="write the corrected lines here (default: stdout)")


def _noise(path):
    if path is None:
        return SlotNoise.from_config()
    try:
        return SlotNoise.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
    except (OSError, ValueError) as err:
        raise ValueError(Errors.E833.format(path=path, err=err)) from None


def _correct_conllu(model, path: str, noise, cmodel=None):
    from spacy_punctgen.data.conllu import read_conllu
    from spacy_punctgen.data.preprocess import detect_quote_xpos, is_punct
    from spacy_punctgen.pipeline.correct import correct_ud_sentences

    if not Path(path).is_file():
        raise FileNotFoundError(Errors.E618.format(path=path))
    uds = read_conllu(path)
    if not any(not is_punct(u, d) for ud in uds for u, d in zip(ud.upos, ud.deprels)):
        raise ValueError(Errors.E834.format(path=path))
    results = correct_ud_sentences(model, uds, noise, detect_quote_xpos(path, uds), cmodel)
    out, changes = [], []
    for k, (ud, res) in enumerate(zip(uds, results), 1):
        out.append(f"{ud.sent_id if ud.sent_id is not None else '_'}\t{res['corrected_text'].rstrip()}")
        changes += [{"sent_id": ud.sent_id, "sentence": k, "slot": e["slot"], "observed": list(e["observed"]),
                     "corrected": list(e["surface"]), "prob": round(e["prob"], 6)}
                    for e in res["corrected_punct"] if e["surface"] != e["observed"]]
    reattached = 0  # sentences with words in which punctuation heads a token (training omits them)
    for ud in uds:
        punct = [is_punct(u, d) for u, d in zip(ud.upos, ud.deprels)]
        reattached += not all(punct) and any(h > 0 and punct[h - 1] for h in ud.heads)
    return out, changes, len(uds), reattached


def _correct_text(model, args, noise, cmodel=None):
    from spacy_punctgen.pipeline.correct import correct_docs

    if args.parser is None:
        raise ValueError(Errors.E835)
    nlp = load_parser_pipeline(args.parser)
    lines = read_lines(args.input)
    idx = [i for i, line in enumerate(lines) if line.strip()]
    docs = list(nlp.pipe([lines[i].strip() for i in idx]))
    results = correct_docs(model, docs, noise=noise, correction_model=cmodel)
    texts = list(lines)
    changes = []
    for i, res in zip(idx, results):
        texts[i] = res["corrected_text"].rstrip()
        changes += [{"line": i + 1, "sentence": e["sentence"], "slot": e["slot"], "observed": list(e["observed"]),
                     "corrected": list(e["surface"]), "prob": round(e["prob"], 6)}
                    for e in res["corrected_punct"] if e["surface"] != e["observed"]]
    return texts, changes, sum(len({e["sentence"] for e in r["corrected_punct"]}) for r in results)


@command("correct", "Correct the punctuation of punctuated text (CoNLL-U with its trees, or text with --parser)",
         _arguments)
def correct_cli(args) -> dict:
    from spacy_punctgen.model.punct_model import PunctModel
    from spacy_punctgen.pipeline.shipped import default_model_path

    check_output_file(args.output, "--output")
    noise = _noise(args.noise)
    cmodel = CorrectionModel.from_disk(args.paper_model) if args.paper_model is not None else None
    model = PunctModel.from_disk(args.model if args.model is not None else default_model_path(args.lang))
    reattached = None
    if args.input != "-" and args.input.endswith(".conllu"):
        texts, changes, n, reattached = _correct_conllu(model, args.input, noise, cmodel)
    else:
        texts, changes, n = _correct_text(model, args, noise, cmodel)
    result = {"sentences": n, "changes": changes, "n_changes": len(changes), "noise": noise.to_dict(),
              **({"punct_heads_reattached": reattached} if reattached is not None else {}),
              "method": "noise" if cmodel is None else "paper",
              "paper_model": str(args.paper_model) if cmodel is not None else None}
    return emit_lines(result, texts, args.output, f"{len(texts)} lines ({len(changes)} changed slots)")
