"""Lazy re-exports for the packages of core/: a name is imported from its submodule on first use.

Importing ``core.engine`` then costs nothing (no sklearn, scipy or sqlglot until a name is used),
which keeps the Streamlit pages' first paint fast.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_getattr(package: str, exports: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) resolving ``exports`` (name → submodule) on access."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return __getattr__
