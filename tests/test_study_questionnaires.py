"""Questionnaires as data: SUS scoring (5- and 7-point), reverse coding, required fields."""

from __future__ import annotations

import pytest

from study.questionnaires import (
    BUILTINS,
    Item,
    Questionnaire,
    builtin_questionnaire,
    likert_score,
    score_questionnaire,
    sus_items,
    sus_score,
    validate_answers,
)


def sus(*values: int) -> dict[str, int]:
    return {f"sus{i}": v for i, v in enumerate(values, 1)}


def test_sus_items_have_stable_ids_and_brookes_wording():
    items = sus_items(5)
    assert [it.id for it in items] == [f"sus{i}" for i in range(1, 11)]
    assert items[0].text == "I think that I would like to use this system frequently."
    assert items[9].text.startswith("I needed to learn a lot of things")
    assert {it.points for it in sus_items(7)} == {7}


def test_sus_5_point_against_hand_computed_values():
    # odd: (4-1)+(4-1)+(5-1)+(4-1)+(5-1) = 17; even: (5-2)+(5-1)+(5-2)+(5-2)+(5-1) = 17
    assert sus_score(sus(4, 2, 4, 1, 5, 2, 4, 2, 5, 1)) == 85.0
    assert sus_score(sus(*[3] * 10)) == 50.0
    assert sus_score(sus(5, 1, 5, 1, 5, 1, 5, 1, 5, 1)) == 100.0
    assert sus_score(sus(1, 5, 1, 5, 1, 5, 1, 5, 1, 5)) == 0.0


def test_sus_7_point_linear_rescale_against_hand_computed_values():
    # raw odd: 5+4+6+5+4 = 24; raw even: (7-2)+(7-3)+(7-1)+(7-2)+(7-3) = 24;
    # 48 * 4/6 = 32 on Brooke's 0..40, x 2.5 = 80
    assert sus_score(sus(6, 2, 5, 3, 7, 1, 6, 2, 5, 3), points=7) == 80.0
    assert sus_score(sus(*[4] * 10), points=7) == 50.0
    assert sus_score(sus(7, 1, 7, 1, 7, 1, 7, 1, 7, 1), points=7) == 100.0
    # one step on a 7-point item is 2/3 of a Brooke point: 2.5 * 2/3
    assert sus_score(sus(5, 4, 4, 4, 4, 4, 4, 4, 4, 4), points=7) == pytest.approx(50 + 5 / 3)


def test_sus_refuses_incomplete_or_out_of_range_answers():
    with pytest.raises(ValueError, match="'sus10' is missing"):
        sus_score(sus(*[3] * 9))
    with pytest.raises(ValueError, match="'sus1' must be an integer 1..5, got 7"):
        sus_score(sus(7, *[3] * 9))
    with pytest.raises(ValueError, match="5- or 7-point"):
        sus_score(sus(*[3] * 10), points=6)


def test_reverse_coding():
    effort = Item("effort", "It took a lot of effort.", points=7, reverse=True)
    assert [likert_score(effort, v) for v in (1, 4, 7)] == [7, 4, 1]
    plain = Item("clear", "It was clear.", points=7)
    assert likert_score(plain, 6) == 6
    with pytest.raises(ValueError, match="1..7"):
        likert_score(effort, 0)
    comp = builtin_questionnaire("component-utility")
    scored = score_questionnaire(comp, {"ds_effort": 2, "pq_effort": 6, "as_explore": 7})
    assert scored == {"ds_effort": 6.0, "pq_effort": 2.0, "as_explore": 7.0}


def test_score_questionnaire_adds_sus_total():
    scored = score_questionnaire(BUILTINS["sus7"], sus(6, 2, 5, 3, 7, 1, 6, 2, 5, 3))
    assert scored["sus"] == 80.0 and scored["sus2"] == 2.0  # items unreversed, total Brooke


def test_required_fields_return_per_item_messages():
    demo = builtin_questionnaire("demographics")
    msgs = validate_answers(demo, {"age": 12, "gender": "", "sql_expertise": "guru"})
    assert msgs == {
        "age": "Enter a number of at least 18.",
        "sql_expertise": "Choose one of: none, beginner, intermediate, advanced.",
        "llm_code": "This question is required.",
    }
    ok = {"sql_expertise": "intermediate", "llm_code": "weekly"}
    assert validate_answers(demo, ok) == {}
    q = Questionnaire("q", "Q", (Item("l", "L", points=5), Item("t", "T", kind="text")))
    assert validate_answers(q, {"l": 6, "t": "  "}) == {"l": "Choose a value from 1 to 5.",
                                                         "t": "This question is required."}


def test_builtins_cover_the_papers_questionnaires():
    assert set(BUILTINS) == {"demographics", "sus5", "sus7", "system-utility",
                             "component-utility"}
    ids = [it.id for it in BUILTINS["system-utility"].items]
    assert ids == ["discover", "efficient", "understandable", "control"]
    with pytest.raises(KeyError, match="no built-in questionnaire 'sus3'"):
        builtin_questionnaire("sus3")


def test_builtin_items_use_the_words_participants_met_in_the_interface():
    """The component-utility items asked about the "Decision Space (grouped decision
    variables)" and "Predicted Query (atomic decision variables)": the paper's terms, which
    no participant reads anywhere in the interface (it speaks of questions and clauses).
    Item ids and groups stay, so answers stored before compare with answers after."""
    texts = [it.text for q in BUILTINS.values() for it in q.items]
    assert not [t for t in texts if "variable" in t.lower()]
    comp = BUILTINS["component-utility"]
    assert [it.id for it in comp.items] == [
        "as_explore", "as_outputs", "ds_explore", "ds_understand", "ds_transparent",
        "ds_effort", "pq_explore", "pq_understand", "pq_transparent", "pq_effort"]
    understand = {it.id: it.text for it in comp.items}
    assert "The questions in the Decision Space" in understand["ds_understand"]
    assert "The clauses in the Predicted Query" in understand["pq_understand"]
