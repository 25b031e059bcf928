"""Workflow analysis (paper §10.4, Figure 11): raw events -> semantic actions, transition
matrices, and a transparent rule-based W1/W2/W3/mixed classifier a researcher can override.

Semantic actions (:func:`action_of`): ``explore`` (hover a point, a click that selected
nothing, browse decision variables without answering), ``select`` (a lasso, box, click or
cluster selection that kept queries: output-based navigation), ``dv`` (Yes/No on a decision
variable), ``clause`` (Yes/No on a Predicted Query clause), ``output`` (an output table opened,
or Yes/No to the predicted output, "None of these" included), ``repair`` (repair added
candidates after a rejection), ``back`` (undo), ``submit``. Other events carry no action.

Classifier, per participant x task, over the navigation actions of subtask ``nav_subtask``
(all subtasks if None; the practice, which has no subtasks, over all its actions, its row
marked ``practice``: not a measured task, kept for how the interface was tried): scores
dv = #dv, clause = #clause, output = #select + output_weight * #output. With
total = dv + clause + output:

* total < min_actions -> ``none``;
* the largest score's share >= dominance -> ``W1`` (dv), ``W2`` (clause) or ``W3`` (output);
* otherwise ``mixed``.

A researcher's label is stored as the code ``workflow:<label>`` and wins over the rule.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from study.analysis.data import StudyData, condition_of, latest_codes
from study.store import Store

ACTION_OF: dict[str, str] = {
    "space.hover": "explore", "space.click": "explore", "dv.browse": "explore",
    "space.lasso": "select", "space.box": "select", "space.cluster": "select",
    "dv.accept": "dv", "dv.reject": "dv",
    "clause.accept": "clause", "clause.reject": "clause",
    "output.view": "output", "output.accept": "output", "output.reject": "output",
    "repair": "repair", "undo": "back", "submit": "submit",
}
ACTIONS = ("explore", "select", "dv", "clause", "output", "repair", "back", "submit")


def action_of(event: Any) -> str | None:
    """The semantic action of one event (None: no action); a click that kept queries is a
    selection (the same gesture as a lasso of one glyph), a click without one explores."""
    if event.type == "space.click" and (event.payload or {}).get("candidates"):
        return "select"
    return ACTION_OF.get(event.type)
LABELS = ("W1", "W2", "W3", "mixed", "none")
LABEL_TEXT = {"W1": "W1 decision-based", "W2": "W2 clause-level", "W3": "W3 output-based",
              "mixed": "mixed", "none": "no navigation"}
NAMESPACE = "workflow"


def to_actions(events: Iterable[Any], collapse: bool = False) -> list[str]:
    """The semantic action sequence of events (consecutive repeats merged if ``collapse``)."""
    out: list[str] = []
    for e in events:
        a = action_of(e)
        if a is None or (collapse and out and out[-1] == a):
            continue
        out.append(a)
    return out


def transition_matrix(sequences: Iterable[list[str]]) -> pd.DataFrame:
    """Counts of action a followed by action b (rows: from, columns: to) over the sequences."""
    m = pd.DataFrame(np.zeros((len(ACTIONS), len(ACTIONS)), dtype=int), index=list(ACTIONS),
                     columns=list(ACTIONS))
    for seq in sequences:
        for a, b in zip(seq, seq[1:], strict=False):
            m.loc[a, b] += 1
    return m


def session_sequences(data: StudyData, session_id: str) -> dict[str, list[str]]:
    """Per task, the action sequence of one browser session (transitions never cross tasks)."""
    out: dict[str, list[str]] = {}
    for e in data.events:
        action = action_of(e) if e.session_id == session_id else None
        if action is not None:
            out.setdefault(e.task, []).append(action)
    return out


def session_matrices(data: StudyData) -> dict[str, pd.DataFrame]:
    """A transition matrix per browser session with at least one action, busiest first."""
    counts = Counter(e.session_id for e in data.events if e.type in ACTION_OF)
    return {s: transition_matrix(session_sequences(data, s).values())
            for s, _ in counts.most_common()}


def session_labels(data: StudyData) -> dict[str, str]:
    """A readable label per session with actions: 'P3 · pleasqlarify · 14:05 · 42 actions'."""
    first: dict[str, Any] = {}
    counts: Counter[str] = Counter()
    for e in data.events:
        if e.type in ACTION_OF:
            first.setdefault(e.session_id, e)
            counts[e.session_id] += 1
    out = {}
    for sid, n in counts.most_common():
        e = first[sid]
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(e.server_ts / 1000))
        out[sid] = (f"{data.label(e.participant)} · {e.condition or '—'} · {when} · "
                    f"{n} action{'s' if n != 1 else ''}")
    return out


@dataclass(frozen=True)
class WorkflowRules:
    """The classifier's thresholds (see the module docstring)."""

    dominance: float = 0.6
    output_weight: float = 0.5
    min_actions: int = 1
    nav_subtask: str | None = "3"


def classify(actions: list[str], rules: WorkflowRules = WorkflowRules()) -> tuple[str, str]:
    """(label, explanation) for one task's action sequence under ``rules``."""
    c = Counter(actions)
    scores = {"W1": float(c["dv"]), "W2": float(c["clause"]),
              "W3": c["select"] + rules.output_weight * c["output"]}
    total = sum(scores.values())
    detail = ", ".join(f"{k}={v:g}" for k, v in scores.items())
    if total < rules.min_actions or total == 0:
        return "none", f"no navigation actions ({detail})"
    best = max(scores, key=lambda k: (scores[k], -int(k[1])))
    share = scores[best] / total
    if share >= rules.dominance:
        return best, f"{best} share {share:.2f} >= {rules.dominance:g} ({detail})"
    return "mixed", f"largest share {share:.2f} < {rules.dominance:g} ({detail})"


def is_practice(data: StudyData, pid: str, task: str) -> bool:
    """Whether ``task`` is not one of the participant's assigned (measured) tasks: the practice
    (logged without subtasks)."""
    return task not in data.participant(pid).get("task_order", (task,))


def workflow_table(data: StudyData, rules: WorkflowRules = WorkflowRules()) -> pd.DataFrame:
    """One row per participant x task: counts, rule label, explanation, override, final;
    the practice (``practice`` True) is counted over all its events, having no subtasks."""
    overrides = latest_codes(data.codes, NAMESPACE)
    rows = []
    for pid in data.ids:
        tasks = list(dict.fromkeys(e.task for e in data.events_of(pid) if e.task))
        for task in tasks:
            practice = is_practice(data, pid, task)
            evs = [e for e in data.events_of(pid, task)
                   if practice or rules.nav_subtask is None or e.subtask == rules.nav_subtask]
            actions = to_actions(evs)
            label, why = classify(actions, rules)
            if practice:
                why = f"practice, not a measured task: {why}"
            code = overrides.get((pid, task, ""))
            c = Counter(actions)
            rows.append({"participant": pid, "label": data.label(pid),
                         "condition": condition_of(data, pid, task), "task": task,
                         "practice": practice,
                         **{f"n_{a}": c[a] for a in ACTIONS}, "rule_label": label,
                         "explanation": why, "override": code["value"] if code else None,
                         "coder": code["coder"] if code else None,
                         "final": code["value"] if code else label})
    cols = ["participant", "label", "condition", "task", "practice",
            *[f"n_{a}" for a in ACTIONS],
            "rule_label", "explanation", "override", "coder", "final"]
    return pd.DataFrame(rows, columns=cols)


def store_label(store: Store, participant: str, task: str, label: str, coder: str,
                now: int | None = None) -> None:
    """Store a researcher's workflow label for one participant x task (overrides the rule)."""
    if label not in LABELS:
        raise ValueError(f"unknown workflow label {label!r}; use one of {', '.join(LABELS)}")
    if not coder.strip():
        raise ValueError("a workflow label needs the coder's name or initials")
    store.add_code(participant, f"{NAMESPACE}:{label}", coder.strip(),
                   int(time.time() * 1000) if now is None else now, task=task)


def path_links(sequences: Iterable[list[str]], max_steps: int = 6) -> pd.DataFrame:
    """Sankey links between positioned actions ('1:explore' -> '2:dv'), counted over paths.

    Each sequence is collapsed (repeats merged), starts at 'start' and is cut after
    ``max_steps`` actions; a path that ends early links to 'end'.
    """
    counts: Counter[tuple[str, str]] = Counter()
    for seq in sequences:
        merged = [a for i, a in enumerate(seq) if i == 0 or seq[i - 1] != a][:max_steps]
        nodes = ["start"] + [f"{i}:{a}" for i, a in enumerate(merged, 1)] + ["end"]
        for a, b in zip(nodes, nodes[1:], strict=False):
            counts[(a, b)] += 1
    rows = [{"source": a, "target": b, "count": n} for (a, b), n in sorted(counts.items())]
    return pd.DataFrame(rows, columns=["source", "target", "count"])


def task_sequences(data: StudyData, subtask: str | None = None
                   ) -> dict[tuple[str, str], list[str]]:
    """The action sequence per (participant, task), optionally of one subtask only."""
    out: dict[tuple[str, str], list[str]] = {}
    for e in data.events:
        a = action_of(e)
        if a is not None and e.task and (subtask is None or e.subtask == subtask):
            out.setdefault((e.participant, e.task), []).append(a)
    return out
