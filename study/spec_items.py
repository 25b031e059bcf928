"""Parse the ``questionnaires:`` section of study.yaml (built-in references and inline items)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from study.questionnaires import ITEM_KINDS, Item, Questionnaire, with_min_age

if TYPE_CHECKING:
    from study.spec_check import Checker

WHEN = ("start", "end")


def _item(ck: Checker, raw: Any, where: str) -> Item | None:
    """One inline item, or None after reporting what is wrong with it."""
    if not isinstance(raw, dict):
        ck.err(where, "must be a mapping with id, text and kind", "write '- {id: q1, text: ...}'")
        return None
    iid = ck.text(raw, "id", where, required=True)
    text = ck.text(raw, "text", where, required=True)
    kind = ck.enum(raw, "kind", where, ITEM_KINDS, "likert")
    points = raw.get("points", 7)
    if isinstance(points, bool) or not isinstance(points, int) or not 2 <= points <= 11:
        ck.err(f"{where}.points", f"must be an integer 2..11, got {points!r}", "use 5 or 7")
        points = 7
    options = raw.get("options", [])
    if kind == "choice" and (not isinstance(options, list) or not options):
        ck.err(f"{where}.options", "a choice item needs a non-empty list of options",
               "add 'options: [a, b, c]'")
        options = []
    for flag in ("reverse", "required"):
        if flag in raw and not isinstance(raw[flag], bool):
            ck.err(f"{where}.{flag}", f"must be true or false, got {raw[flag]!r}",
                   f"write '{flag}: true'")
    if raw.get("reverse") and kind != "likert":
        ck.warn(f"{where}.reverse", "reverse coding only applies to likert items",
                "remove it or make the item likert")
    anchors = raw.get("anchors", ["Strongly disagree", "Strongly agree"])
    if not (isinstance(anchors, list) and len(anchors) == 2):
        ck.err(f"{where}.anchors", "must be a list of two labels (low, high)",
               "e.g. 'anchors: [Strongly disagree, Strongly agree]'")
        anchors = ["Strongly disagree", "Strongly agree"]
    if not iid or not text:
        return None
    return Item(id=iid, text=text, kind=kind, points=points,
                reverse=raw.get("reverse") is True, required=raw.get("required", True) is True,
                options=tuple(str(o) for o in options or ()), minimum=raw.get("minimum"),
                maximum=raw.get("maximum"), group=ck.text(raw, "group", where),
                anchors=(str(anchors[0]), str(anchors[1])))


def _min_age(ck: Checker, value: Any, where: str, base: Questionnaire) -> Questionnaire:
    """``min_age:`` of a built-in that asks an age: its lowest accepted age (what the consent
    states); reported when it is not a whole number of years or the questionnaire asks none."""
    if not any(it.id == "age" for it in base.items):
        ck.warn(where, f"'{base.id}' asks no age, so min_age does nothing",
                "put min_age under '- use: demographics'")
        return base
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 99:
        ck.err(where, f"must be a whole number of years, got {value!r}",
               "write the age your consent states, e.g. 'min_age: 18'")
        return base
    return with_min_age(base, value)


def _one(ck: Checker, raw: Any, where: str,
         builtins: dict[str, Questionnaire]) -> Questionnaire | None:
    """One questionnaire entry: ``{use: <builtin>}`` or ``{id, title, items}``."""
    if isinstance(raw, str):
        raw = {"use": raw}
    if not isinstance(raw, dict):
        ck.err(where, "must be a built-in name or a mapping", "write '- use: sus7'")
        return None
    if "use" in raw:
        name = raw["use"]
        if name not in builtins:
            ck.enum(raw, "use", where, tuple(builtins), "")
            return None
        base = builtins[name]
        when = ck.enum(raw, "when", where, WHEN, base.when)
        if "items" in raw:
            ck.warn(f"{where}.items", "items are ignored when 'use' names a built-in",
                    "define an inline questionnaire with its own id instead")
        if "min_age" in raw:
            base = _min_age(ck, raw["min_age"], f"{where}.min_age", base)
        return dataclasses.replace(base, id=ck.text(raw, "id", where) or base.id,
                                   title=ck.text(raw, "title", where) or base.title, when=when,
                                   instructions=ck.text(raw, "instructions", where))
    qid = ck.text(raw, "id", where, required=True)
    items_raw = raw.get("items")
    if not isinstance(items_raw, list) or not items_raw:
        ck.err(f"{where}.items", "an inline questionnaire needs a non-empty list of items",
               f"add items, or reference a built-in with 'use: <{'|'.join(builtins)}>'")
        return None
    items = [it for i, r in enumerate(items_raw) if (it := _item(ck, r, f"{where}.items[{i}]"))]
    seen: set[str] = set()
    for i, it in enumerate(items):
        if it.id in seen:
            ck.err(f"{where}.items[{i}].id", f"item id '{it.id}' is used twice",
                   "item ids must be unique within a questionnaire")
        seen.add(it.id)
    if not qid:
        return None
    return Questionnaire(qid, ck.text(raw, "title", where) or qid, tuple(items),
                         when=ck.enum(raw, "when", where, WHEN, "end"),
                         instructions=ck.text(raw, "instructions", where))


def parse_questionnaires(ck: Checker, raw: Any,
                         builtins: dict[str, Questionnaire]) -> list[Questionnaire]:
    """Every questionnaire of the study, in order, with unique ids."""
    if raw is None:
        ck.warn("questionnaires", "the study has no questionnaires",
                "add e.g. '- use: sus7' if you want usability ratings")
        return []
    if not isinstance(raw, list):
        ck.err("questionnaires", "must be a list", "write '- use: sus7' lines under it")
        return []
    out: list[Questionnaire] = []
    for i, entry in enumerate(raw):
        q = _one(ck, entry, f"questionnaires[{i}]", builtins)
        if q is None:
            continue
        if q.id in {o.id for o in out}:
            ck.err(f"questionnaires[{i}]", f"questionnaire id '{q.id}' is used twice",
                   "give the second one its own 'id:'")
            continue
        out.append(q)
    return out
