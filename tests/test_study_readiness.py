"""Setup's check of what a study can do (study.readiness) on a researcher's own small study:
camelCase schema, a gold no candidate produces, a task without gold, tiny pools; offline
variants added to a pool change the figures."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.engine.taskbank import load_task_bank
from core.generation.generate import variant_pool
from study.readiness import add_candidates, study_readiness
from study.spec import load_study

BYO = Path(__file__).parent / "fixtures" / "byo"


@pytest.fixture()
def study(tmp_path: Path):
    """The fixture study copied to tmp (Setup writes into its bank)."""
    for name in ("study.yaml", "tasks.jsonl"):
        shutil.copy(BYO / name, tmp_path / name)
    return load_study(tmp_path / "study.yaml")


def test_readiness_names_what_each_task_lacks_and_variants_fix_it(study) -> None:
    before = {r.task: r for r in study_readiness(study)}
    guitar, vague = before["byo-1-guitar"], before["byo-3-vague"]
    assert (guitar.candidates, guitar.golds, guitar.golds_produced) == (4, 2, 1)
    assert 0 <= guitar.success <= 1 and guitar.mean_turns >= 1  # core.evaluate's figures
    assert any("gold 2 is produced by no candidate" in w for w in guitar.warnings)
    assert any("only 4 candidates" in w for w in guitar.warnings)
    assert vague.golds == 0 and vague.success is None
    assert any("has no gold query" in w for w in vague.warnings)

    bank = study.task_bank
    others = [line for line in bank.read_text().splitlines() if '"byo-1-guitar"' not in line]
    task = next(t for t in load_task_bank(bank)[0] if t.id == "byo-1-guitar")
    new, total = add_candidates(bank, task.id, variant_pool(task, 30))
    assert new > 0 and total == 4 + new
    assert [line for line in bank.read_text().splitlines()
            if '"byo-1-guitar"' not in line] == others  # other lines byte for byte
    line = next(json.loads(t) for t in bank.read_text().splitlines() if '"byo-1-guitar"' in t)
    assert len(line["candidates"]) == total
    after = {r.task: r for r in study_readiness(load_study(study.path))}["byo-1-guitar"]
    assert after.candidates == total and after.golds_produced == 2
    assert not any("produced by no candidate" in w for w in after.warnings)
    with pytest.raises(KeyError, match="no task 'nope'"):
        add_candidates(bank, "nope", variant_pool(task, 5))


def test_the_check_asks_the_questions_of_the_studys_condition(study, tmp_path: Path) -> None:
    """Setup's "What the study can do" ran the honest user with the workspace default
    (hybrid) whatever the study's condition asked: a study with 'questions: outputs' showed
    the same success and turns as one with clause questions. Found on Setup in Chromium."""
    from study.readiness import DEFAULT_VOCABULARY, study_vocabulary

    assert study_vocabulary(study) == DEFAULT_VOCABULARY  # the fixture leaves it unset
    text = (tmp_path / "study.yaml").read_text()
    assert "  - id: pleasqlarify\n" in text
    figures = {}
    for questions in ("clauses", "outputs"):
        path = tmp_path / f"study-{questions}.yaml"
        path.write_text(text.replace("  - id: pleasqlarify\n", "  - id: pleasqlarify\n"
                                     f"    questions: {questions}\n", 1))
        spec = load_study(path)
        assert study_vocabulary(spec) == (questions, False)
        figures[questions] = [(r.success, r.mean_turns) for r in study_readiness(spec)]
    assert figures["clauses"] != figures["outputs"]
