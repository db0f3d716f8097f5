"""Every ```python block of the README and of the reference pages in docs/ (not the lab notes in
docs/lab/) runs as written on the installed package, offline.

The blocks of one page run in order in one namespace, as a reader would run them; all pages run in
one subprocess (in a scratch folder where ``assets/`` is the repository's), where
``spacy_punctgen.load`` keeps each pipeline it loads, so the shipped pipeline loads once. A block
that names a trained model or data absent here (``training/...``, ``corpus/...``, ``../shared/...``),
needs the internet (a download) or a package not installed is skipped, with the reason."""
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"^```python\n(.*?)^```", flags=re.S | re.M)
_IMPORT = re.compile(r"^\s*(?:import|from)\s+([\w]+)", flags=re.M)
_PATH = re.compile(r"""["']((?:training|corpus|\.\./shared)/[^"']+)["']""")

RUNNER = r'''
import contextlib, io, json, sys, traceback
import spacy_punctgen
from spacy_punctgen.api import load as _load_module

_load, _pipelines = _load_module.load, {}
def _shared_load(*args, **kwargs):  # one pipeline per set of arguments, shared by every page
    key = repr((args, sorted(kwargs.items())))
    if key not in _pipelines:
        _pipelines[key] = _load(*args, **kwargs)
    return _pipelines[key]
spacy_punctgen.load = _load_module.load = _shared_load

for page, blocks in json.load(sys.stdin).items():
    namespace = {"__name__": "__main__"}
    for index, code in blocks:
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(code, f"{page}[{index}]", "exec"), namespace)
            result = {"ok": True, "stdout": out.getvalue()[-4000:]}
        except BaseException:
            result = {"ok": False, "error": traceback.format_exc()[-3000:]}
        print(json.dumps({"page": page, "index": index, **result}), flush=True)
'''


def _skip_reason(code: str):
    for path in _PATH.findall(code):
        if not (ROOT / path).exists():
            return f"needs {path} (a trained model or data absent here)"
    if re.search(r"\bdownload\(", code):
        return "needs the internet (a download)"
    for module in _IMPORT.findall(code):
        if importlib.util.find_spec(module) is None:
            return f"needs the package {module}"
    return None


def _blocks():
    """``(page, index, code, skip reason or None)`` of every python block."""
    for page in PAGES:
        text = page.read_text(encoding="utf8")
        for index, code in enumerate(_BLOCK.findall(text)):
            yield str(page.relative_to(ROOT)), index, code, _skip_reason(code)


BLOCKS = list(_blocks())


@pytest.fixture(scope="module")
def results(tmp_path_factory, shipped_parser):
    """Each block's outcome, all pages in one subprocess (one load of each shipped pipeline)."""
    cwd = tmp_path_factory.mktemp("docs_examples")
    (cwd / "assets").symlink_to(ROOT / "assets", target_is_directory=True)
    todo = {}
    for page, index, code, reason in BLOCKS:
        if reason is None:
            todo.setdefault(page, []).append((index, code))
    proc = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps(todo), cwd=cwd, capture_output=True,
                          text=True, timeout=600)
    out = {}
    for line in proc.stdout.splitlines():
        if line.startswith('{"page"'):
            rec = json.loads(line)
            out[(rec["page"], rec["index"])] = rec
    return out, proc.stderr[-3000:]


def test_there_are_examples():
    assert sum(page == "README.md" for page, *_ in BLOCKS) >= 2
    assert sum(reason is None for *_, reason in BLOCKS) >= 10


@pytest.mark.parametrize("page,index,code,reason", BLOCKS, ids=[f"{p}[{i}]" for p, i, _, _ in BLOCKS])
def test_example_runs(results, page, index, code, reason):
    if reason:
        pytest.skip(reason)
    out, stderr = results
    rec = out.get((page, index))
    assert rec is not None, f"{page}[{index}] did not run: {stderr}"
    assert rec["ok"], f"{page}[{index}]:\n{code}\n{rec['error']}"
    shown = _shown(code)
    if shown is not None:  # the block ends with a print and the output it shows: they agree
        assert rec["stdout"].rstrip("\n").splitlines()[-1] == shown, f"{page}[{index}]"


def _shown(code: str):
    """The output a block shows after its last line ``print(...)`` as a comment ``# [...]``, if any."""
    lines = code.rstrip("\n").splitlines()
    if len(lines) >= 2 and lines[-2].startswith("print(") and re.match(r"# [\[('\"]", lines[-1]):
        return lines[-1][2:]
    return None


_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
LINKED = [*PAGES, *sorted((ROOT / "docs" / "lab").glob("*.md"))]


def _anchors(path: Path) -> set:
    """GitHub's anchors of a Markdown file's headings (outside code blocks)."""
    out, fence = set(), False
    for line in path.read_text(encoding="utf8").split("\n"):
        fence ^= line.startswith("```")
        if not fence and re.match(r"#{1,6} ", line):
            base = re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
            anchor, n = base, 0
            while anchor in out:
                n += 1
                anchor = f"{base}-{n}"
            out.add(anchor)
    return out


@pytest.mark.parametrize("page", LINKED, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    """Links between the README, the reference pages and the lab notes point at files (and
    headings) that exist: pages moved into docs/lab/ took their links along."""
    for target in _LINK.findall(page.read_text(encoding="utf8")):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        assert dest.exists(), f"{page.name}: {target}"
        if anchor and dest.suffix == ".md":
            assert anchor in _anchors(dest), f"{page.name}: {target}"
