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


MAX_YAML_CHARS = 1_000_000  # a study file is a few KB; the check reads this much at most
MAX_YAML_DEPTH = 40  # nested mappings / lists; the film study uses 5


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader without aliases and with a nesting bound.

    An alias (``*name``) can expand exponentially (a 491-byte "billion laughs" file cost 16 s
    and 1.37 GB) or refer to itself; a study file never needs one. Both this and nesting
    deeper than :data:`MAX_YAML_DEPTH` are refused as a ``ComposerError`` at the line, before
    any recursion: 5000 nested ``[`` raised ``RecursionError`` before.
    """

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        """Compose one node, refusing aliases and nesting past the bound."""
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, f"the alias *{event.anchor} is not allowed in a study file "
                "(write the value out)", event.start_mark)
        if self._depth >= MAX_YAML_DEPTH:
            raise yaml.composer.ComposerError(
                None, None, f"nesting deeper than {MAX_YAML_DEPTH} levels is not allowed",
                self.peek_event().start_mark)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


# Brackets, with quoted text and comments on one line skipped: a linear look at flow nesting.
_FLOW = re.compile(r"""'[^'\n]*'|"(?:[^"\\\n]|\\.)*"|(?:^|(?<=\s))#[^\n]*|[\[\]{}\n]""")


def _flow_too_deep(text: str) -> yaml.Mark | None:
    """Where ``[`` / ``{`` first nest deeper than :data:`MAX_YAML_DEPTH` (None if never).

    PyYAML's scanner reads every bracket of a flow collection ahead and keeps one possible key
    per level, so 5000 nested ``[`` cost it ~0.8 s and 500,000 would cost hours: this linear
    scan refuses them before the scanner starts.
    """
    depth = line = start = 0
    for m in _FLOW.finditer(text):
        c = m.group()
        if c == "\n":
            line, start = line + 1, m.end()
        elif c in "[{":
            depth += 1
            if depth > MAX_YAML_DEPTH:
                return yaml.Mark("<study file>", m.start(), line, m.start() - start, None, 0)
        elif c in "]}":
            depth = max(depth - 1, 0)
    return None


def load_yaml(text: str) -> tuple[Any, dict[str, int]]:
    """The data of a YAML document and the line of every path in it (:func:`line_map`),
    composed once by :class:`_StrictLoader`; raises ``yaml.YAMLError`` with the line."""
    if len(text) > MAX_YAML_CHARS:
        raise yaml.YAMLError(f"the file is {len(text):,} characters long; at most "
                             f"{MAX_YAML_CHARS:,} are read")
    deep = _flow_too_deep(text)
    if deep is not None:
        raise yaml.composer.ComposerError(
            None, None, f"nesting deeper than {MAX_YAML_DEPTH} levels is not allowed", deep)
    loader = _StrictLoader(text)
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    finally:
        loader.dispose()
    return data, _lines(root)


def _lines(root: yaml.Node | None) -> dict[str, int]:
    """Map every path inside a composed document (``a.b[2].c``) to its 1-based line."""
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

    if root is not None:
        walk(root, "")
    return out


def line_map(text: str) -> dict[str, int]:
    """Map every path inside the YAML document (``a.b[2].c``) to its 1-based line ({} for a
    file the strict loader refuses: its problem is reported where it is parsed)."""
    try:
        return load_yaml(text)[1]
    except yaml.YAMLError:
        return {}


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
