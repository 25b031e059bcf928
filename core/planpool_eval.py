"""``python -m core.planpool_eval``: PlanPool metrics in the paper's Table-2 layout (the code is in :mod:`core.planpool.evaluate`)."""

import sys

from core._cli import run
from core.planpool.evaluate import main

if __name__ == "__main__":
    sys.exit(run(main))
