"""Layer 1.5, incremental: paper 003's joint parsing and punctuation prediction (CPP and UPP).

Why: a transition parser that reads an unpunctuated word stream left to right can put each
mark down as soon as its word is consumed, so it can punctuate live text with a bounded delay,
which the shipped pipeline (parse a window, then restore it) cannot.  ``system`` holds the
transition system, its two decoding constraints and the static oracle (plain Python, the
specification the compiled loops in ``inference/incremental`` follow); ``labels`` the mark
classes; ``streams`` the training documents; ``tagger`` the POS tagger the features need;
``model`` the trained CPP / UPP models; ``windows`` the decoding of a stream longer than one
document (window by window, restarting after full stops); ``scoring`` the attachment scores of
streams (any parser's tokens aligned to the stream's words); ``live`` the bounded-delay
generator; ``evidence`` each word's mark distribution read off the best analysis (soft evidence
for restoration: ``decode/incremental_evidence.py``).  This layer uses ``inference`` and ``data`` only.
"""
