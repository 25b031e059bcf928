"""The LLM budget of a study: who may spend the researcher's API key, and how much is left.

A condition with ``agent: llm`` calls the model only for an *enrolled* participant (a stored,
active participant of this study who consented) and only while the study's recorded spend is
below the condition's ``llm_budget_tokens`` (input + output tokens). Spend is recorded in the
``llm_spend`` table per participant, task and attempt (the attempt's cumulative usage,
upserted), so the sum over a study is what its LLM chats have cost so far, across processes.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from study import schema as S
from study.conditions import Condition
from study.store import Store


def spent(store: Store, study: str) -> int:
    """Tokens (input + output) the study's LLM conditions have used so far."""
    c = S.llm_spend.c
    with store.read() as conn:
        return int(conn.execute(select(func.coalesce(
            func.sum(c.input_tokens + c.output_tokens), 0)).where(c.study == study)).scalar_one())


def record(store: Store, study: str, participant: str, task: str, attempt: int,
           usage: dict[str, Any] | None, now: int) -> None:
    """Store one attempt's cumulative token usage (an ``llm.step`` payload's ``usage``)."""
    usage = usage or {}
    stmt = store.insert(S.llm_spend).values(
        study=study, participant=participant, task=task, attempt=int(attempt or 1),
        input_tokens=int(usage.get("input_tokens") or 0),
        output_tokens=int(usage.get("output_tokens") or 0), updated=now)
    stmt = stmt.on_conflict_do_update(
        index_elements=["study", "participant", "task", "attempt"],
        set_={"input_tokens": stmt.excluded.input_tokens,
              "output_tokens": stmt.excluded.output_tokens, "updated": stmt.excluded.updated})
    with store.write() as conn:
        conn.execute(stmt)


def refusal(store: Store, study: str, participant: str, cond: Condition) -> str | None:
    """Why the LLM may not be called for ``participant`` now, or None when it may."""
    row = store.participant(participant)
    if row is None or row["study"] != study or row["status"] != "active":
        return "the LLM is used only for enrolled, active participants of this study"
    used = spent(store, study)
    if used >= cond.llm_budget_tokens:
        return (f"the study's LLM budget is spent ({used:,} of {cond.llm_budget_tokens:,} "
                "tokens; raise llm_budget_tokens in study.yaml to continue)")
    return None
