"""The interface of a task step, per study condition, restored from and saved to the progress.

``pleasqlarify`` and ``atomic-only`` are the workspace with different :class:`WorkspaceOptions`
(atomic-only: no Decision Space; pleasqlarify may add pool accounting), ``planpool-chat`` the
chat of :mod:`ui.chat` (its questions from the structured agent, or from the LLM agent with
``agent: llm`` when a key is configured; without one the study stays closed unless it states
``fallback: structured``, and then the fallback is logged and Setup and Facilitator say so,
never the participant's page), ``single-shot`` the one query of :mod:`ui.single_shot`. Every
state change is saved with the participant's progress, so a refresh resumes where they were.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import streamlit as st

from core.engine.execute import open_database
from core.engine.session import RepairSession
from core.generation.sampler import DEFAULT_MODEL
from core.planpool.chat_agent import ChatAgent
from core.planpool.llm_agent import LLMAgent
from study import budget, flow
from study.conditions import Condition
from study.runner import Runner
from study.trace import read_events
from ui import actions
from ui import study_cache as data
from ui.chat import ChatOptions, chat_agent, render_chat
from ui.generation import api_key
from ui.single_shot import render_single_shot
from ui.state import WorkspaceOptions, default_session, workspace_state
from ui.workspace import APP_RERUN, render_workspace

LOG = logging.getLogger(__name__)

POOL_INIT = "pool_init"  # ws.extra: the pool.init event still to log (after the first render)
NO_STATE_CHANGE = {"dv.browse", "space.hover", "output.view", "output.accept"}
WHERE_SUBMIT = {
    "pleasqlarify": "Submit with the button under the Predicted Output, then continue at the "
                    "bottom.",
    "atomic-only": "Submit with the button under the Predicted Output, then continue at the "
                   "bottom.",
    "planpool-chat": "Answer the assistant's questions, confirm its query (or tell it that it "
                     "is not what you meant), then continue at the bottom.",
    "single-shot": "Accept the answer or say it is not what you meant, then continue at the "
                   "bottom.",
}
PRACTICE_HINTS = {
    "pleasqlarify": "click or lasso glyphs in the Action Space, answer Yes/No in the Decision "
                    "Space, accept or reject clauses in the Predicted Query, and use Back.",
    "atomic-only": "click or lasso glyphs in the Action Space (or keep a cluster), and accept or "
                   "reject clauses in the Predicted Query.",
    "planpool-chat": "answer the assistant's questions with Yes, No or Not specified and look "
                     "at the query it proposes.",
    "single-shot": "look at the proposed query and its output, and accept it or say it is not "
                   "what you meant.",
}


def practice_hint(condition: str, labels: str) -> str:
    """What to try in the practice of ``condition``; under ``plain`` labels the Predicted
    Query's parts are questions, not clauses."""
    hint = PRACTICE_HINTS[condition]
    if labels == "plain":
        hint = hint.replace("accept or reject clauses", "answer Yes/No to single questions")
    return hint


# what a participant reads when the chat cannot run: no keys, budgets or settings (the trace's
# chat.agent_fallback and the Setup and Facilitator pages tell the researcher why)
CHAT_UNAVAILABLE = ("This part of the study cannot run right now. Please tell the "
                    "facilitator.")
Done = Callable[[], object]  # clears the step's messages (True if there were any)


def condition_of(runner: Runner, step: flow.Step) -> Condition:
    """The settings of the step's condition (the participant's first one if unset)."""
    return runner.spec.condition(step.condition or runner.assignment.condition)


def workspace_options(cond: Condition, step: flow.Step | None = None) -> WorkspaceOptions:
    """The workspace panels and accounting of a workspace condition at ``step``.

    Exploration subtasks (2a/2b) offer no Submit; in a task step the page shows the question
    above the prompt (the same place in every part), so the workspace does not repeat it.
    """
    in_task = step is not None and step.kind == "task"
    submit = not in_task or step.subtask in flow.SUBMIT_SUBTASKS
    primary = step is None or step.kind != "practice"
    if cond.id == "atomic-only":
        return WorkspaceOptions(show_action_space=cond.show_action_space,
                                show_decision_space=False, submit=submit,
                                show_question=not in_task, repair=cond.repair,
                                labels=cond.labels, submit_primary=primary)
    return WorkspaceOptions(pool_accounting=cond.pool_accounting,
                            ig_threshold=cond.ig_threshold, submit=submit,
                            show_question=not in_task, repair=cond.repair, labels=cond.labels,
                            submit_primary=primary)


def _subtask(step: flow.Step) -> str:
    return step.subtask or "practice"


def workspace(runner: Runner, step: flow.Step, namespace: str, cond: Condition,
              done: Done) -> None:
    """The repair workspace in study mode (decisions and dismissals saved with progress)."""
    pool = data.pool(runner.spec, step.task)
    chosen = cond.session_options()
    ws = workspace_state(pool, namespace, factory=(lambda p: default_session(p, **chosen))
                         if chosen else None)
    if not ws.extra.get("restored"):
        saved = runner.workspace(step.task)
        if saved:
            ws.session = RepairSession.from_dict(saved, pool)
            ws.dismissed = [tuple(k) for k in saved.get("dismissed", [])]
            actions.restore_search(ws, saved)  # a reload while repair ran: it runs again
        # "You accepted this output." survives a reload: the trace records each accept
        actions.restore_accept(ws, [e.payload for e in read_events(
            runner.store, participant=runner.participant, types=["output.accept"])
            if e.task == step.task])
        ws.submitted = runner.submitted(step.task)
        ws.extra["restored"] = True
        # the session's own vocabulary too: replay asks as it did, whatever the default
        ws.extra[POOL_INIT] = {"n_candidates": pool.n, "key": step.task,
                               "strategy": ws.session.strategy,
                               "questions": ws.session.questions,
                               "values": ws.session.values, **chosen}

    def log(event_type: str, payload: dict[str, Any]) -> None:
        runner.log(event_type, payload)
        if event_type not in NO_STATE_CHANGE:
            runner.save_workspace(step.task, {**ws.session.to_dict(),
                                              "dismissed": [list(k) for k in ws.dismissed],
                                              **actions.saved_search(ws)})
            if done():  # the participant acted: the page's "Submit a query…" message goes
                ws.extra[APP_RERUN] = True

    def on_submit(candidate: int, sql: str) -> None:
        runner.submit(step.task, candidate, sql, _subtask(step))
        done()

    try:
        render_workspace(pool, log=log, mode="study", on_submit=on_submit, namespace=namespace,
                         options=workspace_options(cond, step))
    finally:  # committed once the workspace is sent, not before: the fsync is off its paint
        if POOL_INIT in ws.extra:
            runner.log("pool.init", ws.extra[POOL_INIT],
                       event_id=f"{runner.participant}:pool.init:{step.task}")
            del ws.extra[POOL_INIT]


def llm_agent(cond: Condition) -> LLMAgent | None:
    """The condition's LLM agent when a key is configured (environment or secrets), else None."""
    key = api_key()
    if key is None:
        return None
    return LLMAgent(model=cond.model or DEFAULT_MODEL, api_key=key)


def chat(runner: Runner, step: flow.Step, namespace: str, cond: Condition, done: Done) -> None:
    """The planpool-chat condition (agent and question pool saved with progress)."""
    pool = data.pool(runner.spec, step.task)
    options = ChatOptions(show_pool=cond.show_pool, max_questions=cond.max_questions,
                          ig_threshold=cond.ig_threshold, free_text=cond.free_text)
    saved = runner.chat(step.task) or {}
    refused = (budget.refusal(runner.store, runner.spec.id, runner.participant, cond)
               if cond.agent == "llm" else None)
    llm = llm_agent(cond) if cond.agent == "llm" and refused is None else None
    if cond.agent == "llm" and llm is None:
        if refused is None and not cond.fallback:  # no key mid-study: never mix agents silently
            LOG.warning("study %s: agent: llm without an API key and no fallback",
                        runner.spec.id)
            st.error(CHAT_UNAVAILABLE)
            st.stop()
        # the participant's chat goes on with the structured agent; why is the researcher's
        reason = refused or "no Anthropic API key configured"
        runner.log("chat.agent_fallback", {"wanted": "llm", "using": "structured",
                                           "reason": reason},
                   event_id=f"{runner.participant}:chat.agent_fallback:{step.task}")
    database = data.task(runner.spec, step.task).database
    agent = chat_agent(pool, namespace, options, saved=saved.get("agent"),
                       saved_session=saved.get("session"), llm=llm,
                       open_db=lambda: open_database(database))

    def save(a: ChatAgent) -> None:
        runner.save_chat(step.task, a.to_dict(), a.session.to_dict())

    def on_submit(candidate: int | None, sql: str) -> None:
        runner.submit(step.task, candidate, sql, _subtask(step))
        done()

    def on_reject(candidate: int | None, sql: str) -> None:
        runner.reject(step.task, candidate, sql, _subtask(step))
        done()

    def log(event_type: str, payload: dict[str, Any]) -> None:
        runner.log(event_type, payload)
        if event_type == "llm.step":  # the attempt's cumulative usage, for the study budget
            budget.record(runner.store, runner.spec.id, runner.participant, step.task,
                          payload.get("attempt", 1), payload.get("usage"),
                          int(runner.clock() * 1000))

    render_chat(pool, agent, log=log, save=save, options=options, on_submit=on_submit,
                on_reject=on_reject)


def single_shot(runner: Runner, step: flow.Step, namespace: str, cond: Condition,
                done: Done) -> None:
    """The single-shot condition: the prior mode's query, accepted or rejected."""
    pool = data.pool(runner.spec, step.task)
    runner.log("pool.init", {"n_candidates": pool.n, "key": step.task},
               event_id=f"{runner.participant}:pool.init:{step.task}")

    def on_submit(candidate: int, sql: str) -> None:
        runner.submit(step.task, candidate, sql, _subtask(step))
        done()

    def on_reject(candidate: int, sql: str) -> None:
        runner.reject(step.task, candidate, sql, _subtask(step))
        done()

    render_single_shot(pool, log=lambda t, p: runner.log(t, p),
                       submitted=runner.submitted(step.task), rejected=runner.rejected(step.task),
                       on_submit=on_submit, on_reject=on_reject, show_sql=cond.show_sql,
                       show_question=step.kind != "task")


VIEWS = {"pleasqlarify": workspace, "atomic-only": workspace, "planpool-chat": chat,
         "single-shot": single_shot}


def render_condition(runner: Runner, step: flow.Step, namespace: str, done: Done,
                     condition: str | None = None) -> None:
    """The step's (or the given) condition's interface, its instructions above it."""
    cond = runner.spec.condition(condition) if condition else condition_of(runner, step)
    if cond.instructions:
        st.caption(cond.instructions)
    VIEWS[cond.id](runner, step, namespace, cond, done)


def practice_interfaces(runner: Runner, step: flow.Step, done: Done,
                        above: Callable[[], object] | None = None) -> None:
    """The practice task in each of the participant's conditions (a switch when several);
    ``above`` draws what goes between the hint and the interface (the task's database)."""
    order = list(dict.fromkeys(runner.assignment.condition_order)) or [condition_of(runner,
                                                                                     step).id]
    chosen = order[0]
    if len(order) > 1:
        labels = {c: runner.spec.condition(c).label or c for c in order}
        chosen = st.segmented_control("Interface to try", order, default=order[0],
                                      format_func=labels.get,
                                      key=f"pq.practice.{runner.participant}") or order[0]
    hint = practice_hint(chosen, runner.spec.condition(chosen).labels)
    st.info(f"Try every part of the interface on this practice question: {hint} Nothing here "
            "is evaluated. Continue when you feel comfortable.", icon=":material/school:")
    if above is not None:
        above()
    render_condition(runner, step, f"practice-{chosen}", done, condition=chosen)


__all__ = ["CHAT_UNAVAILABLE", "PRACTICE_HINTS", "WHERE_SUBMIT", "condition_of", "practice_hint",
           "practice_interfaces",
           "render_condition", "workspace_options"]
