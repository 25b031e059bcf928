"""Commit subjects stay at most 72 characters (details go in the body), for every commit after
the session that adopted the rule; earlier history is left as it is."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SINCE = "be36ae0e"  # the last commit before the rule was checked here
LIMIT = 72


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                          check=False)


def test_commit_subjects_fit_in_72_characters() -> None:
    if _git("rev-parse", "--verify", "--quiet", f"{SINCE}^{{commit}}").returncode != 0:
        pytest.skip(f"commit {SINCE} is not in this clone (a shallow or exported copy)")
    subjects = _git("log", "--format=%h %s", f"{SINCE}..HEAD").stdout.splitlines()
    long = [s for s in subjects if len(s.split(" ", 1)[1]) > LIMIT]
    assert not long, (f"commit subjects over {LIMIT} characters (put details in the body): "
                      + "; ".join(long))
