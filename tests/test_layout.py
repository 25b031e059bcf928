"""The repository's layout rules: core/ stands apart from the UI and the study runner."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.__main__ import COMMANDS

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "generation", "evaluation", "planpool")


def _imports(path: Path) -> set[str]:
    """Top-level module names imported anywhere in ``path`` (also inside functions)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", sorted((ROOT / "core").rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_core_never_imports_streamlit_study_or_ui(path):
    bad = _imports(path) & {"streamlit", "study", "ui", "pages"}
    assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_a_package_re_exports_nothing_so_no_name_shadows_a_submodule():
    """``core.evaluation.simulate`` is the module, before and after any other access."""
    code = """if True:
        import importlib, pkgutil, sys, types
        for package in sys.argv[1:]:
            P = importlib.import_module(f"core.{package}")
            assert P.__doc__ and len(P.__doc__.strip().splitlines()) >= 2, package
            assert not hasattr(P, "__getattr__") and not hasattr(P, "__all__"), package
            subs = [m.name for m in pkgutil.iter_modules(P.__path__)]
            for name in subs:
                importlib.import_module(f"core.{package}.{name}")
            assert all(isinstance(getattr(P, n), types.ModuleType) for n in subs), package
    """
    subprocess.run([sys.executable, "-c", code, *PACKAGES], cwd=ROOT, check=True, timeout=300)


def test_nothing_outside_the_checkout_is_read():
    """No source or test reads the ../shared reading folder: the checkout stands alone."""
    offenders = []
    for path in [*ROOT.glob("*.py"), *ROOT.glob("[a-z]*/**/*.py")]:
        if path == Path(__file__).resolve():
            continue
        text = path.read_text(encoding="utf-8")
        shared = "shared"  # the sibling reading folder, spelled so this test does not match itself
        if f'"{shared}" / "data"' in text or f"../{shared}" in text:
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def test_study_spec_modules_import_without_a_cycle():
    """study.conditions and study.spec_items import on their own (no circle through study.spec)."""
    code = "import study.spec_items, study.conditions; import study.spec"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def _help(module: str) -> str:
    proc = subprocess.run([sys.executable, "-m", module, "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_listed_command_line_tool_answers_help_under_its_own_name(command):
    assert f"usage: python -m core.{command}" in _help(f"core.{command}")


def test_python_m_core_lists_every_tool():
    out = subprocess.run([sys.executable, "-m", "core"], cwd=ROOT, capture_output=True,
                         text=True, timeout=60, check=True).stdout
    assert all(f"  {name} " in out for name in COMMANDS)


@pytest.mark.parametrize("args", [["core.prepare"], ["core.evaluate"], ["core.planpool_eval"],
                                  ["core.generate", "--out", "x.jsonl", "--offline-variants"],
                                  ["benchmarks.limits", "--bank"]])
def test_a_missing_bank_is_one_error_line_not_a_traceback(args, tmp_path):
    proc = subprocess.run([sys.executable, "-m", *args, str(tmp_path / "nope.jsonl")], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'nope.jsonl'}:0: field '(file)': no such file; check the path"]


def test_bench_refuses_a_pool_too_small_to_ask_about(capsys):
    from benchmarks.engine import main as bench_main

    with pytest.raises(SystemExit) as done:
        bench_main(["--sizes", "50", "1"])
    assert done.value.code == 2
    assert "--sizes: a pool needs at least 2 candidates, got 1" in capsys.readouterr().err


def test_bench_times_each_vocabulary_asked_and_hybrid_after_a_rejection(capsys):
    """--questions adds mining and a decision step per vocabulary; hybrid's second phase
    (after the predicted output is rejected) asks about the answer (checked inside)."""
    from benchmarks.engine import main as bench_main

    assert bench_main(["--sizes", "12", "--repeat", "1", "--no-cold", "--strategy",
                       "expected-depth", "--questions", "hybrid", "clauses", "--cpu"]) == 0
    rows = {line.split()[0]: float(line.split()[1]) for line in
            capsys.readouterr().out.splitlines() if line.startswith(("mining_", "step_"))}
    assert set(rows) >= {"mining_hybrid_ms", "step_hybrid_ms", "mining_hybrid_after_ms",
                         "step_hybrid_after_ms", "mining_clauses_ms", "step_clauses_ms"}
    assert "step_clauses_after_ms" not in rows and all(v > 0 for v in rows.values())


@pytest.mark.parametrize("module", ["study.generate", "study.access", "study.export",
                                    "study.simulate_demo", "benchmarks.store_load"])
def test_study_tools_answer_help_under_their_own_name(module):
    assert f"usage: python -m {module}" in _help(module)


def test_core_generate_study_db_without_the_store_says_what_to_run(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "core.generate", str(ROOT / "studies/film/tasks.jsonl"),
                           "--out", str(tmp_path / "o.jsonl"), "--study-db", "sqlite://"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "python -m study.generate" in proc.stderr
