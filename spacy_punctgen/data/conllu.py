"""Read UD CoNLL-U files into plain :class:`UDSentence` records.

Why a thin layer over the ``conllu`` package: the model only needs the basic
tree of syntactic words plus the surface spacing (for quote direction), and
every error must name the file and line so that a bad treebank is easy to fix.
``conllu.parse_incr`` forgets line numbers, so we cut the file into sentence
blocks ourselves and let ``conllu`` parse each line.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, List, Optional, Tuple, Union

from conllu.exceptions import ParseException
from conllu.parser import DEFAULT_FIELD_PARSERS, DEFAULT_FIELDS, parse_comment_line

from spacy_punctgen.errors import Errors

PathLike = Union[str, Path]


@dataclass
class UDSentence:
    """One sentence's basic tree over syntactic words (no MWT ranges, no empty nodes)."""

    ids: List[int]
    forms: List[str]
    upos: List[str]
    xpos: List[str]  # "_" where absent
    heads: List[int]  # 1-based like CoNLL-U, 0 = root
    deprels: List[str]
    space_after: List[bool]
    sent_id: Optional[str] = None
    text: Optional[str] = None
    path: str = ""
    line: int = 0  # 1-based line of the sentence's first line (comment or token)
    #: the multiword tokens (``3-4  du``): (first word, last word, FORM), 1-based word ids
    multiword: List[Tuple[int, int, str]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.forms)


def find_split(folder: PathLike, split: str) -> Optional[Path]:
    """Return the folder's ``*-ud-{split}.conllu`` (never built from the folder name), or None."""
    hits = sorted(Path(folder).glob(f"*-ud-{split}.conllu"))
    if len(hits) > 1:
        raise ValueError(Errors.E500.format(folder=folder, split=split, files=", ".join(h.name for h in hits)))
    return hits[0] if hits else None


def resolve_split(path: PathLike, split: Optional[str]) -> Path:
    """A CoNLL-U file, or a UD folder together with ``split`` (its ``*-ud-{split}.conllu``).

    The one place where commands turn a ``FILE|FOLDER`` argument into a file.
    """
    p = Path(path)
    if p.is_dir():
        if not split:
            raise ValueError(Errors.E501.format(path=p))
        hit = find_split(p, split)
        if hit is None:
            raise FileNotFoundError(Errors.E502.format(path=p, split=split))
        return hit
    if not p.is_file():
        raise FileNotFoundError(Errors.E503.format(path=p))
    return p


def _space_after(misc) -> bool:
    return not (misc and misc.get("SpaceAfter") == "No")


_USED = {"id", "form", "upos", "xpos", "head", "deprel", "misc"}


def _parse_columns(cols: List[str], path: Path, lineno: int) -> dict:
    """Parse the 10 tab-separated columns with conllu's own field parsers.

    (``conllu.parser.parse_line`` also splits on runs of two spaces, which
    would misalign a FORM that contains them; the columns are split on tabs only.)
    """
    tok = {}
    for i, name in enumerate(DEFAULT_FIELDS):
        if name not in _USED:
            continue  # FEATS / DEPS / LEMMA are never needed; skip their cost
        parser = DEFAULT_FIELD_PARSERS.get(name)
        try:
            tok[name] = parser(cols, i) if parser else cols[i]
        except (ParseException, IndexError, ValueError) as err:
            raise ValueError(Errors.E504.format(path=path, lineno=lineno, column=name.upper(), value=cols[i],
                                                err=err)) from None
    return tok


def _blocks(path: Path) -> Iterator[List[Tuple[int, str]]]:
    """Yield the non-blank lines of each sentence with their 1-based line numbers."""
    block: List[Tuple[int, str]] = []
    with path.open(encoding="utf-8-sig") as fh:
        for lineno, raw in enumerate(fh, 1):
            line = raw.rstrip("\r\n")
            if line.strip():
                block.append((lineno, line))
            elif block:
                yield block
                block = []
    if block:
        yield block


def _parse_block(path: Path, block: List[Tuple[int, str]]) -> Optional[UDSentence]:
    where = f"{path}:{block[0][0]}"
    meta = {}
    words = []  # (lineno, token)
    ranges = {}  # last word id of an MWT -> its SpaceAfter
    for lineno, line in block:
        if line.startswith("#"):
            for key, value in parse_comment_line(line):
                meta[key] = value
            continue
        cols = line.split("\t")
        if len(cols) != 10:
            raise ValueError(Errors.E505.format(path=path, lineno=lineno, n=len(cols)))
        tok = _parse_columns(cols, path, lineno)
        tid = tok["id"]
        if isinstance(tid, tuple):
            if tid[1] == "-":
                ranges[tid[2]] = (tid[0], _space_after(tok["misc"]), tok["form"])
            continue  # empty node (5.1) or MWT range (3-4)
        if tid is None:
            raise ValueError(Errors.E506.format(path=path, lineno=lineno))
        words.append((lineno, tok))
    if not words:
        return None  # a comment-only block (e.g. a file header)
    n = len(words)
    for i, (lineno, tok) in enumerate(words, 1):
        if tok["id"] != i:
            raise ValueError(Errors.E507.format(path=path, lineno=lineno, id=tok["id"], expected=i))
        head = tok["head"]
        if head is None or not 0 <= head <= n:
            raise ValueError(Errors.E508.format(path=path, lineno=lineno, head=head, n=n))
        if not tok["deprel"] or tok["deprel"] == "_":
            raise ValueError(Errors.E509.format(path=path, lineno=lineno))
    heads = [tok["head"] for _, tok in words]
    _check_acyclic(heads, path, words)
    space = [_space_after(tok["misc"]) for _, tok in words]
    for last, (first, sa, _) in ranges.items():
        if not 1 <= first <= last <= n:
            raise ValueError(Errors.E510.format(where=where, first=first, last=last, n=n))
        for k in range(first, last):
            space[k - 1] = False  # words inside one surface token are never space-separated
        space[last - 1] = sa
    return UDSentence(
        ids=list(range(1, n + 1)),
        forms=[tok["form"] for _, tok in words],
        upos=[tok["upos"] for _, tok in words],
        xpos=[tok["xpos"] or "_" for _, tok in words],
        heads=heads,
        deprels=[tok["deprel"] for _, tok in words],
        space_after=space,
        sent_id=meta.get("sent_id"),
        text=meta.get("text"),
        path=str(path),
        line=block[0][0],
        multiword=[(first, last, form) for last, (first, _, form) in sorted(ranges.items())],
    )


def _check_acyclic(heads: List[int], path: Path, words) -> None:
    """Every word must reach the root (0); a cycle would hang the tree algorithms later."""
    state = [0] * (len(heads) + 1)  # 0 unseen, 1 on current walk, 2 reaches root
    state[0] = 2
    for start in range(1, len(heads) + 1):
        walk = []
        node = start
        while state[node] == 0:
            state[node] = 1
            walk.append(node)
            node = heads[node - 1]
        if state[node] == 1:
            lineno = words[node - 1][0]
            raise ValueError(Errors.E511.format(path=path, lineno=lineno, node=node))
        for w in walk:
            state[w] = 2


def iter_conllu(path: PathLike) -> Iterator[UDSentence]:
    """Yield the sentences of one CoNLL-U file; raise FileNotFoundError / ValueError."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(Errors.E512.format(path=path))
    try:
        for block in _blocks(path):
            sent = _parse_block(path, block)
            if sent is not None:
                yield sent
    except UnicodeDecodeError as err:
        raise ValueError(Errors.E513.format(path=path, err=err)) from None


def read_conllu(path: PathLike) -> List[UDSentence]:
    """All sentences of one CoNLL-U file."""
    return list(iter_conllu(path))
