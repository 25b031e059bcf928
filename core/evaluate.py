"""``python -m core.evaluate``: the §7 simulated-user evaluation (the code is in :mod:`core.evaluation.evaluate`)."""

import sys

from core._cli import run
from core.evaluation.evaluate import main

if __name__ == "__main__":
    sys.exit(run(main))
