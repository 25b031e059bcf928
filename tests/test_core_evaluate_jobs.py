"""``core.evaluate --jobs 2`` writes exactly the JSON and table of ``--jobs 1``."""

from __future__ import annotations

from pathlib import Path

from core.evaluation import evaluate

DEV = Path(__file__).resolve().parents[1] / "data" / "ambrosia" / "dev.jsonl"


def test_two_processes_give_the_same_json_and_table(tmp_path, capsys):
    outputs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"jobs{jobs}.json"
        assert evaluate.main([str(DEV), "--limit", "4", "--strategies", "cluster-grouped",
                              "planned", "--population", "all", "prior", "--repair", "none",
                              "--json", str(out), "--jobs", jobs]) == 0
        outputs.append((out.read_bytes(), capsys.readouterr().out))
    (one, table_one), (two, table_two) = outputs
    assert one == two and table_one == table_two
    assert b'"runs"' in one and len(one) > 10_000  # four tasks' runs, not an empty result
