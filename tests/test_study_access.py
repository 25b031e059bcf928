"""The researcher password: secret, environment, generated once (0600), constant-time check."""

from __future__ import annotations

import stat

from study.access import ENV_PASSWORD, check_password, researcher_password


def test_secret_then_environment_take_precedence(tmp_path):
    path = tmp_path / "pw"
    assert researcher_password("from-secrets", path=path, env={ENV_PASSWORD: "e"}) == (
        "from-secrets")
    assert researcher_password(None, path=path, env={ENV_PASSWORD: "from-env"}) == "from-env"
    assert not path.exists()


def test_generated_once_stored_0600_and_printed_once(tmp_path):
    path = tmp_path / "logs" / "researcher_password"
    printed: list[str] = []
    first = researcher_password(path=path, env={}, echo=printed.append)
    second = researcher_password(path=path, env={}, echo=printed.append)
    assert first == second and len(first) >= 16
    assert len(printed) == 1 and first in printed[0]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text().strip() == first


def test_check_password():
    assert check_password("s3cret", "s3cret")
    assert not check_password("s3cre", "s3cret")
    assert not check_password("", "")
    assert check_password("pässwort", "pässwort")
