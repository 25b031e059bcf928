"""The LLM clarification agent: a ReAct tool loop over the Anthropic Messages API (paper App. B).

Tools: datasource (``get_schema``, ``describe_columns``, ``probe_values``, ``run_sql`` — all
read-only through :mod:`core.execute`), clarification (``ask`` for ``naive`` and
``plan-prompt``; for ``planpool`` it is masked and replaced by the pool tools ``init_pool``,
``add_question``, ``drop_question``, ``ask_next``, ``show_pool``) and ``submit``. In
``planpool`` a submit is refused while the :class:`QuestionPool` holds an open question, and the
tool result names what is pending. The loop is bounded by ``max_turns``. Clients follow
:mod:`core.sampler`: the key is resolved there, held privately, never logged; the SDK's own
retries are off and transient failures are retried here with backoff.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anthropic
from sqlglot import exp

from core.agents import NOT_SPECIFIED, Episode, SimulatedChatUser
from core.errors import GenerationError
from core.execute import TaskDatabase, open_database
from core.planpool import Clock, PoolError, PoolNotEmptyError, QuestionPool, epoch_ms
from core.questions import render_question
from core.sampler import DEFAULT_MODEL, resolve_api_key
from core.similarity import output_key

_BASE = ("You are a data analyst agent answering a user's question over a {dialect} database. "
         "Explore the database with the tools, clarify what the user means where the request "
         "is underspecified, then call submit(sql) with exactly one SQL query.")
SYSTEM = {
    "naive": _BASE + " Ask the user with ask(question) whenever you need to.",
    "plan-prompt": _BASE + " Before asking, write a ranked plan of the clarification "
                   "questions you need, then ask them with ask(question).",
    "planpool": _BASE + " Keep your clarification plan in the question pool: init_pool with "
                "a ranked list of questions, add_question when you discover a new need, "
                "drop_question(id, reason) when one becomes irrelevant, and ask_next to ask the "
                "highest-priority one. submit is refused while any question is pending.",
}
_RETRY = (anthropic.RateLimitError, anthropic.InternalServerError, anthropic.APIConnectionError)


def _tool(name: str, description: str, **props: Any) -> dict[str, Any]:
    return {"name": name, "description": description,
            "input_schema": {"type": "object", "properties": props, "required": list(props)}}


_S = {"type": "string"}
DATASOURCE_TOOLS = [
    _tool("get_schema", "The CREATE TABLE statements of the database."),
    _tool("describe_columns", "Columns of a table with a few sample rows.", table=_S),
    _tool("probe_values", "Up to 20 distinct values of a column.", table=_S, column=_S),
    _tool("run_sql", "Run one read-only SELECT and see up to 20 rows.", sql=_S),
]
ASK_TOOL = _tool("ask", "Ask the user one clarification question.", question=_S)
POOL_TOOLS = [
    _tool("init_pool", "Initialise the pool with a ranked list of questions (best first).",
          questions={"type": "array", "items": _S}),
    _tool("add_question", "Add a newly discovered clarification question.", question=_S),
    _tool("drop_question", "Drop a pending question, stating why.", id=_S, reason=_S),
    _tool("ask_next", "Ask the user the highest-priority pending question."),
    _tool("show_pool", "Show the pool: pending, asked and dropped questions."),
]
SUBMIT_TOOL = _tool("submit", "Submit the final SQL query and end the task.", sql=_S)


def tools_for(variant: str) -> list[dict[str, Any]]:
    """The tool list of a variant (planpool masks ``ask`` behind the pool)."""
    if variant not in SYSTEM:
        raise ValueError(f"unknown variant {variant!r}; choose one of {', '.join(SYSTEM)}")
    clarify = POOL_TOOLS if variant == "planpool" else [ASK_TOOL]
    return [*DATASOURCE_TOOLS, *clarify, SUBMIT_TOOL]


@dataclass
class LLMEpisode:
    """A transcript of one LLM run: tool calls, questions, pool, the submitted SQL."""

    variant: str
    calls: list[dict[str, Any]] = field(default_factory=list)  # name, input, result, error
    asked: list[dict[str, Any]] = field(default_factory=list)  # text, answer
    submitted_sql: str | None = None
    refused: int = 0
    stop: str = ""
    pool: QuestionPool | None = None


def _table(result: Any, limit: int = 20) -> str:
    if not result.ok:
        return f"error: {result.error}"
    rows = "\n".join(repr(tuple(r)) for r in result.rows[:limit])
    more = f"\n… ({len(result.rows)} rows)" if len(result.rows) > limit else ""
    return f"columns: {', '.join(result.columns)}\n{rows or '(no rows)'}{more}"


class LLMAgent:
    """Runs the tool loop for one task; the API key is held privately, never shown."""

    def __init__(self, *, model: str = DEFAULT_MODEL, max_turns: int = 20, max_tokens: int = 1024,
                 api_key: str | None = None, base_url: str | None = None,
                 timeout_s: float = 60.0, max_retries: int = 3, backoff_s: float = 1.0,
                 sleep: Callable[[float], None] = time.sleep, clock: Clock = epoch_ms):
        self.model, self.max_turns, self.max_tokens = model, max_turns, max_tokens
        self.base_url, self.timeout_s = base_url, timeout_s
        self.max_retries, self.backoff_s = max_retries, backoff_s
        self._api_key = resolve_api_key(api_key)
        self._sleep, self._clock = sleep, clock

    def __repr__(self) -> str:
        return f"LLMAgent(model={self.model!r}, base_url={self.base_url!r}, api_key=<hidden>)"

    def _create(self, client: anthropic.Anthropic, **kwargs: Any) -> Any:
        for attempt in range(self.max_retries + 1):
            try:
                return client.messages.create(**kwargs)
            except _RETRY as exc:
                if attempt == self.max_retries:
                    raise GenerationError(f"the Anthropic API kept failing ({type(exc).__name__})"
                                          f" after {attempt + 1} attempts") from None
                self._sleep(self.backoff_s * 2 ** attempt)
            except anthropic.APIStatusError as exc:
                detail = str(exc.api_message or exc.status_code).replace(self._api_key, "<hidden>")
                raise GenerationError(f"the Anthropic API refused the request (HTTP "
                                      f"{exc.status_code}: {detail})") from None
        raise AssertionError("unreachable")

    def run(self, question: str, db: TaskDatabase, user: Callable[[str], str],
            variant: str = "planpool") -> LLMEpisode:
        """Clarify ``question`` with ``user`` (question text -> answer) and submit SQL."""
        tools = tools_for(variant)
        ep = LLMEpisode(variant, pool=QuestionPool(self._clock) if variant == "planpool" else None)
        system = SYSTEM[variant].format(dialect=db.dialect)
        messages: list[dict[str, Any]] = [{"role": "user", "content": f"Request: {question}"}]
        client = anthropic.Anthropic(api_key=self._api_key, base_url=self.base_url,
                                     max_retries=0, timeout=self.timeout_s)
        try:
            for _ in range(self.max_turns):
                msg = self._create(client, model=self.model, max_tokens=self.max_tokens,
                                   system=system, tools=tools, messages=messages)
                content = [_block(b) for b in msg.content]
                messages.append({"role": "assistant", "content": content})
                uses = [b for b in content if b["type"] == "tool_use"]
                if not uses:
                    messages.append({"role": "user", "content": "Continue with the tools; "
                                     "finish by calling submit(sql)."})
                    continue
                results = []
                for use in uses:
                    text, error = self._dispatch(use["name"], use["input"], db, user, ep)
                    ep.calls.append({"name": use["name"], "input": use["input"],
                                     "result": text, "error": error})
                    results.append({"type": "tool_result", "tool_use_id": use["id"],
                                    "content": text, "is_error": error})
                messages.append({"role": "user", "content": results})
                if ep.submitted_sql is not None:
                    ep.stop = "submitted"
                    return ep
            ep.stop = "turn budget"
            return ep
        finally:
            client.close()

    def _dispatch(self, name: str, args: dict[str, Any], db: TaskDatabase,
                  user: Callable[[str], str], ep: LLMEpisode) -> tuple[str, bool]:
        """Run one tool call; returns (tool_result text, is_error)."""
        try:
            return _datasource(name, args, db) if name in _DS else self._clarify(name, args,
                                                                                 user, ep), False
        except (PoolError, KeyError, ValueError) as exc:
            if isinstance(exc, PoolNotEmptyError):
                ep.refused += 1
            return (str(exc) if not isinstance(exc, KeyError) else f"missing argument {exc}"), True

    def _clarify(self, name: str, args: dict[str, Any], user: Callable[[str], str],
                 ep: LLMEpisode) -> str:
        pool = ep.pool
        if name == "submit":
            sql = str(args["sql"])
            if pool is not None:
                pool.submit(sql)
            ep.submitted_sql = sql
            return "submitted"
        if name == "ask" and pool is None:
            reply = user(str(args["question"]))
            ep.asked.append({"text": str(args["question"]), "answer": reply})
            return reply
        if pool is None or name not in ("init_pool", "add_question", "drop_question",
                                        "ask_next", "show_pool"):
            raise ValueError(f"unknown tool {name!r}")
        if name == "init_pool":
            ids = pool.init([{"text": str(q)} for q in args["questions"]])
            return "pool initialised: " + ", ".join(ids)
        if name == "add_question":
            return "added " + pool.add(str(args["question"]), float(args.get("priority", 0.0)))
        if name == "drop_question":
            pool.drop(str(args["id"]), str(args["reason"]))
            return f"dropped {args['id']}; {len(pool.open)} question(s) still open"
        if name == "ask_next":
            q = pool.next()
            reply = user(q.text)
            ep.asked.append({"text": q.text, "answer": reply})
            if reply.strip().lower().rstrip(".") == NOT_SPECIFIED:
                pool.drop(q.id, "not specified by the user")
            else:
                pool.answer(q.id, reply)
            return f"{q.id}: {q.text}\nuser: {reply}"
        return json.dumps({k: [f"{q.id} {q.status}: {q.text}" for q in v] for k, v in
                           (("open", pool.open), ("all", list(pool.questions.values())))})


_DS = {"get_schema", "describe_columns", "probe_values", "run_sql"}


def _known(db: TaskDatabase, table: str, column: str | None = None) -> tuple[str, str | None]:
    schema = db.schema()
    t = table.lower()
    if t not in schema:
        raise ValueError(f"no table {table!r}; tables: {', '.join(sorted(schema))}")
    if column is not None and column.lower() not in schema[t]:
        raise ValueError(f"no column {column!r} in {t}; columns: {', '.join(schema[t])}")
    return t, None if column is None else column.lower()


def _datasource(name: str, args: dict[str, Any], db: TaskDatabase) -> str:
    if name == "get_schema":
        return db.ddl()
    if name == "describe_columns":
        t, _ = _known(db, str(args["table"]))
        return f"{t}: {', '.join(db.schema()[t])}\n" + _table(db.sample_rows(t, 3))
    if name == "probe_values":
        t, c = _known(db, str(args["table"]), str(args["column"]))
        q = exp.to_identifier
        col, tab = q(c).sql(db.dialect), q(t).sql(db.dialect)
        return _table(db.execute(f"SELECT DISTINCT {col} FROM {tab} LIMIT 20"))
    return _table(db.execute(str(args["sql"])))


def _block(b: Any) -> dict[str, Any]:
    if b.type == "tool_use":
        return {"type": "tool_use", "id": b.id, "name": b.name, "input": dict(b.input)}
    return {"type": "text", "text": getattr(b, "text", "")}


_WORD = re.compile(r"[a-z0-9]+")


class MatchingUser:
    """The two-stage simulated user (App. B): map a question to a decision variable, answer it.

    A free-text question is matched to the session's variable whose rendered question shares
    the most words (Jaccard ≥ ``min_overlap``); unmatched questions are "not specified".
    """

    def __init__(self, chat: SimulatedChatUser, min_overlap: float = 0.35):
        self.chat = chat
        self.min_overlap = min_overlap
        s = chat.session
        self.options = [(v.keys, set(_WORD.findall(render_question(v.features, s.pool.dialect)
                                                   .lower()))) for v in s.variables()]
        self.matched: list[tuple[str, ...] | None] = []  # per question asked

    def __call__(self, question: str) -> str:
        words = set(_WORD.findall(question.lower()))
        best, score = None, 0.0
        for keys, opt in self.options:
            j = len(words & opt) / max(1, len(words | opt))
            if j > score:
                best, score = keys, j
        if best is None or score < self.min_overlap:
            self.matched.append(None)
            return NOT_SPECIFIED
        self.matched.append(best)
        return self.chat.answer_keys(best)


def llm_runner(model: str | None = None, **kwargs: Any) -> Callable[..., tuple[Episode, str | None]]:
    """A per-run callable for :func:`core.planpool_eval.evaluate_task` (--agent llm)."""
    agent = LLMAgent(model=model or DEFAULT_MODEL, **kwargs)

    def run(task: Any, pool: Any, session: Any, gold: int, variant: str
            ) -> tuple[Episode, str | None]:
        user = MatchingUser(SimulatedChatUser(session, gold))
        db = open_database(task.database)
        try:
            llm = agent.run(task.question, db, user, variant)
            key = output_key(db.execute(llm.submitted_sql)) if llm.submitted_sql else None
        finally:
            db.close()
        asked = [{"keys": list(k or ()), "text": a["text"], "answer": a["answer"]}
                 for a, k in zip(llm.asked, user.matched, strict=True)]
        ep = Episode(variant, asked,
                     stop=llm.stop, submitted_sql=llm.submitted_sql,
                     pool=llm.pool.to_dict() if llm.pool else None)
        ep.planned = llm.pool.stats()["planned"] if llm.pool else 0
        return ep, key

    return run


__all__ = ["LLMAgent", "LLMEpisode", "MatchingUser", "SYSTEM", "llm_runner", "tools_for"]
