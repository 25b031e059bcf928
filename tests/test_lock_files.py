"""The lock files cover pyproject.toml: a dependency added without re-running
``python scripts/lock_requirements.py`` fails here, not in a fresh install; every pin carries
hashes (pip then checks every download, transitive ones included)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("lock_requirements",
                                               ROOT / "scripts" / "lock_requirements.py")
lock = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lock)


@pytest.mark.parametrize(("target", "extras"), sorted(lock.LOCKS.items()))
def test_every_requirement_is_pinned_within_its_range(target: str, extras: tuple[str, ...]):
    pins = lock.pins(ROOT / target)
    assert len(pins) > 50
    for req in lock.requirements(extras):
        name = lock.norm(req.name)
        assert name in pins, f"{req.name} is in pyproject.toml but not in {target}: run " \
                             "python scripts/lock_requirements.py"
        assert req.specifier.contains(pins[name], prereleases=True), (req, pins[name])


@pytest.mark.parametrize("target", sorted(lock.LOCKS))
def test_every_pin_has_hashes(target: str):
    """pip's hash-checking mode needs a hash on every requirement or refuses the whole file."""
    entries = re.split(r"\n(?=[A-Za-z0-9])", (ROOT / target).read_text(encoding="utf-8"))
    pinned = [e for e in entries if "==" in e.split("\n", 1)[0]]
    assert pinned and all("--hash=sha256:" in e for e in pinned), \
        [e.split()[0] for e in pinned if "--hash=sha256:" not in e]


def test_both_locks_pin_the_same_versions():
    runtime, test = lock.pins(ROOT / "requirements.lock"), lock.pins(ROOT / "requirements-test.lock")
    assert {k: (v, test.get(k)) for k, v in runtime.items() if test.get(k) != v} == {}
