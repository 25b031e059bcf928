"""study.yaml validation: the shipped film studies load, malformed files get precise messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from study.spec import StudySpecError, load_study

REPO = Path(__file__).resolve().parent.parent

GOOD = """\
title: Demo
consent: I agree.
conditions: [pleasqlarify]
task_bank: bank.jsonl
subtasks:
  "1": Say what you expect.
  2a: Explore outputs.
  2b: Explain differences.
  "3": Navigate and submit.
tasks:
  - id: a
  - id: b
    subtasks: {"3": Only navigate.}
  - c
onboarding:
  intro: Hello
  practice_task: p
questionnaires:
  - use: demographics
  - use: sus7
  - id: extra
    items:
      - {id: e1, text: Effort, kind: likert, points: 7, reverse: true}
assignment:
  task_order: latin
  conditions: between
  seed: 3
  participants: 6
"""


def write(tmp_path: Path, text: str, bank: tuple[str, ...] | None = ("a", "b", "c", "p")) -> Path:
    """Write study.yaml (and a tiny task bank with the given ids) into tmp_path."""
    if bank is not None:
        lines = [json.dumps({"id": t, "question": f"Q {t}?", "database": {"dump": "CREATE "
                             "TABLE x (y INT);"}}) for t in bank]
        (tmp_path / "bank.jsonl").write_text("\n".join(lines) + "\n")
    path = tmp_path / "study.yaml"
    path.write_text(text)
    return path


def problems(tmp_path: Path, text: str, **kw) -> list[str]:
    """The error messages load_study raises for this text."""
    with pytest.raises(StudySpecError) as exc:
        load_study(write(tmp_path, text, **kw))
    return [str(p) for p in exc.value.problems]


def test_good_study_loads_with_defaults_and_overrides(tmp_path):
    spec = load_study(write(tmp_path, GOOD))
    assert spec.id == tmp_path.name and spec.task_ids == ["a", "b", "c"]
    assert [s for s, _ in spec.tasks[0].subtasks] == ["1", "2a", "2b", "3"]
    assert spec.tasks[1].subtasks == (("3", "Only navigate."),)
    assert [q.id for q in spec.questionnaires] == ["demographics", "sus7", "extra"]
    assert spec.questionnaires[0].when == "start" and spec.questionnaires[2].items[0].reverse
    assert spec.assignment.task_order == "latin" and spec.assignment.seed == 3
    assert spec.task_bank == tmp_path / "bank.jsonl" and len(spec.hash) == 64
    assert spec.warnings == ()


@pytest.mark.parametrize("name", ["study.yaml", "study-two-conditions.yaml"])
def test_shipped_film_studies_load(name):
    spec = load_study(REPO / "studies" / "film" / name)
    assert len(spec.tasks) >= 5 and spec.onboarding.practice_task
    assert {"demographics", "sus7"} <= {q.id for q in spec.questionnaires}
    assert all([s for s, _ in t.subtasks] == ["1", "2a", "2b", "3"] for t in spec.tasks)
    assert not [w for w in spec.warnings if "does not exist" not in w.message]


def test_film_study_reproduces_the_paper(tmp_path):
    spec = load_study(REPO / "studies" / "film" / "study.yaml")
    assert spec.condition_ids == ["pleasqlarify"]
    assert spec.task_ids[0] == "film-pulp-review" and spec.task_ids[-1] == (
        "film-festival-categories")
    comp = next(q for q in spec.questionnaires if q.id == "component-utility")
    assert {it.group for it in comp.items} == {"action_space", "decision_space",
                                               "predicted_query"}
    assert {it.id for it in comp.items if it.reverse} == {"ds_effort", "pq_effort"}
    sus = next(q for q in spec.questionnaires if q.id == "sus7")
    assert [it.points for it in sus.items] == [7] * 10


def test_missing_required_field(tmp_path):
    msgs = problems(tmp_path, GOOD.replace("consent: I agree.\n", ""))
    assert msgs == [f"{tmp_path / 'study.yaml'}: consent: is required. Fix: add 'consent: "
                    "<text>'"]


def test_bad_enum_names_path_line_and_suggestion(tmp_path):
    msgs = problems(tmp_path, GOOD.replace("task_order: latin", "task_order: latn"))
    assert len(msgs) == 1
    assert msgs[0].startswith(f"{tmp_path / 'study.yaml'}:25: assignment.task_order: 'latn' "
                              "is not allowed")
    assert "did you mean 'latin'?" in msgs[0] and "fixed, random, latin, williams" in msgs[0]


def test_unknown_condition(tmp_path):
    msgs = problems(tmp_path, GOOD.replace("[pleasqlarify]", "[pleasqlarify, atomic_only]"))
    assert "conditions[1]: unknown condition 'atomic_only'" in msgs[0]
    assert "did you mean 'atomic-only'?" in msgs[0]


def test_unknown_task_id_is_checked_against_the_bank(tmp_path):
    msgs = problems(tmp_path, GOOD.replace("  - c\n", "  - cc\n"))
    assert len(msgs) == 1
    assert ":14: tasks[2].id: unknown task id 'cc' (no valid task with this id in " \
        "bank.jsonl)" in msgs[0]
    assert "did you mean 'c'?" in msgs[0]


def test_unknown_practice_task(tmp_path):
    msgs = problems(tmp_path, GOOD.replace("practice_task: p", "practice_task: px"))
    assert "onboarding.practice_task: unknown task id 'px'" in msgs[0]


def test_missing_bank_is_a_warning_and_keeps_the_study_closed(tmp_path):
    from study.registry import open_problems

    spec = load_study(write(tmp_path, GOOD, bank=None))
    assert [w.where for w in spec.warnings] == ["task_bank"]
    (problem,) = open_problems(spec, api_key=True)
    assert str(problem).startswith("study.yaml:4: task_bank: task bank 'bank.jsonl' does not "
                                   "exist") and "upload the task bank in Setup" in problem.fix


def test_every_bad_bank_line_is_reported_with_file_line_field_and_fix(tmp_path):
    path = write(tmp_path, GOOD)
    lines = (tmp_path / "bank.jsonl").read_text().splitlines()
    lines[1] = lines[1][:-1]  # line 2 (task b) is no longer JSON
    lines[2] = lines[2].replace('"question": "Q c?", ', "")  # line 3 (task c) lacks question
    (tmp_path / "bank.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(StudySpecError) as exc:
        load_study(path)
    msgs = [str(p) for p in exc.value.problems]
    assert msgs[0].startswith("bank.jsonl:2: (line): is not valid JSON")
    assert "Fix: write one JSON object per line" in msgs[0]
    assert msgs[1].startswith("bank.jsonl:3: question:") and 'add "question"' in msgs[1]
    assert any("tasks[1].id: unknown task id 'b'" in m and "fix its bad line" in m
               for m in msgs)


def test_unknown_keys_are_errors_with_did_you_mean(tmp_path):
    text = GOOD.replace("title: Demo", "title: Demo\ncolour: red\ntaks: []")
    text = text.replace("  intro: Hello", "  intro: Hello\n  vidoe_url: x")
    text = text.replace("  seed: 3", "  seed: 3\n  sed: 4")
    msgs = problems(tmp_path, text)
    got = {m.split(": ")[1]: m for m in msgs}
    assert "unknown key 'colour'" in got["colour"] and "known keys: id, title" in got["colour"]
    assert got["colour"].split(": ")[0].endswith("study.yaml:2")
    assert "did you mean 'video_url'?" in got["onboarding.vidoe_url"]
    assert "did you mean 'seed'?" in got["assignment.sed"]


def test_study_id_is_validated(tmp_path):
    msgs = problems(tmp_path, "id: 'my study/1'\n" + GOOD)
    assert "id: 'my study/1' is not a valid study id" in msgs[0]


def test_bad_yaml_syntax_reports_the_line(tmp_path):
    msgs = problems(tmp_path, GOOD.replace("  2a: Explore outputs.", "  2a: [Explore outputs."))
    assert len(msgs) == 1 and "invalid YAML" in msgs[0]
    assert msgs[0].startswith(f"{tmp_path / 'study.yaml'}:") and "line 8" in msgs[0]


def test_several_problems_are_reported_together(tmp_path):
    bad = GOOD.replace("title: Demo\n", "").replace("conditions: between", "conditions: mixed")
    bad = bad.replace("kind: likert", "kind: slider").replace("seed: 3", "seed: three")
    msgs = problems(tmp_path, bad)
    wheres = [m.split(": ")[1] for m in msgs]
    assert wheres == ["title", "questionnaires[2].items[0].kind", "assignment.conditions",
                      "assignment.seed"]


def test_questionnaire_errors(tmp_path):
    bad = GOOD.replace("  - use: sus7\n", "  - use: sus9\n  - id: empty\n")
    msgs = problems(tmp_path, bad)
    assert "questionnaires[1].use: 'sus9' is not allowed" in msgs[0]
    assert "did you mean 'sus7'?" in msgs[0] or "did you mean 'sus5'?" in msgs[0]
    assert "questionnaires[2].items: an inline questionnaire needs" in msgs[1]


def test_not_a_mapping(tmp_path):
    msgs = problems(tmp_path, "- just\n- a list\n")
    assert "(top): must be a mapping" in msgs[0]


def test_missing_file():
    with pytest.raises(StudySpecError, match="no such study file"):
        load_study("/nonexistent/study.yaml")


def test_warnings_for_suspicious_but_legal_settings(tmp_path):
    text = GOOD.replace("  - c\n", "  - c\n  - a\n").replace("conditions: between",
                                                              "conditions: within")
    text = text.replace("participants: 6", "participants: 5").replace("2b:", "2c:")
    spec = load_study(write(tmp_path, text))
    got = {w.where: str(w) for w in spec.warnings}
    assert "listed twice" in got["tasks[3].id"]
    assert "single condition" in got["assignment.conditions"]
    assert "not a multiple of the 4 sequences" in got["assignment.participants"]
    assert "not one of the paper's" in got["subtasks.2c"]


def test_the_demographics_accept_no_age_below_the_consents(tmp_path):
    """Review: the film consent says "at least 18 years old" while the built-in demographics
    accepted ages from 16. The film study's demographics now refuse 17 and take 18; the
    built-in's default is 18; `min_age:` sets another bound, and a bound that disagrees with
    the consent's "at least N years" is a warning naming the fix."""
    from study.questionnaires import validate_answers

    film = load_study(REPO / "studies" / "film" / "study.yaml")
    demo = next(q for q in film.questionnaires if q.builtin == "demographics")
    assert "age" in validate_answers(demo, {"age": 17, "sql_expertise": "none",
                                            "llm_code": "never"})
    assert "age" not in validate_answers(demo, {"age": 18, "sql_expertise": "none",
                                                "llm_code": "never"})
    assert not [w for w in film.warnings if "consent" in w.message]
    adult = GOOD.replace("consent: I agree.", "consent: I am at least 18 years old.")
    assert load_study(write(tmp_path, adult)).warnings == ()
    younger = adult.replace("  - use: demographics\n", "  - use: demographics\n    min_age: 16\n")
    (warning,) = load_study(write(tmp_path, younger)).warnings
    assert warning.where == "questionnaires[0]" and "min_age: 18" in str(warning)
    sixteen = younger.replace("at least 18", "at least 16")
    spec = load_study(write(tmp_path, sixteen))
    assert spec.warnings == () and spec.questionnaires[0].items[0].minimum == 16
    assert any("min_age" in p for p in problems(tmp_path, younger.replace("16", "'16'")))
