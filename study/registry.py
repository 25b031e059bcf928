"""Every study under the studies directory, addressed by its validated, unique ``id``.

A study file is any ``*.yaml`` under ``$PLEASQLARIFY_STUDIES_DIR`` (default ``studies/``),
whatever its name: ``studies/film/study-two-conditions.yaml`` is opened as
``/participant?study=film-two-conditions``. Two files with the same id are both reported and
neither opens (a link must name exactly one study). :func:`open_problems` says what keeps a
valid study closed to participants (a missing task bank; an ``agent: llm`` condition without
an API key and no stated fallback); :func:`pool_problems` adds every task whose prepared pool is
missing, so no participant ever waits for a layout fit. :func:`key_notices` says, for the
researcher only, what runs differently without a key (participants read nothing about keys).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from core import settings
from study.spec import StudySpec, StudySpecError, load_study
from study.spec_check import SpecProblem, line_map, load_yaml

STUDIES_ENV = settings.STUDIES_ENV
SKIP_DIRS = {"pools", "__pycache__"}


def studies_dir() -> Path:
    """Where uploaded studies are saved: ``$PLEASQLARIFY_STUDIES_DIR`` or ``<data>/studies``."""
    return settings.studies_dir()


@dataclass(frozen=True)
class StudyEntry:
    """One study file: its id, path, and the validated spec or the problems that stop it."""

    id: str
    path: Path
    spec: StudySpec | None = None
    problems: tuple[SpecProblem, ...] = field(default_factory=tuple)
    root: Path | None = None

    @property
    def title(self) -> str:
        return self.spec.title if self.spec else f"(invalid) {self.path.name}"

    @property
    def ok(self) -> bool:
        return self.spec is not None and not self.problems

    def relative(self) -> str:
        """The file's path relative to the studies directory (for researcher pages)."""
        try:
            return str(self.path.relative_to(self.root or studies_dir()))
        except ValueError:
            return self.path.name


def study_files(root: Path | None = None) -> list[Path]:
    """Every ``*.yaml`` under ``root`` except generated pools, sorted."""
    root = root or studies_dir()
    if not root.is_dir():
        return []
    return sorted(p for p in root.rglob("*.yaml")
                  if not SKIP_DIRS & set(p.relative_to(root).parts[:-1]))


def _raw_id(path: Path) -> str:
    """The ``id:`` a broken file declares (or its name), so the error list can name it."""
    try:
        data, _ = load_yaml(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and isinstance(data.get("id"), str):
            return data["id"]
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        pass
    return path.stem if path.stem != "study" else path.parent.name


def scan(root: Path | None = None) -> dict[str, StudyEntry]:
    """Every study file under ``root`` (default: every folder of core.settings.study_roots)
    keyed by id (duplicates keyed ``id@path`` with an error each)."""
    loaded: list[StudyEntry] = []
    for folder in [root] if root else settings.study_roots():
        for path in study_files(folder):
            try:
                spec = load_study(path)
                loaded.append(StudyEntry(spec.id, path, spec, root=folder))
            except StudySpecError as exc:
                loaded.append(StudyEntry(_raw_id(path), path, None, tuple(exc.problems), folder))
    by_id: dict[str, list[StudyEntry]] = {}
    for e in loaded:
        by_id.setdefault(e.id, []).append(e)
    out: dict[str, StudyEntry] = {}
    for sid, entries in by_id.items():
        if len(entries) == 1:
            out[sid] = entries[0]
            continue
        names = ", ".join(e.relative() for e in entries)
        for e in entries:
            dup = SpecProblem(str(e.path), "id", f"id '{sid}' is also used by {names}",
                              "give every study file its own 'id:'", 1)
            out[f"{sid}@{e.relative()}"] = StudyEntry(sid, e.path, None, (*e.problems, dup),
                                                      e.root)
    return dict(sorted(out.items()))


def find(study_id: str, root: Path | None = None) -> StudyEntry | None:
    """The study with this id (None when no file declares it)."""
    return scan(root).get(study_id)


def pool_problems(spec: StudySpec) -> list[SpecProblem]:
    """One problem per task (practice included) of the bank whose prepared pool beside the
    bank is missing or out of date: a participant would otherwise wait for a layout fit
    (~78 s seen), so the study stays closed until Setup prepares them."""
    if spec.task_bank is None or not spec.task_bank.is_file():
        return []  # open_problems reports the missing bank
    from core.engine.poolfile import default_pool_dir, pool_ready  # light: no engine import
    from core.engine.taskbank import load_task_bank

    tasks, _ = load_task_bank(spec.task_bank, lenient=True)
    bank = {t.id: t for t in tasks}
    folder = default_pool_dir(spec.task_bank)
    ids = [spec.onboarding.practice_task] if spec.onboarding.practice_task else []
    missing = [tid for tid in dict.fromkeys([*ids, *spec.task_ids])
               if tid in bank and not pool_ready(bank[tid], folder)]
    if not missing:
        return []
    return [SpecProblem(spec.path.name, "task_bank", f"the candidate pool of {len(missing)} "
                        f"task(s) is not prepared ({', '.join(missing)}), so a participant "
                        "would wait about a minute for each layout",
                        "press 'Prepare missing pools' on Setup, or run python -m core.prepare "
                        f"{spec.task_bank}", line_map(spec.path.read_text(encoding="utf-8"))
                        .get("task_bank", 0))]


def open_problems(spec: StudySpec, *, api_key: bool) -> list[SpecProblem]:
    """What keeps a valid study closed to participants ([] when it may open)."""
    out = []
    if spec.task_bank is None or not spec.task_bank.is_file():
        name = spec.task_bank.name if spec.task_bank else "(none)"
        line = line_map(spec.path.read_text(encoding="utf-8")).get("task_bank", 0)
        out.append(SpecProblem(spec.path.name, "task_bank", f"task bank '{name}' does not "
                               "exist, so participants could not get any task", "upload the "
                               "task bank in Setup, or correct the path (relative to the study "
                               "file)", line))
    for i, c in enumerate(spec.conditions):
        if c.id == "planpool-chat" and c.agent == "llm" and not api_key and not c.fallback:
            where = f"conditions[{i}].agent"
            line = line_map(spec.path.read_text(encoding="utf-8")).get(where, 0)
            out.append(SpecProblem(
                spec.path.name, where, "'agent: llm' needs an Anthropic API "
                "key and none is configured, so participants would silently get another agent",
                "set ANTHROPIC_API_KEY (or ANTHROPIC_API_KEY in .streamlit/secrets.toml), or "
                "state 'fallback: structured' in this condition", line))
    return out


def key_notices(spec: StudySpec, *, api_key: bool) -> list[str]:
    """What runs differently in ``spec`` because no Anthropic API key is configured, in the
    researcher's words (Setup and Facilitator show them; participant pages never mention keys:
    their part still runs, and the trace records what ran)."""
    if api_key:
        return []
    out = []
    for c in spec.conditions:
        if getattr(c, "repair", "") == "resample":
            out.append(f"Condition {c.id}: 'repair: resample' needs an Anthropic API key and "
                       "none is configured, so only recomposition is available (the repair "
                       "events record requested: resample, method: recompose).")
        if c.id == "planpool-chat" and c.agent == "llm" and c.fallback:
            out.append(f"Condition {c.id}: 'agent: llm' needs an Anthropic API key and none is "
                       f"configured, so the {c.fallback} agent asks instead (logged as "
                       "chat.agent_fallback).")
    return out
