"""The participant flow as a pure state machine over steps (no store, no Streamlit).

Steps, in order: ``consent`` → every questionnaire shown at the start (``questionnaire:<id>``,
e.g. demographics) → ``onboarding`` (intro, video) → ``practice`` (when the study names a
practice task) → ``task:<task>/<subtask>`` for every task of the participant's assigned order
and every subtask of that task → every questionnaire shown at the end → ``done`` (completion
code). ``declined`` is the terminal step of a participant who did not consent.

:func:`transition_events` says which trace events a move from one step to the next produces
(timer.stop of the subtask and task left, timer.start of the task and subtask entered, the step
event), each with an idempotent event id derived from the move, so a double click or a retry
after a crash never logs a transition twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from study.assignment import Assignment
from study.questionnaires import Questionnaire, validate_answers
from study.spec import StudySpec

CONSENT, ONBOARDING, PRACTICE, DONE, DECLINED = ("consent", "onboarding", "practice", "done",
                                                 "declined")
TEXT_SUBTASKS = ("1", "2a", "2b")
SUBMIT_SUBTASKS = ("3",)
MIN_TEXT = 3
_WORKSPACE_HINT = ("Submit a query in the workspace before continuing (the Submit button under "
                   "the Predicted Output).")
SUBMIT_HINTS = {  # what a submit subtask asks for, per condition
    "pleasqlarify": _WORKSPACE_HINT,
    "atomic-only": _WORKSPACE_HINT,
    "planpool-chat": ("Answer the assistant's questions, then confirm its query (or tell it "
                      "that it is not what you meant) before continuing."),
    "single-shot": "Accept the query, or say that it is not what you meant, before continuing.",
}


@dataclass(frozen=True)
class Step:
    """One step of the flow; ``id`` is what the progress table stores."""

    id: str
    kind: str  # consent | questionnaire | onboarding | practice | task | done | declined
    task: str = ""
    subtask: str = ""
    condition: str = ""
    questionnaire: str = ""
    prompt: str = ""
    title: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The step as a JSON object."""
        return asdict(self)


def task_step_id(task: str, subtask: str) -> str:
    """``task:<task>/<subtask>``: the step id and the answer item of a subtask."""
    return f"task:{task}/{subtask}"


def plan(spec: StudySpec, assignment: Assignment) -> list[Step]:
    """Every step of this participant's session, in order."""
    steps = [Step(CONSENT, "consent")]
    steps += [Step(f"questionnaire:{q.id}", "questionnaire", questionnaire=q.id, title=q.title)
              for q in spec.questionnaires if q.when == "start"]
    steps.append(Step(ONBOARDING, "onboarding", title="Introduction"))
    if spec.onboarding.practice_task:
        steps.append(Step(PRACTICE, "practice", task=spec.onboarding.practice_task,
                          condition=assignment.condition, title="Practice task"))
    entries = {t.id: t for t in spec.tasks}
    for condition, tasks in assignment.blocks():
        for task in tasks:
            entry = entries[task]
            for sub, prompt in entry.subtasks:
                steps.append(Step(task_step_id(task, sub), "task", task=task, subtask=sub,
                                  condition=condition, prompt=prompt, title=entry.title))
    steps += [Step(f"questionnaire:{q.id}", "questionnaire", questionnaire=q.id, title=q.title)
              for q in spec.questionnaires if q.when == "end"]
    steps.append(Step(DONE, "done", title="Thank you"))
    return steps


def index_of(steps: list[Step], step_id: str) -> int:
    """Position of ``step_id`` in ``steps`` (ValueError naming the step if absent)."""
    for i, s in enumerate(steps):
        if s.id == step_id:
            return i
    raise ValueError(f"step '{step_id}' is not part of this participant's flow")


def next_step(steps: list[Step], step_id: str) -> Step | None:
    """The step after ``step_id`` (None after ``done``)."""
    i = index_of(steps, step_id)
    return steps[i + 1] if i + 1 < len(steps) else None


def task_progress(steps: list[Step], step_id: str) -> tuple[int, int]:
    """(1-based number of the current task, number of tasks); (0, n) outside the tasks."""
    tasks = list(dict.fromkeys(s.task for s in steps if s.kind == "task"))
    current = next((s.task for s in steps if s.id == step_id and s.kind == "task"), None)
    return (tasks.index(current) + 1 if current else 0), len(tasks)


SUBTASK_NAMES = {"1": "Interpret", "2a": "Explore outputs", "2b": "Explore queries",
                 "3": "Navigate"}  # the paper's Table 1 names of the four parts of a task


def step_label(spec: StudySpec, step_id: str, steps: list[Step] | None = None) -> str:
    """A step as a person names it: 'Task 2 of 5, part 4 of 4 — Navigate (title)' (without
    ``steps``: 'title: part 4 of 4 — Navigate'), 'Consent',
    'Questionnaire: About you'. With the participant's ``steps`` the task's number in their
    order is given; unknown ids are returned as they are."""
    if step_id.startswith("task:"):
        task, _, sub = step_id[len("task:"):].rpartition("/")
        entry = next((t for t in spec.tasks if t.id == task), None)
        if entry is None:
            return step_id
        subs = [s for s, _ in entry.subtasks]
        part = (f"part {subs.index(sub) + 1} of {len(subs)} — {SUBTASK_NAMES.get(sub, sub)}"
                if sub in subs else f"part {sub}")
        k, n = task_progress(steps, step_id) if steps else (0, 0)
        if not k:  # without the participant's order: the task by its title
            return f"{entry.title or task}: {part}"
        return f"Task {k} of {n}, {part} ({entry.title or task})"
    if step_id.startswith("questionnaire:"):
        qid = step_id.split(":", 1)[1]
        title = next((q.title for q in spec.questionnaires if q.id == qid), qid)
        return f"Questionnaire: {title}"
    return {CONSENT: "Consent", ONBOARDING: "Introduction", PRACTICE: "Practice task",
            DONE: "Done (completion code shown)", DECLINED: "Declined"}.get(step_id, step_id)


def transition_events(participant: str, prev: Step | None, new: Step,
                      by: str = "participant") -> list[dict[str, Any]]:
    """The events of moving from ``prev`` to ``new``: timers stopped, timers started, step."""
    move = f"{participant}:{prev.id if prev else ''}>{new.id}"
    out: list[dict[str, Any]] = []

    def ev(type: str, step: Step, subtask: str, payload: dict[str, Any]) -> None:
        out.append({"type": type, "task": step.task, "subtask": subtask,
                    "condition": step.condition, "payload": payload,
                    "event_id": f"{move}:{type}:{step.task}/{subtask}"[:200]})

    if prev is not None and prev.kind == "task":
        ev("timer.stop", prev, prev.subtask, {"by": by})
        if new.task != prev.task or new.kind != "task":
            ev("timer.stop", prev, "", {"by": by})
    ev("step", new, new.subtask, {"step": new.id, "from": prev.id if prev else None, "by": by})
    if new.kind == "task":
        if prev is None or prev.kind != "task" or prev.task != new.task:
            ev("timer.start", new, "", {"by": by})
        ev("timer.start", new, new.subtask, {"by": by})
    return out


def text_problem(value: Any) -> str | None:
    """The message for a free-text subtask answer, or None if it is acceptable."""
    if not isinstance(value, str) or not value.strip():
        return "Please write your answer before continuing."
    if len(value.strip()) < MIN_TEXT:
        return "Please write a little more (a few words are enough)."
    return None


def step_problems(step: Step, answers: Mapping[str, Any],
                  questionnaire: Questionnaire | None = None,
                  submitted: bool = False) -> dict[str, str]:
    """Per-item messages that block leaving ``step`` ({} when the participant may go on)."""
    if step.kind == "questionnaire" and questionnaire is not None:
        prefix = f"{questionnaire.id}/"
        mine = {k[len(prefix):]: v for k, v in answers.items() if k.startswith(prefix)}
        return validate_answers(questionnaire, mine)
    if step.kind == "task":
        item = task_step_id(step.task, step.subtask)
        if step.subtask in SUBMIT_SUBTASKS:
            return {} if submitted else {
                item: SUBMIT_HINTS.get(step.condition, _WORKSPACE_HINT)}
        msg = text_problem(answers.get(item))
        return {item: msg} if msg else {}
    return {}
