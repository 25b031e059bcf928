"""Pool accounting in the workspace: which decision variables still block submission.

PlanPool's protocol (submit only when every identified question was asked or deliberately
removed) applied to the PleaSQLarify workspace: a decision variable that still splits the
survivors with information gain above ``threshold`` bits is *open* until the user answers it
(after which it no longer splits the survivors) or explicitly dismisses it.
"""

from __future__ import annotations

from collections.abc import Iterable

from core.engine.session import RankedVariable, RepairSession


def open_variables(session: RepairSession, dismissed: Iterable[tuple[str, ...]],
                   threshold: float) -> list[RankedVariable]:
    """Ranked variables above ``threshold`` bits that were not dismissed, best first."""
    gone = {tuple(k) for k in dismissed}
    return [v for v in session.variables() if v.gain > threshold and v.keys not in gone]


__all__ = ["open_variables"]
