"""Load and validate ``studies/<name>/study.yaml`` into a :class:`StudySpec`.

Every problem names the file, the line, the path inside the file (``tasks[2].id``) and a
suggested fix; all problems are collected and raised together as :class:`StudySpecError`.
Suspicious but legal settings become ``StudySpec.warnings``. See ``studies/film/study.yaml`` for
a commented example of every key.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from study.conditions import Condition, parse_conditions
from study.designs import ORDER_DESIGNS, design_sequences
from study.questionnaires import BUILTINS, Questionnaire, min_age
from study.spec_check import Checker, SpecProblem, StudySpecError, load_yaml
from study.spec_items import parse_questionnaires

__all__ = ["Checker", "SpecProblem", "StudySpecError"]

STANDARD_SUBTASKS = ("1", "2a", "2b", "3")
CONDITION_MODES = ("within", "between")
TOP_KEYS = ("id", "title", "consent", "conditions", "task_bank", "subtasks", "tasks",
            "onboarding", "questionnaires", "assignment", "description", "completion",
            "stage", "withdrawal")
STAGES = ("main", "pilot")  # stage: who joins through the ordinary link (a pilot link: pilot)
WITHDRAWAL = ("delete", "keep")  # withdrawal: delete the data, or keep it excluded
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class TaskEntry:
    """One task of the study: an id into the bank and its subtask prompts in order."""

    id: str
    subtasks: tuple[tuple[str, str], ...]
    title: str = ""


@dataclass(frozen=True)
class Onboarding:
    """What participants see before the tasks: intro text, optional video, a practice task."""

    intro: str = ""
    video_url: str = ""
    practice_task: str = ""


@dataclass(frozen=True)
class AssignmentDesign:
    """How participants are assigned task orders and conditions."""

    task_order: str = "fixed"
    conditions: str = "between"
    condition_order: str = "fixed"
    seed: int = 0
    abandon_timeout_minutes: float = 30.0
    participants: int | None = None


@dataclass(frozen=True)
class StudySpec:
    """A validated study; ``hash`` is the SHA-256 of the study file's bytes."""

    id: str
    title: str
    consent: str
    conditions: tuple[Condition, ...]
    tasks: tuple[TaskEntry, ...]
    onboarding: Onboarding
    questionnaires: tuple[Questionnaire, ...]
    assignment: AssignmentDesign
    path: Path
    hash: str
    task_bank: Path | None = None
    description: str = ""
    warnings: tuple[SpecProblem, ...] = field(default_factory=tuple)
    stage: str = "main"
    withdrawal: str = "delete"

    @property
    def task_ids(self) -> list[str]:
        return [t.id for t in self.tasks]

    @property
    def condition_ids(self) -> list[str]:
        return [c.id for c in self.conditions]

    def condition(self, cid: str) -> Condition:
        """The condition ``cid`` with its settings (defaults for one the study does not list)."""
        return next((c for c in self.conditions if c.id == cid), Condition(cid))


def _subtasks(ck: Checker, raw: Any, where: str) -> tuple[tuple[str, str], ...] | None:
    """Subtask prompts ``{id: prompt}`` in file order, or None if absent."""
    if raw is None:
        return None
    raw = ck.mapping(raw, where)
    out = []
    for key, prompt in raw.items():
        sid = str(key)
        if not _ID.match(sid):
            ck.err(f"{where}.{sid}", "is not a valid subtask id", "use e.g. 1, 2a, 2b, 3")
            continue
        if sid not in STANDARD_SUBTASKS:
            ck.warn(f"{where}.{sid}", f"subtask '{sid}' is not one of the paper's "
                    f"({', '.join(STANDARD_SUBTASKS)})", "fine if intended; check for a typo")
        if not isinstance(prompt, str) or not prompt.strip():
            ck.err(f"{where}.{sid}", "needs a non-empty prompt text", "write the instruction")
            continue
        out.append((sid, prompt.strip()))
    return tuple(out)


def _tasks(ck: Checker, data: dict[str, Any], defaults: tuple) -> list[TaskEntry]:
    """The task list, each task with its own or the default subtask prompts."""
    raw = data.get("tasks")
    if not isinstance(raw, list) or not raw:
        ck.err("tasks", "is required and must be a non-empty list",
               "list task ids from the task bank, e.g. '- id: film-pulp-review'")
        return []
    out: list[Any] = []
    seen: dict[Any, Any] = {}
    for i, item in enumerate(raw):
        where = f"tasks[{i}]"
        if isinstance(item, str):
            item = {"id": item}
        if not isinstance(item, dict):
            ck.err(where, "must be a task id or a mapping with 'id'", "write '- id: <task id>'")
            continue
        tid = ck.text(item, "id", where, required=True)
        if not tid:
            continue
        if tid in seen:
            ck.warn(f"{where}.id", f"task '{tid}' is listed twice (first at tasks[{seen[tid]}])",
                    "remove the repeat unless participants should solve it twice")
        seen.setdefault(tid, i)
        subs = _subtasks(ck, item.get("subtasks"), f"{where}.subtasks")
        if subs is None:
            subs = defaults
        if not subs:
            ck.err(f"{where}.subtasks", "no subtask prompts for this task",
                   "add top-level 'subtasks:' defaults or per-task 'subtasks:'")
        out.append(TaskEntry(tid, subs, ck.text(item, "title", where)))
    return out


def _assignment(ck: Checker, data: dict[str, Any], n_tasks: int,
                n_conditions: int) -> AssignmentDesign:
    """The assignment design, with warnings for suspicious combinations."""
    raw = ck.mapping(data.get("assignment"), "assignment")
    ck.known(raw, "assignment", ("task_order", "conditions", "condition_order", "seed",
                                 "abandon_timeout_minutes", "participants"))
    task_order = ck.enum(raw, "task_order", "assignment", ORDER_DESIGNS, "fixed")
    mode = ck.enum(raw, "conditions", "assignment", CONDITION_MODES, "between")
    cond_order = ck.enum(raw, "condition_order", "assignment", ORDER_DESIGNS, "fixed")
    seed = raw.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        ck.err("assignment.seed", f"must be an integer, got {seed!r}", "e.g. 'seed: 42'")
        seed = 0
    timeout = raw.get("abandon_timeout_minutes", 30)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        ck.err("assignment.abandon_timeout_minutes", f"must be a positive number, got "
               f"{timeout!r}", "e.g. 'abandon_timeout_minutes: 30'")
        timeout = 30
    elif timeout < 5:
        ck.warn("assignment.abandon_timeout_minutes", f"{timeout} minutes is short: a "
                "participant thinking aloud may lose their slot", "use 20-60 minutes")
    target = raw.get("participants")
    if target is not None and (isinstance(target, bool) or not isinstance(target, int)
                               or target < 1):
        ck.err("assignment.participants", f"must be a positive integer, got {target!r}",
               "e.g. 'participants: 12'")
        target = None
    if mode == "within" and n_conditions == 1:
        ck.warn("assignment.conditions", "within-subjects with a single condition has "
                "nothing to counterbalance", "use 'conditions: between' or add a condition")
    if mode == "between" and "condition_order" in raw:
        ck.warn("assignment.condition_order", "is ignored for between-subjects studies",
                "remove it or use 'conditions: within'")
    n_cells = len(design_sequences(task_order, max(n_tasks, 1)))
    n_cells *= n_conditions if mode == "between" else len(
        design_sequences(cond_order, max(n_conditions, 1)))
    if target and n_cells > 1 and target % n_cells:
        ck.warn("assignment.participants", f"{target} participants is not a multiple of the "
                f"{n_cells} sequences of this design, so it cannot be fully balanced",
                f"recruit a multiple of {n_cells}")
    return AssignmentDesign(task_order, mode, cond_order, seed, float(timeout), target)


def _check_bank(ck: Checker, bank: Path, tasks: list[TaskEntry], practice: str) -> None:
    """Every bad bank line as its own error (file:line: field), then task ids against it."""
    from core.engine.taskbank import load_task_bank

    if bank.is_dir():
        ck.err("task_bank", f"'{bank.name or bank}' is a folder, not a task bank file",
               "name the JSON Lines file, e.g. 'task_bank: tasks.jsonl'")
        return
    if not bank.is_file():  # a warning here; registry.open_problems keeps the study closed
        ck.warn("task_bank", f"task bank '{bank.name}' does not exist yet, so task ids were not "
                "checked and participants could not get any task", "upload the task bank in "
                "Setup, or correct the path (relative to the study file)")
        return
    loaded, problems = load_task_bank(bank, lenient=True)
    for p in problems:
        ck.errors.append(SpecProblem(bank.name, p.field, p.reason, _BANK_FIX.get(
            p.field, "fix this line of the task bank (one JSON object per line)"), p.line))
    ids = [t.id for t in loaded]
    refs = [(f"tasks[{i}].id", t.id) for i, t in enumerate(tasks)]
    if practice:
        refs.append(("onboarding.practice_task", practice))
    for where, tid in refs:
        if tid not in ids:
            close = difflib.get_close_matches(tid, ids, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            bad = " (or fix its bad line above)" if problems else ""
            ck.err(where, f"unknown task id '{tid}' (no valid task with this id in {bank.name})",
                   f"{hint}use an id from {bank.name}{bad}")


_BANK_FIX = {
    "(line)": "write one JSON object per line (check quotes, commas and brackets)",
    "question": "add \"question\": \"<the ambiguous question>\" to this line",
    "id": "give this line a unique \"id\"",
    "database": "add \"database\": {\"dump\": \"<SQL>\"} (or sqlite / url)",
}


def _study_id(ck: Checker, data: dict[str, Any], path: Path) -> str:
    """The study's id: ``id:`` (validated), else the folder name of a ``study.yaml``."""
    raw = ck.text(data, "id", "")
    if not raw:
        if path.name == "study.yaml":
            return path.parent.name
        fallback = path.stem
        ck.warn("id", f"no 'id:'; the study is addressed as '{fallback}'",
                f"add 'id: {fallback}' so links keep working if the file moves")
        return fallback
    if not _ID.match(raw) or len(raw) > 100:
        ck.err("id", f"'{raw}' is not a valid study id", "use letters, digits, '-', '_', '.' "
               "(e.g. 'id: film-two-conditions'); participants' links name it")
    return raw


def _check_consent_age(ck: Checker, consent: str, questionnaires: list[Questionnaire]) -> None:
    """The consent's "at least N years" and the lowest age the questionnaires accept must agree
    (the consent states the study's rule; a younger age given there is then refused)."""
    stated = re.search(r"at least (\d+)\s+years", consent)
    for i, q in enumerate(questionnaires):
        lowest = min_age(q)
        if stated and lowest is not None and lowest != int(stated.group(1)):
            ck.warn(f"questionnaires[{i}]", f"accepts ages from {lowest:g}, but the consent "
                    f"says participants are at least {stated.group(1)} years old",
                    f"add 'min_age: {stated.group(1)}' under '- use: {q.builtin}'" if q.builtin
                    else f"set 'minimum: {stated.group(1)}' on its age item")


def parse_study(text: str, path: str | Path) -> StudySpec:
    """Validate study.yaml ``text`` read from ``path`` (relative paths resolve against it)."""
    path = Path(path)
    file = str(path)
    try:
        data, lines = load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else 0
        col = f", column {mark.column + 1}" if mark else ""
        what = getattr(exc, "problem", None) or str(exc)
        if "alias" in what or "nesting" in what:
            raise StudySpecError([SpecProblem(file, "(yaml)", f"{what} (line {line}{col})",
                                              "write the value out in place", line)]) from None
        raise StudySpecError([SpecProblem(file, "(yaml)", f"invalid YAML: {what} (line "
                              f"{line}{col})", "check indentation and quoting on that line "
                              "and the one before", line)]) from None
    ck = Checker(file, lines)
    if not isinstance(data, dict):
        raise StudySpecError([SpecProblem(file, "(top)", "must be a mapping of keys such as "
                              "title, consent, conditions, tasks", "see studies/film/study.yaml")])
    for key in data:
        if key not in TOP_KEYS:
            close = difflib.get_close_matches(str(key), TOP_KEYS, n=1)
            ck.err(str(key), f"unknown key '{key}'",
                   f"did you mean '{close[0]}'?" if close else
                   f"remove it; known keys: {', '.join(TOP_KEYS)}")
    study_id = _study_id(ck, data, path)
    title = ck.text(data, "title", "", required=True)
    consent = ck.text(data, "consent", "", required=True)
    conditions = parse_conditions(ck, data.get("conditions"))
    defaults = _subtasks(ck, data.get("subtasks"), "subtasks") or ()
    tasks = _tasks(ck, data, defaults)
    ob = ck.mapping(data.get("onboarding"), "onboarding")
    ck.known(ob, "onboarding", ("intro", "video_url", "practice_task"))
    onboarding = Onboarding(ck.text(ob, "intro", "onboarding"),
                            ck.text(ob, "video_url", "onboarding"),
                            ck.text(ob, "practice_task", "onboarding"))
    if onboarding.video_url and not onboarding.video_url.startswith(("http://", "https://")):
        ck.warn("onboarding.video_url", "is not an http(s) URL", "use a full https:// link")
    if onboarding.practice_task in {t.id for t in tasks}:
        ck.warn("onboarding.practice_task", f"'{onboarding.practice_task}' is also a study "
                "task, so participants will have practised on it", "pick a separate task")
    questionnaires = parse_questionnaires(ck, data.get("questionnaires"), BUILTINS)
    _check_consent_age(ck, consent, questionnaires)
    assignment = _assignment(ck, data, len(tasks), len(conditions))
    bank = None
    bank_raw = ck.text(data, "task_bank", "", required=True)
    if bank_raw:
        bank = (path.parent / bank_raw).resolve()
        _check_bank(ck, bank, tasks, onboarding.practice_task)
    stage = ck.enum(data, "stage", "", STAGES, "main")
    withdrawal = ck.enum(data, "withdrawal", "", WITHDRAWAL, "delete")
    if ck.errors:
        raise StudySpecError(ck.errors)
    return StudySpec(
        id=study_id, title=title, consent=consent,
        conditions=tuple(conditions), tasks=tuple(tasks), onboarding=onboarding,
        questionnaires=tuple(questionnaires), assignment=assignment, path=path,
        hash=hashlib.sha256(text.encode()).hexdigest(), task_bank=bank,
        description=ck.text(data, "description", ""), warnings=tuple(ck.warnings),
        stage=stage, withdrawal=withdrawal)


def load_study(path: str | Path) -> StudySpec:
    """Load and validate a study file (``studies/<name>/study.yaml``)."""
    path = Path(path)
    if not path.is_file():
        raise StudySpecError([SpecProblem(str(path), "(file)", "no such study file",
                                          "check the path, e.g. studies/film/study.yaml")])
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StudySpecError([SpecProblem(str(path), "(file)", f"is not UTF-8 ({exc.reason} "
                                          f"at byte {exc.start})", "save it as UTF-8")]) from None
    return parse_study(text, path)
