"""A small progress reporter for the command-line tools (tqdm on a terminal, lines otherwise)."""

from __future__ import annotations

import sys

from tqdm import tqdm


class Progress:
    """Counts ``total`` steps on stderr; ``advance(label)`` after each step."""

    def __init__(self, total: int, what: str):
        self._bar = tqdm(total=total, desc=what, unit="task", file=sys.stderr,
                         disable=None, dynamic_ncols=True, leave=False)

    def advance(self, label: str = "") -> None:
        self._bar.set_postfix_str(label[:40], refresh=False)
        self._bar.update(1)

    def close(self) -> None:
        self._bar.close()
