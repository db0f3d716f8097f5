"""Write the shipped English pipelines as spaCy pipeline folders, for ``spacy package``.

Usage (project.yml ``package-shipped``):
    python scripts/package_shipped.py OUTPUT_DIR --mode restore|analyze [--truecase] [--lang en]
        [--version V]

Why: ``spacy_punctgen.load("en")`` builds the restoration pipeline (shipped parser, the
``punctgen_words`` step, ``punctgen`` in restore mode) and ``load("en", mode="analyze")`` the
analysis one; users who prefer ``spacy.load("en_punctgen_restore")`` get the same pipeline as a
pip-installable package built by ``spacy package`` from the folder this writes. The pipeline
is loaded back with ``spacy.load`` and run on a check text before the script succeeds; a
summary is printed as JSON on the last line.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import spacy

from spacy_punctgen.about import __version__
from spacy_punctgen.api.load import load

CHECK = {"restore": "when i came home he left i was sad", "analyze": "When I came home, he left."}


def write_pipeline(out: Path, mode: str, lang: str = "en", truecase: bool = False,
                   version: str = __version__) -> dict:
    nlp = load(lang, mode=mode, truecase=truecase)
    name = f"punctgen_{mode}" + ("_truecase" if truecase else "")
    nlp.meta.update({"name": name, "version": version,
                     "description": f"spacy-punctgen's shipped {lang} pipeline, mode={mode!r}: "
                                    "UD parser + punctgen (spacy_punctgen.load)",
                     "requirements": [f"spacy-punctgen>={__version__}"]})
    if out.exists():
        shutil.rmtree(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    nlp.to_disk(out)
    again = spacy.load(out)
    doc = again(CHECK[mode])
    check = doc._.restored_text if mode == "restore" else [e["underlying"] for e in doc._.underlying_punct]
    if check != (nlp(CHECK[mode])._.restored_text if mode == "restore"
                 else [e["underlying"] for e in nlp(CHECK[mode])._.underlying_punct]):
        raise SystemExit(f"package_shipped: {out} loads back with different output")
    return {"output": str(out), "name": name, "mode": mode, "pipes": again.pipe_names, "check": check,
            "megabytes": round(sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) / 2 ** 20, 2)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("output", type=Path)
    p.add_argument("--mode", choices=("restore", "analyze"), required=True)
    p.add_argument("--lang", default="en")
    p.add_argument("--truecase", action="store_true")
    p.add_argument("--version", default=__version__)
    args = p.parse_args(argv)
    print(json.dumps(write_pipeline(args.output, args.mode, args.lang, args.truecase, args.version)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
