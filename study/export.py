"""Export a study database as tidy tables for pandas/R: CSV, Parquet, a JSON bundle, a codebook.

``python -m study.export --db URL --out DIR [--study ID] [--stage main|pilot]
[--condition ID ...] [--include-simulated] [--include-flagged]``

Writes ``DIR/<study>/<table>.csv`` and ``.parquet`` for every table of :data:`CODEBOOK`,
``bundle.json`` (all tables as records), ``codebook.md`` and ``codebook.json`` (every column and
every event type), and ``manifest.json``: rows per table, participants stored and excluded (by
reason), withdrawals, the study file used (or what is missing without it) and the filters.
Participants appear by pseudonym only; payment completion codes are not exported. Simulated
and flagged participants are excluded unless asked for; withdrawn ones always are. Without
``--stage`` both stages are exported together (the manifest counts them per stage, and the
command says so): ``--stage main`` leaves out the pilot participants.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
from sqlalchemy import make_url, select

from study import schema as S
from study.analysis.completion import completion_table, pool_outputs, suggestions
from study.analysis.data import StudyData, filter_data, load_study_data
from study.analysis.questionnaires_agg import likert_long, sus_points, sus_scores
from study.analysis.specs import SpecLookup, find_study_spec
from study.analysis.timings import timer_intervals, timings_table
from study.analysis.workflows import workflow_table
from study.spec import StudySpec
from study.store import Store, default_url, open_store
from study.trace import EVENT_TYPES

_P = {"participant": "pseudonym (random; never a name)"}
_TS = "epoch milliseconds (server clock)"
CODEBOOK: dict[str, dict[str, Any]] = {
    "participants": {"description": "one row per participant", "columns": {
        **_P, "number": "join order within the study (P<number> in figures)",
        "stage": "pilot | main", "simulated": "true for simulate_demo participants",
        "flagged": "excluded from balancing and analysis", "status":
        "active | completed | withdrawn | abandoned", "condition": "first (or only) condition",
        "condition_order": "JSON list of condition ids", "task_order": "JSON list of task ids",
        "created": _TS}},
    "events": {"description": "one row per trace event (see event_types)", "columns": {
        "event_id": "idempotent event id", "session_id": "browser session id", **_P,
        "study": "study id", "condition": "condition the event happened in", "task": "task id",
        "subtask": "subtask id ('' outside subtasks)", "type": "event type (see event_types)",
        "payload": "JSON object, fields per event type", "client_ts":
        "browser epoch ms (may be empty)", "server_ts": _TS}},
    "answers": {"description": "one row per stored answer", "columns": {
        **_P, "item": "'<questionnaire>/<item>' or 'task:<task>/<subtask>'",
        "questionnaire": "part before '/'", "item_id": "part after '/'",
        "value": "the answer as JSON", "value_num": "the answer if numeric, else empty"}},
    "questionnaire_items": {"description": "one row per participant x Likert item", "columns": {
        **_P, "condition": "first condition", "questionnaire": "questionnaire id", "item":
        "item id", "group": "component the item is about", "text": "item text", "points":
        "scale points", "reverse": "reverse-coded item", "value": "raw answer 1..points",
        "scored": "answer after reverse coding"}},
    "sus": {"description": "SUS per participant (7-point form linearly rescaled to 0..100)",
            "columns": {**_P, "condition": "first condition", "sus": "SUS score 0..100"}},
    "timers": {"description": "one row per participant x timer", "columns": {
        **_P, "label": "P<number>", "condition": "condition of the task", "task": "task id",
        "subtask": "'' for the task-level timer", "active_s": "running, tab visible (s)",
        "hidden_s": "running while the tab was hidden (s)", "paused_s": "paused (s)",
        "pauses": "number of pauses", "running": "still running at export",
        "anomalies": "repeated starts/stops, '; '-separated"}},
    "timer_intervals": {"description": "one row per running interval of a timer", "columns": {
        **_P, "task": "task id", "subtask": "subtask id", "start_ts": _TS, "end_ts": _TS,
        "duration_s": "end - start (s)", "opened_by": "timer.start | timer.resume",
        "closed_by": "timer.pause | timer.stop"}},
    "completion": {"description": "Table 1 codes: suggestion and researcher code", "columns": {
        **_P, "label": "P<number>", "condition": "condition of the task", "task": "task id",
        "subtask": "subtask id", "suggested": "rule-based suggestion (empty: verbal subtask)",
        "reason": "the rule that fired", "code": "researcher's code (newest)", "coder":
        "who coded", "coded_at": _TS, "final": "the researcher's code", "confirmed":
        "a researcher code exists"}},
    "workflows": {"description": "W1/W2/W3/mixed per participant x task", "columns": {
        **_P, "label": "P<number>", "condition": "condition", "task": "task id",
        "practice": "the practice task (not measured; all its actions, it has no subtasks)",
        **{f"n_{a}": f"number of '{a}' actions" for a in
           ("explore", "select", "dv", "clause", "output", "repair", "back", "submit")},
        "rule_label": "label from study.analysis.workflows.classify", "explanation":
        "the rule and scores", "override": "researcher's label", "coder": "who overrode",
        "final": "override, else rule_label"}},
    "codes": {"description": "every researcher code as stored", "columns": {
        "id": "row id", **_P, "task": "task id", "subtask": "subtask id", "code":
        "'<namespace>:<value>' e.g. completion:solved", "coder": "who", "ts": _TS}},
}


def study_ids(store: Store) -> list[str]:
    """Every study with participants in the database."""
    with store.read() as conn:
        return sorted(conn.execute(select(S.participants.c.study).distinct()).scalars())


def find_spec(study: str) -> StudySpec | None:
    """The study file of ``study`` (see :func:`study.analysis.specs.find_study_spec`)."""
    return find_study_spec(study).spec


def _answers_table(data: StudyData) -> pd.DataFrame:
    """One row per answer with its questionnaire and numeric value."""
    rows = []
    for pid, ans in data.answers.items():
        for item, v in sorted(ans.items()):
            q, _, iid = item.partition("/")
            num = float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None
            rows.append({"participant": pid, "item": item, "questionnaire": q, "item_id": iid,
                         "value": json.dumps(v), "value_num": num})
    return pd.DataFrame(rows, columns=list(CODEBOOK["answers"]["columns"]))


def build_tables(data: StudyData, spec: StudySpec | None,
                 lookup: SpecLookup | None = None) -> dict[str, pd.DataFrame]:
    """Every export table of one (filtered) study (questionnaires from ``lookup`` if given)."""
    conds = {p["participant"]: p["condition"] for p in data.participants}
    pcols = list(CODEBOOK["participants"]["columns"])
    parts = pd.DataFrame([{k: (json.dumps(p[k]) if k.endswith("_order") else p[k])
                           for k in pcols} for p in data.participants], columns=pcols)
    events = pd.DataFrame([e.to_row() for e in data.events],
                          columns=list(CODEBOOK["events"]["columns"]))
    tables = {"participants": parts, "events": events, "answers": _answers_table(data)}
    qs = lookup.questionnaires if lookup else (spec.questionnaires if spec else ())
    tables["questionnaire_items"] = likert_long(data.answers, qs, conds)
    sp = sus_points(qs)
    tables["sus"] = (sus_scores(data.answers, sp[0], sp[1], conds) if sp else
                     pd.DataFrame(columns=["participant", "condition", "sus"]))
    tables["timers"] = timings_table(data)
    tables["timer_intervals"] = timer_intervals(data)
    tables["completion"] = completion_table(_suggestions(data, spec), data.codes)
    tables["workflows"] = workflow_table(data)
    tables["codes"] = pd.DataFrame(list(data.codes), columns=list(CODEBOOK["codes"]["columns"]))
    return tables


def _suggestions(data: StudyData, spec: StudySpec | None) -> pd.DataFrame:
    """Completion suggestions using the study's prepared pools (none without a spec)."""
    from study.analysis.pools import study_pools
    if spec is None:
        return suggestions(data, {}, lambda t: (lambda p: None, [], []))
    pools = study_pools(spec)
    subtasks = {t.id: [s for s, _ in t.subtasks] for t in spec.tasks}
    # once per task, not per participant × task: each call keys every result of the pool
    # (most of a study's first preparation for the Analysis page, issue 24)
    return suggestions(data, subtasks, functools.cache(lambda t: pool_outputs(pools[t])))


def codebook_markdown() -> str:
    """The codebook as Markdown: every table, column and event type."""
    lines = ["# Codebook", ""]
    for name, t in CODEBOOK.items():
        lines += [f"## {name}", "", t["description"], "", "| column | meaning |", "|---|---|"]
        lines += [f"| `{c}` | {d} |" for c, d in t["columns"].items()]
        lines.append("")
    lines += ["## event types", "", "| type | meaning and payload |", "|---|---|"]
    lines += [f"| `{k}` | {v} |" for k, v in EVENT_TYPES.items()]
    return "\n".join(lines) + "\n"


def stage_counts(data: StudyData) -> dict[str, int]:
    """Participants of ``data`` per stage (main, pilot), so an export says what it mixes."""
    counts: dict[str, int] = {}
    for p in data.participants:
        stage = str(p.get("stage") or "main")
        counts[stage] = counts.get(stage, 0) + 1
    return dict(sorted(counts.items()))


def manifest(raw: StudyData, data: StudyData, tables: dict[str, pd.DataFrame],
             lookup: SpecLookup, filters: dict[str, Any], n_withdrawals: int) -> dict[str, Any]:
    """What an export holds and leaves out: counts per table, exclusions, the study file."""
    kept = set(data.ids)
    excluded: dict[str, int] = {}
    for p in raw.participants:
        if p["participant"] in kept:
            continue
        why = ("withdrawn" if p["status"] == "withdrawn"
               else "simulated" if p["simulated"] and not filters.get("include_simulated")
               else "flagged" if p["flagged"] and not filters.get("include_flagged")
               else "filtered (condition or stage)")
        excluded[why] = excluded.get(why, 0) + 1
    return {"study": lookup.study, "exported_at": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                time.gmtime()),
            "counts": {name: len(df) for name, df in tables.items()},
            "participants_stored": len(raw.participants), "participants_exported": len(kept),
            "participants_by_stage": stage_counts(data),
            "excluded": excluded, "withdrawals": n_withdrawals,
            "events_stored": len(raw.events),
            "answers_stored": sum(len(a) for a in raw.answers.values()),
            "study_file": str(lookup.spec.path) if lookup.spec else None,
            "study_hash": lookup.spec.hash if lookup.spec else None,
            "recorded_hashes": sorted({p["study_hash"] for p in raw.participants}),
            "questionnaires": [q.id for q in lookup.questionnaires],
            "problems": list(lookup.problems), "filters": filters}


def write_export(tables: dict[str, pd.DataFrame], out: Path,
                 meta: dict[str, Any] | None = None) -> list[Path]:
    """Write CSV, Parquet, bundle.json, the codebook and the manifest into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    meta = meta or {"counts": {name: len(df) for name, df in tables.items()}}
    (out / "manifest.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
    files = [out / "manifest.json"]
    for name, df in tables.items():
        df.to_csv(out / f"{name}.csv", index=False)
        df.to_parquet(out / f"{name}.parquet", index=False)
        files += [out / f"{name}.csv", out / f"{name}.parquet"]
    bundle = {name: json.loads(df.to_json(orient="records")) for name, df in tables.items()}
    (out / "bundle.json").write_text(json.dumps(bundle, indent=1), encoding="utf-8")
    (out / "codebook.json").write_text(json.dumps(
        {"tables": CODEBOOK, "event_types": EVENT_TYPES}, indent=1), encoding="utf-8")
    (out / "codebook.md").write_text(codebook_markdown(), encoding="utf-8")
    return [*files, out / "bundle.json", out / "codebook.json", out / "codebook.md"]


def export_zip(tables: dict[str, pd.DataFrame], meta: dict[str, Any] | None = None) -> bytes:
    """The export (CSV, Parquet, bundle, codebook) as one zip archive in memory."""
    import tempfile
    import zipfile
    from io import BytesIO
    buf = BytesIO()
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(buf, "w") as zf:
        for f in write_export(tables, Path(tmp), meta):
            zf.write(f, f.name)
    return buf.getvalue()


def export_study(store: Store, study: str, out: Path, *, include_simulated: bool = False,
                 include_flagged: bool = False, stages: list[str] | None = None,
                 conditions: list[str] | None = None,
                 ) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
    """Load, filter (as the Analysis page's sidebar does), tabulate and write one study;
    returns the tables and the manifest."""
    from study.withdraw import withdrawals
    raw = load_study_data(store, study)
    data = filter_data(raw, conditions=conditions or None, stages=stages or None,
                       include_simulated=include_simulated, include_flagged=include_flagged)
    lookup = find_study_spec(study, raw)
    tables = build_tables(data, lookup.spec, lookup)
    meta = manifest(raw, data, tables, lookup,
                    {"conditions": conditions or [], "stages": stages or [],
                     "include_flagged": include_flagged, "include_simulated": include_simulated},
                    len(withdrawals(store, study)))
    write_export(tables, out, meta)
    return tables, meta


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module docstring)."""
    ap = argparse.ArgumentParser(prog="python -m study.export", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", help="database URL (default: $PLEASQLARIFY_DB_URL or logs/)")
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--study", help="one study id (default: every study in the database)")
    ap.add_argument("--stage", action="append", choices=["main", "pilot"],
                    help="only participants of this stage (repeatable; default: both, counted "
                         "per stage in manifest.json)")
    ap.add_argument("--condition", action="append",
                    help="only participants assigned this condition (repeatable)")
    ap.add_argument("--include-simulated", action="store_true")
    ap.add_argument("--include-flagged", action="store_true")
    args = ap.parse_args(argv)
    url = make_url(args.db or default_url())
    if url.get_backend_name() == "sqlite" and not Path(url.database or "").is_file():
        ap.error(f"no study database at {url.database or '(in memory)'}; give --db the URL of "
                 "the study's database (e.g. sqlite:///logs/study.sqlite)")
    store = open_store(args.db)
    studies = [args.study] if args.study else study_ids(store)
    if not studies:
        print(f"nothing to export: {store.url} holds no study", file=sys.stderr)
        return 1
    for study in studies:
        tables, meta = export_study(store, study, Path(args.out) / study,
                                    include_simulated=args.include_simulated,
                                    include_flagged=args.include_flagged,
                                    stages=args.stage, conditions=args.condition)
        per_stage = ", ".join(f"{n} {stage}" for stage, n in
                              meta["participants_by_stage"].items())
        print(f"{study}: {len(tables['participants'])} participants ({per_stage or 'none'}), "
              f"{len(tables['events'])} events -> {Path(args.out) / study}")
        if len(meta["participants_by_stage"]) > 1:
            print("  note: main and pilot participants are exported together; --stage main "
                  "leaves the pilots out")
        for problem in meta["problems"]:
            print(f"  warning: {problem}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
