"""spacy_punctgen/errors.py, spaCy style: every message has a unique code that equals its name,
every placeholder is filled where it is raised, and library code raises and warns with these
messages instead of inline strings.
"""
import ast
import re
import string
import warnings
from pathlib import Path

import pytest

import spacy_punctgen
from spacy_punctgen.errors import Errors, Warnings

PACKAGE = Path(spacy_punctgen.__file__).resolve().parent
ERRORS_PY = PACKAGE / "errors.py"
#: Every subpackage raises and warns through errors.py.
CONVERTED = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file())
CONVERTED_FILES = sorted(p for sub in CONVERTED for p in (PACKAGE / sub).glob("*.py"))
NOT_CONVERTED = set()


def _messages(cls):
    return {name: value for name, value in vars(cls).items() if not name.startswith("_")}


def _fields(message):
    return {field for _, field, _, _ in string.Formatter().parse(message) if field is not None}


def test_every_message_starts_with_its_own_code():
    for cls, letter in ((Errors, "E"), (Warnings, "W")):
        messages = _messages(cls)
        assert messages, cls
        for name, message in messages.items():
            assert re.fullmatch(letter + r"\d{3}", name), f"{cls.__name__}.{name}: codes are {letter}NNN"
            assert isinstance(message, str) and message.startswith(f"[{name}] "), f"{cls.__name__}.{name}"
            assert message[len(name) + 3:].strip(), f"{cls.__name__}.{name} says nothing"


def test_codes_are_unique_in_the_source():
    """A class body may assign a name twice (the second silently wins), so read the source."""
    tree = ast.parse(ERRORS_PY.read_text(encoding="utf8"))
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    assert sorted(c.name for c in classes) == ["Errors", "Warnings"]
    seen = {}
    for cls in classes:
        for node in cls.body:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    assert target.id not in seen, f"{target.id} assigned twice (lines {seen[target.id]}, {node.lineno})"
                    seen[target.id] = node.lineno
    codes = [m[1:m.index("]")] for cls in (Errors, Warnings) for m in _messages(cls).values()]
    assert len(codes) == len(set(codes))


def test_messages_are_valid_format_strings():
    for cls in (Errors, Warnings):
        for name, message in _messages(cls).items():
            fields = _fields(message)  # raises on a lone brace
            assert all(f and not f[0].isdigit() for f in fields), f"{name}: name every placeholder"
            if not fields:
                assert message.format() == message.replace("{{", "{").replace("}}", "}")


def _uses(path):
    """``(line, class name, code, keyword names or None)`` of every Errors/Warnings use in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf8"))
    formatted, out = {}, []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"
                and isinstance(node.func.value, ast.Attribute) and isinstance(node.func.value.value, ast.Name)
                and node.func.value.value.id in ("Errors", "Warnings")):
            formatted[id(node.func.value)] = {k.arg for k in node.keywords}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id in ("Errors", "Warnings") and re.fullmatch(r"[EW]\d+", node.attr):
            out.append((node.lineno, node.value.id, node.attr, formatted.get(id(node))))
    return out


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_use_names_an_existing_message_and_fills_its_placeholders(path):
    classes = {"Errors": Errors, "Warnings": Warnings}
    for line, cls, code, keywords in _uses(path):
        where = f"{path.name}:{line}: {cls}.{code}"
        assert hasattr(classes[cls], code), f"{where} does not exist"
        fields = _fields(getattr(classes[cls], code))
        if keywords is None:
            assert not fields, f"{where} is used without .format() but has placeholders {sorted(fields)}"
        else:
            assert keywords == fields, f"{where}: .format({sorted(keywords)}) for placeholders {sorted(fields)}"


def _inline_string(node):
    """Whether an exception's or warning's message is written inline: a string literal, an
    f-string, ``"..." % x``, ``"..." + x`` or ``"...".format(...)``."""
    if isinstance(node, ast.Constant):  # a bare identifier (a field's name) is not a message
        return isinstance(node.value, str) and not node.value.isidentifier()
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        return _inline_string(node.left) or _inline_string(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return _inline_string(node.func.value)
    return False


def _inline_messages(path):
    tree = ast.parse(path.read_text(encoding="utf8"))
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            args = node.exc.args or [k.value for k in node.exc.keywords]
            if any(_inline_string(a) for a in args):
                bad.append(f"{path.name}:{node.lineno}: raise with an inline message")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "warn"
              and isinstance(node.func.value, ast.Name) and node.func.value.id == "warnings"):
            if node.args and _inline_string(node.args[0]):
                bad.append(f"{path.name}:{node.lineno}: warnings.warn with an inline message")
    return bad


@pytest.mark.parametrize("path", [p for p in CONVERTED_FILES if p not in NOT_CONVERTED],
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_inline_error_or_warning_messages(path):
    assert _inline_messages(path) == []


@pytest.mark.parametrize("path", [p for p in CONVERTED_FILES if p.parent.name != "cli"],
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_library_code_does_not_print_to_stderr(path):
    """Warnings go through warnings.warn(Warnings.W...), progress through spaCy's logger; only
    the command line prints."""
    tree = ast.parse(path.read_text(encoding="utf8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            for k in node.keywords:
                assert not (k.arg == "file" and "stderr" in ast.unparse(k.value)), \
                    f"{path.name}:{node.lineno}: print to stderr in library code"


def test_the_checker_sees_inline_messages(tmp_path):
    """The checker itself: inline messages are found, re-raises and Errors messages are not."""
    f = tmp_path / "x.py"
    f.write_text("import warnings\n"
                 "def f(x, err):\n"
                 "    if x == 1: raise ValueError('a b')\n"
                 "    if x == 2: raise ValueError(f'{x}') from None\n"
                 "    if x == 3: raise KeyError('%s' % x)\n"
                 "    if x == 4: raise ValueError('{}'.format(x))\n"
                 "    if x == 5: warnings.warn(f'{x}')\n"
                 "    if x == 6: raise ValueError(Errors.E001.format(x=x))\n"
                 "    if x == 7: raise err\n"
                 "    if x == 8: raise\n"
                 "    if x == 9: raise ValueError(Errors.E009) from err\n"
                 "    if x == 10: raise bad(name='ctx_keys')\n"
                 "    warnings.warn(Warnings.W001.format(x=x))\n")
    # line 13: a field's name given to a helper that builds an Errors message is not a message
    assert [line.split(":")[1] for line in _inline_messages(f)] == ["3", "4", "5", "6", "7"]


def test_a_warning_can_be_filtered_by_its_code():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.warn(Warnings.W001.format(lang="xx", err="test"))
    assert caught and str(caught[0].message).startswith("[W001] ")
