"""Train and evaluate one companion comma system (``trigram_hmm`` or ``crf_syntax``) in every
variant on one treebank, and write ``metrics/<treebank>/companions/<system>_<variant>.json``.

Usage (experiments/companions/project.yml):
    python experiments/companions/scripts/companions_run.py SYSTEM TREEBANK UD_DIR [UD_DIR ...]
        [--protocol standard|cv] [--folds 10] [--variants a,b] [--parser MODEL] [--hyper k=v ...]

``standard``: train on the folders' ``*-ud-train.conllu``, test on their ``*-ud-test.conllu``.
``cv``: every split of every folder pooled (in folder, then train/dev/test order), cut into
``--folds`` contiguous blocks; each block is predicted by a model trained on the others and the
metrics are computed over all predictions at once (paper 004's 10-fold protocol).  Models are
trained on gold trees; ``--parser`` also predicts the test sentences with that spaCy pipeline's
trees of the depunctuated words (paper 004's protocol; the paper-001 models with Collins parses
were trained on parsed trees too, which we do not do) and writes ``..._parsed.json``.
Per-sentence comma decisions go to ``training/<treebank>/companions/<system>_<variant>[_parsed].jsonl``;
every metrics file also holds ``sentence_counts``, each test sentence's comma ``[tp, fp, fn]`` in
test order, for the paired significance test (``companions_significance.py``).

System ``punctgen`` (``--protocol standard`` only) is no companion: it is a punctgen model already
trained (``--model``, e.g. the core workflow's ``training/<treebank>/punctgen``), restoring every mark
of the same test sentences from the same trees (``--hyper method=slot n_samples=1000 seed=0``: the
decoding of the core workflow's records), its commas scored as the companions' are.  Its one
variant is named by ``--model-name``.  ``--reference`` names the core workflow's record of that
model's restoration (``metrics/<treebank>/restore/punctgen_gold.json``); the gold-tree metrics file
then says whether the comma counts (the core's ``mark_prf``) are the same (``reference_counts_equal``).
The parsed trees (all systems) are projectivised as the core workflow's are (the shortest
non-projective arc lifted first), so every system reads the same tree.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

from spacy_punctgen.baselines import get_system
from spacy_punctgen.baselines.trigram_hmm import VARIANTS, comma_scores, has_comma, sentence_comma_counts
from spacy_punctgen.data.parsed import attachment_scores
from spacy_punctgen.data.preprocess import load_split
from spacy_punctgen.data.trees import lift_nonprojective
from spacy_punctgen.evaluation.metrics import mark_prf

#: how punctgen decodes unless --hyper says otherwise: the core workflow's restore records
PUNCTGEN_DECODING = {"method": "slot", "n_samples": 1000, "seed": 0}

#: the rows of paper 004's Tables 1 (French) and 2 (Czech); English gets every row of both
CRF_ROWS = {
    "fr": ["lex", "lex+pos", "lex+pos+IsCoord", "lex+pos+IsMod", "lex+pos+DepCross",
           "lex+pos+IsCoord+IsMod+DepCross"],
    "cs": ["lex", "lex+pos", "lex+pos+IsCoordCz", "lex+pos+DepLabel", "lex+pos+DepCross",
           "lex+pos+IsCoordCz+DepLabel+DepCross"],
}
CRF_ROWS["en"] = ["lex", "lex+pos", "lex+pos+IsCoord", "lex+pos+IsMod", "lex+pos+IsCoordCz", "lex+pos+DepLabel",
                  "lex+pos+DepCross", "lex+pos+IsCoord+IsMod+DepCross+DepLabel+IsCoordCz"]
ALL_SYNTAX = {"lex+pos+IsCoord+IsMod+DepCross", "lex+pos+IsCoordCz+DepLabel+DepCross",
              "lex+pos+IsCoord+IsMod+DepCross+DepLabel+IsCoordCz"}


def variant_name(system: str, spec: str) -> str:
    if system == "trigram_hmm":
        return spec
    return "all" if spec in ALL_SYNTAX else spec.replace("+", "_").lower()


def split_files(folder: Path, split: str):
    return sorted(Path(folder).glob(f"*-ud-{split}.conllu"))


def read(files):
    out = []
    for f in files:
        out.extend(load_split(f)[0])
    return out


def parse_trees(model: str, sents):
    """The sentences with the trees (UPOS, heads, relations) of spaCy pipeline ``model`` over their
    words, each sentence one Doc (gold words and segmentation); a word the parser tags PUNCT or
    attaches as ``punct`` stays a word (``X``, ``dep``), as in ``spacy_punctgen.data.parsed``."""
    import spacy
    from spacy.tokens import Doc

    nlp = spacy.load(model)
    docs = []
    for s in sents:
        doc = Doc(nlp.vocab, words=list(s.words))
        for i, tok in enumerate(doc):
            tok.is_sent_start = i == 0
        docs.append(doc)
    out = []
    for s, doc in zip(sents, nlp.pipe(docs, batch_size=256)):
        heads = projective([-1 if t.head.i == t.i else t.head.i for t in doc])
        rels = ["root" if t.dep_ == "ROOT" else ("dep" if t.dep_.split(":")[0].lower() == "punct" else t.dep_)
                for t in doc]
        upos = ["X" if t.pos_ == "PUNCT" else (t.pos_ or "X") for t in doc]
        out.append(dataclasses.replace(s, heads=heads, deprels=rels, upos=upos))
    return out


def projective(heads):
    """0-based heads (-1: a root) with the non-projective arcs lifted as the core workflow lifts a
    parse's (spaCy's order; a virtual root after the last word holds the real roots)."""
    n = len(heads)
    lifted = lift_nonprojective([n if h < 0 else h for h in heads] + [n])
    return [-1 if h == n else h for h in lifted[:n]]


class PunctgenRestorer:
    """A trained punctgen model in the companions' place: loaded, not fitted, restoring every mark
    (its slot strings are the prediction) by minimum Bayes risk from one tree per sentence."""

    def __init__(self, path: str, method: str = "slot", n_samples: int = 1000, seed: int = 0):
        from spacy_punctgen.model.punct_model import PunctModel

        self.model, self.method, self.n_samples, self.seed = PunctModel.from_disk(path), method, n_samples, seed

    def predict(self, sents):
        from spacy_punctgen.decode.mbr import restore_mixtures

        choices = restore_mixtures(self.model, [[s] for s in sents], method=self.method,
                                   n_samples=self.n_samples, seed=self.seed)
        return [[c.surface for c in sent] for sent in choices]


def write_record(path: Path, record: dict) -> None:
    """The metrics file, one key a line, with ``sentence_counts`` on one line of its own."""
    counts = record.get("sentence_counts")
    head = json.dumps({k: v for k, v in record.items() if k != "sentence_counts"}, indent=1)
    if counts is not None:
        head = head[:-2] + ',\n "sentence_counts": ' + json.dumps(counts, separators=(",", ":")) + "\n}"
    path.write_text(head + "\n", encoding="utf8")


def _value(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def folds_of(sents, k: int):
    n = len(sents)
    bounds = [round(j * n / k) for j in range(k + 1)]
    for j in range(k):
        test = sents[bounds[j]:bounds[j + 1]]
        yield j, sents[:bounds[j]] + sents[bounds[j + 1]:], test


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("system", choices=["trigram_hmm", "crf_syntax", "punctgen"])
    ap.add_argument("treebank")
    ap.add_argument("ud_dirs", nargs="+")
    ap.add_argument("--protocol", choices=["standard", "cv"], default="standard")
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--lang", default=None, help="fr, cs or en: which paper-004 table's rows (default: the folder prefix)")
    ap.add_argument("--variants", default="", help="comma-separated subset (default: all)")
    ap.add_argument("--parser", default=None, help="spaCy pipeline for the parsed-tree test")
    ap.add_argument("--hyper", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--model", default=None, help="punctgen: the trained model folder")
    ap.add_argument("--model-name", default="workflow", help="punctgen: the variant's name")
    ap.add_argument("--reference", default=None,
                    help="punctgen: the core workflow's restore record of this model on gold trees")
    ap.add_argument("--metrics", default="metrics")
    ap.add_argument("--training", default="training")
    a = ap.parse_args(argv)
    lang = a.lang or Path(a.ud_dirs[0]).name.split("_")[0]
    if a.system == "punctgen" and (a.model is None or a.protocol != "standard"):
        print("punctgen needs --model and --protocol standard (one trained model, not one per fold)", file=sys.stderr)
        return 1
    specs = (list(VARIANTS) if a.system == "trigram_hmm" else [a.model_name] if a.system == "punctgen"
             else CRF_ROWS.get(lang, CRF_ROWS["en"]))
    if a.variants:
        specs = [s for s in specs if variant_name(a.system, s) in a.variants.split(",") or s in a.variants.split(",")]
    hyper = {k: _value(v) for k, v in (h.split("=", 1) for h in a.hyper)}
    if a.system == "punctgen":
        hyper = {**PUNCTGEN_DECODING, **hyper}
    dirs = [Path(d) for d in a.ud_dirs]
    if a.protocol == "standard":
        train = read([f for d in dirs for f in split_files(d, "train")])
        test = read([f for d in dirs for f in split_files(d, "test")])
        splits = [(0, train, test)]
        pooled = test
    else:
        pooled = read([f for d in dirs for sp in ("train", "dev", "test") for f in split_files(d, sp)])
        splits = list(folds_of(pooled, a.folds))
    if not pooled:
        print(f"no sentences in {a.ud_dirs}", file=sys.stderr)
        return 1
    parsed, parser_scores = None, {}
    if a.parser:
        t0 = time.time()
        parsed = {j: parse_trees(a.parser, test) for j, _, test in splits}
        parser_scores = attachment_scores([s for _, _, t in splits for s in t],
                                          [s for j, _, _ in splits for s in parsed[j]])
        print(f"parsed {sum(len(v) for v in parsed.values())} test sentences in {time.time() - t0:.0f}s: "
              f"UAS {parser_scores['uas']:.3f} LAS {parser_scores['las']:.3f}", flush=True)
    out_dir = Path(a.metrics) / a.treebank / "companions"
    pred_dir = Path(a.training) / a.treebank / "companions"
    out_dir.mkdir(parents=True, exist_ok=True)
    pred_dir.mkdir(parents=True, exist_ok=True)
    for spec in specs:
        name = variant_name(a.system, spec)
        key = "variant" if a.system == "trigram_hmm" else "features"
        t0 = time.time()
        gold, pred, pred_parsed = [], [], []
        for j, train, test in splits:
            if a.system == "punctgen":
                model = PunctgenRestorer(a.model, **hyper)
            else:
                model = get_system(a.system)().fit(train, None, **{key: spec, **hyper})
            gold.extend([list(s.slots) for s in test])
            pred.extend(model.predict(test))
            if parsed is not None:
                pred_parsed.extend(model.predict(parsed[j]))
        seconds = time.time() - t0
        for trees, p in (("gold", pred), ("parsed", pred_parsed)):
            if trees == "parsed" and parsed is None:
                continue
            scores = comma_scores(gold, p)
            stem = f"{a.system}_{name}" + ("_parsed" if trees == "parsed" else "")
            extra = {}
            if a.system == "punctgen":
                extra = {"model": a.model, "marks": "all (commas scored)",
                         "mark_prf_comma": {k: v for k, v in mark_prf(gold, p).items() if k in ("tp", "fp", "fn")}}
                if a.reference and trees == "gold":
                    ref = json.loads(Path(a.reference).read_text(encoding="utf8"))
                    extra["reference"] = a.reference
                    extra["reference_comma"] = ref.get("comma")
                    extra["reference_counts_equal"] = all(
                        extra["mark_prf_comma"][k] == (ref.get("comma") or {}).get(k) for k in ("tp", "fp", "fn"))
            record = {"system": a.system, "variant": name, "spec": spec, "order": specs.index(spec), "treebank": a.treebank,
                      "ud_dirs": [str(d) for d in dirs], "protocol": a.protocol,
                      "folds": a.folds if a.protocol == "cv" else None, "trees": trees,
                      "train_trees": "gold", "parser": a.parser if trees == "parsed" else None,
                      **({"parser_uas": parser_scores["uas"], "parser_las": parser_scores["las"]}
                         if trees == "parsed" else {}),
                      "hyper": hyper, "seconds": round(seconds, 1), **scores, **extra,
                      "predictions": str(pred_dir / f"{stem}.jsonl"),
                      "sentence_counts": [list(c) for c in sentence_comma_counts(gold, p)]}
            write_record(out_dir / f"{stem}.json", record)
            with open(pred_dir / f"{stem}.jsonl", "w", encoding="utf8") as fh:
                for s, g, q in zip(pooled if a.protocol == "cv" else splits[0][2], gold, p):
                    line = {"sent_id": s.sent_id, "gold": [has_comma(x) for x in g], "pred": [has_comma(x) for x in q]}
                    if a.system == "punctgen":
                        line["slots"] = [list(x) for x in q]
                    fh.write(json.dumps(line, ensure_ascii=False) + "\n")
            print(f"{a.treebank} {stem}: F1 {scores['f1']:.3f} P {scores['precision']:.3f} R {scores['recall']:.3f} "
                  f"SER {scores['ser']:.3f} tok {scores['token_accuracy']:.4f} sent {scores['sentence_accuracy']:.3f} "
                  f"({seconds:.0f}s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
