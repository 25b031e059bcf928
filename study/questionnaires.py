"""Questionnaires as data (SUS, system and component utility, demographics) and their scoring.

Item ids are stable: an answer is stored under ``"<questionnaire id>/<item id>"``.

SUS scoring (Brooke 1996): each item contributes 0..4 (odd items ``r - 1``, even items
``points - r`` on the 5-point form) and the sum is multiplied by 2.5 to give 0..100.
The 7-point form (used in the PleaSQLarify study) is scored by **linear rescaling** of each
item to Brooke's 0..4 range, ``(r - 1) * 4 / 6`` for odd and ``(7 - r) * 4 / 6`` for even items,
then ``x 2.5``; the result is on Brooke's 0..100 scale but is not identical to a 5-point SUS
(exports must say "SUS, 7-point, linearly rescaled").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

ITEM_KINDS = ("likert", "text", "choice", "number")


@dataclass(frozen=True)
class Item:
    """One question: id, text, kind (likert|text|choice|number) and its constraints."""

    id: str
    text: str
    kind: str = "likert"
    points: int = 7  # likert only
    reverse: bool = False  # likert only: score = points + 1 - answer
    required: bool = True
    options: tuple[str, ...] = ()  # choice only
    minimum: float | None = None  # number only
    maximum: float | None = None
    group: str = ""  # e.g. the interface component the item is about
    anchors: tuple[str, str] = ("Strongly disagree", "Strongly agree")
    describe: str = ""  # choice only: the option that opens a text field (its own answer)

    @property
    def described_id(self) -> str:
        """The id of the text answer given with the :attr:`describe` option."""
        return f"{self.id}_described"


@dataclass(frozen=True)
class Questionnaire:
    """A named list of items, shown at ``when`` ('start' before tasks, 'end' after)."""

    id: str
    title: str
    items: tuple[Item, ...]
    when: str = "end"
    builtin: str = ""  # the built-in it came from ('' for inline)
    instructions: str = ""

    def item(self, item_id: str) -> Item:
        """The item with this id (KeyError naming the questionnaire if absent)."""
        for it in self.items:
            if it.id == item_id:
                return it
        raise KeyError(f"questionnaire '{self.id}' has no item '{item_id}'")


SUS_TEXTS = (
    "I think that I would like to use this system frequently.",
    "I found the system unnecessarily complex.",
    "I thought the system was easy to use.",
    "I think that I would need the support of a technical person to be able to use this system.",
    "I found the various functions in this system were well integrated.",
    "I thought there was too much inconsistency in this system.",
    "I would imagine that most people would learn to use this system very quickly.",
    "I found the system very cumbersome to use.",
    "I felt very confident using the system.",
    "I needed to learn a lot of things before I could get going with this system.",
)


def sus_items(points: int = 5) -> tuple[Item, ...]:
    """Brooke's ten SUS items (ids sus1..sus10) on a 5- or 7-point agreement scale."""
    if points not in (5, 7):
        raise ValueError(f"SUS has a 5- or 7-point form, not {points}-point")
    return tuple(Item(id=f"sus{i}", text=t, points=points) for i, t in enumerate(SUS_TEXTS, 1))


_VS_LLM = "Compared to standard language model querying, the system helped me "
SYSTEM_UTILITY = (
    Item("discover", _VS_LLM + "discover alternative interpretations of my question."),
    Item("efficient", _VS_LLM + "clarify my query efficiently."),
    Item("understandable", _VS_LLM + "clarify my query in an understandable way."),
    Item("control", _VS_LLM + "feel in control of the generated output."),
)

# the panels as participants met them: the interface and its introduction speak of questions
# and clauses, never of the paper's "grouped / atomic decision variables"
_AS, _DS, _PQ = ("Action Space", "Decision Space (one yes/no question at a time)",
                 "Predicted Query (the list of clauses)")


def _panel_items(prefix: str, panel: str, parts: str, group: str) -> tuple[Item, ...]:
    """The four utility statements asked about each decision panel (explore, understand, see
    the effect, effort), worded alike so the two panels' answers compare."""
    return (
        Item(f"{prefix}_explore", f"The {panel} was useful for exploring the possible "
             "interpretations.", group=group),
        Item(f"{prefix}_understand", f"The {parts} in the {panel} were easy to understand.",
             group=group),
        Item(f"{prefix}_transparent", f"It was clear how my decisions in the {panel} changed the "
             "remaining queries.", group=group),
        Item(f"{prefix}_effort", f"Interacting with the {panel} took a lot of effort.",
             reverse=True, group=group),
    )


COMPONENT_UTILITY = (
    Item("as_explore", f"The {_AS} was useful for exploring the possible interpretations.",
         group="action_space"),
    Item("as_outputs", f"The {_AS} helped me understand the outputs and their clusters.",
         group="action_space"),
    *_panel_items("ds", _DS, "questions", "decision_space"),
    *_panel_items("pq", _PQ, "clauses", "predicted_query"),
)

SQL_LEVELS = ("none", "beginner", "intermediate", "advanced")
MIN_AGE = 18  # the demographics' lowest accepted age unless a study sets `min_age:` (consent)
DEMOGRAPHICS = (
    Item("age", "Age (years)", kind="number", minimum=MIN_AGE, maximum=100, required=False),
    Item("gender", "Gender", kind="choice", required=False,
         options=("woman", "man", "non-binary", "self-described", "prefer not to say"),
         describe="self-described"),
    Item("occupation", "Occupation or field of study", kind="text", required=False),
    Item("sql_expertise", "How familiar are you with SQL?", kind="choice", options=SQL_LEVELS),
    Item("llm_code", "How often do you use large language models to write or debug code?",
         kind="choice", options=("never", "rarely", "monthly", "weekly", "daily")),
)

BUILTINS: dict[str, Questionnaire] = {
    "demographics": Questionnaire("demographics", "About you", DEMOGRAPHICS, when="start",
                                  builtin="demographics"),
    "sus5": Questionnaire("sus5", "System Usability Scale", sus_items(5), builtin="sus5"),
    "sus7": Questionnaire("sus7", "System Usability Scale", sus_items(7), builtin="sus7"),
    "system-utility": Questionnaire("system-utility", "System utility", SYSTEM_UTILITY,
                                    builtin="system-utility"),
    "component-utility": Questionnaire("component-utility", "Component utility",
                                       COMPONENT_UTILITY, builtin="component-utility"),
}


def with_min_age(q: Questionnaire, age: int) -> Questionnaire:
    """``q`` with its ``age`` item's lowest accepted value set to ``age`` (the study's rule,
    as its consent states it)."""
    return replace(q, items=tuple(replace(it, minimum=age) if it.id == "age" else it
                                  for it in q.items))


def min_age(q: Questionnaire) -> float | None:
    """The lowest age ``q`` accepts (None when it asks no age or sets no bound)."""
    return next((it.minimum for it in q.items if it.id == "age"), None)


def builtin_questionnaire(name: str) -> Questionnaire:
    """A copy-safe built-in questionnaire by name (KeyError listing the names)."""
    if name not in BUILTINS:
        raise KeyError(f"no built-in questionnaire '{name}'; use one of {sorted(BUILTINS)}")
    return BUILTINS[name]


def sus_score(answers: Mapping[str, int], points: int = 5) -> float:
    """Brooke's 0..100 SUS score from answers {sus1..sus10: 1..points} (7-point rescaled)."""
    if points not in (5, 7):
        raise ValueError(f"SUS has a 5- or 7-point form, not {points}-point")
    total = 0.0
    for i in range(1, 11):
        key = f"sus{i}"
        if key not in answers:
            raise ValueError(f"SUS needs all ten items; '{key}' is missing")
        r = answers[key]
        if isinstance(r, bool) or not isinstance(r, int) or not 1 <= r <= points:
            raise ValueError(f"'{key}' must be an integer 1..{points}, got {r!r}")
        raw = (r - 1) if i % 2 == 1 else (points - r)
        total += raw * 4 / (points - 1)
    return round(total * 2.5, 6)


def likert_score(item: Item, value: int) -> int:
    """The item's scored value: the answer, or ``points + 1 - answer`` when reverse-coded."""
    if item.kind != "likert":
        raise ValueError(f"item '{item.id}' is {item.kind}, not likert")
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= item.points:
        raise ValueError(f"'{item.id}' must be an integer 1..{item.points}, got {value!r}")
    return item.points + 1 - value if item.reverse else value


def score_questionnaire(q: Questionnaire, answers: Mapping[str, Any]) -> dict[str, float]:
    """Scored Likert items (reverse coding applied) plus ``sus`` for SUS questionnaires."""
    out: dict[str, float] = {
        it.id: float(likert_score(it, answers[it.id]))
        for it in q.items if it.kind == "likert" and answers.get(it.id) is not None
    }
    if q.builtin in ("sus5", "sus7") and all(f"sus{i}" in answers for i in range(1, 11)):
        out["sus"] = sus_score(answers, points=int(q.builtin[-1]))
    return out


def _item_problem(it: Item, value: Any) -> str | None:
    """The message for one answer, or None if it is acceptable."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return "This question is required." if it.required else None
    if it.kind == "likert":
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= it.points:
            return f"Choose a value from 1 to {it.points}."
    elif it.kind == "choice":
        if value not in it.options:
            return f"Choose one of: {', '.join(it.options)}."
    elif it.kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            return "Enter a number."
        if it.minimum is not None and value < it.minimum:
            return f"Enter a number of at least {it.minimum:g}."
        if it.maximum is not None and value > it.maximum:
            return f"Enter a number of at most {it.maximum:g}."
    elif not isinstance(value, str):
        return "Enter text."
    return None


def validate_answers(q: Questionnaire, answers: Mapping[str, Any]) -> dict[str, str]:
    """Per-item messages for missing required or invalid answers ({} when all is well)."""
    problems: dict[str, str] = {}
    for it in q.items:
        msg = _item_problem(it, answers.get(it.id))
        if msg:
            problems[it.id] = msg
    return problems

