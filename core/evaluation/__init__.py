"""The §7 evaluation: simulated users, populations, the runner and its report, the Huffman floor, the Fig-5 plot
(``python -m core.evaluate``; the per-stage engine benchmark is ``python -m benchmarks.engine``).

Public names are re-exported here and imported on first use, so importing the package is cheap.
"""

from __future__ import annotations

from core._lazy import lazy_getattr

_EXPORTS: dict[str, str] = {
    "ALL_STRATEGIES": "evaluate",
    "DEFAULT_POPULATION": "populations",
    "DEFAULT_REPAIR": "evaluate",
    "DEFAULT_USER": "simulate",
    "GoldFeatureUser": "simulate",
    "MAX_PERMUTATIONS": "simulate",
    "MAX_TURNS": "evaluate",
    "POPULATIONS": "populations",
    "POPULATION_NOTES": "populations",
    "REPAIRS": "evaluate",
    "Run": "evaluate",
    "SimulatedUser": "simulate",
    "Target": "simulate",
    "USERS": "simulate",
    "USER_NOTES": "simulate",
    "bootstrap_ci": "report",
    "class_depths": "populations",
    "class_weights": "populations",
    "evaluate": "evaluate",
    "expected_questions": "optimal",
    "format_per_gold": "report",
    "format_table": "report",
    "gold_labels": "evaluate",
    "gold_target": "simulate",
    "huffman_depths": "optimal",
    "huffman_floor": "populations",
    "make_user": "simulate",
    "one_output_left": "evaluate",
    "output_matches": "simulate",
    "own_feature_keys": "simulate",
    "per_turn": "report",
    "plot_figure5": "plot",
    "plot_per_user": "plot",
    "recompose_available": "evaluate",
    "report": "report",
    "simulate": "evaluate",
    "summarise": "report",
    "targets": "populations",
    "weighted_quantile": "report",
    "within_similarity": "evaluate",
}

__all__ = sorted(_EXPORTS)


__getattr__ = lazy_getattr(__name__, _EXPORTS)
