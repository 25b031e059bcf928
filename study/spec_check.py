"""The validation toolkit of study.yaml: a problem record, the error, and the checker.

Kept apart from :mod:`study.spec` so that the section parsers (conditions, questionnaires) can use
the checker without importing the spec module that imports them.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

import yaml

from core.engine.errors import StudioError


@dataclass(frozen=True)
class SpecProblem:
    """One error or warning: file, line (0 if unknown), path inside the file, message, fix."""

    file: str
    where: str
    message: str
    fix: str = ""
    line: int = 0

    def __str__(self) -> str:
        loc = f"{self.file}:{self.line}" if self.line else self.file
        fix = f" Fix: {self.fix}" if self.fix else ""
        return f"{loc}: {self.where}: {self.message}.{fix}"


class StudySpecError(StudioError):
    """study.yaml is invalid; ``problems`` lists every error found."""

    def __init__(self, problems: list[SpecProblem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


def line_map(text: str) -> dict[str, int]:
    """Map every path inside the YAML document (``a.b[2].c``) to its 1-based line."""
    out: dict[str, int] = {}

    def walk(node: yaml.Node, path: str) -> None:
        out[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                key = f"{path}.{k.value}" if path else str(k.value)
                out[key] = k.start_mark.line + 1
                walk(v, key)
                out[key] = k.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                walk(v, f"{path}[{i}]")

    root = yaml.compose(text, Loader=yaml.SafeLoader)
    if root is not None:
        walk(root, "")
    return out


class Checker:
    """Collects errors and warnings with file, line and path while the spec is parsed."""

    def __init__(self, file: str, lines: dict[str, int]):
        self.file, self.lines = file, lines
        self.errors: list[SpecProblem] = []
        self.warnings: list[SpecProblem] = []

    def _line(self, where: str) -> int:
        while where and where not in self.lines:
            shorter = re.sub(r"(\.[^.\[]*|\[\d+\])$", "", where)
            if shorter == where:  # a missing top-level key: no line to point at
                return 0
            where = shorter
        return self.lines.get(where, 0) if where else 0

    def err(self, where: str, message: str, fix: str = "") -> None:
        self.errors.append(SpecProblem(self.file, where, message, fix, self._line(where)))

    def warn(self, where: str, message: str, fix: str = "") -> None:
        self.warnings.append(SpecProblem(self.file, where, message, fix, self._line(where)))

    def text(self, obj: dict[str, Any], key: str, where: str, *, required: bool = False,
             default: str = "") -> str:
        """A string field (non-empty when required)."""
        value = obj.get(key)
        path = f"{where}.{key}" if where else key
        if value is None or (isinstance(value, str) and not value.strip()):
            if required:
                self.err(path, "is required", f"add '{key}: <text>'")
            return default
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            self.err(path, f"must be text, got {type(value).__name__}", "quote the value")
            return default
        return str(value)

    def enum(self, obj: dict[str, Any], key: str, where: str, choices: tuple[str, ...],
             default: str) -> str:
        """A field restricted to ``choices``."""
        value = obj.get(key, default)
        if value not in choices:
            close = difflib.get_close_matches(str(value), choices, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            self.err(f"{where}.{key}" if where else key, f"'{value}' is not allowed",
                     f"{hint}use one of: {', '.join(choices)}")
            return default
        return str(value)

    def known(self, obj: dict[str, Any], where: str, keys: tuple[str, ...]) -> None:
        """An error (with a did-you-mean) for every key of ``obj`` not in ``keys``."""
        for key in obj:
            if key not in keys:
                close = difflib.get_close_matches(str(key), keys, n=1)
                self.err(f"{where}.{key}", f"unknown key '{key}'",
                         f"did you mean '{close[0]}'?" if close else
                         f"remove it; known keys here: {', '.join(keys)}")

    def mapping(self, value: Any, where: str) -> dict[str, Any]:
        """A mapping (or {} after reporting that it is not one)."""
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.err(where, f"must be a mapping (key: value lines), got {type(value).__name__}",
                     "indent its keys under it")
            return {}
        return value
