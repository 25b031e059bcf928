"""``python -m core.floors``: per-task floors of ``prior``, class-invariant ones included (the
code is in :mod:`core.evaluation.floors`)."""

import sys

from core._cli import run
from core.evaluation.floors import main

if __name__ == "__main__":
    sys.exit(run(main))
