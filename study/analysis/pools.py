"""The prepared candidate pools of a study's tasks (read from pools/ beside its task bank)."""

from __future__ import annotations

from core.engine.pool import PreparedPool
from core.engine.prepare import default_pool_dir, load_prepared
from core.engine.taskbank import load_task_bank
from study.spec import StudySpec


def study_pools(spec: StudySpec) -> dict[str, PreparedPool]:
    """Task id -> prepared pool for every task of the study (empty without a task bank)."""
    if spec.task_bank is None:
        return {}
    tasks, _ = load_task_bank(spec.task_bank, lenient=True)
    wanted = set(spec.task_ids)
    return {t.id: load_prepared(t, default_pool_dir(spec.task_bank))
            for t in tasks if t.id in wanted}
