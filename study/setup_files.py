"""Validate an uploaded (or local) study file with its task bank, then save both under
``studies/<id>/``.

The pair is checked together in a scratch folder laid out as it will be saved (the bank at the
study's ``task_bank`` path), so every problem of either file is reported as
``file:line: field: reason. Fix: …`` with the file names the researcher gave, the upload's own
problems (an absolute or folder ``task_bank`` beside an uploaded bank) included. The outcome is
kept per content hash, so Setup's reruns with the file still in the uploader do not re-check it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import yaml

from study.registry import scan, studies_dir
from study.spec import StudySpec, StudySpecError, parse_study
from study.spec_check import SpecProblem, line_map, load_yaml


@dataclass(frozen=True)
class Checked:
    """The outcome of checking a study file and its bank: a spec, or every problem."""

    spec: StudySpec | None
    problems: tuple[SpecProblem, ...]
    study_name: str
    study_text: str
    bank_rel: str = ""
    bank_bytes: bytes | None = None


# check() once per upload, not per rerun: the outcome per (name, content hashes), last 8 kept
MEMO_SIZE = 8
_MEMO: OrderedDict[tuple[str, str, str | None, str | None],
                   tuple[Checked, tuple[SpecProblem, ...]]] = OrderedDict()
_MEMO_LOCK = threading.Lock()


def _problem(file: str, where: str, message: str, fix: str, line: int = 0) -> SpecProblem:
    return SpecProblem(file, where, message, fix, line)


def _field(text: str, key: str) -> object:
    """A top-level value of the study text, read by the strict loader (None if unreadable)."""
    try:
        data, _ = load_yaml(text)
    except yaml.YAMLError:
        return None
    return data.get(key) if isinstance(data, dict) else None


def _bank_rel(text: str) -> str | None:
    """The study's ``task_bank`` value when it is a safe relative path to a file, else None."""
    raw = _field(text, "task_bank")
    if not isinstance(raw, str) or not raw.strip():
        return None
    rel = PurePosixPath(raw.strip())
    if rel.is_absolute() or ".." in rel.parts or rel.name in ("", "."):
        return None
    return str(rel)


def _raw_id(text: str) -> str:
    """The ``id:`` the text declares ('' when none), to find an already saved bank."""
    raw = _field(text, "id")
    return raw if isinstance(raw, str) and "/" not in raw and ".." not in raw else ""


def check(study_name: str, study_bytes: bytes, bank_name: str | None = None,
          bank_bytes: bytes | None = None, *, root: Path | None = None) -> Checked:
    """Validate a study file and (optionally) its bank; without a bank, the saved one is used."""
    study_name = Path(study_name).name or "study.yaml"
    try:
        text = study_bytes.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Checked(None, (_problem(study_name, "(file)", f"is not UTF-8 ({exc.reason} at "
                                       f"byte {exc.start})", "save it as UTF-8"),),
                       study_name, "")
    rel = _bank_rel(text)
    if bank_bytes is None and rel:  # no upload: the bank already saved for this study id
        saved = (root or studies_dir()) / _raw_id(text) / rel
        bank_bytes = saved.read_bytes() if saved.is_file() else None
    key = (study_name, hashlib.sha256(study_bytes).hexdigest(), bank_name,
           None if bank_bytes is None else hashlib.sha256(bank_bytes).hexdigest())
    with _MEMO_LOCK:
        done = _MEMO.get(key)
    if done is None:
        done = _validate(study_name, text, rel, bank_name, bank_bytes)
        with _MEMO_LOCK:
            _MEMO[key] = done
            while len(_MEMO) > MEMO_SIZE:
                _MEMO.popitem(last=False)
    checked, errors = done
    if checked.spec is None:
        return checked
    clash = _clash(checked.spec, root)  # other saved studies may change between reruns
    problems = (*errors, *([clash] if clash else []))
    return dataclasses.replace(checked, spec=None if problems else checked.spec,
                               problems=problems)


def _validate(study_name: str, text: str, rel: str | None, bank_name: str | None,
              bank_bytes: bytes | None) -> tuple[Checked, tuple[SpecProblem, ...]]:
    """The check itself, for :func:`check` to keep per content hash: (outcome, the errors that
    go with a spec that parsed)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = folder / study_name
        path.write_text(text, encoding="utf-8")
        errors: list[SpecProblem] = []
        notes: list[SpecProblem] = []
        lines = line_map(text)
        if rel and bank_bytes is not None:
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_bytes(bank_bytes)
            if bank_name and Path(bank_name).name != Path(rel).name:
                notes.append(_problem(study_name, "task_bank", f"names '{rel}' but the uploaded "
                                      f"bank is '{bank_name}'; it will be saved as '{rel}'",
                                      "fine if intended; otherwise correct task_bank",
                                      lines.get("task_bank", 0)))
        elif bank_bytes is not None:
            errors.append(_problem(study_name, "task_bank", "must be a relative path to a "
                                   "file (e.g. 'task_bank: tasks.jsonl') for an uploaded bank; "
                                   "otherwise the uploaded bank would be dropped",
                                   "name the bank's file next to the study file",
                                   lines.get("task_bank", 0)))
        try:
            spec = parse_study(text, path)
        except StudySpecError as exc:
            problems = [dataclasses.replace(p, file=study_name) if p.file == str(path) else p
                        for p in exc.problems]
            return Checked(None, (*errors, *problems), study_name, text, rel or "",
                           bank_bytes), ()
    if notes:  # said beside the study's own warnings; saving stays possible
        spec = dataclasses.replace(spec, warnings=(*spec.warnings, *notes))
    return Checked(spec, (), study_name, text, rel or "", bank_bytes), tuple(errors)


def check_path(path: str | Path) -> Checked:
    """Validate a study file on this computer with the bank it names."""
    p = Path(path).expanduser()
    if not p.is_file():
        return Checked(None, (_problem(p.name or str(path), "(file)", "no such study file",
                                       "check the path"),), p.name, "")
    raw = p.read_bytes()
    rel = _bank_rel(raw.decode("utf-8", errors="replace"))
    bank = p.parent / rel if rel else None
    if bank is None or not bank.is_file():
        return check(p.name, raw)
    return check(p.name, raw, bank.name, bank.read_bytes())


def destination(spec: StudySpec, root: Path | None = None) -> Path:
    """``studies/<id>/``: where a checked study is saved."""
    return (root or studies_dir()) / spec.id


def _clash(spec: StudySpec, root: Path | None) -> SpecProblem | None:
    """An error when another saved study file already declares this id."""
    target = destination(spec, root)
    for entry in scan(root).values():
        if entry.id == spec.id and entry.path.parent.resolve() != target.resolve():
            return _problem(spec.path.name, "id", f"id '{spec.id}' is already used by "
                            f"{entry.relative()}", "give this study its own 'id:'", 1)
    return None


def save(checked: Checked, *, root: Path | None = None) -> Path:
    """Write the study file (and its bank, if one was given) under ``studies/<id>/``; returns
    the study file (:func:`saved_names` says what was written)."""
    if checked.spec is None:
        raise ValueError("only a study without problems can be saved; fix them first")
    folder = destination(checked.spec, root)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / checked.study_name
    target.write_text(checked.study_text, encoding="utf-8")
    if checked.bank_bytes is not None and checked.bank_rel:
        bank = folder / checked.bank_rel
        bank.parent.mkdir(parents=True, exist_ok=True)
        tmp = bank.with_name(f".{bank.name}.upload")
        tmp.write_bytes(checked.bank_bytes)
        shutil.move(tmp, bank)
    return target


def saved_names(checked: Checked) -> list[str]:
    """The files :func:`save` writes for ``checked``, relative to its study folder."""
    names = [checked.study_name]
    if checked.bank_bytes is not None and checked.bank_rel:
        names.append(str(checked.bank_rel))
    return names
