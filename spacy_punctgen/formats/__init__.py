"""Layer 0.5, formats: files to punctuate, as text plus the map back to the file.

Restoration returns *insertions*, ``(offset, string)`` pairs into the string it was given
(:mod:`.insertions`); this subpackage turns a file into that string and the insertions back
into the file, with no model: SubRip and WebVTT subtitles (:mod:`.subtitles`), a speech
recogniser's words with times (:mod:`.word_timestamps`), and the one entry that picks the
format and calls a restorer it is given (:mod:`.restore`).  Imports only ``data`` and
``errors``.
"""
