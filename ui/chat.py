"""The planpool-chat condition: the structured agent asks its pool's questions in a chat.

The agent (:class:`core.planpool.chat_agent.ChatAgent`, or :class:`core.planpool.llm_chat.LLMChatAgent` when the
condition uses the LLM and a key is configured) lives in ``st.session_state`` per task and is
restored from the saved state after a refresh. Each button runs in a callback: one agent step,
then every new pool operation and message becomes a trace event through ``log`` and the state
is saved through ``save``, before the script draws the chat again.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from html import escape
from typing import Any

import streamlit as st

from core.engine.execute import TaskDatabase
from core.engine.pool import PreparedPool
from core.engine.session import RepairSession
from core.planpool.agents import NO, NOT_SPECIFIED, YES
from core.planpool.chat_agent import (
    ASKING,
    CONFIRM,
    CONFIRMED,
    NEW,
    REJECTED,
    ChatAgent,
    parse_reply,
)
from core.planpool.llm_agent import LLMAgent
from core.planpool.llm_chat import LLMChatAgent
from core.planpool.pool import ANSWERED, ASKED, DROPPED
from study.limits import MAX_ANSWER_CHARS, answer_problem
from ui.actions import MAX_DETAIL, Log, OnSubmit
from ui.result import notice, show_query, show_result
from ui.state import PREFIX

Save = Callable[[ChatAgent], None]
LOG = logging.getLogger(__name__)
# an LLM step that failed, as the participant reads it (the error's words name the API: they
# go to the log and the trace as chat.fail, where the facilitator and researcher find them)
CHAT_FAILED = ("The assistant could not continue. Try again, or tell the study facilitator "
               "if this keeps happening.")


@dataclass(frozen=True)
class ChatOptions:
    """Per-condition settings of the chat (see study/conditions.py)."""

    show_pool: bool = True
    max_questions: int = 5
    ig_threshold: float = 0.05
    free_text: bool = False
    show_sql: bool = True


def chat_agent(pool: PreparedPool, namespace: str, options: ChatOptions, *,
               saved: dict[str, Any] | None = None,
               saved_session: dict[str, Any] | None = None, llm: LLMAgent | None = None,
               open_db: Callable[[], TaskDatabase] | None = None) -> ChatAgent:
    """This browser session's agent for ``pool``, restored from ``saved`` on first use.

    With ``llm`` (and ``open_db`` for its datasource tools) a new chat is an LLM chat; a saved
    chat resumes as the agent it was started with while that agent is available.
    """
    key = f"{PREFIX}.chat.{namespace}.{pool.task_id}"
    agent = st.session_state.get(key)
    stale = isinstance(agent, LLMChatAgent) and llm is None  # e.g. the study budget is spent
    if not isinstance(agent, ChatAgent) or agent.session.pool is not pool or stale:
        session = (RepairSession.from_dict(saved_session, pool) if saved and saved_session
                   else RepairSession(pool))
        was_llm = bool(saved) and (saved or {}).get("kind") == LLMChatAgent.kind
        if saved and was_llm and llm is not None and open_db is not None:
            agent = LLMChatAgent.restore(saved, session, llm, open_db)
        elif saved and not was_llm:
            agent = ChatAgent.from_dict(saved, session)
        elif llm is not None and open_db is not None:
            agent = LLMChatAgent(session, llm, open_db)
        else:
            agent = ChatAgent(RepairSession(pool), k=options.max_questions,
                              gain_threshold=options.ig_threshold)
        st.session_state[key] = agent
    return agent


def step(agent: ChatAgent, log: Log, save: Save, action: Callable[[], None]) -> None:
    """Run one agent action, log what it changed and save the chat."""
    mark = agent.mark()
    action()
    for event_type, payload in agent.events_since(mark):
        log(event_type, payload)
    if isinstance(agent, LLMChatAgent) and agent.error_:  # this step failed (a success clears it)
        LOG.warning("chat step failed for task %s: %s", agent.session.pool.task_id, agent.error_)
        log("chat.fail", {"attempt": agent.attempt_, "error": agent.error_[:MAX_DETAIL]})
    save(agent)


def _typed(agent: ChatAgent, log: Log, save: Save, key: str) -> None:
    text = (st.session_state.get(key) or "").strip()
    if not text or agent.status_ != ASKING:
        return
    problem = answer_problem(text)
    if problem:  # over the bound: nothing reaches the agent or the trace; the chat says why
        st.session_state[f"{key}.problem"] = problem
        return
    st.session_state.pop(f"{key}.problem", None)
    answer = parse_reply(text)
    if answer is None and not agent.free_answers:
        step(agent, log, save, partial(agent.not_understood, text))
    else:
        step(agent, log, save, partial(agent.reply, answer or text, text))


def _confirm(agent: ChatAgent, log: Log, save: Save, on_submit: OnSubmit | None) -> None:
    step(agent, log, save, agent.confirm)
    sql = agent.sql or ""
    log("submit", {"candidate": agent.candidate_, "sql": sql, "attempt": agent.attempt_,
                   "via": "chat", "pool": agent.pool_.stats(), "step": agent.session.step,
                   "history": [d.to_dict() for d in agent.session.history], **agent.info()})
    if on_submit is not None and agent.sql is not None:
        on_submit(agent.candidate_, sql)


def _reject(agent: ChatAgent, log: Log, save: Save, on_reject: OnSubmit | None) -> None:
    step(agent, log, save, agent.reject)
    log("result.reject", {"candidate": agent.candidate_, "sql": agent.sql or "",
                          "attempt": agent.attempt_, "via": "chat"})
    if on_reject is not None and agent.sql is not None:
        on_reject(agent.candidate_, agent.sql or "")


_INLINE = re.compile(r"([\\`*_\[\]~|$])")  # emphasis, code, links, strike, tables, LaTeX
_LEADING = re.compile(r"^(\s*)(#|[+\-](?=\s)|\d+(?=[.)]))")  # headings, list items


def safe(text: object) -> str:
    """``text`` shown literally inside HTML-enabled Markdown: HTML escaped, Markdown escaped.

    Question texts and chat messages come from the LLM, answers and drop reasons from the
    participant's typing, so none of them may become markup (``<script>``, ``<b>``, links,
    images, strike-through).
    """
    out = _INLINE.sub(r"\\\1", escape(str(text), quote=False)).replace("\n", " ")
    def mark(m: re.Match[str]) -> str:  # "\#", "\-"; "1\." (a backslash escapes punctuation)
        lead, sym = m.group(1), m.group(2)
        return lead + (sym + "\\" if sym[0].isdigit() else "\\" + sym)
    return _LEADING.sub(mark, out)


def pool_panel(agent: ChatAgent) -> None:
    """The question pool: pending (by priority), asked with answers, dropped with reasons."""
    st.subheader("Question pool", anchor=False)
    pool = agent.pool_
    qs = list(pool.questions.values())
    rows = {"Pending": [safe(q.text) for q in pool.pending],  # most useful first; no bits
            "Asked": [f"{safe(q.text)} → **{safe(q.answer) if q.answer else 'waiting…'}**"
                      for q in qs if q.status in (ASKED, ANSWERED)],
            "Dropped": [f"~~{safe(q.text)}~~ <small>— {safe(q.reason)}</small>" for q in qs
                        if q.status == DROPPED]}
    for title, lines in rows.items():
        st.markdown(f"**{title}** ({len(lines)})")
        if lines:
            st.markdown("\n".join(f"- {line}" for line in lines), unsafe_allow_html=True)
    stats = pool.stats()
    st.caption(f"{stats['planned']} planned · {stats['added']} added · {stats['dropped']} "
               f"dropped · {stats['asked']} asked")


def _controls(agent: ChatAgent, log: Log, save: Save, key: Callable[[str], str],
              options: ChatOptions, on_submit: OnSubmit | None,
              on_reject: OnSubmit | None) -> None:
    pool = agent.session.pool
    if isinstance(agent, LLMChatAgent) and agent.error_:  # never quoted: it names the API
        notice(CHAT_FAILED)
        st.button("Try again", key=key("chat.retry"), icon=":material/refresh:",
                  on_click=partial(step, agent, log, save, agent.retry))
        return
    if agent.status_ == ASKING:
        row = st.container(horizontal=True, gap="small")
        for label, answer in (("Yes", YES), ("No", NO), ("Not specified", NOT_SPECIFIED)):
            row.button(label, key=key(f"chat.{answer.replace(' ', '-')}"),
                       type="primary" if answer == YES else "secondary",
                       on_click=partial(step, agent, log, save,
                                        partial(agent.reply, answer)))
        if options.free_text:
            problem = st.session_state.get(f"{key('chat.text')}.problem")
            if problem:
                st.error(problem, icon=":material/error:")
            st.chat_input("Or type your answer", key=key("chat.text"), max_chars=MAX_ANSWER_CHARS,
                          on_submit=partial(_typed, agent, log, save, key("chat.text")))
        return
    with st.chat_message("assistant"):
        if isinstance(agent, LLMChatAgent) and agent.sql is not None:
            show_query(agent.sql, agent.result(), show_sql=options.show_sql)
        else:
            show_result(pool, agent.candidate_, show_sql=options.show_sql)
    if agent.status_ == CONFIRM:
        row = st.container(horizontal=True, gap="small")
        row.button("Confirm", key=key("chat.confirm"), type="primary",
                   on_click=partial(_confirm, agent, log, save, on_submit),
                   help="This is what I meant: submit it as my answer")
        row.button("Not what I meant", key=key("chat.reject"),
                   on_click=partial(_reject, agent, log, save, on_reject))
    elif agent.status_ == CONFIRMED:
        st.success("Confirmed: this query is your answer to the task.")
    elif agent.status_ == REJECTED:
        st.info("You said this is not what you meant. You may start over and answer the "
                "questions again, or continue.")
        st.button("Start over", key=key("chat.restart"), icon=":material/restart_alt:",
                  on_click=partial(step, agent, log, save, agent.restart))


def render_chat(pool: PreparedPool, agent: ChatAgent, *, log: Log, save: Save,
                options: ChatOptions = ChatOptions(), on_submit: OnSubmit | None = None,
                on_reject: OnSubmit | None = None) -> ChatAgent:
    """Draw the chat (and the pool when shown) and wire its buttons to the agent."""
    if agent.status_ == NEW:
        step(agent, log, save, agent.start)

    def key(name: str) -> str:
        return f"{PREFIX}.{pool.task_id}.{name}"

    if options.show_pool:
        main, side = st.columns([2, 1], gap="medium")
    else:
        main, side = st.container(), None
    with main:
        with st.chat_message("user"):
            st.markdown(pool.question)
        attempt = 1
        for m in agent.messages_:
            if m.get("attempt", 1) != attempt:
                attempt = m["attempt"]
                st.caption(f"— Started over (attempt {attempt}) —")
            with st.chat_message("assistant" if m["role"] == "agent" else "user"):
                st.markdown(safe(m["text"]))
        _controls(agent, log, save, key, options, on_submit, on_reject)
    if side is not None:
        with side, st.container(border=True):
            pool_panel(agent)
    return agent


__all__ = ["ChatOptions", "chat_agent", "pool_panel", "render_chat", "safe", "step"]
