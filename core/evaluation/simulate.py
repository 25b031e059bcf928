"""A simulated user who wants one gold interpretation, for the §7 evaluation.

The user answers from what the gold *means*, not from how its SQL is written: among the
surviving candidates whose output equals the gold's output (its *realisers*), the answer to
"should the query contain g?" is Yes iff g holds for more than half of their weight (a tie is
Yes). Only when no survivor realises the gold does it fall back to the gold's own normalised
features. Matching the gold SQL's atoms as written fails on real pools (``"Lobby"`` vs
``'Lobby'``, ``Room.Name`` vs ``Name``): the public replication's success fell to 0.40–0.51.
With the realiser rule a truthful answer can never remove every realiser, so the gold stays
reachable.
"""

from __future__ import annotations

import numpy as np
import sqlglot

from core.engine.features import extract_features
from core.engine.session import RankedVariable, RepairSession
from core.engine.similarity import output_key


class SimulatedUser:
    """Answers Yes/No for gold ``gold`` of the session's pool."""

    def __init__(self, session: RepairSession, gold: int, schema: dict[str, list[str]] | None = None):
        self.session = session
        pool = session.pool
        self.gold = gold
        self.target_key = output_key(pool.gold_results[gold])
        self.realisers = np.array([k == self.target_key for k in
                                   (pool.class_keys[c] for c in pool.class_index)], dtype=bool)
        try:
            own = extract_features(pool.gold_sqls[gold], pool.dialect, schema)
        except sqlglot.errors.SqlglotError:
            own = []
        self._own_keys = {f.key for f in own}

    @property
    def realised(self) -> bool:
        """Whether some candidate of the pool produces the gold's output."""
        return bool(self.realisers.any()) and self.target_key != "error"

    def answer(self, variable: RankedVariable) -> bool:
        """True (Yes) iff the variable holds for most of the surviving realisers' weight."""
        s = self.session
        alive_realisers = s.alive & self.realisers
        if not alive_realisers.any():
            return all(k in self._own_keys for k in variable.keys)
        mask = s._mask_for(variable.keys)
        w = s.pool.counts
        yes = float(w[alive_realisers & mask].sum())
        return yes >= float(w[alive_realisers].sum()) / 2

    def succeeded(self) -> bool:
        """Every survivor's output equals the gold's output."""
        return bool(self.realisers[self.session.survivors].all())
