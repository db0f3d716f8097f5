"""The package's layers import one way only, and no modules import each other in a circle.

``cli → {bench, workflow, testing} → {pipeline, baselines} → evaluation → {training, decode} →
model → inference → data`` (``workflow``: the helpers of the ``spacy project`` workflow's
scripts); ``errors`` and ``about`` may be imported from anywhere.  Function-local
imports count the same as module-level ones (see ``docs/architecture.md``).
"""
import ast
from pathlib import Path

import pytest

import spacy_punctgen

PACKAGE = Path(spacy_punctgen.__file__).resolve().parent
RANKS = {
    "data": 0,
    "formats": 0.5,  # file formats (plain text, SubRip, WebVTT, word timestamps) as insertions into text
    "inference": 1,
    "incremental": 1.5,  # paper 003's CPP/UPP and live mode: uses inference and data only
    "model": 2,
    "training": 3,
    "decode": 3,
    "evaluation": 4,
    "parsing": 4.5,  # parser helpers: k-best search, tree sampling, the restore tokenizer and words component
    "pipeline": 5,  # the punctgen component and what only it needs
    "baselines": 5,
    "truecasing": 5.2,  # the punctgen_truecase component, its training and shipping
    "api": 5.8,  # user-facing entry points: load, restore_text, streaming, distributed, rephrase, the picture
    "bench": 6,
    "workflow": 6,  # the helpers of the `spacy project` workflow's scripts (scripts/*.py)
    "testing": 5.5,  # brute-force references: the bench measures against them
    "cli": 7,
}
EVERYWHERE = {"errors", "about"}


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        yield ".".join(["spacy_punctgen"] + parts), path, is_pkg


def _imports(name, path, is_pkg):
    """Every spacy_punctgen module that ``path`` imports, anywhere in its body."""
    package = name if is_pkg else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("spacy_punctgen"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("spacy_punctgen"):
                continue
            out.add(target)
            for alias in node.names:  # "from pkg import module"
                candidate = f"{target}.{alias.name}"
                if (PACKAGE.parent / (candidate.replace(".", "/") + ".py")).exists() or \
                        (PACKAGE.parent / candidate.replace(".", "/")).is_dir():
                    out.add(candidate)
    return out


GRAPH = {name: _imports(name, path, is_pkg) for name, path, is_pkg in _modules()}


def _layer(module):
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def test_every_subpackage_has_a_rank():
    top = {_layer(m) for m in GRAPH} - {None}
    assert top - set(RANKS) - EVERYWHERE - {"__main__", "inference._dp", "inference._train"} == set()


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_imports_go_down_the_layers(module):
    src = _layer(module)
    if src is None or src not in RANKS:  # the package root and __main__ may import anything
        return
    bad = []
    for target in sorted(GRAPH[module]):
        dst = _layer(target)
        if dst is None or dst in EVERYWHERE or dst == src:
            continue
        if dst not in RANKS or RANKS[dst] >= RANKS[src]:
            bad.append(target)
    assert not bad, f"{module} ({src}) imports {bad}: only layers below it may be imported"


def test_no_import_circles():
    graph = {m: {t for t in ts if t in GRAPH and t != m} for m, ts in GRAPH.items()}
    # a package's __init__ is not a real dependency of its own modules
    for m in graph:
        graph[m] = {t for t in graph[m] if not m.startswith(t + ".")}
    state, stack, cycles = {}, [], []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                cycles.append(stack[stack.index(t):] + [t])
            elif t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert not cycles, "import circles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_the_walker_sees_relative_and_local_imports(tmp_path):
    """The checker itself: a function-local relative import is found."""
    f = tmp_path / "x.py"
    f.write_text("def f():\n    from ..model import features\n")
    assert "spacy_punctgen.model.features" in _imports("spacy_punctgen.decode.x", f, False)
