"""Load task banks: JSON Lines, one ambiguous question with its database, golds and candidates.

The format is the studio's interchange format (README, "Extending"; ``data/ambrosia/README.md``;
the AMBROSIA-derived banks use it too). ``load_task_bank`` validates every line and reports
each bad one with file, line number, field and reason; with ``lenient=True`` the good lines
still load and the problems are returned.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.engine.errors import TaskBankError, TaskBankProblem

AMBIGUITY_TYPES = ("scope", "attachment", "vague")
_KNOWN_KEYS = {
    "id", "question", "ambiguity", "database", "gold", "candidates",
    "source", "complexity", "title", "ambiguities",
}


@dataclass(frozen=True)
class DatabaseSpec:
    """Where a task's database lives: an inline SQL ``dump``, a ``sqlite`` file, or a ``url``."""

    kind: str  # "dump" | "sqlite" | "url"
    value: str  # the dump text, the absolute sqlite path, or the SQLAlchemy URL

    @property
    def dialect(self) -> str:
        """The sqlglot dialect candidates are parsed in ('sqlite' or 'postgres', ...)."""
        if self.kind != "url":
            return "sqlite"
        scheme = self.value.split(":", 1)[0].split("+", 1)[0].lower()
        return {"postgresql": "postgres", "postgres": "postgres", "mysql": "mysql"}.get(
            scheme, scheme
        )

    def fingerprint(self) -> str:
        """A stable hash of the database's identity (its content for dumps and files)."""
        h = hashlib.sha256(self.kind.encode())
        if self.kind == "sqlite" and Path(self.value).is_file():
            h.update(Path(self.value).read_bytes())
        else:
            h.update(self.value.encode())
        return h.hexdigest()[:16]


@dataclass(frozen=True)
class Candidate:
    """One distinct SQL candidate and how many samples produced it (its prior weight)."""

    sql: str
    count: int = 1


@dataclass
class Task:
    """One ambiguous question: the unit a participant solves and the evaluation iterates."""

    id: str
    question: str
    database: DatabaseSpec
    gold: list[str] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    ambiguity: str = "unknown"
    source: str = ""
    complexity: str = ""
    title: str = ""
    ambiguities: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    origin: str = ""  # "path:line" the task was read from

    @property
    def dialect(self) -> str:
        return self.database.dialect

    def to_json(self) -> dict[str, Any]:
        """The task as a task-bank line (database paths stay absolute)."""
        out: dict[str, Any] = {
            "id": self.id,
            "question": self.question,
            "ambiguity": self.ambiguity,
            "database": {self.database.kind: self.database.value},
            "gold": list(self.gold),
            "candidates": [{"sql": c.sql, "count": c.count} for c in self.candidates],
        }
        for key in ("source", "complexity", "title"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.ambiguities:
            out["ambiguities"] = self.ambiguities
        out.update(self.extra)
        return out


def _problem(path: str, line: int, fld: str, reason: str) -> TaskBankProblem:
    return TaskBankProblem(path, line, fld, reason)


def _parse_database(raw: Any, base: Path, where: tuple[str, int]) -> DatabaseSpec:
    path, line = where
    if not isinstance(raw, dict) or len(raw) != 1:
        raise _Bad(
            "database",
            'must be an object with exactly one key: {"dump": sql}, {"sqlite": path} or '
            '{"url": SQLAlchemy URL}',
        )
    (kind, value), = raw.items()
    if kind not in ("dump", "sqlite", "url"):
        raise _Bad("database", f"unknown kind '{kind}'; use 'dump', 'sqlite' or 'url'")
    if not isinstance(value, str) or not value.strip():
        raise _Bad(f"database.{kind}", "must be a non-empty string")
    if kind == "sqlite":
        p = Path(value)
        if not p.is_absolute():
            p = (base / p).resolve()
        if not p.is_file():
            raise _Bad("database.sqlite", f"file '{p}' does not exist; the path is relative "
                       f"to the task bank's folder ({base})")
        value = str(p)
    return DatabaseSpec(kind, value)


class _Bad(Exception):
    def __init__(self, fld: str, reason: str):
        self.fld, self.reason = fld, reason


def _parse_candidates(raw: Any) -> list[Candidate]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise _Bad("candidates", "must be a list of SQL strings or {\"sql\", \"count\"} objects")
    merged: dict[str, int] = {}
    for i, item in enumerate(raw):
        if isinstance(item, str):
            sql, count = item, 1
        elif isinstance(item, dict) and isinstance(item.get("sql"), str):
            sql, count = item["sql"], item.get("count", 1)
            if not isinstance(count, int) or isinstance(count, bool) or count < 1:
                raise _Bad(f"candidates[{i}].count", f"must be a positive integer, got {count!r}")
        else:
            raise _Bad(f"candidates[{i}]", "must be a SQL string or an object with a 'sql' string")
        if not sql.strip():
            raise _Bad(f"candidates[{i}]", "is an empty SQL string; remove it")
        merged[sql] = merged.get(sql, 0) + count
    return [Candidate(sql, count) for sql, count in merged.items()]


def parse_task(obj: Any, base: Path, where: tuple[str, int]) -> Task:
    """Validate one decoded JSON object as a task; raises TaskBankError naming the field."""
    path, line = where
    try:
        if not isinstance(obj, dict):
            raise _Bad("(line)", "must be a JSON object")
        for key in ("id", "question"):
            if not isinstance(obj.get(key), str) or not obj[key].strip():
                raise _Bad(key, "is required and must be a non-empty string")
        if "database" not in obj:
            raise _Bad("database", "is required")
        database = _parse_database(obj["database"], base, where)
        gold = obj.get("gold", [])
        if not isinstance(gold, list) or not all(isinstance(g, str) and g.strip() for g in gold):
            raise _Bad("gold", "must be a list of non-empty SQL strings (may be empty)")
        candidates = _parse_candidates(obj.get("candidates"))
        ambiguity = obj.get("ambiguity", "unknown")
        if not isinstance(ambiguity, str):
            raise _Bad("ambiguity", f"must be a string such as {', '.join(AMBIGUITY_TYPES)}")
        ambiguities = obj.get("ambiguities", [])
        if not isinstance(ambiguities, list) or not all(isinstance(a, dict) for a in ambiguities):
            raise _Bad("ambiguities", "must be a list of objects")
        for key in ("source", "complexity", "title"):
            if key in obj and not isinstance(obj[key], str):
                raise _Bad(key, "must be a string")
    except _Bad as bad:
        raise TaskBankError([_problem(path, line, bad.fld, bad.reason)]) from None
    return Task(
        id=obj["id"],
        question=obj["question"],
        database=database,
        gold=list(gold),
        candidates=candidates,
        ambiguity=ambiguity,
        source=obj.get("source", ""),
        complexity=obj.get("complexity", ""),
        title=obj.get("title", ""),
        ambiguities=ambiguities,
        extra={k: v for k, v in obj.items() if k not in _KNOWN_KEYS},
        origin=f"{path}:{line}",
    )


def iter_task_lines(path: str | Path) -> Iterable[tuple[int, str]]:
    """Yield (line number, text) of the non-blank lines of a JSON Lines file."""
    with open(path, encoding="utf-8") as fh:
        for number, text in enumerate(fh, start=1):
            if text.strip():
                yield number, text


def load_task_bank(
    path: str | Path, *, lenient: bool = False
) -> tuple[list[Task], list[TaskBankProblem]]:
    """Load every task of a JSON Lines bank.

    Strict (default): any bad line raises one :class:`TaskBankError` listing every problem.
    Lenient: the good tasks load and the problems are returned beside them.
    """
    p = Path(path)
    if not p.is_file():
        raise TaskBankError([_problem(str(p), 0, "(file)", "no such file; check the path")])
    tasks: list[Task] = []
    problems: list[TaskBankProblem] = []
    seen: dict[str, int] = {}
    for number, text in iter_task_lines(p):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            problems.append(_problem(str(p), number, "(line)",
                                     f"is not valid JSON ({exc.msg} at column {exc.colno})"))
            continue
        except (RecursionError, ValueError) as exc:  # deep nesting; a number of 4300+ digits
            what = ("nests too deeply to be read" if isinstance(exc, RecursionError)
                    else f"cannot be read ({str(exc)[:120]})")
            problems.append(_problem(str(p), number, "(line)",
                                     f"{what}; write each task as one flat JSON object"))
            continue
        try:
            task = parse_task(obj, p.parent, (str(p), number))
        except TaskBankError as exc:
            problems.extend(exc.problems)
            continue
        if task.id in seen:
            problems.append(_problem(str(p), number, "id", f"duplicate id '{task.id}' (first on "
                                     f"line {seen[task.id]}); ids must be unique in a bank"))
            continue
        seen[task.id] = number
        tasks.append(task)
    if problems and not lenient:
        raise TaskBankError(problems)
    return tasks, problems


def load_tasks(*paths: str | Path, lenient: bool = False) -> list[Task]:
    """Load and concatenate several banks (strict unless ``lenient``)."""
    out: list[Task] = []
    for path in paths:
        tasks, _ = load_task_bank(path, lenient=lenient)
        out.extend(tasks)
    return out
