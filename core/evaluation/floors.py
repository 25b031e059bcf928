"""Floors of the ``prior`` population per task, and what asking about spelling is worth.

``python -m core.floors BANK.jsonl … [--json OUT]`` prints, per task and averaged over tasks (as
``prior`` weights them: each task sums to 1), the Huffman floor, the tree floor over the pool's
own questions (:func:`core.evaluation.populations.vocabulary_floor`, which answers each class
by its most frequent spelling) and the *class-invariant* floors
(:func:`core.evaluation.populations.invariant_floor`): the best tree when only questions every
spelling of an output answers alike may be asked — clause conjunctions no class splits, the
questions about the answer (:mod:`core.engine.answers`), both, and both with value questions.
A class-invariant floor far above Huffman means a strategy can only get near Huffman by asking
about spelling, which answers golds spelled unlike the pool away.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from core.engine.answers import profile_of
from core.engine.execute import open_database
from core.engine.pool import PreparedPool, prepare_pool
from core.engine.taskbank import load_tasks
from core.evaluation.populations import (
    class_weights,
    huffman_floor,
    invariant_floor,
    vocabulary_floor,
)

# column -> (heading, what it is)
FLOORS = {
    "huffman": ("Huffman", "any Yes/No question about the outputs"),
    "tree": ("tree", "the pool's own questions, each class answered by its usual spelling"),
    "clauses": ("inv-cl", "clause conjunctions every spelling of an output answers alike"),
    "answers": ("answers", "questions about the answer only (no values)"),
    "invariant": ("inv", "class-invariant: the two above together (the honest default's)"),
    "values": ("inv+val", "class-invariant with value questions"),
}


def task_floors(pool: PreparedPool) -> dict[str, float | bool | int]:
    """Every floor of one task's ``prior`` (see :data:`FLOORS`); ``exact`` is False when a
    search hit its cap (its value is then still a lower bound)."""
    profile = profile_of(pool.database)
    tree = vocabulary_floor(pool)
    parts = {"clauses": invariant_floor(pool, answers=False),
             "answers": invariant_floor(pool, clauses=False, profile=profile),
             "invariant": invariant_floor(pool, profile=profile),
             "values": invariant_floor(pool, values=True, profile=profile)}
    out: dict[str, float | bool | int] = {"classes": len(class_weights(pool)),
                                          "huffman": huffman_floor(pool),
                                          "tree": tree.expected}
    out.update({k: f.expected for k, f in parts.items()})
    out["exact"] = tree.exact and all(f.exact for f in parts.values())
    return out


def format_floors(rows: dict[str, dict[str, float | bool | int]]) -> str:
    """The per-task table with its mean row and each floor ÷ Huffman for the mean."""
    keys = list(FLOORS)
    head = f"{'task':<34}{'classes':>8}" + "".join(f"{FLOORS[k][0]:>9}" for k in keys) \
        + f"{'inv÷H':>8}"
    lines = [head, "-" * len(head)]
    mean = {k: sum(float(r[k]) for r in rows.values()) / max(1, len(rows)) for k in keys}
    for task, r in [*rows.items(), ("(mean over tasks)", {**mean, "classes": sum(
            int(r["classes"]) for r in rows.values()), "exact": all(
            r["exact"] for r in rows.values())})]:
        star = "" if r["exact"] else "*"
        h = float(r["huffman"])
        lines.append(f"{task[:33]:<34}{int(r['classes']):>8}" + "".join(
            f"{float(r[k]):>9.3f}" for k in keys) + f"{float(r['invariant']) / h if h else 1:>8.3f}"
            + star)
    lines.append("÷ Huffman (mean): " + ", ".join(
        f"{FLOORS[k][0]} {mean[k] / mean['huffman']:.3f}" for k in keys[1:]))
    lines.append("; ".join(f"{h} = {what}" for h, what in FLOORS.values())
                 + "; * = a search hit its cap (a lower bound)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.floors", description=__doc__)
    parser.add_argument("banks", nargs="+", help="task banks (JSON Lines)")
    parser.add_argument("--json", help="write the per-task floors as JSON here")
    parser.add_argument("--task", nargs="+", help="only these task ids")
    args = parser.parse_args(argv)
    rows = {}
    for task in load_tasks(*args.banks):
        if args.task and task.id not in args.task:
            continue
        db = open_database(task.database)
        try:
            pool = prepare_pool(task, db=db, layout=False)
        finally:
            db.close()
        rows[task.id] = task_floors(pool)
        print(f"{task.id}: done", flush=True, file=sys.stderr)
    print(format_floors(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


__all__ = ["FLOORS", "format_floors", "main", "task_floors"]
