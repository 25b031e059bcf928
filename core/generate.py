"""``python -m core.generate``: sample candidate pools (Anthropic API or offline variants) (the code is in :mod:`core.generation.generate`)."""

import sys

from core._cli import run
from core.generation.generate import main

if __name__ == "__main__":
    sys.exit(run(main))
