"""The repair engine: task banks, safe execution, features, similarity, clustering, decision
variables, information gain, strategies, the repair session, layouts and prepared pools.

Public names are re-exported here and imported on first use, so importing the package is cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    "AMBIGUITY_TYPES": "taskbank",
    "BBOX": "layout",
    "Candidate": "taskbank",
    "DEFAULT_MAX_CLUSTERS": "clustering",
    "DEFAULT_ROW_CAP": "execute",
    "DEFAULT_STRATEGY": "strategy",
    "DEFAULT_TIMEOUT_S": "execute",
    "DatabaseError": "errors",
    "DatabaseSpec": "taskbank",
    "Decision": "session",
    "DecisionVariable": "variables",
    "ENGINE_VERSION": "pool",
    "ERROR_CLASS": "similarity",
    "ExecutionResult": "execute",
    "FORMAT_VERSION": "pool",
    "Feature": "features",
    "FeatureBelief": "session",
    "GenerationError": "errors",
    "KEYWORD_ORDER": "features",
    "MAX_ALIGNED_ROWS": "similarity",
    "PreparedPool": "pool",
    "Progress": "progress",
    "QueryTimeoutError": "errors",
    "RankedVariable": "session",
    "RepairSession": "session",
    "STRATEGIES": "strategy",
    "SessionError": "errors",
    "StudioError": "errors",
    "Task": "taskbank",
    "TaskBankError": "errors",
    "TaskBankProblem": "errors",
    "TaskDatabase": "execute",
    "UnsafeQueryError": "errors",
    "cache_dir": "execute",
    "candidate_features": "pool",
    "canonical_table": "similarity",
    "check_query": "execute",
    "cluster_candidates": "clustering",
    "compute_layout": "layout",
    "default_pool_dir": "prepare",
    "entropy": "gain",
    "execute_candidates": "execute",
    "extract_features": "features",
    "functional_classes": "similarity",
    "information_gain": "gain",
    "iter_task_lines": "taskbank",
    "load_prepared": "prepare",
    "load_task_bank": "taskbank",
    "load_tasks": "taskbank",
    "materialise_dump": "execute",
    "mine_decision_variables": "variables",
    "open_database": "execute",
    "output_key": "similarity",
    "output_similarity": "similarity",
    "parse_task": "taskbank",
    "pool_fingerprint": "prepare",
    "prepare_pool": "pool",
    "rank_variables": "strategy",
    "split_entropy": "gain",
    "voronoi_cells": "layout",
    "write_prepared": "prepare",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import the submodule that defines ``name`` on first access (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
