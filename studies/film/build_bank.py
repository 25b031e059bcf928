"""Build ``studies/film/tasks.jsonl`` from ``tasks_src.py`` and ``film.sql``.

Run ``python -m studies.film.build_bank`` after editing the sources; the bank inlines the dump
so it is self-contained, and ``tests/test_film_bank.py`` fails when the committed bank is stale.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from studies.film.tasks_src import SOURCE, TASKS

HERE = Path(__file__).resolve().parent
DUMP_PATH = HERE / "film.sql"
BANK_PATH = HERE / "tasks.jsonl"


def build_task(spec: dict[str, Any], dump: str) -> dict[str, Any]:
    """One task-bank object from a source spec; refuses duplicate candidate strings."""
    seen: set[str] = set()
    candidates: list[dict[str, Any]] = []
    for sql, count in spec["candidates"]:
        if sql in seen:
            raise ValueError(f"{spec['id']}: candidate listed twice, merge it: {sql!r}")
        seen.add(sql)
        candidates.append({"sql": sql, "count": count})
    return {
        "id": spec["id"],
        "title": spec["title"],
        "question": spec["question"],
        "ambiguity": spec["ambiguity"],
        "complexity": spec["complexity"],
        "database": {"dump": dump},
        "gold": list(spec["gold"]),
        "candidates": candidates,
        "source": SOURCE,
    }


def build_bank_text(dump_path: Path = DUMP_PATH) -> str:
    """The full JSON Lines text of the bank (what ``tasks.jsonl`` must contain)."""
    dump = dump_path.read_text(encoding="utf-8")
    lines = [json.dumps(build_task(spec, dump), ensure_ascii=False) for spec in TASKS]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the bank (or, with ``--check``, exit 1 if the committed bank is stale)."""
    args = sys.argv[1:] if argv is None else argv
    text = build_bank_text()
    if "--check" in args:
        current = BANK_PATH.read_text(encoding="utf-8") if BANK_PATH.is_file() else ""
        if current != text:
            print(f"{BANK_PATH} is stale; run: python -m studies.film.build_bank")
            return 1
        print(f"{BANK_PATH} is up to date")
        return 0
    BANK_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {len(TASKS)} tasks to {BANK_PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
