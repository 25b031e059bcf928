"""PlanPool: the explicit clarification-question pool, question rendering, structured and LLM
agents, the chat condition, workspace pool accounting and the Table-2 evaluation.

Import names from their modules (``from core.engine.session import RepairSession``); the
package itself re-exports nothing, so no name shadows a submodule.
"""
