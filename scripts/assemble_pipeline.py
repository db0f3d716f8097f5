"""Build the full analysis pipeline: a trained UD tagger/parser + ``punctgen`` with a trained model.

Usage (project.yml ``package``):
    python scripts/assemble_pipeline.py PARSER_DIR PUNCTGEN_MODEL_DIR OUTPUT_DIR \
        [--name NAME] [--version V] [--check-text TEXT]

The punctgen weights are stored inside the pipeline (``OUTPUT_DIR/punctgen/model``, written
by the component's ``to_disk``), and ``[components.punctgen] model`` is reset to ``null`` in
the saved config, so the pipeline does not point at this machine's training directory and
can be moved and packaged. The pipeline is then loaded back and run on ``--check-text``;
a summary is printed as JSON on the last line.
"""
from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
from pathlib import Path

import spacy
from thinc.api import Config

import spacy_punctgen.pipeline.component  # noqa: F401  (registers the "punctgen" factory)
from spacy_punctgen.about import __version__

DEFAULT_TEXT = "Hello, world. This is, as you can see, a test."


def assemble(parser_dir: Path, model_dir: Path, output: Path, name: str = None, version: str = None,
             check_text: str = DEFAULT_TEXT) -> dict:
    nlp = spacy.load(parser_dir)
    if "parser" not in nlp.pipe_names:
        raise SystemExit(f"{parser_dir}: the pipeline has no 'parser' (pipes: {nlp.pipe_names})")
    if "punctgen" in nlp.pipe_names:
        nlp.remove_pipe("punctgen")
    nlp.add_pipe("punctgen", config={"model": str(model_dir)}, last=True)
    if name:
        nlp.meta["name"] = name
    if version:
        nlp.meta["version"] = version
    reqs = [r for r in nlp.meta.get("requirements", []) if not r.startswith("spacy-punctgen")]
    nlp.meta["requirements"] = reqs + [f"spacy-punctgen>={__version__}"]
    nlp.meta["description"] = (f"UD tagger/morphologizer/parser trained on {parser_dir}, with the "
                               f"spacy-punctgen 'punctgen' component trained in {model_dir}")
    if output.exists():
        shutil.rmtree(output)
    nlp.to_disk(output)
    # Do not leave this machine's model path in the config: the weights are in punctgen/model.
    cfg_path = output / "config.cfg"
    cfg = Config().from_disk(cfg_path, interpolate=False)
    cfg["components"]["punctgen"]["model"] = None
    cfg.to_disk(cfg_path)

    loaded = spacy.load(output)
    doc = loaded(check_text)
    slots = doc._.underlying_punct or []
    lp = doc._.punct_logprob
    return {
        "output": str(output),
        "pipeline": loaded.pipe_names,
        "check_text": check_text,
        "n_slots": len(slots),
        "n_explained": sum(e["underlying"] is not None for e in slots),
        "punct_logprob": lp if lp is not None and math.isfinite(lp) else None,  # -inf: p(x|T) = 0
        "heads": [t.head.i for t in doc],
        "deps": [t.dep_ for t in doc],
        "pos": [t.pos_ for t in doc],
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("parser_dir", type=Path, help="trained spaCy pipeline with a UD parser (model-best)")
    p.add_argument("model_dir", type=Path, help="punctgen model directory written by `punctgen train`")
    p.add_argument("output", type=Path, help="pipeline directory to write (replaced if it exists)")
    p.add_argument("--name", default=None, help="meta name (spacy package prefixes the language)")
    p.add_argument("--version", default=None, help="meta version")
    p.add_argument("--check-text", default=DEFAULT_TEXT, help="text to run the assembled pipeline on")
    args = p.parse_args(argv)
    for path in (args.parser_dir, args.model_dir):
        if not path.is_dir():
            print(f"assemble_pipeline: no such directory: {path}", file=sys.stderr)
            return 1
    summary = assemble(args.parser_dir, args.model_dir, args.output, args.name, args.version, args.check_text)
    print(json.dumps(summary, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
