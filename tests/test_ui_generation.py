"""AppTest: free exploration samples candidates for an edited question (real SDK, loopback API)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.anthropic_stub_server import StubServer
from tests.bank_helpers import make_bank, painted, survivors, task_ids

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def bank(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_bank(tmp_path_factory.mktemp("genbank"), lines=(0,))


def _page(bank: Path, monkeypatch: pytest.MonkeyPatch, researcher: bool = True,
          secret_key: str | None = None) -> AppTest:
    monkeypatch.setenv("PLEASQLARIFY_BANK", str(bank))
    at = AppTest.from_file(str(ROOT / "pages" / "workspace.py"), default_timeout=120)
    if researcher:
        at.session_state["researcher"] = True  # what ui.access.unlock sets
    if secret_key:
        at.secrets["ANTHROPIC_API_KEY"] = secret_key
    at.run()
    painted(at)  # the first render shows the task and question as text: the widgets follow
    assert not at.exception, at.exception
    return at


def _question_key(task: str) -> str:
    return f"pleasqlarify.{task}.question"


GENERATE = "Generate candidates for this question"


def _generate(at: AppTest, task: str, question: str) -> AppTest:
    """Type ``question`` for ``task`` and press Generate (the button must be offered)."""
    at.text_input(key=_question_key(task)).input(question).run()
    next(b for b in at.button if b.label == GENERATE).click().run()
    return at


def _sampling_page(bank: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                   server: StubServer, question: str) -> tuple[AppTest, str]:
    """The researcher's workspace page with a key for ``server`` and its own data folder,
    after Generate for ``question`` on the bank's first task; returns it and the task id."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("PLEASQLARIFY_DATA_DIR", str(tmp_path))
    task = task_ids(bank)[0]
    return _generate(_page(bank, monkeypatch), task, question), task


def test_without_a_key_the_page_says_so_and_keeps_the_shipped_pool(bank, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    at = _page(bank, monkeypatch)
    task = task_ids(bank)[0]
    at.text_input(key=_question_key(task)).input("Which rooms are outdoors?").run()
    assert not at.exception
    assert any("No Anthropic API key" in i.value for i in at.info)
    assert not [b for b in at.button if b.label == GENERATE]


def test_generate_samples_once_and_the_workspace_switches_to_the_new_pool(
        bank, monkeypatch, tmp_path):
    replies = ["```sql\nSELECT Name FROM Room WHERE Indoor_Outdoor_Space = 'Terrace'\n```",
               "SELECT Name, Size FROM Room WHERE Indoor_Outdoor_Space = 'Terrace'",
               "Here you go:\n```\nSELECT * FROM Room WHERE Indoor_Outdoor_Space = 'Terrace'\n```"]
    with StubServer(replies) as server:
        at, task = _sampling_page(bank, monkeypatch, tmp_path, server, "Which rooms are terraces?")
        assert not at.exception, at.exception
        first = server.count
        assert first == 50  # N samples, one request each
        caption = " ".join(c.value for c in at.caption)
        assert "Which rooms are terraces?" in caption and "3 distinct queries" in caption
        assert "of 3 queries remain" in survivors(at)

        # back to the shipped pool, then the same question again: served from the cache
        next(b for b in at.button if b.label == "Back to the shipped pool").click().run()
        assert "queries remain" in survivors(at) and "of 3 queries remain" not in survivors(at)
        _generate(at, task, "Which rooms are terraces?")
        assert not at.exception
        assert server.count == first


def test_sampling_needs_researcher_access_and_never_exports_the_key(bank, monkeypatch, tmp_path):
    replies = ["SELECT Name FROM Room WHERE Indoor_Outdoor_Space = 'Terrace'"]
    with StubServer(replies) as server:
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("PLEASQLARIFY_DATA_DIR", str(tmp_path))
        task = task_ids(bank)[0]
        public = _page(bank, monkeypatch, researcher=False, secret_key="sk-secret-only")
        public.text_input(key=_question_key(task)).input("Which rooms are terraces?").run()
        assert any("needs researcher access" in i.value for i in public.info)
        assert not [b for b in public.button if b.label == GENERATE]
        assert server.count == 0

        at = _page(bank, monkeypatch, secret_key="sk-secret-only")  # key only in secrets.toml
        _generate(at, task, "Which rooms are terraces?")
        assert not at.exception, at.exception
        assert server.count == 50
        assert "ANTHROPIC_API_KEY" not in __import__("os").environ


def test_a_failed_sampling_is_a_plain_notice_with_the_error_quoted_under_it(
        bank, monkeypatch, tmp_path):
    """The API's refusal does not lead the notice: a plain sentence says what happened and
    that the shipped pool stays; the sampler's own words are quoted under it (researchers only
    sample here) and logged."""
    from tests.anthropic_stub_server import Reply

    with StubServer() as server:
        server.default = lambda _i, _body: Reply(status=400, message="prompt is too long")
        at, _ = _sampling_page(bank, monkeypatch, tmp_path, server, "Which rooms are cellars?")
        assert not at.exception, at.exception
    (warning,) = [w.value for w in at.warning]
    assert warning.startswith("No candidates were generated for this question")
    assert "API" not in warning and "HTTP" not in warning
    assert any("400" in c.value or "refused" in c.value for c in at.code)
    assert not at.error
