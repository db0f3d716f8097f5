import sys

from spacy_punctgen.cli import main

sys.exit(main())
