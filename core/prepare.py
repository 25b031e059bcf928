"""``python -m core.prepare``: precompute prepared pools with layouts (the code is in :mod:`core.engine.prepare`)."""

import sys

from core._cli import run
from core.engine.prepare import main

if __name__ == "__main__":
    sys.exit(run(main))
