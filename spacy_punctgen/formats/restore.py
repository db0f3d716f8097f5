"""One entry for every file format: which format a path is, and its text punctuated by a
restorer given by the caller (the model stays above this layer).

A restorer is a callable ``restore_insertions(text)`` returning the insertions into ``text``
(``[(offset, string), ...]``, see :mod:`.insertions`) or a :class:`.insertions.Restored` that
also carries the text with its case changed (truecasing).
"""
from pathlib import Path
from typing import Callable, Optional, Tuple, Union

from ..errors import Errors
from .insertions import Restored, apply_insertions, check_cased
from .subtitles import restore_subtitles
from .word_timestamps import restore_word_timestamps

FILE_FORMATS = ("text", "srt", "vtt", "json")
_BY_EXTENSION = {".srt": "srt", ".vtt": "vtt", ".json": "json"}


def detect_format(path: Union[str, Path, None], explicit: Optional[str] = None) -> str:
    """``explicit`` if given (one of :data:`FILE_FORMATS`), else the format of ``path``'s
    extension (``.srt``, ``.vtt``, ``.json``, any case), else ``"text"`` (also for no path or ``-``)."""
    if explicit is not None:
        if explicit not in FILE_FORMATS:
            raise ValueError(Errors.E957.format(formats=FILE_FORMATS, fmt=explicit))
        return explicit
    if path is None or str(path) == "-":
        return "text"
    return _BY_EXTENSION.get(Path(path).suffix.lower(), "text")


def restored_pair(result) -> Tuple[list, Optional[str]]:
    """A restorer's result as ``(insertions, cased or None)``."""
    if isinstance(result, Restored):
        return list(result.insertions), result.cased
    if isinstance(result, (list, tuple)):
        return list(result), None
    raise TypeError(Errors.E958.format(kind=type(result).__name__))


def restore_file_text(text: str, fmt: str, restore_insertions: Callable[[str], object], *,
                      marks_key: Optional[str] = None) -> str:
    """The file's text ``text`` in format ``fmt`` (:data:`FILE_FORMATS`) punctuated by
    ``restore_insertions``: plain text directly; subtitles and word timestamps through the text
    of their cues or words, everything else in the file kept.  ``marks_key``: word timestamps
    only (see :mod:`.word_timestamps`)."""
    if fmt not in FILE_FORMATS:
        raise ValueError(Errors.E957.format(formats=FILE_FORMATS, fmt=fmt))

    def restorer(part: str) -> Tuple[list, Optional[str]]:
        return restored_pair(restore_insertions(part))

    if fmt in ("srt", "vtt"):
        return restore_subtitles(text, fmt, restorer)
    if fmt == "json":
        return restore_word_timestamps(text, restorer, marks_key=marks_key)
    if not text.strip():
        return text
    insertions, cased = restorer(text)
    return apply_insertions(text if cased is None else check_cased(text, cased), insertions)
