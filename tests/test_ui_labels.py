"""What people read of a clause: schema spelling, joins as SQL and in words, the `labels`
setting, the default panel guide and the study list without a study link (issue 25)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.engine.display import respell, shown, spellings, sql_value
from core.engine.features import Feature
from core.planpool.questions import join_words, render_question
from study.spec import StudySpecError, parse_study
from tests.study_flow_fixtures import MINI, ROOT
from ui.chips import chip, legend
from ui.participant_views import panel_guide


def test_identifiers_are_shown_as_the_schema_spells_them_but_keys_stay() -> None:
    names = spellings(['SELECT m.instrumentName FROM Musicians AS m WHERE m.x = "instrumentName"',
                       "SELECT instrumentname FROM musicians"],
                      {"musicians": ["instrumentname", "x"]})
    assert names == {"instrumentname": "instrumentName", "musicians": "Musicians"}
    f = Feature("WHERE", "musicians.instrumentname = 'instrumentname'")
    assert sql_value(f, names) == "Musicians.instrumentName = 'instrumentname'"  # not the literal
    assert shown(f, names).key != f.key and f.key == "WHERE " + f.value
    assert respell("SELECT name", {}) == "SELECT name"
    assert render_question([Feature("SELECT", "musicians.instrumentname")], names=names) == (
        "Should the result include the musician's instrument name?")


def test_a_join_class_reads_as_sql_and_as_words() -> None:
    three = Feature("ON", "casting.film_id = films.id = ratings.film_id")
    assert sql_value(three) == "casting.film_id = films.id AND films.id = ratings.film_id"
    assert sql_value(Feature("ON", "a.x = b.y")) == "a.x = b.y"
    assert sql_value(Feature("WHERE", "a.x = b.y = c.z")) == "a.x = b.y = c.z"  # only ON
    assert join_words("directors.film_id = films.id") == "films with their directors"
    assert join_words(three.value) == "films with their casting and ratings"
    assert join_words("casting.film_id = ratings.film_id") == "casting and ratings of the same film"
    assert join_words("a.x = b.y") == "a and b where the a's x and the b's y are equal"
    assert join_words("'2003' = editors.deadline") is None
    assert render_question([Feature("ON", "directors.film_id = films.id")]) == (
        "Should the answer combine films with their directors?")


@pytest.mark.parametrize("labels", ["sql", "plain", "both"])
def test_chip_labels(labels: str) -> None:
    html = chip(Feature("SELECT", "films.title"), "decision", labels=labels)
    words = "Should the result include the film&#x27;s title?"
    assert (words in html) == (labels != "sql")
    assert ('class="kw"' in html) == (labels != "plain")
    assert "pq-chip decision" in html  # the colour encoding stays in every mode
    assert ('class="kw"' in legend(labels)) == (labels != "plain")  # the key reads the same way
    with pytest.raises(ValueError, match="unknown labels"):
        chip(Feature("SELECT", "x"), labels="words")


def _spec(tmp_path: Path, text: str):
    """The study file ``text`` parsed as if it were written in ``tmp_path``."""
    return parse_study(text, tmp_path / "study.yaml")


def test_labels_is_a_checked_condition_setting(tmp_path: Path) -> None:
    spec = _spec(tmp_path, MINI.replace("conditions: [pleasqlarify]",
                                        "conditions:\n  - {id: pleasqlarify, labels: plain}"))
    assert spec.conditions[0].labels == "plain"
    assert _spec(tmp_path, MINI).conditions[0].labels == "both"  # the default
    with pytest.raises(StudySpecError, match=r"labels.*did you mean 'plain'"):
        _spec(tmp_path, MINI.replace("conditions: [pleasqlarify]",
                                     "conditions:\n  - {id: atomic-only, labels: plian}"))


def test_a_one_line_intro_gets_the_panel_guide_and_the_film_intro_does_not(tmp_path) -> None:
    guide = panel_guide(_spec(tmp_path, MINI))
    for panel in ("Action Space", "Decision Space", "Predicted Query", "Predicted Output"):
        assert f"**{panel}**" in guide
    film = (ROOT / "studies" / "film" / "study.yaml")
    assert panel_guide(parse_study(film.read_text(), film)) == ""
    atomic = _spec(tmp_path, MINI.replace("conditions: [pleasqlarify]",
                                          "conditions:\n  - {id: atomic-only, "
                                          "show_action_space: false}"))
    assert "Decision Space" not in panel_guide(atomic) and "Action Space" not in panel_guide(atomic)


def test_participant_page_without_a_link_lists_the_open_studies(tmp_path, monkeypatch) -> None:
    from tests.study_flow_fixtures import open_page, study_env, write_mini

    study_env(tmp_path, monkeypatch)
    write_mini(tmp_path / "studies")
    at = open_page("participant")
    assert not at.exception
    assert at.header[0].value == "Participant sessions"
    assert any("/participant?study=mini" in c.value for c in at.caption)


def test_steps_and_withdrawals_are_named_for_people(tmp_path: Path) -> None:
    from study.facilitator import idle_words
    from study.flow import step_label
    from ui.withdraw import withdrawal_row

    spec = _spec(tmp_path, MINI)
    assert step_label(spec, "task:film-pulp-review/3") == (
        "film-pulp-review: part 4 of 4 — Navigate")
    assert step_label(spec, "questionnaire:end") == "Questionnaire: Your opinion"
    assert step_label(spec, "onboarding") == "Introduction"
    assert step_label(spec, "task:gone/1") == "task:gone/1"
    assert [idle_words(s) for s in (5, 125, 7500)] == ["5 s", "2 min", "2 h 5 min"]
    row = withdrawal_row({"number": 3, "ts": 1_700_000_000_000, "by": "participant",
                          "mode": "deleted", "condition": "pleasqlarify", "stage": "main",
                          "counts": {"events": 12, "answers": 0, "audio_files": 1}})
    assert row["participant"] == "P3" and row["rows"] == "1 audio files, 12 events"
    assert row["when"].startswith("2023-11-1")  # a date, not an epoch
