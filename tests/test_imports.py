"""The first-party import graph: no circles, and the product packages stand apart.

The graph is read from the source (``ast``), so imports deferred into functions count as much as
those at the top of a module; only imports under ``if TYPE_CHECKING:`` are left out, because
they never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIRST_PARTY = ("core", "study", "ui", "pages", "benchmarks", "tests", "scripts", "docs", "app")
PRODUCT = ("core", "study", "ui", "pages", "app")
PARTICIPANT_UI = ("pages.participant", "ui.chat", "ui.participant_views", "ui.workspace")


def _module_name(path: Path) -> str:
    """``core/engine/pool.py`` → ``core.engine.pool``; a package's ``__init__`` is the package."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources() -> dict[str, Path]:
    """Every first-party module by name (fixtures and caches left out)."""
    paths = [ROOT / "app.py"]
    for top in FIRST_PARTY[:-1]:
        paths += [p for p in (ROOT / top).rglob("*.py")
                  if "fixtures" not in p.parts and "__pycache__" not in p.parts]
    return {_module_name(p): p for p in paths}


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node except those under ``if TYPE_CHECKING:`` (imports only a type checker runs)."""
    out: list[ast.AST] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        out.append(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                stack.extend(child.orelse)
                continue
            stack.append(child)
    return out


def _edges(name: str, path: Path, modules: set[str]) -> set[str]:
    """The first-party modules ``name`` imports anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                       for a in node.names]
        for target in targets:
            while target and target not in modules:  # ``import core.engine.pool as P`` and kin
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module name → the first-party modules it imports."""
    sources = _sources()
    modules = set(sources)
    return {name: _edges(name, path, modules) for name, path in sources.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def closure(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or not (deferred imports included)."""
    seen, todo = set(), [start]
    while todo:
        for w in graph.get(todo.pop(), ()):
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return seen


GRAPH = import_graph()


def test_the_graph_is_read():
    """The reader finds the edges it must (a deferred import included), so an empty graph fails."""
    assert len(GRAPH) > 150
    assert len([m for m in GRAPH if m.split(".")[0] in PRODUCT]) > 100
    assert {"app", "pages.participant", "ui.chat", "benchmarks.limits", "tests.harness"} <= set(GRAPH)
    assert "core.engine.session" in GRAPH["core.engine.pool"] | closure(GRAPH, "core.engine.pool") \
        or "core.engine.pool" in GRAPH["core.engine.session"]
    assert "core.evaluation.report" in GRAPH["core.evaluation.evaluate"]  # inside main()
    assert "tests.harness" in GRAPH["benchmarks.rerun"]


def test_circles_are_found_when_there_are_some():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]


def test_no_import_circles_among_first_party_modules():
    assert circles(GRAPH) == []


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if m.split(".")[0] in PRODUCT))
def test_product_code_imports_neither_benchmarks_nor_tests(module):
    bad = sorted(m for m in GRAPH[module] if m.split(".")[0] in ("benchmarks", "tests"))
    assert bad == [], f"{module} imports {bad}"


@pytest.mark.parametrize("module", PARTICIPANT_UI)
def test_the_participant_ui_never_imports_evaluation_code(module):
    assert module in GRAPH and "core.engine.session" in closure(GRAPH, module)
    bad = sorted(m for m in closure(GRAPH, module)
                 if m.startswith(("core.evaluation", "core.planpool.simulated",
                                  "core.planpool.evaluate", "study.simulate_demo")))
    assert bad == [], f"{module} pulls in {bad}"


FRESH_ANALYSIS = """
import json, sys, threading
from streamlit.testing.v1 import AppTest
from ui import warmup
warmup._started.set()  # the warm-up thread imports the workspace (and scikit-learn) on purpose
at = AppTest.from_file("app.py", default_timeout=300)
at.switch_page("pages/analysis.py").run()
heavy = ("sklearn", "umap", "numba", "core.engine.session")
drawn = sorted(m for m in heavy if m in sys.modules)
for t in threading.enumerate():  # the unlocked page's modules, loading in the background
    if t.name == warmup.PRELOAD_THREAD:
        t.join()
print(json.dumps({"form": [t.label for t in at.text_input], "exception": bool(at.exception),
                  "heavy": drawn, "after": sorted(m for m in heavy if m in sys.modules),
                  "preloaded": "ui.analysis_page" in sys.modules}))
"""


@pytest.mark.slow
def test_a_fresh_servers_analysis_password_form_imports_no_machine_learning(tmp_path):
    """The Analysis page's first run in a fresh process shows the password form without
    importing scikit-learn, UMAP or numba, and the unlocked page it loads in the background
    meanwhile imports none either: they cost the first request seconds on a loaded machine and
    only a replay or a workspace needs them."""
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, PLEASQLARIFY_DB_URL=f"sqlite:///{tmp_path / 's.sqlite'}",
               PLEASQLARIFY_STUDIES_DIR=str(tmp_path / "studies"),
               PLEASQLARIFY_AUDIO_DIR=str(tmp_path / "audio"),
               PLEASQLARIFY_RESEARCHER_PASSWORD="s3cret")
    out = subprocess.run([sys.executable, "-c", FRESH_ANALYSIS], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True, timeout=600).stdout
    seen = json.loads(out.strip().splitlines()[-1])
    assert seen["form"] == ["Researcher password"] and not seen["exception"], seen
    assert seen["heavy"] == [], f"the password form imported {seen['heavy']}"
    # the unlocked page loads in the background meanwhile, without them too
    assert seen["preloaded"] and seen["after"] == [], seen
