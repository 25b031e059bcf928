"""Studies by id whatever their file name; setup checks and saves an upload; closed studies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from study import registry, setup_files
from study.registry import open_problems, scan
from tests.study_flow_fixtures import MINI, ROOT, write_mini


def _bank_text(ids: tuple[str, ...] = ("t1",)) -> bytes:
    return "".join(json.dumps({"id": t, "question": f"Which {t}?", "database": {
        "dump": "CREATE TABLE x (y INT);"}}) + "\n" for t in ids).encode()


STUDY = """\
id: upload-demo
title: Uploaded
consent: Agree?
conditions: [pleasqlarify]
task_bank: bank.jsonl
subtasks: {"3": Navigate.}
tasks: [t1]
questionnaires: []
"""


def test_shipped_studies_are_found_by_id_whatever_the_file_name() -> None:
    found = scan(ROOT / "studies")
    assert {"film", "film-two-conditions", "film-planpool"} <= set(found)
    assert found["film-two-conditions"].path.name == "study-two-conditions.yaml"
    assert all(e.ok for e in found.values())


def test_duplicate_ids_are_reported_and_neither_opens(tmp_path: Path) -> None:
    write_mini(tmp_path, "mini")
    (tmp_path / "mini" / "copy.yaml").write_text(MINI, encoding="utf-8")
    found = scan(tmp_path)
    assert "mini" not in found
    dups = [e for e in found.values() if e.id == "mini"]
    assert len(dups) == 2 and all(not e.ok for e in dups)
    assert all("id 'mini' is also used by mini/copy.yaml, mini/study.yaml" in str(e.problems[-1])
               for e in dups)


def test_broken_file_is_listed_under_its_declared_id(tmp_path: Path) -> None:
    write_mini(tmp_path, "mini", MINI.replace("conditions: [pleasqlarify]", "conditions: [x]"))
    entry = scan(tmp_path)["mini"]
    assert entry.spec is None and "unknown condition 'x'" in str(entry.problems[0])


def test_llm_condition_without_key_keeps_the_study_closed_unless_a_fallback_is_stated(
        tmp_path: Path) -> None:
    text = MINI.replace("conditions: [pleasqlarify]",
                        "conditions:\n  - id: planpool-chat\n    agent: llm")
    spec = scan(_write(tmp_path, text))["mini"].spec
    assert spec is not None
    (problem,) = open_problems(spec, api_key=False)
    assert problem.where == "conditions[0].agent" and problem.line == 6
    assert "fallback: structured" in problem.fix
    assert open_problems(spec, api_key=True) == []
    fallback = text.replace("agent: llm", "agent: llm\n    fallback: structured")
    spec = scan(_write(tmp_path, fallback))["mini"].spec
    assert spec is not None and open_problems(spec, api_key=False) == []


def test_what_runs_without_a_key_is_told_the_researcher(tmp_path: Path) -> None:
    """resample without a key (recomposition runs) and an llm agent's stated fallback are
    researcher notices (Setup, Facilitator); with a key there is none."""
    text = MINI.replace("conditions: [pleasqlarify]",
                        "conditions:\n  - id: pleasqlarify\n    repair: resample\n"
                        "  - id: planpool-chat\n    agent: llm\n    fallback: structured")
    spec = scan(_write(tmp_path, text))["mini"].spec
    assert spec is not None
    resample, chat = registry.key_notices(spec, api_key=False)
    assert "only recomposition" in resample and "pleasqlarify" in resample
    assert "structured agent asks instead" in chat
    assert registry.key_notices(spec, api_key=True) == []


def _write(root: Path, text: str) -> Path:
    write_mini(root, "mini", text)
    return root


def test_upload_is_checked_with_its_bank_and_saved_under_the_id(tmp_path: Path) -> None:
    checked = setup_files.check("my-study.yaml", STUDY.encode(), "bank.jsonl", _bank_text(),
                                root=tmp_path)
    assert checked.problems == () and checked.spec is not None
    target = setup_files.save(checked, root=tmp_path)
    assert target == tmp_path / "upload-demo" / "my-study.yaml"
    assert (tmp_path / "upload-demo" / "bank.jsonl").read_bytes() == _bank_text()
    assert scan(tmp_path)["upload-demo"].ok
    # the same study again without a bank: the saved bank is used
    again = setup_files.check("my-study.yaml", STUDY.encode(), root=tmp_path)
    assert again.problems == () and again.spec is not None


def test_upload_problems_name_the_uploaded_files(tmp_path: Path) -> None:
    bank = _bank_text() + b'{"id": "t2", "database": {"dump": "CREATE TABLE z (a INT);"}}\n'
    bank += b"not json\n"
    checked = setup_files.check("mine.yaml", STUDY.replace("tasks: [t1]", "tasks: [t1, t2]")
                                .replace("title:", "colour: red\ntitle:").encode(),
                                "bank.jsonl", bank, root=tmp_path)
    assert checked.spec is None
    msgs = [str(p) for p in checked.problems]
    assert msgs[0].startswith("mine.yaml:2: colour: unknown key 'colour'")
    assert any(m.startswith("bank.jsonl:2: question:") for m in msgs)
    assert any(m.startswith("bank.jsonl:3: (line): is not valid JSON") for m in msgs)
    assert any("tasks[1].id: unknown task id 't2'" in m for m in msgs)
    assert not any(str(tmp_path) in m for m in msgs)
    with pytest.raises(ValueError, match="fix them first"):
        setup_files.save(checked, root=tmp_path)


def test_upload_with_an_id_used_by_another_file_is_refused(tmp_path: Path) -> None:
    write_mini(tmp_path, "elsewhere", MINI.replace("id: mini", "id: upload-demo"))
    checked = setup_files.check("s.yaml", STUDY.encode(), "bank.jsonl", _bank_text(),
                                root=tmp_path)
    assert checked.spec is None
    assert "id 'upload-demo' is already used by elsewhere/study.yaml" in str(checked.problems[0])


def test_check_path_reads_the_bank_beside_the_file(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(registry.STUDIES_ENV, str(tmp_path / "studies"))
    src = tmp_path / "src"
    src.mkdir()
    (src / "s.yaml").write_text(STUDY, encoding="utf-8")
    (src / "bank.jsonl").write_bytes(_bank_text())
    checked = setup_files.check_path(src / "s.yaml")
    assert checked.spec is not None and checked.bank_bytes == _bank_text()
    assert setup_files.check_path(src / "nope.yaml").problems[0].message == "no such study file"


def test_unknown_study_link_gets_a_friendly_message_without_paths(tmp_path, monkeypatch) -> None:
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv(registry.STUDIES_ENV, str(tmp_path))
    monkeypatch.setenv("PLEASQLARIFY_DB_URL", f"sqlite:///{tmp_path / 's.sqlite'}")
    at = AppTest.from_file(str(ROOT / "pages" / "participant.py"), default_timeout=60)
    at.query_params["study"] = "no-such-study"
    at.run()
    assert at.header[0].value == "This study link does not work"
    shown = " ".join(str(e.value) for e in [*at.markdown, *at.error, *at.caption])
    assert str(tmp_path) not in shown and "/" not in shown.replace("a/b", "")


def test_shipped_onboarding_names_the_controls_and_promises_no_video() -> None:
    for e in scan(ROOT / "studies").values():
        intro = e.spec.onboarding.intro
        if not e.spec.onboarding.video_url:
            assert "video" not in intro.lower(), e.id
    film = scan(ROOT / "studies")["film"].spec.onboarding.intro
    for control in ("Action Space", "Decision Space", "Predicted Query", "Submit this query",
                    "Back", "The task's database"):
        assert control in film
