"""UPP's marks as soft evidence on punctgen's slots (issue 41, "a prior on final slots"): the shipped
pipeline (``spacy_punctgen.load("en")``) restores each stream with, on the slot after each word,
the class factors ``(u / π_u) ** w`` of UPP's mark distribution there
(``spacy_punctgen/incremental/evidence.py``: the softmax of the perceptron's scores of the mark
variants of the action that consumed the word on UPP's best analysis; ``decode/incremental_evidence.py``
maps M to ``, : ;`` and F to ``. ? !`` and divides out UPP's training class frequencies ``π_u``),
alone or multiplied with the shipped lexical expert's ``(q / π) ** 1.5`` (its own weight), in the
compiled marginal decoder that already reads the expert (``decode/lexical.py``).

Each stream is parsed once, as ``restore_text`` parses it (``api.stream.iter_pieces_at``: the same
pieces), and the ``punctgen`` component is run on the parsed pieces once per setting, so every
setting restores the same trees.  A slot inside a word (a token that does not end a stream word,
``do|n't``) gets no UPP factor.  The weight ``w`` of UPP (alone, and beside the expert) is chosen
by overall F1 on held-out streams: the treebank's dev streams (UD), or the TED training block's
last tenth (``--ted``; the words after the first 90% of the training block, from a sentence start).
Then, on the test streams (UD: the 10-sentence lowercased test streams; TED: the dev block in units
of ``--unit-words`` words): the shipped cascade, cascade + expert, UPP alone, UPP's soft evidence
(``upp_soft``), soft evidence + expert (``upp_soft_lexical``), and, for UD, ``upp_then_punctgen``
(UPP's full stops written into the text) read from ``--then-metrics``; approximate-randomisation
tests over the units (10000 permutations) of each soft system against the others.

Usage:
    python experiments/paper003/scripts/upp_evidence.py MODEL UD_DIR --output OUT.json [--then-metrics JSON]
    python experiments/paper003/scripts/upp_evidence.py MODEL --ted TSV --prior-docs DOCS.jsonl --output OUT.json
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

DEFAULT_WEIGHTS = (0.002, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32)


class SlotEvidence:
    """What the ``punctgen`` component reads as its lexical expert (``weight`` and
    ``sentence_evidence``): per sentence, the product of the shipped expert's evidence at its
    weight and UPP's rows at ``upp_weight`` (``combine_evidence``), read by the decoder at weight 1.
    ``offset``: where the piece being restored starts in ``text``; its sentences' words are found
    in ``text`` in order from there, and a word that ends a stream word takes that word's UPP row."""

    weight = 1.0

    def __init__(self, text, end_rows, upp_weight, expert=None, expert_weight=0.0):
        self.text, self.end_rows, self.upp_weight = text, end_rows, upp_weight
        self.expert, self.expert_weight = expert, expert_weight
        self.offset = 0
        self.unaligned = 0

    def sentence_evidence(self, sentences):
        from spacy_punctgen.decode.incremental_evidence import combine_evidence

        sentences = list(sentences)
        lex = self.expert.sentence_evidence(sentences) if self.expert_weight > 0 else [None] * len(sentences)
        pos, out = self.offset, []
        for ps, q in zip(sentences, lex):
            rows = np.ones((len(ps.words), len(self.end_rows.ones)))
            for j, w in enumerate(ps.words):
                k = self.text.find(w, pos)
                if k < 0:
                    self.unaligned += 1
                    continue
                pos = k + len(w)
                r = self.end_rows.get(pos)
                if r is not None:
                    rows[j] = r
            out.append(combine_evidence([(q, self.expert_weight), (rows, self.upp_weight)]))
        return out


class EndRows(dict):
    """UPP's evidence row of each stream word, keyed by the offset where the word ends in the text."""

    def __init__(self, words, rows):
        super().__init__()
        pos = 0
        for w, r in zip(words, rows):
            pos += len(w)
            self[pos] = r
            pos += 1
        self.ones = np.ones(rows.shape[1]) if len(rows) else np.ones(8)


def restored(nlp, unit, pm, lexical):
    """The restored text of one parsed unit with ``pm.lexical = lexical``: the ``punctgen``
    components run on each parsed piece, the edits applied as ``restore_text`` applies them."""
    from spacy_punctgen.api.stream import punctgen_names
    from spacy_punctgen.formats.insertions import inside_token
    from spacy_punctgen.pipeline.restore import apply_edits

    text = unit["text"]
    pm.lexical = lexical
    out, pos = [], 0
    for offset, piece in unit["pieces"]:
        end = offset + len(piece.text)
        if offset > pos:
            out.append(text[pos:offset])
        if len(piece):
            if isinstance(lexical, SlotEvidence):
                lexical.offset = offset
            for name in punctgen_names(nlp):
                piece = nlp.get_pipe(name)(piece)
            edits = piece._.restored_edits or {"insertions": [], "deletions": []}
            ins = [(o, s) for o, s in edits["insertions"] if not inside_token(text, offset + o)]
            out.append(apply_edits(piece.text, ins, list(edits["deletions"])))
        else:
            out.append(piece.text)
        pos = end
    if pos < len(text):
        out.append(text[pos:])
    return "".join(out)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", help="a UPP (or CPP) model folder written by train.py")
    p.add_argument("ud_dir", nargs="?", default=None)
    p.add_argument("--output", required=True)
    p.add_argument("--ted", default=None, help="a TED word<TAB>label file: its dev block, the weights chosen on "
                   "the training block's last tenth")
    p.add_argument("--train-share", type=float, default=0.8)
    p.add_argument("--unit-words", type=int, default=500)
    p.add_argument("--window", type=int, default=200, help="TED: UPP decodes the stream in windows (windows.py)")
    p.add_argument("--margin", type=int, default=50)
    p.add_argument("--prior-docs", default=None, help="UPP's training documents (.jsonl) for its class "
                   "frequencies (default for UD: the treebank's train streams)")
    p.add_argument("--stream-sents", type=int, default=10)
    p.add_argument("--weights", type=float, nargs="*", default=list(DEFAULT_WEIGHTS))
    p.add_argument("--then-metrics", default=None, help="upp_then_punctgen.py's JSON on the same streams")
    p.add_argument("--permutations", type=int, default=10000)
    p.add_argument("--limit", type=int, default=0, help="UD: only the first N streams of each split (a smoke test)")
    args = p.parse_args(argv)
    if (args.ud_dir is None) == (args.ted is None):
        p.error("give UD_DIR or --ted TSV")

    import spacy_punctgen
    from spacy_punctgen.api.stream import iter_pieces_at
    from spacy_punctgen.decode.incremental_evidence import class_evidence
    from spacy_punctgen.evaluation import stream as S
    from spacy_punctgen.incremental.evidence import mark_evidence, mark_evidence_windows
    from spacy_punctgen.incremental.model import IncrementalPunctuator
    from spacy_punctgen.incremental.streams import load_docs, sentence_docs
    from spacy_punctgen.pipeline.component import load_lexical_expert
    from spacy_punctgen.pipeline.shipped import lexical_expert_path

    t_start = time.perf_counter()
    model = IncrementalPunctuator.from_disk(args.model)
    labels = model.labels
    # UPP's class frequencies in its training documents (divided out, as the expert's are)
    if args.prior_docs:
        prior_docs = load_docs(args.prior_docs, labels)
    else:
        from spacy_punctgen.data.conllu import find_split
        from spacy_punctgen.data.preprocess import preprocess_file

        prior_docs = sentence_docs(preprocess_file(find_split(args.ud_dir, "train"))[0], labels, args.stream_sents)
    counts = np.bincount([m for d in prior_docs for m in d.marks], minlength=len(labels)).astype(np.float64)
    prior = counts / counts.sum()

    nlp = spacy_punctgen.load("en")
    pm = nlp.get_pipe("punctgen").require_model()
    expert = load_lexical_expert(lexical_expert_path("en"))

    # the units: (held-out for the weight, test), each a list of streams with their words and gold
    if args.ted:
        from spacy_punctgen.data.ted import read_ted, split_blocks

        text = read_ted(args.ted)
        (t0, t1), (d0, d1) = split_blocks(text, args.train_share, args.ted)
        train = text.block(t0, t1)
        (_, _), (h0, h1) = split_blocks(train, 0.9, args.ted)
        held = train.block(h0, h1)
        dev = text.block(d0, d1)
        sets = {"held_out": [S.Stream(held.words, held.marks)], "test": [S.Stream(dev.words, dev.marks)]}
        kind = "ted"
        info = {"test": args.ted, "dev_block": [d0, d1], "held_out_block": [t0 + h0, t0 + h1],
                "train_share": args.train_share, "unit_words": args.unit_words, "treebank": "ted",
                "window": args.window, "margin": args.margin}
    else:
        from spacy_punctgen.data.conllu import find_split
        from spacy_punctgen.data.preprocess import preprocess_file

        test_path, dev_path = find_split(args.ud_dir, "test"), find_split(args.ud_dir, "dev")
        sets = {name: S.sentence_streams(preprocess_file(path)[0], size=args.stream_sents, lower=True)
                for name, path in (("held_out", dev_path), ("test", test_path))}
        if args.limit:
            sets = {name: streams[:args.limit] for name, streams in sets.items()}
        kind = "stream"
        info = {"test": str(test_path), "held_out": str(dev_path), "stream_sents": args.stream_sents,
                "treebank": Path(args.ud_dir).name}

    def units_of(streams):
        out = []
        for s in streams:
            words = list(s.words)
            lower = [w.lower() for w in words]
            t0 = time.perf_counter()
            ev = mark_evidence_windows(model, lower, args.window, args.margin) if args.ted \
                else mark_evidence(model, lower)
            t_upp = time.perf_counter() - t0
            rows = class_evidence(ev.probs, labels, prior)
            text_ = " ".join(words)
            t0 = time.perf_counter()
            pieces = list(iter_pieces_at(nlp, text_))
            out.append({"stream": s, "words": words, "text": text_, "pieces": pieces, "end_rows": EndRows(words, rows),
                        "upp_gaps": [labels.marks[m] for m in ev.marks], "upp_seconds": t_upp,
                        "parse_seconds": time.perf_counter() - t0})
        return out

    def predictions(units, setting):
        """(gaps per unit, seconds of restoration, word characters missing from the output)."""
        name, w_upp, w_lex = setting
        preds, missing, t0 = [], 0, time.perf_counter()
        for u in units:
            if name == "upp":
                preds.append(u["upp_gaps"])
                continue
            if w_upp > 0:
                lexical = SlotEvidence(u["text"], u["end_rows"], w_upp, expert, w_lex)
            else:
                lexical = expert if w_lex > 0 else None
            gaps, n_missing = S.align_gaps(u["words"], restored(nlp, u, pm, lexical))
            preds.append(gaps)
            missing += n_missing
        pm.lexical = None
        return preds, time.perf_counter() - t0, missing

    def scored(units, preds):
        if kind == "ted":
            whole = units[0]["stream"]
            blocks = S.word_blocks(whole.words, whole.gold, args.unit_words)
            cut = [preds[0][i:i + args.unit_words] for i in range(0, len(whole.words), args.unit_words)]
            return blocks, cut
        return [u["stream"] for u in units], preds

    def overall(units, preds):
        streams, cut = scored(units, preds)
        return S.evaluate_predictions(streams, cut, kind)["scores"]["overall"]["f1"]

    held = units_of(sets["held_out"])
    print(json.dumps({"held_out_units": len(held), "seconds": round(time.perf_counter() - t_start, 1)}), flush=True)
    choice = {"upp_soft": {}, "upp_soft_lexical": {}}
    for fam, w_lex in (("upp_soft", 0.0), ("upp_soft_lexical", expert.weight)):
        for w in [0.0] + list(args.weights):
            f1 = overall(held, predictions(held, ("soft", w, w_lex))[0])
            choice[fam][str(w)] = f1
            print(json.dumps({"held_out": fam, "upp_weight": w, "expert_weight": w_lex,
                              "overall_f1": round(100 * f1, 2)}), flush=True)
    best = {fam: max((float(w) for w in d), key=lambda w: (d[str(w)], -w)) for fam, d in choice.items()}
    held_upp = overall(held, predictions(held, ("upp", 0.0, 0.0))[0])  # UPP alone on the same held-out text
    print(json.dumps({"held_out": "upp", "overall_f1": round(100 * held_upp, 2)}), flush=True)
    del held

    test = units_of(sets["test"])
    settings = {"shipped": ("soft", 0.0, 0.0), "shipped_lexical": ("soft", 0.0, expert.weight),
                "upp": ("upp", 0.0, 0.0), "upp_soft": ("soft", best["upp_soft"], 0.0),
                "upp_soft_lexical": ("soft", best["upp_soft_lexical"], expert.weight)}
    reports = {}
    for name, setting in settings.items():
        preds, seconds, missing = predictions(test, setting)
        streams, cut = scored(test, preds)
        extra = dict(info)
        if kind == "ted":
            whole = test[0]["stream"]
            extra["restored_boundaries"] = S.boundary_scores([S.gold_boundaries(whole)], [S.mark_boundaries(preds[0])])
        else:
            extra["restored_boundaries"] = S.boundary_scores([S.gold_boundaries(u["stream"]) for u in test],
                                                             [S.mark_boundaries(g) for g in preds])
        reports[name] = S.stream_report(name, streams, cut, kind, seconds=round(seconds, 1), missing_word_chars=missing,
                                        upp_weight=setting[1], expert_weight=setting[2], **extra)
        sc = reports[name]["scores"]
        print(json.dumps({"system": name, "upp_weight": setting[1], "expert_weight": setting[2],
                          **{k: round(100 * v["f1"], 1) for k, v in sc.items()}}), flush=True)
    if args.then_metrics and kind == "stream":
        then = json.loads(Path(args.then_metrics).read_text())
        # the same streams and the same UPP: its UPP-alone counts must be ours
        if then["systems"]["upp"]["counts"] != reports["upp"]["counts"]:
            raise SystemExit(f"{args.then_metrics}: its UPP's counts differ from this model's (not the same model)")
        reports["upp_then_punctgen"] = then["systems"]["upp_then_punctgen"]
    classes = S.CLASSIFIERS[kind][1]
    tests = {}
    for name in ("upp_soft", "upp_soft_lexical"):
        for ref in reports:
            if ref == name or (name == "upp_soft" and ref == "upp_soft_lexical"):
                continue
            tests[f"{name} vs {ref}"] = S.compare_systems(
                np.asarray(reports[name]["counts"]), np.asarray(reports[ref]["counts"]), classes,
                reports[name]["errors"], reports[ref]["errors"], args.permutations, 0)
    out = {"model": args.model, "kind": kind, **info, "n_units": reports["shipped"]["n_units"],
           "n_words": reports["shipped"]["n_words"], "permutations": args.permutations,
           "evidence": "UPP's softmax over the mark variants of the action that consumed each word on its best "
                       "analysis (incremental/evidence.py), over UPP's training class frequencies, ** upp_weight",
           "upp_prior": prior.tolist(), "weights": list(args.weights), "held_out_overall_f1": choice,
           "held_out_upp_overall_f1": held_upp, "chosen": best, "expert_weight": expert.weight,
           "upp_seconds": round(sum(u["upp_seconds"] for u in test), 1),
           "parse_seconds": round(sum(u["parse_seconds"] for u in test), 1),
           "systems": reports, "tests": tests, "seconds": round(time.perf_counter() - t_start, 1)}
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(out) + "\n")
    for k, t in tests.items():
        print(k, {n: round(v, 4) for n, v in t.items()}, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
