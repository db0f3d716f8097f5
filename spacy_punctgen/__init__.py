"""spacy-punctgen: punctuation as underlying marks sprouted by dependency constituents."""
from .about import __version__

__all__ = ["__version__"]
