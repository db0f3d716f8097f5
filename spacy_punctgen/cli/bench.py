"""``punctgen bench``: argument parsing and printing; the work is done by :mod:`spacy_punctgen.bench.suite`."""
from __future__ import annotations
import argparse
from pathlib import Path

from spacy_punctgen.cli import check_output_file, command, positive_int, seed_int
from spacy_punctgen.bench.suite import SAMPLE, SECTIONS, command_line, markdown_table, run_bench


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", default=None,
                   help=f"UD folder with train/dev splits, e.g. a UD English EWT folder (default: {SAMPLE} in the working directory)")
    p.add_argument("--parser", default=None, help="spaCy pipeline with tagger+parser (default: "
                   "training/<treebank>/parser-punct/model-best, else a tiny one trained in this run)")
    p.add_argument("--model", default=None, help="punctgen model directory (default: the one the "
                   "training section trains)")
    p.add_argument("--quick", action="store_true", help="the shipped sample and small counts (seconds)")
    p.add_argument("--sections", default=None, help=f"comma-separated subset of {','.join(SECTIONS)}")
    p.add_argument("--repeats", type=positive_int, default=None, help="best of N timings (default 3, quick 1)")
    p.add_argument("--markdown", default=None, help="also write the table to this Markdown file")
    p.add_argument("--seed", type=seed_int, default=0)
    p.add_argument("--transcript", default=None, help="the transcript section's text: plain text, or a "
                   "word<TAB>label .tsv such as IWSLT's (default: the --data dev split without its punctuation); "
                   "lowercased, cycled or cut to --transcript-words")
    p.add_argument("--transcript-words", type=positive_int, default=None,
                   help="words of the transcript section (default 100,000, the targets' length; quick 1,000)")


@command("bench", "Throughput, memory and scaling figures, each against a reference timed in the same run",
         _arguments)
def bench_cli(args) -> dict:
    check_output_file(args.markdown, "--markdown")
    sections = [s.strip() for s in args.sections.split(",") if s.strip()] if args.sections else list(SECTIONS)
    def write(result: dict) -> None:
        if args.markdown:
            Path(args.markdown).parent.mkdir(parents=True, exist_ok=True)
            Path(args.markdown).write_text(markdown_table({"command": command_line(args), **result}),
                                           encoding="utf-8")

    result = run_bench(args.data, args.parser, args.model, args.quick, sections, args.repeats, args.seed,
                       partial=write, transcript=args.transcript, transcript_words_n=args.transcript_words)
    result = {"command": command_line(args), **result}
    table = markdown_table(result)
    if args.markdown:
        Path(args.markdown).parent.mkdir(parents=True, exist_ok=True)
        Path(args.markdown).write_text(table, encoding="utf-8")
    result["_text"] = table
    return result
