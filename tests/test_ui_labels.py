"""What people read of a clause: schema spelling, joins as SQL and in words, the `labels`
setting, the default panel guide and the study list without a study link (issue 25)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
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


@pytest.mark.parametrize("labels", ["sql", "both"])
def test_the_chip_key_reads_as_a_key_not_as_sql(labels: str) -> None:
    """The key under a clause question's chips said KEYWORD on black, in the capitals of the
    query words beside it (SELECT, WHERE), so a participant could read it as one more of
    them. Its black part now names what stands there, in lower case, and reads as no SQL."""
    html = legend(labels)
    parser = _Shown()
    parser.feed(html)
    black = re.findall(r'<span class="kw">([^<]*)</span>', html)
    assert len(black) == 3 and not any(word.isupper() for word in black), black
    assert sql_shown(html) == []
    roles = re.findall(r'class="pq-chip (\w+)"', html)  # the three colours it explains
    assert roles == ["plain", "decision", "implicit"]
    assert all(p.strip() for p in parser.parts) and len(parser.parts) >= 9  # tooltips too


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
    for panel in ("Action Space", "Decision Space", "Predicted Query", "Predicted Output",
                  "The task's database"):  # the box every task part shows (and the practice)
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
    # a session that is over is not idle: no minutes ticking up beside "completed"
    assert [idle_words(720, s) for s in ("completed", "withdrawn", "abandoned")] == ["–"] * 3
    row = withdrawal_row({"number": 3, "ts": 1_700_000_000_000, "by": "participant",
                          "mode": "deleted", "condition": "pleasqlarify", "stage": "main",
                          "counts": {"events": 12, "answers": 0, "audio_files": 1}})
    assert row["participant"] == "P3" and row["rows"] == "1 audio files, 12 events"
    assert row["when"].startswith("2023-11-1")  # a date, not an epoch


# --- labels: plain shows no SQL anywhere in the workspace ------------------------------------

# SQL as a reader would spot it: keywords, function calls, table-qualified names, COUNT(*).
SQL_TEXT = re.compile(r"\b(SELECT|FROM|WHERE|JOIN|GROUP BY|ORDER BY|HAVING|LIMIT|DISTINCT|UNION|"
                      r"EXISTS|NULLIF|GROUP_CONCAT|STRFTIME|CAST)\b|\b[A-Za-z_]\w*\((?!s\))|"
                      r"\b[A-Za-z_]\w*\.[A-Za-z_]\w*\b|\(\*\)")


class _Shown(HTMLParser):
    """What a participant can read of an HTML fragment: its text (not <style>) and its
    title, aria-label and alt attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.data: list[str] = []  # data-* attribute values: in the page, though not shown
        self._style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._style = tag == "style"
        self.parts += [v for k, v in attrs if k in ("title", "aria-label", "alt") and v]
        self.data += [v for k, v in attrs if k.startswith("data-") and v]

    def handle_endtag(self, tag: str) -> None:
        self._style = False

    def handle_data(self, data: str) -> None:
        if not self._style:
            self.parts.append(data)


def shown_text(html: str) -> list[str]:
    """The pieces of ``html`` a participant reads (text, tooltips, screen-reader labels)."""
    parser = _Shown()
    parser.feed(html)
    return [p.strip() for p in parser.parts if p.strip()]


def sql_shown(html: str) -> list[str]:
    """The pieces of ``html`` a participant reads that hold SQL."""
    return [p for p in shown_text(html) if SQL_TEXT.search(p)]


def sql_in_attributes(html: str) -> list[str]:
    """The data-* attribute values of ``html`` (what the page's scripts read) that hold SQL."""
    parser = _Shown()
    parser.feed(html)
    return [v for v in parser.data if SQL_TEXT.search(v)]


def _workspace_html(ws) -> str:
    """Everything the decision-dependent panels and the Action Space show for ``ws``'s state
    (the tooltips as the component renders them), plus the open-decisions line and legend."""
    from ui.panels import variable_words
    from ui.views import panel_views

    views = panel_views(ws, show_action_space=True, show_decision_space=True, hover=True)
    parts = [v["html"] for v in views.values() if "html" in v]
    space = next(v for v in views.values() if "space" in v)
    parts += [g["tip"] for g in space["space"]["glyphs"]] + [space["summary"]]
    parts += [f"<p>{variable_words(ws, v)}</p>" for v in ws.session.variables()[:5]]
    parts.append(legend(ws.extra["labels"]))
    return "\n".join(parts)


def _states(pool, labels: str, repair: bool = True, participant: bool = False):
    """The workspace (a participant's with ``participant``) at its start, after Yes to the
    first question, and with ``repair`` after "None of these" and its recomposition (new,
    starred candidates), then Back."""
    from ui import actions
    from ui.actions import no_log
    from ui.state import WorkspaceState, default_session
    from ui.views import LABELS, PARTICIPANT, current_variable

    ws = WorkspaceState(default_session(pool), pool.question,
                        extra={LABELS: labels, PARTICIPANT: participant})
    yield ws
    variable = current_variable(ws)
    if variable is not None:
        actions.answer_variable(ws, True, no_log, keys=variable.keys)
        yield ws
    if not repair:
        return
    actions.none_of_these(ws, no_log)
    actions.run_repair(ws, no_log, "recompose")
    yield ws
    ws.session.undo()
    yield ws


@pytest.fixture(scope="module")
def film_pools():
    """Every pool of the built-in film bank (each feature kind the studies show)."""
    from core.engine.prepare import default_pool_dir, load_prepared
    from core.engine.taskbank import load_task_bank
    from ui.bank_cache import bank_path

    tasks, _ = load_task_bank(bank_path(), lenient=True)
    return [load_prepared(t, default_pool_dir(bank_path())) for t in tasks]


def test_plain_labels_show_no_sql_anywhere_in_the_workspace(film_pools) -> None:
    """Under plain, no panel text, tooltip (glyph hover), title or aria label holds SQL, in
    every film task, before and after Yes (and in three of them "None of these" with repair,
    then Back: repair is most of the test's time)."""
    checked = 0
    for k, pool in enumerate(film_pools):
        for ws in _states(pool, "plain", repair=k < 3):
            html = _workspace_html(ws)
            assert sql_shown(html) == [], (pool.task_id, sql_shown(html)[:5])
            assert sql_in_attributes(html) == [], (pool.task_id, sql_in_attributes(html)[:3])
            assert not re.search(r"\b1 (rows|columns)\b", html)  # "1 column", "1 row"
            text = " ".join(shown_text(html))
            assert "Variable " not in text and "clause" not in text.lower()  # not jargon
            checked += len(shown_text(html))
    assert checked > 5000  # the check read the workspace, not an empty page


def test_both_and_sql_labels_keep_their_sql(film_pools) -> None:
    """The SQL conditions are unchanged: chips, tooltips and clause buttons show SQL."""
    pool = film_pools[0]
    for labels in ("both", "sql"):
        ws = next(_states(pool, labels))
        html = _workspace_html(ws)
        tips = [g for g in sql_shown(html) if g.startswith("SELECT ") or g.startswith("FROM ")]
        assert tips, labels
        assert any(p.startswith("Keep queries with SELECT") for p in shown_text(html))


RESEARCHER_TERMS = re.compile(r"information gain|\bbits\b|\bVariable \d|decision variable|"
                              r"of the samples|more questions expected|Repair \(|ANSWER [A-Z]")


@pytest.mark.parametrize("labels", ["sql", "plain", "both"])
def test_a_participant_reads_no_researcher_terms_under_any_labels(film_pools,
                                                                  labels: str) -> None:
    """A participant's workspace says "The most useful question now" (browsed: "Another
    question: 2 of the 41 on offer"), not "Variable 2 of 41 · information
    gain 0.97 bits", under every labels setting, also after a repair (then questions about the
    answer) and its Decisions line; the researcher's free exploration keeps its terms, and the
    SQL conditions keep their SQL for the participant."""
    pool = film_pools[0]
    for ws in _states(pool, labels, participant=True):
        text = " ".join(shown_text(_workspace_html(ws)))
        assert not RESEARCHER_TERMS.search(text), (labels, RESEARCHER_TERMS.findall(text))
        asks = ws.session.variables() and not ws.session.is_done
        assert ("The most useful question now" in text) == bool(asks), text[:300]
        assert not re.search(r"\bQuestion \d+ of \d+", text), text[:300]
    browsed = next(_states(pool, labels, participant=True))
    browsed.browse = 1  # ↓: the second question on offer
    text = " ".join(shown_text(_workspace_html(browsed)))
    offered = len(browsed.session.variables())
    assert re.search(rf"Another question: 2 of the {offered} on offer", text), text[:300]
    if labels != "plain":  # the condition asked for SQL: the participant still reads it
        html = _workspace_html(next(_states(pool, labels, participant=True)))
        assert any(p.startswith("Keep queries with SELECT") for p in shown_text(html))
    researcher = [" ".join(shown_text(_workspace_html(ws))) for ws in _states(pool, labels)]
    assert all("information gain" in t for t in researcher[:2])
    assert "Repair (recompose)" in researcher[2] and "of the samples" in researcher[0]


def test_plain_words_for_what_had_no_words() -> None:
    """Expressions that fell back to SQL in plain questions, and result headers, read as words."""
    from core.planpool.questions import expression_words, header_words

    cases = {
        "GROUP_CONCAT(people.name, ', ')": "the list of person's name",
        "STRFTIME('%Y', films.release_date)": "the film's release date written as '%Y'",
        "(ratings.a * 10 + ratings.b) / 3.0": "(the rating's a times 10 plus the rating's b) "
                                              "divided by 3.0",
        "scripts.deadline = DATE('2003-04-21')": "the script's deadline is the date '2003-04-21'",
        "EXISTS(SELECT 1 FROM directors WHERE directors.film_id = films.id)":
            "there is a matching director where the director's film id is the film's id",
        "CASE WHEN films.year > 2000 THEN 1 END": "a value computed from the film's year",
    }
    for sql, words in cases.items():
        assert expression_words(sql) == words
    assert [header_words(c) for c in ("title", "COUNT(*)", "AVG(r.imdb_rating)",
                                      "GROUP_CONCAT(a.name)", "((")] == [
        "title", "number of rows", "average imdb rating", "list of name", "computed value"]


def test_plain_buttons_carry_tokens_that_name_their_question() -> None:
    """Under plain a Yes/No button carries an opaque token (the page holds no SQL) that the
    callback turns back into the keys of the question shown; under both, the keys themselves.
    An unknown token is not applied to another question."""
    from core.engine.prepare import default_pool_dir, load_prepared
    from core.engine.taskbank import load_task_bank
    from ui import actions
    from ui.actions import no_log
    from ui.bank_cache import bank_path
    from ui.state import WorkspaceState, default_session
    from ui.views import KEYS_SEP, LABELS, button_key, pressed_keys

    tasks, _ = load_task_bank(bank_path(), lenient=True)
    pool = load_prepared(tasks[0], default_pool_dir(bank_path()))
    plain = WorkspaceState(default_session(pool), pool.question, extra={LABELS: "plain"})
    both = WorkspaceState(default_session(pool), pool.question, extra={LABELS: "both"})
    second = plain.session.variables()[1]
    token = button_key(plain, second.keys)
    assert not SQL_TEXT.search(token) and pressed_keys(plain, token) == second.keys
    assert button_key(both, second.keys) == KEYS_SEP.join(second.keys)
    assert pressed_keys(both, button_key(both, second.keys)) == second.keys
    feature = pool.vocabulary[0]
    assert pressed_keys(plain, button_key(plain, (feature.key,)), clause=True) == (feature.key,)
    assert pressed_keys(plain, "k-unknown") == ("k-unknown",)
    assert not actions.answer_variable(plain, True, no_log, keys=pressed_keys(plain, "k-unknown"))
    assert plain.session.step == 0 and "no longer open" in (plain.flash or "")
    assert actions.answer_variable(plain, True, no_log, keys=pressed_keys(plain, token))
    assert plain.session.history[-1].features == second.keys


def test_questions_about_the_answer_read_as_words_under_plain() -> None:
    """A question about the answer (hybrid's after a rejection) names columns in words under
    plain, in the Decision Space and in the open-decisions list, never as table.column."""
    from core.engine.features import Feature
    from core.planpool.questions import render_question

    column = Feature("ANSWER COLUMN", "films.title")
    per = Feature("ANSWER ONE ROW PER", "films.release_year")
    assert render_question([column]) == "Should the answer have a column of the film's title?"
    assert render_question([column, per]) == (
        "Should the answer have a column of the film's title and one row per film's release "
        "year (no value twice)?")
    for f in (column, per, Feature("ANSWER SHAPE", "a single value"),
              Feature("ANSWER COLUMNS", "2"), Feature("ANSWER HAS", "Pulp Fiction")):
        assert not SQL_TEXT.search(render_question([f])), f


def test_the_decisions_list_names_none_of_these_as_pressed(film_pools) -> None:
    """A "None of these" is one decision over every shown output: the Decisions list says what
    the person pressed ("None of these (N outputs)"), not "No to N outputs"."""
    texts = [" ".join(shown_text(_workspace_html(ws)))
             for ws in _states(film_pools[0], "both", participant=True)]
    assert re.search(r"\d\. None of these \(\d+ outputs\)", texts[2]), texts[2][-400:]
    assert not any(re.search(r"No to \d+ outputs", t) for t in texts)


@pytest.mark.parametrize("questions, says, never", [
    ("clauses", "about part of the query (marked in red)", "the answer you expect"),
    ("outputs", "about the answer you expect", "marked in red"),
    ("mixed", "or about the answer you expect", "once you have ruled out"),
    ("hybrid", "once you have ruled out an output", "xx-nothing"),
])
def test_the_panel_guide_says_what_the_decision_space_asks_about(
        tmp_path: Path, questions: str, says: str, never: str) -> None:
    """A study with ``questions: outputs`` told participants the Decision Space asks "about
    part of the query (marked in red)", while every question was about the answer and nothing
    was red. Found on Setup's uploaded study in Chromium."""
    spec = _spec(tmp_path, MINI.replace("conditions: [pleasqlarify]", "conditions:\n  - {id: "
                                        f"pleasqlarify, questions: {questions}}}"))
    line = next(x for x in panel_guide(spec).splitlines() if "**Decision Space**" in x)
    assert says in line and never not in line
    assert "keys Y and N" in line
    unset = next(x for x in panel_guide(_spec(tmp_path, MINI)).splitlines()
                 if "**Decision Space**" in x)  # the workspace default: hybrid
    assert "once you have ruled out an output" in unset


def test_shipped_study_texts_speak_of_parts_as_the_participant_page_does() -> None:
    """The film study's navigation prompt said "your interpretation from subtask 1" under a
    page that numbers "part 1 of 4" … "part 4 of 4": participants never see "subtask"."""
    from study.spec import load_study

    for path in sorted((ROOT / "studies" / "film").glob("study*.yaml")):
        spec = load_study(path)
        shown = [prompt for task in spec.tasks for _, prompt in task.subtasks]
        shown += [spec.onboarding.intro or "", spec.consent or ""]
        assert not [t for t in shown if "subtask" in t.lower()], path.name
