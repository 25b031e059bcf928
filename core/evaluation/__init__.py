"""The §7 evaluation: simulated users, populations, the runner and its report, the Huffman floor, the Fig-5 plot
and the per-stage engine benchmark (``python -m core.evaluate`` / ``core.bench``).

Public names are re-exported here and imported on first use, so importing the package is cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    "ALL_STRATEGIES": "evaluate",
    "BENCH_DUMP": "bench",
    "MAX_TURNS": "evaluate",
    "Run": "evaluate",
    "SimulatedUser": "simulate",
    "bench_size": "bench",
    "bootstrap_ci": "report",
    "evaluate": "evaluate",
    "expected_questions": "optimal",
    "format_table": "report",
    "gold_labels": "evaluate",
    "huffman_depths": "optimal",
    "layout_cold_ms": "bench",
    "per_turn": "report",
    "plot_figure5": "plot",
    "plot_per_user": "plot",
    "report": "report",
    "simulate": "evaluate",
    "summarise": "report",
    "GoldFeatureUser": "simulate",
    "Target": "simulate",
    "USERS": "simulate",
    "make_user": "simulate",
    "output_matches": "simulate",
    "POPULATIONS": "populations",
    "huffman_floor": "populations",
    "targets": "populations",
    "synthetic_task": "bench",
    "within_similarity": "evaluate",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import the submodule that defines ``name`` on first access (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
