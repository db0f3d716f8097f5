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
    "features": 1.8,  # feature templates and the feature dictionary
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


def _from_target(node, package):
    """The module a ``from ... import`` statement in ``package`` names, relative ones resolved."""
    if not node.level:
        return node.module or ""
    base = package.split(".")
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(name, path, is_pkg):
    """Every spacy_punctgen module that ``path`` imports, anywhere in its body."""
    package = name if is_pkg else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("spacy_punctgen"))
        elif isinstance(node, ast.ImportFrom):
            target = _from_target(node, package)
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
    f.write_text("def f():\n    from ..features import templates\n")
    assert "spacy_punctgen.features.templates" in _imports("spacy_punctgen.decode.x", f, False)


#: the compiled modules, which only their wrappers in ``inference/`` import
COMPILED = {"_dp", "_train", "_slot_mbr", "_incremental"}


def _private_uses(name, path, is_pkg):
    """``(line, what)`` for each private name of another package module that ``path`` uses:
    ``from x import _y``, or ``m._y`` where ``m`` names a package module imported here."""
    package = name if is_pkg else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf8"))
    modules = {}  # local name -> module path
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("spacy_punctgen"):
                    modules[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            target = _from_target(node, package)
            if not target.startswith("spacy_punctgen"):
                continue
            if target.rpartition(".")[2] in COMPILED and not name.startswith("spacy_punctgen.inference."):
                out.append((node.lineno, f"from {target} import ..."))
            for a in node.names:
                private = a.name.startswith("_") and not a.name.startswith("__")
                in_wrapper = a.name in COMPILED and name.startswith("spacy_punctgen.inference.")
                if private and target != name and not in_wrapper:
                    out.append((node.lineno, f"from {target} import {a.name}"))
                candidate = f"{target}.{a.name}"
                if (PACKAGE.parent / (candidate.replace(".", "/") + ".py")).exists():
                    modules[a.asname or a.name] = candidate
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
            attr = node.attr
            if attr.startswith("_") and not attr.startswith("__") and modules[node.value.id] != name:
                out.append((node.lineno, f"{node.value.id}.{attr}"))
    return out


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_no_private_names_across_modules(module):
    path = next(p for n, p, _ in _modules() if n == module)
    is_pkg = path.name == "__init__.py"
    bad = _private_uses(module, path, is_pkg)
    assert not bad, f"{module} uses private names of other modules: {bad}"


def test_the_private_name_check_can_fail(tmp_path):
    f = tmp_path / "x.py"
    f.write_text("from spacy_punctgen.decode.mbr import _marginal\nimport spacy_punctgen.model.channel as ch\n"
                 "def g():\n    from ..inference import _dp\n    return ch._private\n")
    found = {what for _, what in _private_uses("spacy_punctgen.decode.x", f, False)}
    assert found == {"from spacy_punctgen.decode.mbr import _marginal", "from spacy_punctgen.inference import _dp",
                     "ch._private"}


def _defined_private(tree):
    """The private names a module defines: functions, classes, class attributes and the
    ``self._x`` it assigns."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            out.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.ImportFrom):
            out.update(a.asname or a.name for a in node.names)
    return {n for n in out if n.startswith("_")}


def _foreign_private_attributes(path):
    """``obj._x`` reads (``obj`` not ``self``/``cls``) of a private name this module does not
    define: another object's internals, ours or a library's."""
    tree = ast.parse(path.read_text(encoding="utf8"))
    own = _defined_private(tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__") \
                and node.attr != "_":  # ``doc._``: spaCy's public extension namespace
            base = node.value
            if isinstance(base, ast.Name) and base.id in ("self", "cls"):
                continue
            if node.attr not in own:
                out.append((node.lineno, ast.unparse(node)))
    return out


#: library internals used knowingly, each in one place, with why (docs/architecture.md)
#: (spaCy 3.8 has no public route to a parser's per-step class mask or its label set-up, which
#: drawing trees from the parser's transition probabilities needs; pinned with spaCy <3.9)
LIBRARY_PRIVATES = {
    ("spacy_punctgen.parsing.parser_samples", "step_model._class_mask"),
    ("spacy_punctgen.parsing.parser_samples", "parser._ensure_labels_are_added"),
}


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_no_reaching_into_other_objects(module):
    path = next(p for n, p, _ in _modules() if n == module)
    bad = [(line, what) for line, what in _foreign_private_attributes(path) if (module, what) not in LIBRARY_PRIVATES]
    assert not bad, f"{module} reads private attributes of other objects: {bad}"


def test_the_reaching_check_can_fail(tmp_path):
    f = tmp_path / "x.py"
    f.write_text("class A:\n    def f(self, model):\n        self._own = 1\n        return model._forward, self._own\n")
    assert [what for _, what in _foreign_private_attributes(f)] == ["model._forward"]
