"""Why a failed task×gold pair failed: the categories ``core.evaluate --causes`` counts.

Apart from the runner and the report so that both can name them without importing each other.
"""

from __future__ import annotations

CAUSES = {
    "needs-clause": "needs a clause no candidate has (only resampling can add it)",
    "answered-away": "the target's output was present from the start and a question removed it",
    "added-then-answered-away": "repair added the target's output and a question removed it",
    "alive-at-budget": "the target's output was still alive when the turns ran out",
    "never-produced": "never produced although every clause of the target is in some candidate",
    "other": "ended otherwise (repair found nothing new after a rejection)",
}

__all__ = ["CAUSES"]
