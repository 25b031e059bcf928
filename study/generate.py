"""``python -m study.generate``: ``python -m core.generate`` with ``--study-db URL`` enabled.

Pools are cached in the study database's ``candidate_pools`` table, so every participant and
server sees the same pool and nothing is sampled twice. All options are core.generate's.
"""

from __future__ import annotations

import sys

from core.generation.generate import main as core_main
from study.store import open_store


def main(argv: list[str] | None = None) -> int:
    """Run core.generate with the study store as the opener of ``--study-db``."""
    return core_main(argv, open_store=open_store)


if __name__ == "__main__":
    sys.exit(main())
