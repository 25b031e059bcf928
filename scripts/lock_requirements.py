"""Write requirements.lock and requirements-test.lock: every package the requirement files pull in,
pinned to the version installed here, so CI and a replayed session run on the versions that were
tested (``python scripts/lock_requirements.py`` after changing requirements*.txt and installing)."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]


def _top_level(path: Path) -> list[Requirement]:
    """Requirements of a requirements file, following ``-r`` includes."""
    out: list[Requirement] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("-r"):
            out += _top_level(path.parent / line[2:].strip())
        else:
            out.append(Requirement(line))
    return out


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(reqs: list[Requirement]) -> dict[str, str]:
    """Installed name -> version for ``reqs`` and everything they depend on (on this platform)."""
    pinned: dict[str, str] = {}
    todo = [(r, frozenset(r.extras)) for r in reqs]
    while todo:
        req, extras = todo.pop()
        try:
            dist = metadata.distribution(req.name)
        except metadata.PackageNotFoundError as exc:
            raise SystemExit(f"{req.name} is required but not installed: pip install it first") from exc
        name = _norm(dist.metadata["Name"])
        key = f"{name}[{','.join(sorted(extras))}]"
        if key in pinned:
            continue
        pinned[key] = dist.version
        pinned.setdefault(name, dist.version)
        for dep in dist.requires or []:
            sub = Requirement(dep)
            env = [{"extra": e} for e in extras] or [{"extra": ""}]
            if sub.marker is None or any(sub.marker.evaluate(e) for e in env):
                todo.append((sub, frozenset(sub.extras)))
    return {k: v for k, v in pinned.items() if "[" not in k}


def write(source: str, target: str) -> None:
    pins = closure(_top_level(ROOT / source))
    lines = [f"# Pinned from {source} by scripts/lock_requirements.py; install with pip install -r {target}."]
    lines += [f"{name}=={version}" for name, version in sorted(pins.items())]
    (ROOT / target).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{target}: {len(pins)} packages")


if __name__ == "__main__":
    write("requirements.txt", "requirements.lock")
    write("requirements-test.txt", "requirements-test.lock")
