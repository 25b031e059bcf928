"""How the command-line tools of core/ end: bad input is one ``error: …`` line, not a traceback.

A :class:`~core.engine.errors.StudioError` (a missing or invalid task bank, an unreachable or
refused database, a sampling failure) already names the place and what to do, so the shims
print it and exit with status 2, as argparse does for a bad option.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from core.engine.errors import StudioError


def run(main: Callable[[], int | None]) -> int:
    """``main()``'s exit code, or 2 after printing a StudioError as one line on stderr."""
    try:
        return main() or 0
    except StudioError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
