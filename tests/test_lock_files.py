"""The lock files cover the requirement files: a dependency added to requirements*.txt without
re-running ``python scripts/lock_requirements.py`` fails here, not in a fresh install."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("lock_requirements",
                                               ROOT / "scripts" / "lock_requirements.py")
lock = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lock)


@pytest.mark.parametrize(("source", "target"), [("requirements.txt", "requirements.lock"),
                                                ("requirements-test.txt",
                                                 "requirements-test.lock")])
def test_every_requirement_is_pinned_within_its_range(source: str, target: str) -> None:
    pins = dict(line.split("==") for line in (ROOT / target).read_text().splitlines()
                if "==" in line and not line.startswith("#"))
    for req in lock._top_level(ROOT / source):
        name = lock._norm(req.name)
        assert name in pins, f"{req.name} is in {source} but not in {target}: run " \
                             "python scripts/lock_requirements.py"
        assert req.specifier.contains(pins[name], prereleases=True), (req, pins[name])
