"""benchmarks/resample_ceiling.py: the oracle resampler adds the gold only where the answers
allow it, and the table tells recomposition, the oracle everywhere and where needed apart."""

from __future__ import annotations

from benchmarks import resample_ceiling
from core.engine.taskbank import load_tasks
from tests.conftest_core import FILM_DUMP, write_bank


def _bank(tmp_path):
    missing = {"id": "best-review", "question": "The best review?", "ambiguity": "vague",
               "database": {"dump": FILM_DUMP}, "gold": ["SELECT MAX(stars) FROM review"],
               "candidates": [{"sql": "SELECT COUNT(*) FROM film", "count": 3},
                              {"sql": "SELECT COUNT(*) FROM film WHERE year > 1995",
                               "count": 2}]}
    present = {"id": "recent", "question": "Films after 1995?", "ambiguity": "vague",
               "database": {"dump": FILM_DUMP},
               "gold": ["SELECT title FROM film WHERE year > 1995"],
               "candidates": [{"sql": "SELECT title FROM film WHERE year > 1995", "count": 3},
                              {"sql": "SELECT title FROM film", "count": 2}]}
    return write_bank(tmp_path / "bank.jsonl", [missing, present])


def test_the_oracle_reaches_what_recomposition_cannot_and_the_table_says_so(tmp_path, capsys):
    bank = _bank(tmp_path)
    rows = [row for task in load_tasks(str(bank))
            for row in resample_ceiling.task_runs(task, (0.5,), 15, "end")]
    by_task = {row["task"]: row for row in rows}
    missing, present = by_task["best-review"], by_task["recent"]
    assert not missing["base"].success and missing["base"].cause == "needs-clause"
    assert missing[0.5].success and missing[0.5].rejections >= 1
    # a gold the pool already has: the oracle never runs (no rejection), the run is the same
    assert present["base"].success and present["base"].rejections == 0
    assert present[0.5].turns == present["base"].turns
    assert resample_ceiling.main([str(bank), "--weights", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "not a product figure" in out and "honest gold-features" in out
    table = {line[:56].strip(): line[56:].split() for line in out.splitlines()
             if line.startswith(("recomposition", "+ oracle"))}
    assert table["recomposition (the headline evaluation)"][0] == "0.500"
    assert table["+ oracle at weight 0.5, every round"][0] == "1.000"
    assert table["+ oracle at weight 0.5, only the 1 needs-clause pairs"][0] == "1.000"
