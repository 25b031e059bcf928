"""Find the study file of stored data, and say what is missing when it cannot be found.

Analysis never drops data silently: without the study file, SUS and item texts come from the
built-in questionnaires recognised in the stored answers, and :attr:`SpecLookup.problems` says
what is missing (for the page, the export manifest and the CLI).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.settings import BUILTIN_STUDIES, study_roots
from study.analysis.data import StudyData
from study.questionnaires import BUILTINS, Questionnaire
from study.spec import StudySpec, StudySpecError, load_study


@dataclass(frozen=True)
class SpecLookup:
    """The study file found for stored data (or None), what is wrong, the questionnaires used."""

    study: str
    spec: StudySpec | None
    problems: tuple[str, ...]
    questionnaires: tuple[Questionnaire, ...]
    searched: tuple[str, ...]


def search_dirs() -> list[Path]:
    """Where study files are looked for: core.settings.study_roots, then studies/."""
    dirs = [*study_roots(), BUILTIN_STUDIES]
    return list(dict.fromkeys(d.resolve() for d in dirs))


def _candidates(study: str) -> list[Path]:
    """Study files that may describe ``study``: <dir>/<study>/study.yaml first, then the rest."""
    out: list[Path] = []
    for d in search_dirs():
        out.append(d / study / "study.yaml")
        out += sorted(d.glob("**/*.yaml"))
    return [p for p in dict.fromkeys(out) if p.is_file()]


def spec_files_version(study: str) -> tuple[tuple[str, int, int], ...]:
    """The study files that may describe ``study`` with their mtime and size: a new value when
    one is added, edited or removed (what a cached :func:`find_study_spec` is keyed on)."""
    out = []
    for p in _candidates(study):
        try:
            st = p.stat()
        except OSError:  # removed meanwhile: the next lookup sees it gone
            continue
        out.append((str(p), st.st_mtime_ns, st.st_size))
    return tuple(out)


def recognised_questionnaires(data: StudyData) -> tuple[Questionnaire, ...]:
    """Built-in questionnaires whose id prefixes stored answers (e.g. ``sus7/sus3``)."""
    prefixes = {item.partition("/")[0] for ans in data.answers.values() for item in ans}
    return tuple(BUILTINS[q] for q in sorted(prefixes) if q in BUILTINS)


def find_study_spec(study: str, data: StudyData | None = None) -> SpecLookup:
    """The study file whose id is ``study`` (preferring one whose hash the data recorded)."""
    hashes = {p["study_hash"] for p in data.participants} if data else set()
    found: list[StudySpec] = []
    broken: list[str] = []
    for path in _candidates(study):
        try:
            spec = load_study(path)
        except StudySpecError as exc:
            if path.parent.name == study:
                broken.append(f"{path}: {str(exc).splitlines()[0]}")
            continue
        if spec.id == study:
            found.append(spec)
    searched = tuple(str(d) for d in search_dirs())
    if found:
        spec = next((s for s in found if s.hash in hashes), found[0])
        problems: tuple[str, ...] = ()
        if hashes and spec.hash not in hashes:
            problems = (f"The study file {spec.path} has changed since these participants "
                        f"joined (recorded hash {', '.join(sorted(h[:12] for h in hashes))}…, "
                        f"file {spec.hash[:12]}…); results use the current file.",)
        return SpecLookup(study, spec, problems, spec.questionnaires, searched)
    qs = recognised_questionnaires(data) if data else ()
    what = (f"The study file of '{study}' was not found (searched {', '.join(searched)} for a "
            f"study.yaml with id: {study}). Without it there are no candidate pools (completion "
            "suggestions, replay) and no study-specific questionnaires; ")
    what += (f"built-in questionnaires recognised in the answers are used: "
             f"{', '.join(q.id for q in qs)}." if qs else
             "no built-in questionnaire was recognised in the answers.")
    if data is not None:
        n = sum(len(a) for a in data.answers.values())
        what += f" All {n} stored answers are in the Answers table and the export."
    fix = ("Restore the study file under one of these folders (or set "
           "PLEASQLARIFY_STUDIES_DIR to its parent folder).")
    return SpecLookup(study, None, (*broken, what, fix), qs, searched)
