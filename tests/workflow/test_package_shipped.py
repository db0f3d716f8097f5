"""scripts/package_shipped.py: the shipped pipelines written as spaCy pipeline folders load back
with spacy.load and give the same output; `spacy package` builds them (slow)."""
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
import spacy

import spacy_punctgen

ROOT = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("package_shipped", ROOT / "scripts" / "package_shipped.py")
package_shipped = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(package_shipped)


@pytest.mark.parametrize("mode", ["restore", "analyze"])
def test_shipped_pipeline_folder_loads_back(tmp_path, mode):
    out = tmp_path / mode
    summary = package_shipped.write_pipeline(out, mode, version="1.2.3")
    nlp = spacy.load(out)
    assert nlp.meta["name"] == f"punctgen_{mode}" and nlp.meta["version"] == "1.2.3"
    assert nlp.get_pipe("punctgen").cfg["mode"] == mode
    text = "when i came home he left" if mode == "restore" else "When I came home, he left."
    doc, ref = nlp(text), spacy_punctgen.load("en", mode=mode)(text)
    if mode == "restore":
        assert doc._.restored_text == ref._.restored_text
        assert [t.text for t in nlp.make_doc("mr. smith of the u.s.")] == ["mr.", "smith", "of", "the", "u.s."]
    else:
        assert doc._.underlying_punct == ref._.underlying_punct
    assert summary["megabytes"] < 40


@pytest.mark.slow
def test_spacy_package_builds_the_analysis_pipeline(tmp_path):
    package_shipped.write_pipeline(tmp_path / "pipe", "analyze", version="0.0.1")
    (tmp_path / "pkgs").mkdir()
    proc = subprocess.run([sys.executable, "-m", "spacy", "package", str(tmp_path / "pipe"), str(tmp_path / "pkgs"),
                           "--code", str(ROOT / "scripts" / "punctgen_code.py"), "--name", "punctgen_analyze",
                           "--version", "0.0.1", "--force"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert list((tmp_path / "pkgs").glob("en_punctgen_analyze-0.0.1/dist/*.tar.gz"))
