"""The ``pleasqlarify`` console command: every tool is a subcommand, each runs the tool's main()."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from study.cli import COMMANDS, main

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "study.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_the_console_script_is_declared():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["scripts"] == {"pleasqlarify": "study.cli:main"}


def test_help_lists_every_command():
    proc = _run("--help")
    assert proc.returncode == 0, proc.stderr
    listed = re.findall(r"^    ([a-z-]+)\s", proc.stdout, re.M)
    assert listed == list(COMMANDS)


def test_every_tool_with_a_main_is_a_command():
    """A product module runnable as ``python -m`` (a main() under ``__main__``) is listed."""
    runnable = set()
    for top in ("core", "study"):
        for path in (ROOT / top).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            defines = any(isinstance(n, ast.FunctionDef) and n.name == "main" for n in tree.body)
            if defines and "__main__" in path.read_text(encoding="utf-8"):
                runnable.add(".".join(path.relative_to(ROOT).with_suffix("").parts))
    # pleasqlarify generate is study.generate: core.generation.generate plus --study-db
    runnable -= {"study.cli", "core.generation.generate"}
    assert runnable == {module for module, _ in COMMANDS.values()}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_command_shows_its_tools_own_help(name):
    if name == "serve":  # execs streamlit: its help is streamlit's
        pytest.skip("serve replaces the process with streamlit run")
    proc = _run(name, "--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: "), proc.stdout[:200]


def test_a_tool_error_is_one_line_and_status_2(tmp_path, capsys):
    assert main(["prepare", str(tmp_path / "nope.jsonl")]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"error: {tmp_path / 'nope.jsonl'}:0: field '(file)': no such file; check the path"]


def test_an_unknown_command_says_what_was_meant(capsys):
    with pytest.raises(SystemExit) as done:
        main(["evalute"])
    assert done.value.code == 2
    assert "unknown command 'evalute'; did you mean 'evaluate'?" in capsys.readouterr().err


def test_ci_runs_exactly_the_readme_commands_test_line():
    """The README's second command is what .ci/run runs, verbatim, and both install the project."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.+?)\n```", readme.split("## Architecture")[0], re.S)
    assert len(blocks) == 2, blocks
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").rstrip().splitlines()[-1]
    assert ci == blocks[1]
    assert all("pip install --no-deps -e ." in b or "pip install -q --no-deps -e ." in b
               for b in blocks)
