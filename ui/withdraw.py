"""Withdrawal and flag controls: the participant's Withdraw button, the Facilitator's forms.

All logic lives in :mod:`study.withdraw` and :mod:`study.facilitator`; these views only collect
the input, ask for confirmation and show the outcome.
"""

from __future__ import annotations

import time
from typing import Any

import streamlit as st

from study.facilitator import flag
from study.runner import Runner
from study.spec import STAGES, StudySpec
from study.store import Store
from study.withdraw import WithdrawError, find_participant, withdraw, withdrawals

WITHDRAWN, RUNNER = "pq.withdrawn", "pq.runner"  # RUNNER: ui.participant_views.RUNNER
_DONE = {"deleted": "Everything recorded about you in this study (your answers, interactions "
                    "and any recordings) has been deleted.",
         "kept": "As the study information says, what was recorded so far is kept but "
                 "excluded from every analysis."}


def link_stage() -> str | None:
    """The stage a participant link asks for (``?stage=pilot``), or None for the study's own."""
    raw = st.query_params.get("stage")
    if raw is None:
        return None
    if raw not in STAGES:
        st.error("This study link does not work. Please ask the facilitator for a new link.")
        st.caption(f"(stage '{raw}' is unknown; use one of {', '.join(STAGES)})")
        st.stop()
    return str(raw)


def withdrawn_notice(store: Store, participant: str | None) -> bool:
    """Show the end page of a participant who withdrew; True when one was shown."""
    mode = st.session_state.get(WITHDRAWN)
    if mode is None and participant:
        row = store.participant(participant)
        mode = "kept" if row is not None and row["status"] == "withdrawn" else None
        if row is None:  # deleted from another tab: never reuse this tab's cached runner
            st.session_state.pop(RUNNER, None)
    if mode is None:
        return False
    st.header("You have withdrawn from the study")
    st.write(_DONE.get(mode, ""))
    st.caption("Thank you for your time. You can close this tab now.")
    return True


def _withdraw(runner: Runner) -> None:
    """Button callback: withdraw this participant and forget the link's pseudonym."""
    rec = withdraw(runner.store, runner.spec, runner.participant, by="participant",
                   now=int(time.time() * 1000))
    st.session_state[WITHDRAWN] = rec["mode"]
    st.query_params.pop("p", None)


def participant_withdraw(runner: Runner) -> None:
    """A Withdraw control on every step (with a confirmation)."""
    what = ("deleted" if runner.spec.withdrawal == "delete" else
            "kept, but excluded from the analysis")
    with st.expander("Withdraw from the study", icon=":material/logout:"):
        st.caption("You may stop at any time without giving a reason. If you withdraw, what "
                   f"was recorded about you is {what}.")
        sure = st.checkbox("Yes, I want to withdraw", key="pq.withdraw.sure")
        st.button("Withdraw now", key="pq.withdraw.go", disabled=not sure,
                  on_click=_withdraw, args=(runner,))


def researcher_withdraw(store: Store, spec: StudySpec) -> None:
    """Facilitator form: withdraw a participant by label (P3) or completion code."""
    st.subheader("Withdraw a participant", anchor=False)
    mode = ("deletes their events, answers and audio" if spec.withdrawal == "delete" else
            "keeps their data but excludes it (withdrawal: keep)")
    with st.form("fac_withdraw", clear_on_submit=True):
        who = st.text_input("Label (e.g. P3) or completion code", key="fac_wd_who")
        sure = st.checkbox(f"I understand this {mode} and cannot be undone",
                           key="fac_wd_sure")
        if st.form_submit_button("Withdraw"):
            if not sure:
                st.error("Tick the confirmation first.")
            else:
                try:
                    pid = find_participant(store, spec.id, who)
                    rec = withdraw(store, spec, pid, by="researcher",
                                   now=int(time.time() * 1000))
                    st.success(f"P{rec['number']} withdrawn ({rec['mode']}): "
                               + counts_words(rec["counts"]))
                except WithdrawError as exc:
                    st.error(str(exc))
    done = withdrawals(store, spec.id)
    if done:
        import pandas as pd  # researcher pages only: not on the participant's path

        st.dataframe(pd.DataFrame([withdrawal_row(w) for w in done]), hide_index=True,
                     key="fac_wd_table")


def counts_words(counts: dict[str, int]) -> str:
    """Rows per kind in words ('12 events, 1 audio files'), the kinds that had any."""
    return ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in sorted(counts.items())
                     if v) or "nothing stored"


def withdrawal_row(record: dict[str, Any]) -> dict[str, Any]:
    """One withdrawal record as a researcher reads it: the participant's label, the date and
    time, who asked, what happened to the data and how many rows of each kind."""
    counts = counts_words(record["counts"])
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(record["ts"] / 1000))
    return {"participant": f"P{record['number']}", "when": when, "asked by": record["by"],
            "data": record["mode"], "condition": record["condition"], "stage": record["stage"],
            "rows": counts}


def flag_form(store: Store, spec: StudySpec, rows: list[dict[str, Any]],
              session_id: str) -> None:
    """Facilitator form: flag (with a reason) or unflag any participant of the study."""
    st.subheader("Flag a participant", anchor=False)
    if not rows:
        st.caption("No participants yet.")
        return
    labels = {f"P{r['number']} · {r['status']}" + (" · flagged" if r["flagged"] else ""):
              r["participant"] for r in rows}
    with st.form("fac_flag"):
        who = labels[st.selectbox("Participant", list(labels), key="fac_flag_who")]
        reason = st.text_input("Reason (kept with the flag)", key="fac_flag_reason")
        a, b = st.columns(2)
        try:
            if a.form_submit_button("Flag (exclude from analysis)"):
                flag(store, spec, who, session_id, reason=reason)
                st.success("Flagged.")
            if b.form_submit_button("Unflag"):
                flag(store, spec, who, session_id, reason="", flagged=False)
                st.success("Unflagged.")
        except ValueError as exc:
            st.error(str(exc))
