"""PlanPool: the explicit clarification-question pool, question rendering, structured and LLM
agents, the chat condition, workspace pool accounting and the Table-2 evaluation.

Public names are re-exported here and imported on first use, so importing the package is cheap.
"""

from __future__ import annotations

from core._lazy import lazy_getattr

_EXPORTS: dict[str, str] = {
    "ASK_TOOL": "llm_tools",
    "BUDGET_REASON": "chat_agent",
    "BUDGET_TEXT": "llm_chat",
    "ChatAgent": "chat_agent",
    "DATASOURCE": "llm_tools",
    "DATASOURCE_TOOLS": "llm_tools",
    "Episode": "agents",
    "LLMAgent": "llm_agent",
    "LLMChatAgent": "llm_chat",
    "LLMEpisode": "llm_agent",
    "MatchingUser": "simulated",
    "NO_MATCH_REASON": "chat_agent",
    "NUDGE": "llm_agent",
    "Outcome": "evaluate",
    "POOL_OPS": "llm_tools",
    "POOL_TOOLS": "llm_tools",
    "PoolError": "pool",
    "PoolEvent": "pool",
    "PoolNotEmptyError": "pool",
    "Question": "pool",
    "QuestionPool": "pool",
    "RESOLVED": "agents",
    "RESULT_TEXT": "llm_chat",
    "SUBMIT_TOOL": "llm_tools",
    "SYSTEM": "llm_tools",
    "SimulatedChatUser": "simulated",
    "StructuredAgent": "agents",
    "UNSPECIFIED_REASON": "agents",
    "VARIANT": "llm_chat",
    "VARIANTS": "agents",
    "addressed": "evaluate",
    "ambiguity_sets": "evaluate",
    "block_dict": "llm_tools",
    "classify": "evaluate",
    "column_words": "questions",
    "datasource": "llm_tools",
    "episode": "llm_agent",
    "epoch_ms": "pool",
    "evaluate_task": "evaluate",
    "expression_words": "questions",
    "format_table": "evaluate",
    "holds": "evaluate",
    "llm_runner": "simulated",
    "open_variables": "accounting",
    "outcome": "evaluate",
    "parse_reply": "chat_agent",
    "phrases": "questions",
    "realiser_masks": "simulated",
    "render_question": "questions",
    "replay": "pool",
    "report": "evaluate",
    "restore_pool": "llm_agent",
    "run_structured": "simulated",
    "separates": "evaluate",
    "singular": "questions",
    "splits": "agents",
    "summarise": "evaluate",
    "table_text": "llm_tools",
    "tools_for": "llm_tools",
    "words": "questions",
}

__all__ = sorted(_EXPORTS)


__getattr__ = lazy_getattr(__name__, _EXPORTS)
