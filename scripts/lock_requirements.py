"""Write requirements.lock and requirements-test.lock from pyproject.toml with uv's resolver.

Every package the project's dependencies (and, for the test lock, its ``test`` extra) pull in is
pinned with the sha256 hashes of its files, for Python 3.11 on every platform, so
``pip install -r requirements-test.lock`` installs exactly the tested versions and checks each
download (pip's hash-checking mode). Versions already in a lock are kept unless ``--upgrade``.
Run ``python scripts/lock_requirements.py [--upgrade]`` after changing the dependencies
(``pip install uv`` first; uv is needed only here).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
PYTHON = "3.11"
LOCKS = {"requirements.lock": (), "requirements-test.lock": ("test",)}  # file -> extras
COMMAND = "python scripts/lock_requirements.py"


def norm(name: str) -> str:
    """A package name in its canonical form (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirements(extras: tuple[str, ...] = ()) -> list[Requirement]:
    """The project's dependencies from pyproject.toml, plus those of ``extras``."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    lines = list(project["dependencies"])
    for extra in extras:
        lines += project["optional-dependencies"][extra]
    return [Requirement(line) for line in lines]


def pins(lock: Path) -> dict[str, str]:
    """Package -> pinned version of a lock file."""
    found = re.findall(r"^([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?==([^\s;\\]+)",
                       lock.read_text(encoding="utf-8"), re.M)
    return {norm(name): version for name, version in found}


def compile_lock(target: str, extras: tuple[str, ...], upgrade: bool) -> None:
    """Resolve pyproject.toml (with ``extras``) into ``target`` with hashes, via uv."""
    uv = shutil.which("uv")
    if uv is None:
        raise SystemExit("uv is needed to resolve the locks: pip install uv, then run again")
    cmd = [uv, "pip", "compile", "pyproject.toml", "--generate-hashes", "--universal",
           "--python-version", PYTHON, "--output-file", target, "--no-strip-extras",
           "--custom-compile-command", COMMAND, "--quiet", "--index-url", "https://pypi.org/simple"]
    cmd += [arg for extra in extras for arg in ("--extra", extra)]
    if upgrade:
        cmd.append("--upgrade")
    subprocess.run(cmd, cwd=ROOT, check=True)
    print(f"{target}: {len(pins(ROOT / target))} packages", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Write both lock files."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--upgrade", action="store_true", help="newest versions allowed, not the locked")
    args = ap.parse_args(argv)
    for target, extras in LOCKS.items():
        compile_lock(target, extras, args.upgrade)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
