"""``python -m core.bench``: per-stage engine timings (the code is in :mod:`core.evaluation.bench`)."""

import sys

from core._cli import run
from core.evaluation.bench import main

if __name__ == "__main__":
    sys.exit(run(main))
