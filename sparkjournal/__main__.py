"""``python -m sparkjournal``: the same tool as the ``sparkjournal`` console script."""
import sys

from sparkjournal.cli.main import main

sys.exit(main())
