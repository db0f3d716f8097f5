__title__ = "spacy-punctgen"
__version__ = "0.1.0"
