"""Fixtures of the workflow tests: the scripts of ``scripts/`` loaded as modules, and fake
cross-validation folds of the sample treebank as the workflow leaves them."""
import importlib.util
import json
from pathlib import Path

import pytest

from spacy_punctgen.data.conllu import find_split
from spacy_punctgen.data.convert import convert_file
from spacy_punctgen.data.preprocess import preprocess_file
from spacy_punctgen.evaluation.predictions import record, write_predictions

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
SAMPLE = SCRIPTS.parent / "assets" / "sample"


@pytest.fixture(scope="session")
def load_script():
    """``load_script(name)``: ``scripts/<name>.py`` imported as a fresh module. Scripts share
    code through ``spacy_punctgen.workflow``, not each other, so nothing goes on ``sys.path``."""
    def load(name: str):
        spec = importlib.util.spec_from_file_location(f"_script_{name}", SCRIPTS / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod

    return load


class CvFolds:
    """Folds ``en_x_cv<j>`` of a ``k``-fold cross-validation of the sample treebank under
    ``root`` (``corpus/``, ``training/``, ``metrics/``), as the workflow leaves them."""

    k = 3
    sources = [find_split(SAMPLE, s) for s in ("train", "dev", "test")]

    def __init__(self, root: Path, load_script):
        self.root, self.load_script = root, load_script

    def make(self, j: int, systems=("punctgen", "trivial"), ppl=None, las=0.8, keep=True):
        """Fold j's test files, predictions (perfect for ``punctgen*``, none for the others) and
        metrics, then ``keep-fold`` unless ``keep`` is false; returns its gold test sentences."""
        tmp, name = self.root, f"en_x_cv{j}"
        test = tmp / "corpus" / name / "punct" / "test.conllu"
        convert_file(self.sources, test, part="test", cv=(self.k, j))
        convert_file(self.sources, tmp / "corpus" / name / "depunct" / "test.conllu", part="test", cv=(self.k, j),
                     depunct=True)
        gold = preprocess_file(test)[0]
        folder = tmp / "metrics" / name
        folder.mkdir(parents=True)
        (folder / "parser_depunct.json").write_text(json.dumps({"dep_las": las, "dep_uas": las + 0.05}))
        for system in systems:
            preds = tmp / "training" / name / "predictions" / f"{system}_gold.jsonl"
            perfect = system.startswith("punctgen")
            write_predictions(preds, (record(s.slots if perfect else [()] * len(s.slots), s.sent_id) for s in gold))
            m = {"system": system, "protocol": "cv", "aed_gold": 0.0, "predictions_gold": str(preds),
                 "predictions_parsed": str(preds), "n_slots": sum(len(s.slots) for s in gold),
                 "perplexity_per_slot": (ppl or {}).get(system)}
            (folder / f"{system}.json").write_text(json.dumps(m))
        if keep:
            assert self.keep(name) == 0
        return gold

    def keep(self, fold: str) -> int:
        """``keep-fold`` of one fold; its exit status."""
        return self.load_script("keep_fold").main([fold, "--metrics", str(self.root / "metrics"),
                                                   "--corpus", str(self.root / "corpus")])

    def pool(self, *extra) -> int:
        """``pool-folds`` of en_x; its exit status."""
        return self.load_script("pool_folds").main([
            "en_x", "--cv-folds", str(self.k), "--metrics", str(self.root / "metrics"),
            "--corpus", str(self.root / "corpus"), "--training", str(self.root / "training"), *extra])


@pytest.fixture
def cv_folds(tmp_path, load_script):
    """:class:`CvFolds` under the test's ``tmp_path``."""
    return CvFolds(tmp_path, load_script)
