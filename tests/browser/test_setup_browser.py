"""Setup in real Chromium: adding a study from a path keeps the researcher on the path tab."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ARTIFACTS, server_env
from tests.harness import running
from tests.study_flow_fixtures import write_mini

pytestmark = pytest.mark.browser
PASSWORD = "setup-browser-pw"


@pytest.fixture()
def server(tmp_path) -> Iterator[str]:
    """``streamlit run app.py`` with the shipped studies (so the Add expander starts closed)."""
    env = server_env(PLEASQLARIFY_DB_URL=f"sqlite:///{tmp_path / 'study.sqlite'}",
                     PLEASQLARIFY_AUDIO_DIR=str(tmp_path / "a"),
                     PLEASQLARIFY_RESEARCHER_PASSWORD=PASSWORD)
    env.pop("PLEASQLARIFY_STUDIES_DIR", None)
    with running("app.py", env=env, log=ARTIFACTS / "setup-browser-server.log",
                 timeout=60) as srv:
        yield srv.url


def _idle(page) -> None:
    """Wait until Streamlit has finished its rerun (no 'Running…' status widget)."""
    page.wait_for_timeout(300)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)


def test_a_checked_path_stays_on_its_tab(browser, server, tmp_path) -> None:
    """Typing a path and pressing Enter reruns with the expander forced open; the tabs used to
    be re-created then, showing the Upload tab (and hiding the path just typed) beside the
    "is valid" message. Switching tabs must not close the expander either."""
    study = write_mini(tmp_path / "elsewhere", name="setup-walk")
    page = browser.new_context(viewport={"width": 1440, "height": 1000}).new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(f"{server}/setup")
        page.get_by_label("Researcher password").fill(PASSWORD)
        page.keyboard.press("Enter")
        page.get_by_text("Studies", exact=True).wait_for()
        _idle(page)
        page.get_by_text("Add a study").first.click()
        _idle(page)
        page.get_by_role("tab", name="From a path on this computer").click()
        _idle(page)
        box = page.get_by_label("Path to the study file")
        expect(box).to_be_visible()  # the tab's rerun kept the expander open
        box.fill(str(study))
        box.press("Enter")
        page.get_by_text("is valid").first.wait_for()
        _idle(page)
        page.screenshot(path=str(ARTIFACTS / "setup-path-checked.png"), full_page=True)
        expect(page.get_by_label("Path to the study file")).to_have_value(str(study))
        expect(page.get_by_label("Path to the study file")).to_be_visible()
        expect(page.get_by_role("button", name="Save under")).to_be_visible()
    finally:
        page.context.close()
