"""The participant flow's views: consent, questionnaires, onboarding, practice, tasks, the end.

Every view reads the current step and answers from the store (through :class:`Runner`) on each
rerun, saves answers in widget callbacks as they are given, and moves on only through
``Runner.advance`` after the step's required fields pass (messages shown per item). The repair
workspace's decision history is saved with the progress after every decision.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any
from urllib.parse import quote

import streamlit as st

from study import flow
from study.audio import audio_root, save_recording
from study.limits import MAX_ANSWER_CHARS, answer_problem
from study.questionnaires import Item, Questionnaire
from study.registry import StudyEntry
from study.runner import Runner, decline, join
from study.spec import STAGES, StudySpec
from study.store import Store
from ui import study_cache as data
from ui.state import prepare_session
from ui.visibility import tab_visibility
from ui.withdraw import link_stage, participant_withdraw

# ui.condition_views (the workspace, chat and single-shot: sklearn, scipy, anthropic, ~5-10 s
# to import in a fresh process) and pandas are imported where a step needs them, so consent
# and the questionnaires never wait for them; ui.warmup imports them in the background.
WORKSPACE_CONDITIONS = ("pleasqlarify", "atomic-only")  # conditions that show the workspace

RUNNER, ERRORS, DECLINED, TAB_SEQ = "pq.runner", "pq.errors", "pq.declined", "pq.tab_seq"
BAD_STAGE, PREFETCHED = "pq.bad_stage", "pq.prefetched"


def runner_for(store: Store, spec: StudySpec, participant: str) -> Runner | None:
    """This browser session's runner for ``participant`` (a reconnect logs session.start)."""
    r = st.session_state.get(RUNNER)
    if isinstance(r, Runner) and r.participant == participant and r.spec.id == spec.id:
        return r
    try:
        r = Runner(store, spec, participant)
    except KeyError:
        return None
    r.log("session.start", {"resumed": True}, task="", subtask="")
    store.touch(participant, int(r.clock() * 1000))
    st.session_state[RUNNER] = r
    st.session_state.pop(ERRORS, None)
    return r


def _errors() -> dict[str, str]:
    return st.session_state.setdefault(ERRORS, {})


def _clear_errors() -> bool:
    """Drop the step's messages once the participant acts (True if there were any)."""
    had = bool(_errors())
    _errors().clear()
    return had


def _show_error(item: str) -> None:
    msg = _errors().get(item)
    if msg:
        st.error(msg, icon=":material/error:")


def _leave(runner: Runner, step: flow.Step, questionnaire: Questionnaire | None = None,
           collect: dict[str, str] | None = None) -> None:
    """Next-button callback: save pending widget values, check required fields, advance.

    The widgets' own callbacks have usually saved every value already: one read of the
    answers finds the few that are pending, instead of a write transaction per item.
    """
    too_long: dict[str, str] = {}
    for item, key in (collect or {}).items():
        value = st.session_state.get(key)
        problem = answer_problem(value)
        if problem:
            too_long[item.rpartition("/")[2] if questionnaire else item] = problem
        elif value is not None:
            runner.answer(item, value)
    problems = flow.step_problems(step, runner.answers(), questionnaire,
                                  submitted=runner.finished(step.task)) | too_long
    st.session_state[ERRORS] = problems
    if not problems:
        runner.advance(step.id)


def _save(runner: Runner, item: str, key: str) -> None:
    """Widget callback: upsert the answer as it is given."""
    value = st.session_state.get(key)
    problem = answer_problem(value)
    if problem:  # over the bound: nothing is stored, the item says why
        _errors()[item.rpartition("/")[2] if "/" in item and ":" not in item else item] = problem
    elif value is not None:
        runner.answer(item, value)
        _errors().pop(item.rpartition("/")[2], None)
        _errors().pop(item, None)


def _next_button(runner: Runner, step: flow.Step, label: str = "Continue", *,
                 primary: bool = True, **kw: Any) -> None:
    if _errors():
        st.warning("Some answers are missing; see the messages above.", icon=":material/info:")
    st.button(label, type="primary" if primary else "secondary", key=f"pq.next.{step.id}",
              disabled=runner.paused(), on_click=partial(_leave, runner, step, **kw))


# -- no study in the link ---------------------------------------------------------------------
def study_index(entries: Mapping[str, StudyEntry],
                blocking: Callable[[StudyEntry], list]) -> None:
    """The page without ``?study=``: every study open to participants, with its link (what a
    visitor who opened "Participant session" from the sidebar needs), and what the others lack."""
    st.header("Participant sessions")
    open_ = {sid: e for sid, e in entries.items() if e.spec is not None and not blocking(e)}
    if not open_:
        st.info("No study is open to participants yet. A researcher adds or fixes studies on "
                "the Setup page.", icon=":material/info:")
        return
    st.write("Participants join a study through its link. Open one below to start a session "
             "(the link can be sent as it is; a pilot link adds `&stage=pilot`).")
    for sid, e in open_.items():
        with st.container(border=True):
            st.markdown(f"**{e.title}**")
            st.markdown(f":material/play_arrow: [Start a session of “{sid}”]"
                        f"(participant?study={quote(sid)})")
            st.caption(f"Link: `/participant?study={sid}`")
    closed = len(entries) - len(open_)
    if closed:
        st.caption(f"{closed} more stud{'y is' if closed == 1 else 'ies are'} not open yet "
                   "(see Setup).")


# -- consent and the end ----------------------------------------------------------------------
def _agree(store: Store, spec: StudySpec) -> None:
    """I agree callback: join, and put the pseudonym in the link (the same run shows step 1)."""
    stage = st.query_params.get("stage")
    if stage is not None and stage not in STAGES:
        st.session_state[BAD_STAGE] = True  # the page shows link_stage's message
        return
    runner = join(store, spec, stage=stage)
    st.session_state[RUNNER] = runner
    st.query_params["p"] = runner.participant


def _disagree(store: Store, spec: StudySpec) -> None:
    decline(store, spec)
    st.session_state[DECLINED] = True


def consent(store: Store, spec: StudySpec) -> None:
    """The consent page for a visitor without an id (or the goodbye after declining).

    Both buttons act in their callbacks, so agreeing draws the first step in the same rerun
    (no ``st.rerun`` after the click) with the new pseudonym already in ``?p=``.
    """
    if st.session_state.pop(BAD_STAGE, None):
        link_stage()  # shows what is wrong with the link and stops
    if st.session_state.get(DECLINED):
        st.header("Thank you for your interest")
        st.write("You chose not to take part, so the study ends here. Nothing about you was "
                 "stored. You can close this tab now.")
        return
    st.header("Information and consent")
    with st.container(border=True):
        st.markdown(spec.consent)
    row = st.container(horizontal=True)
    row.button("I agree", type="primary", key="pq.consent.yes", on_click=_agree,
               args=(store, spec))
    row.button("I do not agree", key="pq.consent.no", on_click=_disagree, args=(store, spec))


def done(runner: Runner) -> None:
    """The completion code."""
    code = runner.finish()
    st.header("Thank you!")
    st.write("You have completed the study. Please copy your completion code and give it to "
             "the facilitator (or paste it where the study asks for it):")
    from ui.chips import text_block  # not at import: consent loads no engine module
    from ui.components import clause_panel

    clause_panel(text_block(code), key="pq.completion-code", testid="pq-completion-code", on={})
    st.caption("You can close this tab now.")


# -- questionnaires ---------------------------------------------------------------------------
def _item_widget(runner: Runner, q: Questionnaire, it: Item, value: Any) -> str:
    """One questionnaire item's widget (initialised from the stored answer); returns its key."""
    item = f"{q.id}/{it.id}"
    key = f"pq.{runner.participant}.{item}"
    label = it.text + ("" if it.required else " (optional)")
    save = partial(_save, runner, item, key)
    if it.kind == "likert":
        options = list(range(1, it.points + 1))
        ends = {1: f"1 · {it.anchors[0]}", it.points: f"{it.points} · {it.anchors[1]}"}
        st.radio(label, options, index=options.index(value) if value in options else None,
                 horizontal=True, format_func=lambda v: ends.get(v, str(v)), key=key,
                 on_change=save)
    elif it.kind == "choice":
        opts = list(it.options)
        st.radio(label, opts, index=opts.index(value) if value in opts else None,
                 horizontal=True, key=key, on_change=save)
        if it.describe and st.session_state.get(key, value) == it.describe:
            _described(runner, q, it)
    elif it.kind == "number":
        st.number_input(label, value=value, min_value=it.minimum, max_value=it.maximum,
                        step=1, key=key, on_change=save)
    else:
        st.text_area(label, value=value or "", key=key, on_change=save, height=90,
                     max_chars=MAX_ANSWER_CHARS)
    _show_error(it.id)
    return key


def _described(runner: Runner, q: Questionnaire, it: Item) -> None:
    """The optional text field of a choice's describe option (e.g. a self-described gender),
    saved as its own answer as it is typed."""
    item = f"{q.id}/{it.described_id}"
    key = f"pq.{runner.participant}.{item}"
    st.text_input(f"{it.text}: in your own words (optional)",
                  value=runner.answers().get(item) or "", key=key,
                  on_change=partial(_save, runner, item, key))


def questionnaire(runner: Runner, step: flow.Step) -> None:
    """One questionnaire page; all its items must pass before Continue."""
    q = next(q for q in runner.spec.questionnaires if q.id == step.questionnaire)
    st.header(q.title)
    if q.instructions:
        st.markdown(q.instructions)
    answers = runner.answers()
    keys = {}
    for it in q.items:
        with st.container(border=True):
            keys[f"{q.id}/{it.id}"] = _item_widget(runner, q, it, answers.get(f"{q.id}/{it.id}"))
    _next_button(runner, step, questionnaire=q, collect=keys)


# -- onboarding, practice, tasks --------------------------------------------------------------
PANEL_GUIDE = {  # what each panel is for, shown when the study's intro does not say it
    "Action Space": "every glyph is a candidate query, placed by how similar its output is; "
                    "colours are clusters of queries with similar outputs. Hover a glyph to see "
                    "its clauses and output; click a glyph or drag a lasso to keep only those "
                    "queries, or keep one cluster with the **Cluster** buttons under the chart.",
    "Decision Space": "one yes/no question at a time {topic}, the most informative first. "
                      "**Yes** and **No** (keys Y and N) remove the queries that disagree; "
                      "**Previous** and **Next** show other questions; **Back** (key B) takes "
                      "back your last decision.",
    "Predicted Query": "the parts (clauses) of the remaining queries with how likely each is; "
                       "answer **Yes** or **No** to any single part.",
    "Predicted Output": "the output of the most likely remaining query, and **Is this the "
                        "output you want?** Answer **No** to rule it out, or **None of these** "
                        "(key X) when no remaining query is what you mean: both look for other "
                        "readings, marked with a star. **Submit this query** records it as your "
                        "answer.",
}
DECISION_TOPICS = {  # what the Decision Space asks about, by the condition's ``questions``
    "clauses": "about part of the query (marked in red)",
    "outputs": "about the answer you expect (its columns, its rows)",
    "mixed": "about part of the query (marked in red) or about the answer you expect",
    "hybrid": "about part of the query (marked in red) or about the answer you expect (its "
              "columns, its rows), mostly once you have ruled out an output",
}
DATABASE_GUIDE = ("**The task's database** (a box above the workspace): the first rows of every "
                  "table, open on the first part of each task.")
CONDITION_PANELS = {"pleasqlarify": tuple(PANEL_GUIDE),
                    "atomic-only": ("Action Space", "Predicted Query", "Predicted Output")}
OTHER_GUIDES = {
    "planpool-chat": "**Assistant**: a chat that asks you yes/no questions about what you mean "
                     "and then proposes a query with its output; confirm it, or say it is not "
                     "what you meant.",
    "single-shot": "**Proposed query**: the single most likely query and its output; accept "
                   "it, or say it is not what you meant.",
}


def _default_questions() -> str:
    """The vocabulary a condition that leaves ``questions`` unset asks (the workspace's)."""
    from core.engine.strategy import WORKSPACE_DEFAULT  # the engine only when a guide is drawn

    return str(WORKSPACE_DEFAULT["questions"])


def panel_guide(spec: StudySpec) -> str:
    """A panel-by-panel explanation of the interfaces of ``spec``'s conditions that its
    onboarding intro does not already give (empty when the intro names every panel)."""
    intro = (spec.onboarding.intro or "").lower()
    lines: list[str] = []
    for cond in spec.conditions:
        names = CONDITION_PANELS.get(cond.id)
        if names is None:
            guide = OTHER_GUIDES.get(cond.id, "")
            if guide and guide not in lines and guide.split("**")[1].lower() not in intro:
                lines.append(guide)
            continue
        if cond.id == "atomic-only" and not cond.show_action_space:
            names = tuple(n for n in names if n != "Action Space")
        topic = DECISION_TOPICS.get(cond.questions or _default_questions(), "")
        for name in names:
            line = f"**{name}**: {PANEL_GUIDE[name]}".format(topic=topic)
            if name.lower() not in intro and line not in lines:
                lines.append(line)
    if lines and "database" not in intro:  # every task part shows it, in every condition
        lines.append(DATABASE_GUIDE)
    return "\n".join(f"* {line}" for line in lines)


def onboarding(runner: Runner, step: flow.Step) -> None:
    """Intro text, the panels the intro does not explain, and the optional video."""
    st.header("Introduction")
    ob = runner.spec.onboarding
    if ob.intro:
        st.markdown(ob.intro)
    guide = panel_guide(runner.spec)
    if guide:
        st.subheader("What you will see", anchor=False)
        st.markdown(guide)
    if ob.video_url:
        st.video(ob.video_url)
    _next_button(runner, step, "Continue to the practice task"
                 if runner.spec.onboarding.practice_task else "Continue to the tasks")


def practice(runner: Runner, step: flow.Step) -> None:
    """The practice task in the workspace (nothing here is evaluated)."""
    from ui.condition_views import practice_interfaces

    st.header("Practice task")
    # the introduction presents the database box: the practice is where to try it too
    practice_interfaces(runner, step, _clear_errors, above=partial(database, runner, step))
    _next_button(runner, step, "I feel comfortable: start the tasks")


@st.fragment
def database(runner: Runner, step: flow.Step) -> None:
    """The task database's first rows, a tab per table, in an expander open on part 1.

    Only the open expander's selected table is sent (opening one reruns this fragment alone):
    the film database's eleven tables, hidden or not, cost every part ~0.1 s of browser CPU.
    """
    key = f"pq.{runner.participant}.db.{step.task}.{step.subtask}"
    with st.expander("The task's database (first rows of every table)",
                     expanded=step.subtask == "1", icon=":material/table:", key=key,
                     on_change="rerun") as box:
        if not box.open:
            return
        tables = data.database_tables(runner.spec, step.task)
        tabs = st.tabs(list(tables), key=f"{key}.tab", on_change="rerun")
        for tab, table in zip(tabs, tables.values(), strict=True):
            if tab.open:
                tab.dataframe(table, hide_index=True)


def _audio(runner: Runner, step: flow.Step) -> None:
    """Optional think-aloud recording of this task, stored locally."""
    with st.expander("Think-aloud recording (optional)", icon=":material/mic:"):
        st.caption("Only if the facilitator asks you to. The recording is stored on the study "
                   "computer under a random code, never sent anywhere.")
        key = f"pq.audio.{runner.participant}.{step.task}"
        rec = st.audio_input("Record your thoughts on this task", key=key)
        if rec is None:
            return
        blob = rec.getvalue()
        digest = hashlib.sha256(blob).hexdigest()
        if st.session_state.get(f"{key}.saved") != digest:
            try:
                path, ms = save_recording(runner.participant, step.task, blob)
            except ValueError as exc:  # over study.limits.MAX_AUDIO_BYTES: nothing stored
                st.warning(str(exc))
                return
            runner.log("audio", {"path": str(path.relative_to(audio_root())),
                                 "bytes": len(blob), "duration_ms": ms,
                                 "sha256": digest})
            st.session_state[f"{key}.saved"] = digest
        st.caption("Saved.")


def _continue_label(runner: Runner, step: flow.Step) -> str:
    """'Continue to part k' inside a task, 'Finish this task' on its last subtask."""
    nxt = flow.next_step(runner.steps, step.id)
    if nxt is not None and nxt.kind == "task" and nxt.task == step.task:
        return "Continue to the next part"
    return "Finish this task"


def task(runner: Runner, step: flow.Step) -> None:
    """One subtask: progress, question and prompt on top (the same in every part), then the
    database, the condition's interface and the answer box, then the one way on."""
    from ui.condition_views import WHERE_SUBMIT, condition_of, render_condition

    k, n = flow.task_progress(runner.steps, step.id)
    subs = [s for s, _ in next(t for t in runner.spec.tasks if t.id == step.task).subtasks]
    st.caption(f"Task {k} of {n} · part {subs.index(step.subtask) + 1} of {len(subs)}")
    st.markdown(f"### {data.pool(runner.spec, step.task).question}")
    if runner.paused():
        st.warning("The facilitator has paused this task. Please wait until they resume it.",
                   icon=":material/pause_circle:")
    item = flow.task_step_id(step.task, step.subtask)
    submits = step.subtask in flow.SUBMIT_SUBTASKS
    where = ("Write your answer in the box below." if step.subtask == "1" else
             "Write your answer in the box below the workspace." if not submits else
             WHERE_SUBMIT[condition_of(runner, step).id])
    st.info(f"{step.prompt}\n\n*{where}*", icon=":material/assignment:")
    keys: dict[str, str] = {}
    database(runner, step)
    if step.subtask != "1":
        render_condition(runner, step, f"study-{runner.participant}", _clear_errors)
    if not submits:
        key = f"pq.{runner.participant}.{item}"
        label = ("Your interpretation: what would the answer (output table) look like?"
                 if step.subtask == "1" else "Your answer")
        st.text_area(label, value=runner.answers().get(item) or "", key=key, height=110,
                     on_change=partial(_save, runner, item, key), max_chars=MAX_ANSWER_CHARS)
        keys[item] = key
    _show_error(item)
    _audio(runner, step)
    _next_button(runner, step, _continue_label(runner, step), collect=keys,
                 primary=not submits or runner.finished(step.task))


def visibility(runner: Runner) -> None:
    """Log tab hidden/visible transitions the browser reports (once each)."""
    def log(kind: str, seq: int, client_ts: int | None) -> None:
        if seq <= st.session_state.get(TAB_SEQ, 0):
            return
        runner.log(kind, {"seq": seq}, client_ts=client_ts,
                   event_id=f"{runner.session_id}:tab:{seq}")
        st.session_state[TAB_SEQ] = seq
    tab_visibility(log)


VIEWS = {"questionnaire": questionnaire, "onboarding": onboarding, "practice": practice,
         "task": task}


FOLLOW_S = 1.5  # how often the page checks for a facilitator's advance or pause


@st.fragment(run_every=FOLLOW_S)
def follow(runner: Runner, shown: str, paused: bool) -> None:
    """Rerun the page when the stored step or pause state is no longer what it shows."""
    if runner.progress().get("step") != shown or (
            runner.current().kind == "task" and runner.paused() != paused):
        st.rerun(scope="app")


def _shows_workspace(step: flow.Step) -> bool:
    return step.kind == "practice" or (step.kind == "task" and step.subtask != "1")


def _load_quietly(load: Callable[[], Any]) -> None:
    try:
        load()
    except Exception:  # the step that needs it shows the real error
        return


def prefetch(runner: Runner, step: flow.Step) -> threading.Thread | None:
    """While ``step`` is shown, load the next step's pool and warm its workspace session.

    A practice or task step needs its task's pool (the question above the prompt), and the
    first workspace part of a task (the practice, part 2a) a fresh repair session; both are
    prepared in a background thread after this step is drawn, so Continue does not wait for
    them. Returns the thread started, if any.
    """
    nxt = flow.next_step(runner.steps, step.id)
    if nxt is None or nxt.kind not in ("practice", "task") or not nxt.task:
        return None
    done = st.session_state.setdefault(PREFETCHED, set())
    if nxt.id in done:  # once per step and session: the page reruns on every decision
        return None
    done.add(nxt.id)
    load = partial(data.pool, runner.spec, nxt.task)
    if nxt.kind == "practice":
        order = list(dict.fromkeys(runner.assignment.condition_order))
        condition = order[0] if order else nxt.condition or runner.assignment.condition
    else:
        condition = nxt.condition or runner.assignment.condition
    if (_shows_workspace(nxt) and condition in WORKSPACE_CONDITIONS
            and not (_shows_workspace(step) and step.task == nxt.task)):
        return prepare_session(load, nxt.task)
    if nxt.task == step.task:
        return None
    thread = threading.Thread(target=_load_quietly, args=(load,), daemon=True,
                              name=f"pleasqlarify-pool-{nxt.task}")
    thread.start()  # the pool is cached for every session: a lookup after the first
    return thread


TOP_JS = """<style>[data-testid="stElementContainer"]:has(#pq-step-top) { display: none; }</style>
<span id="pq-step-top"></span><script>
if (window.pqShownStep !== STEP) {
  window.pqShownStep = STEP;
  document.querySelector('[data-testid="stMain"]')?.scrollTo(0, 0);
}
</script>"""


def to_top(step_id: str) -> None:
    """Open each step at its top: the next step kept the scroll of the one before, so after
    Continue at the bottom of a long page (a questionnaire, a task part) the next one showed
    its end, above it the heading and the instruction out of view. The element is the same
    for every rerun of a step (its script runs again only when the step changes), so a
    decision in the workspace scrolls nothing and moves no element after it."""
    st.html(TOP_JS.replace("STEP", json.dumps(step_id)), unsafe_allow_javascript=True)


def render(runner: Runner) -> None:
    """The participant's current step (followed: a facilitator's advance shows within ~2 s).

    The store's progress and pause state are read once for the page (``Runner.page_run``).
    """
    with runner.page_run():
        step = runner.current()
        to_top(step.id)
        visibility(runner)
        if step.kind != "done":
            follow(runner, step.id, step.kind == "task" and runner.paused())
        i = flow.index_of(runner.steps, step.id)
        st.progress(i / (len(runner.steps) - 1), text=f"Step {i} of {len(runner.steps) - 1}")
        if step.kind == "done":
            done(runner)
        else:
            VIEWS[step.kind](runner, step)
        participant_withdraw(runner)
        if step.kind != "done":
            prefetch(runner, step)
