"""The questions a session asks along fixed walks, as a fingerprint: the check that a speed-up
of the ranking (core.engine.gain, core.engine.strategy) leaves every question where it was.

``python -m tests.question_walks`` rewrites ``tests/fixtures/question_walks.json`` (only when
the questions are meant to change); ``tests/test_question_walks.py`` compares against it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.engine.pool import PreparedPool
from core.engine.session import RepairSession

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "question_walks.json"
CONFIGS = (("planned", "mixed", True), ("planned", "mixed", False),
           ("expected-depth", "mixed", True))
STEPS = 4  # questions answered per walk
TOP = 12  # ranked questions recorded per step (order and expected questions left)


def walk(pool: PreparedPool, strategy: str, questions: str, values: bool,
         first: bool) -> list[list[Any]]:
    """Each step's ranked questions (keys, expected questions left to 9 places), answering the
    top one Yes, then alternately No and Yes (``first``: the first answer)."""
    session = RepairSession(pool, strategy=strategy, questions=questions, values=values)
    out: list[list[Any]] = []
    yes = first
    for _ in range(STEPS):
        ranked = session.variables()
        if not ranked:
            break
        out.append([[list(v.keys), None if v.expected_turns is None
                     else round(float(v.expected_turns), 9)] for v in ranked[:TOP]])
        session.answer(ranked[0].keys, yes)
        yes = not yes
    return out


def fingerprint(pools: dict[str, PreparedPool]) -> dict[str, Any]:
    """Every walk of every pool under every configuration."""
    return {f"{name}|{s}|{q}|{'values' if v else 'novalues'}|{first}":
            walk(pool, s, q, v, first)
            for name, pool in pools.items() for s, q, v in CONFIGS for first in (True, False)}


def pools() -> dict[str, PreparedPool]:
    """The film bank's pools and two synthetic ones (the benchmark's, N = 200 and 1000: there
    ``planned`` ranks by the lookahead, as the plan is too big to make)."""
    from benchmarks.engine import synthetic_task
    from core.engine.prepare import prepare_pool
    from core.engine.taskbank import load_tasks
    from tests.conftest_core import FILM_BANK

    out = {t.id: prepare_pool(t, layout=False) for t in load_tasks(FILM_BANK)}
    for n in (200, 1000):
        out[f"synthetic-{n}"] = prepare_pool(synthetic_task(n), layout=False)
    return out


if __name__ == "__main__":
    FIXTURE.write_text(json.dumps(fingerprint(pools()), indent=0, sort_keys=True) + "\n")
    print(f"written {FIXTURE}")
