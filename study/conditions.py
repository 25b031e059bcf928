"""The study's conditions and their per-condition settings, parsed from ``conditions:``.

Each condition is a known interface variant with its own settings (all optional):

* ``pleasqlarify`` — the full workspace. ``pool_accounting: true`` keeps Submit disabled while
  a decision variable with information gain above ``ig_threshold`` bits (default 0.1) has been
  neither answered nor dismissed. ``repair: none | recompose | resample`` (default recompose)
  is what a "No" on the Predicted Output or "None of these" does besides ruling the outputs
  out: nothing more, recombine the pool's clauses (offline), or ask the LLM for new candidates
  (needs an Anthropic key at run time; without one, recomposition runs and the page says so).
  ``labels: sql | plain | both`` (default both) is how clauses read: the paper's SQL chips,
  plain-language questions ("Should the answer combine films with their directors?"), or
  each chip with its question under it.
  ``questions: clauses | outputs | mixed | hybrid`` chooses what the Decision Space asks
  about: SQL clauses (the paper), the answer itself (its columns, one row per what, a single
  number, …; core/engine/answers.py), both, or clauses until the participant rejects an
  output and questions about the answer from then on (a clause question only where no likely
  output stands out and only a clause tells them apart); unset, the workspace default.
  ``values: true`` adds questions about specific values ("Should *Heat* be in the answer?"),
  which assume the participant recognises the right rows (default false).
* ``atomic-only`` — the paper's internal baseline: no grouped Decision Space.
  ``show_action_space`` (default true); ``repair`` and ``labels`` as above.
* ``planpool-chat`` — the structured agent asks its pool's questions in a chat.
  ``show_pool`` (default true) shows pending / asked / dropped questions; ``max_questions``
  (default 5) is the initial plan size; ``ig_threshold`` (default 0.05 bits) the least gain of
  a question worth asking; ``free_text`` (default false) adds a typed answer box.
  ``agent: structured | llm`` (default structured) picks who asks: ``llm`` is the tool-using
  LLM agent (core/planpool/llm_agent.py) and needs an Anthropic key at run time (without one
  the page is not opened to participants, unless ``fallback: structured`` states that the
  structured agent may ask instead — then it is logged and Setup and Facilitator say so;
  participants read nothing about keys); ``model`` names its model.
  ``llm_budget_tokens`` (default 2,000,000) caps the tokens (input + output) the study's LLM
  chats may spend with the researcher's key; when it is spent, chats fall back to the
  structured agent (see study/budget.py). The key is spent only for enrolled participants.
* ``single-shot`` — the most probable query only. ``show_sql`` (default true).

Every condition may carry a ``label`` and ``instructions`` (shown above its interface). A
setting of another condition, an unknown key or a wrong type is an error naming the path.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from study.spec_check import Checker

KNOWN_CONDITIONS = {
    "pleasqlarify": "full interface: Action Space, Decision Space, Predicted Query",
    "atomic-only": "Predicted Query clause list only, no grouped decision variables",
    "planpool-chat": "clarification questions from an explicit pool, in a chat",
    "single-shot": "one LLM query, standard LLM querying",
}
COMMON_KEYS = ("id", "label", "instructions")
SETTINGS: dict[str, dict[str, Any]] = {  # condition -> {setting: default}
    "pleasqlarify": {"pool_accounting": False, "ig_threshold": 0.1, "repair": "recompose",
                     "labels": "both", "questions": "", "values": False},
    "atomic-only": {"show_action_space": True, "repair": "recompose", "labels": "both"},
    "planpool-chat": {"show_pool": True, "max_questions": 5, "ig_threshold": 0.05,
                      "free_text": False, "agent": "structured", "model": "",
                      "llm_budget_tokens": 2_000_000, "fallback": ""},
    "single-shot": {"show_sql": True},
}
MAX_QUESTIONS = 20
AGENTS = ("structured", "llm")
REPAIRS = ("none", "recompose", "resample")
LABELS = ("sql", "plain", "both")  # how clauses read: SQL chips, plain-language questions, both
# the question vocabularies of core.engine.answers.QUESTIONS (not imported: study pages that
# parse specs load no engine; tests/test_core_answers.py checks they agree)
QUESTION_VOCABULARIES = ("clauses", "outputs", "mixed", "hybrid")


@dataclass(frozen=True)
class Condition:
    """One experimental condition (an interface variant) with its settings."""

    id: str
    label: str = ""
    instructions: str = ""
    pool_accounting: bool = False
    ig_threshold: float = 0.1
    show_action_space: bool = True
    show_pool: bool = True
    max_questions: int = 5
    free_text: bool = False
    agent: str = "structured"
    model: str = ""
    fallback: str = ""
    show_sql: bool = True
    llm_budget_tokens: int = 2_000_000
    repair: str = "recompose"
    labels: str = "both"
    questions: str = ""  # clauses | outputs | mixed | hybrid; "" = the workspace default
    values: bool = False

    def session_options(self) -> dict[str, Any]:
        """Keyword arguments of the condition's RepairSession (its question vocabulary)."""
        out: dict[str, Any] = {"questions": self.questions} if self.questions else {}
        return {**out, "values": True} if self.values else out


_CHOICES: dict[str, tuple[tuple[str, ...], str]] = {  # setting -> (allowed values, fix)
    "agent": (AGENTS, "e.g. 'agent: llm' (needs ANTHROPIC_API_KEY when the study runs)"),
    "fallback": (("structured",), "write 'fallback: structured' (the structured agent asks "
                 "when no key is set)"),
    "repair": (REPAIRS, "e.g. 'repair: recompose' ('resample' needs ANTHROPIC_API_KEY)"),
    "labels": (LABELS, "e.g. 'labels: both' (SQL chips with a plain-language question under "
               "each; 'plain' for participants who do not read SQL, 'sql' as in the paper)"),
    "questions": (QUESTION_VOCABULARIES, "e.g. 'questions: mixed' (clauses and questions about "
                  "the answer)"),
}
_WHOLE: dict[str, tuple[int, int | None, str, str]] = {  # setting -> (least, most, what, fix)
    "max_questions": (1, MAX_QUESTIONS, f"an integer 1..{MAX_QUESTIONS}",
                      "e.g. 'max_questions: 5'"),
    "llm_budget_tokens": (0, None, "a whole number of tokens (0 or more)",
                          "e.g. 'llm_budget_tokens: 2000000' (input + output tokens for the "
                          "study)"),
}
_NEEDS = (  # (condition, setting, the setting it needs, its value): else the setting does nothing
    ("planpool-chat", "llm_budget_tokens", "agent", "llm"),
    ("planpool-chat", "model", "agent", "llm"),
    ("planpool-chat", "fallback", "agent", "llm"),
    ("pleasqlarify", "ig_threshold", "pool_accounting", True),
)


def _owner(key: str) -> list[str]:
    return [c for c, keys in SETTINGS.items() if key in keys]


def _hint(value: Any, options: Any) -> str:
    """"did you mean 'x'? " for the closest of ``options``, or nothing."""
    close = difflib.get_close_matches(str(value), options, n=1)
    return f"did you mean '{close[0]}'? " if close else ""


def _check_value(ck: Checker, key: str, value: Any, where: str) -> Any:
    """The value of one setting, or None after reporting a wrong type or range."""
    if key in _CHOICES:
        allowed, fix = _CHOICES[key]
        if value in allowed:
            return value
        what = f"'{allowed[0]}'" if len(allowed) == 1 else f"one of {', '.join(allowed)}"
        ck.err(where, f"must be {what}, got {value!r}",
               f"{_hint(value, allowed) if len(allowed) > 1 else ''}{fix}")
        return None
    if key in _WHOLE:
        least, most, what, fix = _WHOLE[key]
        if (isinstance(value, bool) or not isinstance(value, int) or value < least
                or (most is not None and value > most)):
            ck.err(where, f"must be {what}, got {value!r}", fix)
            return None
        return value
    if key == "ig_threshold":
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 10:
            ck.err(where, f"must be a number of bits in [0, 10), got {value!r}",
                   "e.g. 'ig_threshold: 0.1'")
            return None
        return float(value)
    if key == "model":
        if not isinstance(value, str) or not value.strip():
            ck.err(where, f"must be a model name, got {value!r}",
                   "e.g. 'model: claude-sonnet-4-5', or remove it for the default model")
            return None
        return value.strip()
    if not isinstance(value, bool):
        ck.err(where, f"must be true or false, got {value!r}", f"write '{key}: true'")
        return None
    return value


def parse_condition(ck: Checker, item: Any, where: str) -> Condition | None:
    """One ``conditions:`` entry (a name or a mapping with id and settings), or None."""
    raw: dict[str, Any] = item if isinstance(item, dict) else {"id": item}
    cid = raw.get("id")
    id_where = f"{where}.id" if isinstance(item, dict) else where
    if cid not in KNOWN_CONDITIONS:
        ck.err(id_where, f"unknown condition '{cid}'",
               f"{_hint(cid, KNOWN_CONDITIONS)}use one of: {', '.join(KNOWN_CONDITIONS)}")
        return None
    own = SETTINGS[cid]
    values: dict[str, Any] = dict(own)
    for key, value in raw.items():
        key = str(key)
        path = f"{where}.{key}"
        if key in COMMON_KEYS:
            continue
        if key not in own:
            others = _owner(key)
            if others:
                ck.err(path, f"'{key}' is a setting of {' and '.join(others)}, not of {cid}",
                       f"remove it here or move it to the {others[0]} condition")
            else:
                allowed = [*own, *COMMON_KEYS[1:]]
                ck.err(path, f"unknown setting '{key}' for condition {cid}",
                       f"{_hint(key, allowed)}settings of {cid}: {', '.join(allowed)}")
            continue
        checked = _check_value(ck, key, value, path)
        if checked is not None:
            values[key] = checked
    for owner, key, need, want in _NEEDS:
        if cid == owner and key in raw and values[need] != want:
            needed = f"{need}: {'true' if want is True else want}"
            ck.warn(f"{where}.{key}", f"has no effect without '{needed}'",
                    f"add '{needed}' or remove {key}")
    label = ck.text(raw, "label", where) or KNOWN_CONDITIONS[cid]
    return Condition(cid, label, ck.text(raw, "instructions", where), **values)


def parse_conditions(ck: Checker, raw: Any) -> list[Condition]:
    """The study's conditions in order, each listed once."""
    if not isinstance(raw, list) or not raw:
        ck.err("conditions", "is required and must be a non-empty list",
               f"e.g. 'conditions: [pleasqlarify]'; known: {', '.join(KNOWN_CONDITIONS)}")
        return []
    out: list[Condition] = []
    for i, item in enumerate(raw):
        where = f"conditions[{i}]"
        if not isinstance(item, str | dict):
            ck.err(where, "must be a condition name or a mapping with 'id'",
                   "write '- id: pleasqlarify'")
            continue
        cond = parse_condition(ck, item, where)
        if cond is None:
            continue
        if cond.id in [c.id for c in out]:
            ck.err(f"{where}.id" if isinstance(item, dict) else where,
                   f"condition '{cond.id}' is listed twice", "list each condition once")
            continue
        out.append(cond)
    return out


__all__ = ["AGENTS", "COMMON_KEYS", "LABELS", "REPAIRS", "KNOWN_CONDITIONS", "SETTINGS", "Condition", "parse_condition",
           "parse_conditions"]
