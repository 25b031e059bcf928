"""The LLM clarification agent: a resumable ReAct tool loop over the Anthropic Messages API.

The agent is step-wise (paper App. B): :meth:`LLMAgent.start` makes a plain-JSON state (model,
variant, message history, the pending ``tool_use`` when it waits for the user, the
:class:`QuestionPool` as ``to_dict``, turn count, token usage) and :meth:`LLMAgent.advance` runs
tool calls (:mod:`core.planpool.llm_tools`) until the model asks the user (``ask`` / ``ask_next``: status
``asking``, the question in ``state["pending"]``), submits (status ``submitted``; in
``planpool`` a submit is refused while the pool holds an open question, and the tool result
names what is pending) or exhausts ``max_turns`` (status ``turn budget``). ``advance`` never
mutates its input, so a state saved mid-conversation resumes identically. :meth:`LLMAgent.run`
is the blocking loop over the steps for a callback user (the CLI and the simulated user).
Clients follow :mod:`core.generation.sampler`: the key is resolved there, held privately, never logged or
stored in the state; transient failures (rate limits, overload, connection) are retried by the SDK
(``max_retries``: exponential backoff with jitter that honours ``retry-after``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.engine.errors import GenerationError
from core.engine.execute import TaskDatabase
from core.generation.sampler import DEFAULT_MODEL, resolve_api_key
from core.planpool.agents import NOT_SPECIFIED
from core.planpool.llm_tools import DATASOURCE, POOL_OPS, SYSTEM, block_dict, datasource, tools_for
from core.planpool.pool import Clock, PoolError, PoolNotEmptyError, QuestionPool, epoch_ms

if TYPE_CHECKING:  # imported where the API is called (see core.generation.sampler)
    import anthropic

NEW, ASKING, SUBMITTED, BUDGET = "new", "asking", "submitted", "turn budget"
UNSPECIFIED_REASON = "not specified by the user"
NUDGE = "Continue with the tools; finish by calling submit(sql)."
State = dict[str, Any]


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
    usage: dict[str, int] = field(default_factory=dict)


def restore_pool(state: State, clock: Clock = epoch_ms) -> QuestionPool | None:
    """The state's question pool (replayed from its history), or None without a pool."""
    if state.get("pool") is None:
        return None
    pool = QuestionPool.from_dict(state["pool"])
    pool.clock = clock
    return pool


def episode(state: State, clock: Clock = epoch_ms) -> LLMEpisode:
    """The transcript of a (finished or paused) state."""
    stop = state["status"] if state["status"] in (SUBMITTED, BUDGET) else ""
    return LLMEpisode(state["variant"], [dict(c) for c in state["calls"]],
                      [dict(a) for a in state["asked"]], state["submitted_sql"],
                      state["refused"], stop, restore_pool(state, clock), dict(state["usage"]))


class LLMAgent:
    """Runs the tool loop step by step; the API key is held privately, never shown."""

    def __init__(self, *, model: str = DEFAULT_MODEL, max_turns: int = 20, max_tokens: int = 1024,
                 api_key: str | None = None, base_url: str | None = None,
                 timeout_s: float = 60.0, max_retries: int = 3, clock: Clock = epoch_ms):
        self.model, self.max_turns, self.max_tokens = model, max_turns, max_tokens
        self.base_url, self.timeout_s = base_url, timeout_s
        self.max_retries = max_retries
        self._api_key = resolve_api_key(api_key)
        self._clock = clock

    def __repr__(self) -> str:
        return f"LLMAgent(model={self.model!r}, base_url={self.base_url!r}, api_key=<hidden>)"

    def _create(self, client: anthropic.Anthropic, **kwargs: Any) -> Any:
        """One Messages call (the SDK retries transient failures); failures as GenerationError."""
        import anthropic

        transient = (anthropic.RateLimitError, anthropic.InternalServerError,
                     anthropic.APIConnectionError)  # what the SDK retries before it raises
        try:
            return client.messages.create(**kwargs)
        except transient as exc:
            raise GenerationError(f"the Anthropic API kept failing ({type(exc).__name__}) after "
                                  f"{self.max_retries + 1} attempts") from None
        except anthropic.APIStatusError as exc:
            detail = str(exc.api_message or exc.status_code).replace(self._api_key, "<hidden>")
            raise GenerationError(f"the Anthropic API refused the request (HTTP "
                                  f"{exc.status_code}: {detail})") from None

    # ----- the step API --------------------------------------------------------------------
    def start(self, question: str, variant: str = "planpool", dialect: str = "sqlite") -> State:
        """A fresh state for ``question`` (no API call yet; :meth:`advance` runs it)."""
        tools_for(variant)  # validates the variant
        pool = QuestionPool(self._clock) if variant == "planpool" else None
        return {"model": self.model, "variant": variant, "dialect": dialect,
                "request": question,
                "messages": [{"role": "user", "content": f"Request: {question}"}],
                "turn": None, "pending": None, "pool": pool.to_dict() if pool else None,
                "turns": 0, "usage": {"input_tokens": 0, "output_tokens": 0}, "status": NEW,
                "submitted_sql": None, "asked": [], "calls": [], "refused": 0}

    def advance(self, state: State, db: TaskDatabase, user_answer: str | None = None) -> State:
        """Resume ``state`` (with the answer to its pending question) until the next stop."""
        state = json.loads(json.dumps(state))  # never mutate the caller's (saved) state
        pool = restore_pool(state, self._clock)
        if state["pending"] is not None:
            if user_answer is None:
                raise ValueError("the agent is waiting for the user's answer to "
                                 f"{state['pending']['question']!r}")
            self._answered(state, pool, str(user_answer))
        elif user_answer is not None:
            raise ValueError("no question is waiting for an answer")
        if state["status"] in (SUBMITTED, BUDGET):
            return state
        client: anthropic.Anthropic | None = None
        try:
            while True:
                if state["turn"] is not None:
                    if not self._run_uses(state, pool, db):
                        break  # asking the user
                    state["messages"].append({"role": "user", "content": state["turn"]["results"]})
                    state["turn"] = None
                    if state["submitted_sql"] is not None:
                        state["status"] = SUBMITTED
                        break
                if state["turns"] >= self.max_turns:
                    state["status"] = BUDGET
                    break
                if client is None:
                    import anthropic

                    client = anthropic.Anthropic(api_key=self._api_key, base_url=self.base_url,
                                                 max_retries=self.max_retries,
                                                 timeout=self.timeout_s)
                self._call(client, state)
        finally:
            if client is not None:
                client.close()
            state["pool"] = pool.to_dict() if pool is not None else None
        return state

    def _call(self, client: anthropic.Anthropic, state: State) -> None:
        """One Messages-API turn: the reply joins the history; its tool uses become the turn."""
        msg = self._create(client, model=state["model"], max_tokens=self.max_tokens,
                           system=SYSTEM[state["variant"]].format(dialect=state["dialect"]),
                           tools=tools_for(state["variant"]), messages=state["messages"])
        state["turns"] += 1
        usage = getattr(msg, "usage", None)
        for k in ("input_tokens", "output_tokens"):
            state["usage"][k] += int(getattr(usage, k, 0) or 0)
        content = [block_dict(b) for b in msg.content]
        state["messages"].append({"role": "assistant", "content": content})
        uses = [b for b in content if b["type"] == "tool_use"]
        if uses:
            state["turn"] = {"uses": uses, "results": []}
        else:
            state["messages"].append({"role": "user", "content": NUDGE})

    def _run_uses(self, state: State, pool: QuestionPool | None, db: TaskDatabase) -> bool:
        """Run the turn's remaining tool uses; False when one asks the user (state paused)."""
        turn = state["turn"]
        for use in turn["uses"][len(turn["results"]):]:
            if use["name"] in ("ask", "ask_next"):
                if self._ask(state, pool, use):
                    return False
                continue  # it could not be asked: its error result is recorded
            text, error = self._dispatch(use["name"], use["input"], db, pool, state)
            self._result(state, use, text, error)
        return True

    def _ask(self, state: State, pool: QuestionPool | None, use: dict[str, Any]) -> bool:
        """Pause on an ask; False (with an error result recorded) when it cannot be asked."""
        try:
            if use["name"] == "ask" and pool is None:
                text, qid = str(use["input"]["question"]), None
            elif use["name"] == "ask_next" and pool is not None:
                q = pool.next()
                text, qid = q.text, q.id
            else:
                raise ValueError(f"unknown tool {use['name']!r}")
        except (PoolError, KeyError, ValueError, TypeError) as exc:
            self._result(state, use, _error_text(exc), True)
            return False
        state["pending"] = {"tool_use_id": use["id"], "question": text, "qid": qid}
        state["status"] = ASKING
        return True

    def _answered(self, state: State, pool: QuestionPool | None, reply: str) -> None:
        """Record the user's reply to the pending question as its tool result."""
        p = state["pending"]
        state["asked"].append({"text": p["question"], "answer": reply})
        if p["qid"] is not None and pool is not None:
            if reply.strip().lower().rstrip(".") == NOT_SPECIFIED:
                pool.drop(p["qid"], UNSPECIFIED_REASON)
            else:
                pool.answer(p["qid"], reply)
            text = f"{p['qid']}: {p['question']}\nuser: {reply}"
        else:
            text = reply
        use = next(u for u in state["turn"]["uses"] if u["id"] == p["tool_use_id"])
        state["pending"] = None
        state["status"] = "running"
        self._result(state, use, text, False)

    @staticmethod
    def _result(state: State, use: dict[str, Any], text: str, error: bool) -> None:
        state["calls"].append({"name": use["name"], "input": use["input"], "result": text,
                               "error": error})
        state["turn"]["results"].append({"type": "tool_result", "tool_use_id": use["id"],
                                         "content": text, "is_error": error})

    def _dispatch(self, name: str, args: dict[str, Any], db: TaskDatabase,
                  pool: QuestionPool | None, state: State) -> tuple[str, bool]:
        """Run one non-asking tool call; returns (tool_result text, is_error)."""
        try:
            return (datasource(name, args, db) if name in DATASOURCE
                    else _clarify(name, args, pool, state)), False
        except (PoolError, KeyError, ValueError, TypeError) as exc:  # TypeError: the API
            if isinstance(exc, PoolNotEmptyError):  # does not enforce the input schema
                state["refused"] += 1
            return _error_text(exc), True

    def run(self, question: str, db: TaskDatabase, user: Callable[[str], str],
            variant: str = "planpool") -> LLMEpisode:
        """Clarify ``question`` with ``user`` (question text -> answer) and submit SQL."""
        state = self.advance(self.start(question, variant, db.dialect), db)
        while state["status"] == ASKING:
            state = self.advance(state, db, user(state["pending"]["question"]))
        return episode(state, self._clock)


def _error_text(exc: Exception) -> str:
    """The tool_result text of a failed call: what was missing or wrong, for the model."""
    if isinstance(exc, KeyError):
        return f"missing argument {exc}"
    if isinstance(exc, TypeError):
        return f"an argument has the wrong type ({exc}); follow the tool's input schema"
    return str(exc)


def _clarify(name: str, args: dict[str, Any], pool: QuestionPool | None, state: State) -> str:
    if name == "submit":
        sql = str(args["sql"])
        if pool is not None:
            pool.submit(sql)
        state["submitted_sql"] = sql
        return "submitted"
    if pool is None or name not in POOL_OPS:
        raise ValueError(f"unknown tool {name!r}")
    if name == "init_pool":
        ids = pool.init([{"text": str(q)} for q in args["questions"]])
        return "pool initialised: " + ", ".join(ids)
    if name == "add_question":
        return "added " + pool.add(str(args["question"]), float(args.get("priority", 0.0)))
    if name == "drop_question":
        pool.drop(str(args["id"]), str(args["reason"]))
        return f"dropped {args['id']}; {len(pool.open)} question(s) still open"
    return json.dumps({k: [f"{q.id} {q.status}: {q.text}" for q in v] for k, v in
                       (("open", pool.open), ("all", list(pool.questions.values())))})


__all__ = ["ASKING", "BUDGET", "LLMAgent", "LLMEpisode", "SUBMITTED", "SYSTEM", "episode",
           "restore_pool", "tools_for"]
