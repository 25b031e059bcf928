"""The error hierarchy of core/: every message names the place and says what to do."""

from __future__ import annotations


class StudioError(Exception):
    """Base class for every error PleaSQLarify Studio raises on purpose."""


class TaskBankError(StudioError):
    """A task-bank line (or several) is malformed.

    ``problems`` holds one :class:`TaskBankProblem` per bad line so a caller can show them all.
    """

    def __init__(self, problems: list[TaskBankProblem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class TaskBankProblem:
    """One bad line in a task bank: file, line number, field and what to do about it."""

    def __init__(self, path: str, line: int, field: str, reason: str):
        self.path, self.line, self.field, self.reason = path, line, field, reason

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: field '{self.field}': {self.reason}"

    def __repr__(self) -> str:
        return f"TaskBankProblem({self!s})"


class DatabaseError(StudioError):
    """A task database cannot be opened (missing file, bad dump, unreachable server)."""


class UnsafeQueryError(StudioError):
    """A candidate is not a single read-only query and is refused before execution."""


class SessionError(StudioError):
    """A repair-session operation is not possible in the current state (e.g. unknown variable)."""


class GenerationError(StudioError):
    """Candidate generation failed in a way the caller must act on (no key, bad model, ...)."""
