"""Shared fixtures for the participant-flow tests: a one-task study file in a tmp studies dir."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILM_BANK = ROOT / "studies" / "film" / "tasks.jsonl"
TASK = "film-pulp-review"
PRACTICE = "film-practice-tarantino"

MINI = f"""\
id: mini
title: Mini study
consent: Please read this and agree to take part.
conditions: [pleasqlarify]
task_bank: {FILM_BANK}
subtasks:
  "1": Describe one interpretation.
  2a: Which clusters do you see?
  2b: Explain the differences between the clusters.
  "3": Navigate to your interpretation and submit it.
tasks:
  - id: {TASK}
onboarding:
  intro: Welcome to the mini study.
  practice_task: {PRACTICE}
questionnaires:
  - use: demographics
  - id: end
    title: Your opinion
    items:
      - {{id: useful, text: "The system was useful.", kind: likert}}
      - {{id: more, text: "Anything else?", kind: text, required: false}}
"""


def write_mini(studies: Path, name: str = "mini", text: str = MINI) -> Path:
    """Write ``<studies>/<name>/study.yaml`` and return its path."""
    folder = studies / name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "study.yaml"
    path.write_text(text.replace("id: mini", f"id: {name}", 1), encoding="utf-8")
    return path
