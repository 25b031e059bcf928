"""Where a task's prepared pool file lives and whether it is current, without the engine.

Kept apart from :mod:`core.engine.prepare` (which imports the whole pipeline: numpy, scipy,
sqlglot, UMAP) so that the participant page can tell whether a study's pools are prepared, and
keep the study closed if not, without loading the engine on a consent page.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from core.engine.taskbank import Task

# Bump when features, similarity or layout change what a prepared pool contains: stored pools
# with another engine version are recomputed instead of silently reused.
ENGINE_VERSION = 4


def pool_fingerprint(task: Task) -> str:
    """Hash of what a prepared pool depends on: candidates, counts, golds, database, engine."""
    payload = json.dumps([[c.sql, c.count] for c in task.candidates] + [task.gold,
                         task.database.fingerprint(), ENGINE_VERSION])
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def default_pool_dir(bank: str | Path) -> Path:
    """``pools/`` beside the task bank: where ``python -m core.prepare`` and Setup write."""
    return Path(bank).resolve().parent / "pools"


def stored_fingerprint(path: Path) -> str | None:
    """The fingerprint a prepared pool file was written for (None: no readable pool there)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data.get("fingerprint") if isinstance(data, dict) else None


def pool_ready(task: Task, pool_dir: str | Path) -> bool:
    """Whether ``pool_dir`` holds ``task``'s prepared pool for its current candidates."""
    return stored_fingerprint(Path(pool_dir) / f"{task.id}.json") == pool_fingerprint(task)
