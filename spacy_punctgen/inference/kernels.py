"""The compiled kernels other layers call, in one place.

Why a wrapper: the compiled modules (``_train`` from ``cython_ext/train.pyx``, ``_slot_mbr``
from ``cython_ext/slot_mbr.pyx``) are private to this layer, so that a rebuilt or renamed
kernel changes one import; ``tests/test_architecture.py`` refuses them anywhere else.
"""
from spacy_punctgen.inference._slot_mbr import slot_mbr, surface_classes  # noqa: F401
from spacy_punctgen.inference._train import (adam_step, attach_backward, attach_forward, attach_scores,  # noqa: F401
                                             dedupe, segment_sums)

__all__ = ["adam_step", "attach_backward", "attach_forward", "attach_scores", "dedupe", "segment_sums", "slot_mbr",
           "surface_classes"]
