"""Helpers for the core/ test suite (imported explicitly by tests/test_core_*.py).

Small task builders over inline ``{"dump": ...}`` databases, and a per-process cache of prepared
AMBROSIA dev pools (no layout, so no UMAP) for the property tests.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache, lru_cache
from pathlib import Path

from core.engine.execute import ExecutionResult, check_query, open_database
from core.engine.pool import PreparedPool, prepare_pool
from core.engine.taskbank import Candidate, DatabaseSpec, Task, load_task_bank, load_tasks

ROOT = Path(__file__).resolve().parents[1]
FILM_BANK = ROOT / "studies" / "film" / "tasks.jsonl"
AMBROSIA = ROOT / "data" / "ambrosia"
DEV_BANK = AMBROSIA / "dev.jsonl"
VAL_BANK = AMBROSIA / "val.jsonl"
FIXTURES = Path(__file__).parent / "fixtures"

# A tiny film database: enough rows that different readings give different outputs.
FILM_DUMP = """
CREATE TABLE film(id INTEGER PRIMARY KEY, title TEXT, year INT, genre TEXT);
CREATE TABLE review(id INTEGER PRIMARY KEY, film_id INT REFERENCES film(id), stars INT);
INSERT INTO film VALUES (1, 'Pulp Fiction', 1994, 'crime'), (2, 'Titanic', 1997, 'romance'),
                        (3, 'Inception', 2010, 'action'), (4, 'Heat', 1995, 'action');
INSERT INTO review VALUES (1, 1, 5), (2, 1, 4), (3, 2, 3), (4, 3, 5);
"""


def make_task(sqls: list[str] | list[tuple[str, int]], *, gold: list[str] | None = None,
              dump: str = FILM_DUMP, task_id: str = "t") -> Task:
    """A task over an inline dump; ``sqls`` are SQL strings or (sql, count) pairs."""
    cands = [Candidate(s, 1) if isinstance(s, str) else Candidate(s[0], s[1]) for s in sqls]
    return Task(id=task_id, question="q?", database=DatabaseSpec("dump", dump),
                gold=list(gold or []), candidates=cands)


def make_pool(sqls, *, gold: list[str] | None = None, dump: str = FILM_DUMP,
              layout: bool = False) -> PreparedPool:
    return prepare_pool(make_task(sqls, gold=gold, dump=dump), layout=layout)


def file_hash(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def write_bank(path: Path, lines: list[object | str]) -> Path:
    """Write a JSON Lines bank: dicts are dumped, strings written verbatim."""
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n",
                    encoding="utf-8")
    return path


@lru_cache(maxsize=1)
def dev_tasks() -> tuple[Task, ...]:
    tasks, _ = load_task_bank(DEV_BANK)
    return tuple(tasks)


@cache
def dev_pool(i: int) -> PreparedPool:
    """Prepared pool of the i-th AMBROSIA dev task (cached per process, no layout)."""
    return prepare_pool(dev_tasks()[i], layout=False)


@cache
def film_pools() -> tuple[PreparedPool, ...]:
    """The film bank's first three tasks prepared without layout (once per process)."""
    return tuple(prepare_pool(t, layout=False) for t in load_tasks(FILM_BANK)[:3])


def run_read_only(database: DatabaseSpec, sqls: list[str] | tuple[str, ...],
                  dialect: str = "sqlite") -> list[ExecutionResult]:
    """Each query passes the read-only allow-list and executes: what every repaired candidate must do."""
    db = open_database(database)
    try:
        out = []
        for sql in sqls:
            check_query(sql, dialect)
            result = db.execute(sql)
            assert result.ok, (sql, result.error)
            out.append(result)
        return out
    finally:
        db.close()
