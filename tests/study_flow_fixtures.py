"""Shared fixtures for the participant-flow tests: a one-task study file in a tmp studies dir,
the environment that points the pages at it, and opening a page as an AppTest."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest
    from streamlit.testing.v1 import AppTest

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


def study_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, password: str = "") -> str:
    """Point the pages at ``<tmp>/studies``, a tmp SQLite store and audio folder (and a known
    researcher password when given); returns the store's URL."""
    url = f"sqlite:///{tmp_path / 'study.sqlite'}"
    monkeypatch.setenv("PLEASQLARIFY_STUDIES_DIR", str(tmp_path / "studies"))
    monkeypatch.setenv("PLEASQLARIFY_DB_URL", url)
    monkeypatch.setenv("PLEASQLARIFY_AUDIO_DIR", str(tmp_path / "audio"))
    if password:
        monkeypatch.setenv("PLEASQLARIFY_RESEARCHER_PASSWORD", password)
    return url


def open_page(name: str, **params: str) -> AppTest:
    """Run ``pages/<name>.py`` once with ``params`` as its query parameters."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=90)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def participant_id(at: AppTest) -> str:
    """The participant id the page put into the link (``?p=``)."""
    p = at.query_params["p"]
    return p[0] if isinstance(p, list) else p


def open_tab(at: AppTest, name: str) -> AppTest:
    """Open the Analysis tab ``name`` as a click on it does (only the open tab is drawn)."""
    at.session_state["an_tabs"] = name
    return at.run()
