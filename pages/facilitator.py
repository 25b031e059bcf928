"""Researcher-only facilitator console: live sessions, timer control, advance, markers, notes."""

from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from study import facilitator as F
from study import flow
from study.assignment import Override, condition_sequences, task_sequences
from study.runner import pending_override, set_override
from ui import study_cache as data
from ui.access import require_researcher
from ui.chips import counted
from ui.router import ensure_router
from ui.withdraw import flag_form, researcher_withdraw

ensure_router()
st.title("Facilitator")
require_researcher("facilitator_login")
store = data.store()
studies = {k: e for k, e in data.studies().items() if e.spec is not None}
if not studies:
    st.info("No valid study file yet: add one on the Setup page.")
    st.stop()
names = list(studies)
wanted = st.query_params.get("study", "film")  # /facilitator?study=<id> preselects a study
name = st.selectbox("Study", names, index=names.index(wanted) if wanted in names else 0,
                    key="fac_study", format_func=lambda k: f"{k} · {studies[k].title}")
spec = studies[name].spec
assert spec is not None
for note in data.researcher_notices(spec):
    st.warning(note, icon=":material/key_off:")
if "fac_session" not in st.session_state:
    st.session_state["fac_session"] = F.facilitator_session()
session_id = st.session_state["fac_session"]


@st.fragment(run_every=3)
def live() -> None:
    """The session list, refreshed every few seconds."""
    rows = F.overview(store, spec, now=int(time.time() * 1000))
    st.caption(f"{counted(len(rows), 'participant')} · refreshed {time.strftime('%H:%M:%S')}")
    if rows:
        frame = pd.DataFrame(rows)
        frame["participant"] = "P" + frame["number"].astype(str)
        frame["idle"] = [F.idle_words(s, status) for s, status in zip(frame["idle_s"],
                                                                     frame["status"], strict=True)]
        frame["status"] = [f"{status} · paused" if paused else status for status, paused
                           in zip(frame["status"], frame["paused"], strict=True)]
        st.dataframe(frame[["participant", "status", "stage", "condition", "where", "idle",
                            "flagged", "flag_reason"]], hide_index=True, key="fac_table",
                     column_config={"where": st.column_config.TextColumn("step", width="large"),
                                    "flag_reason": "flag reason"})


live()
rows = F.overview(store, spec, now=int(time.time() * 1000))
active = [r for r in rows if r["status"] == "active"]
st.subheader("Participant", anchor=False)
st.caption(f"Participant link: `/participant?study={name}` · pilot link (stage pilot): "
           f"`/participant?study={name}&stage=pilot`")
if not active:
    st.info("No active participant. Share the link `/participant?study=" + name + "`.")
else:
    labels = {r["participant"]: f"P{r['number']} · {r['condition']}" for r in active}
    who = st.selectbox("Active participant", list(labels), key="fac_who",
                       format_func=labels.get)
    console = F.Console(store, spec, who, session_id)

    def advance() -> None:
        """Button callback: runs before the page, so the step shown below is the new one."""
        new = console.advance()
        st.toast(f"Moved to {flow.step_label(spec, new.id, console.runner.steps)}." if new
                 else "The participant had already moved on.")

    c = st.columns(4)
    c[3].button("Advance to next step", key="fac_advance", type="primary", on_click=advance,
                help="Moves the participant on (their page follows within a few seconds); "
                     "required answers are not enforced")
    step = console.step()
    st.write(f"Current step: **{flow.step_label(spec, step.id, console.runner.steps)}**")

    def timer_action(action: str) -> None:
        """Button callback (runs before the page, so the buttons below show the new state)."""
        if action == "start":
            st.toast("Timer started." if console.start() else "The timer was already started.")
        elif action == "pause":
            st.toast("Paused." if console.timer("pause") else "The timer was not running.")
        else:
            st.toast("Resumed." if console.timer("resume") else "The timer was not paused.")

    timer = console.timer_state()  # only the action that applies to it is enabled
    c[0].button("Start timer", key="fac_start", disabled=timer != "not started",
                on_click=timer_action, args=("start",))
    c[1].button("Pause", key="fac_pause", disabled=timer != "running",
                on_click=timer_action, args=("pause",))
    c[2].button("Resume", key="fac_resume", disabled=timer != "paused",
                on_click=timer_action, args=("resume",))
    if timer is not None:
        st.caption(f"Timer of this part: {timer}.")
    st.markdown("**Markers**")
    row = st.container(horizontal=True)
    for label in F.MARKERS:
        if row.button(label, key=f"fac_marker_{label}"):
            ev = console.marker(label)
            st.toast(f"Marker '{label}' at {time.strftime('%H:%M:%S', time.localtime(ev.server_ts / 1000))}")
    with st.form("fac_note", clear_on_submit=True):
        text = st.text_area("Note", key="fac_note_text", height=80)
        if st.form_submit_button("Save note"):
            try:
                console.note(text)
                st.toast("Note saved.")
            except ValueError as exc:
                st.error(str(exc))

flag_form(store, spec, rows, session_id)
researcher_withdraw(store, spec)

st.subheader("Next participant's assignment", anchor=False)
current = pending_override(store, spec.id)
st.caption(f"Pending override: {current}" if current else "No override: balancing decides.")
with st.form("fac_override"):
    tseqs, cseqs = task_sequences(spec), condition_sequences(spec)
    t = st.selectbox("Task order", [None, *range(len(tseqs))], key="fac_ov_t",
                     format_func=lambda i: "balanced" if i is None else " → ".join(tseqs[i]))
    cond = st.selectbox("Condition", [None, *range(len(cseqs))], key="fac_ov_c",
                        format_func=lambda i: "balanced" if i is None else " → ".join(cseqs[i]))
    a, b = st.columns(2)
    if a.form_submit_button("Set override"):
        ov = Override(task_sequence=t, condition_sequence=cond)
        set_override(store, spec.id, ov, int(time.time() * 1000))
        st.rerun()
    if b.form_submit_button("Clear override"):
        set_override(store, spec.id, None, int(time.time() * 1000))
        st.rerun()
