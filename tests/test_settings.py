"""core.settings: one data folder holds everything the studio writes; the suite's write check."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from core import settings
from core.generation.poolcache import open_pool_cache
from tests.conftest import checkout_state, written_outside


def test_the_data_folder_holds_every_written_path(monkeypatch, tmp_path):
    for env in (settings.DB_URL_ENV, settings.DEMO_DB_URL_ENV, settings.CACHE_ENV,
                settings.AUDIO_ENV):
        monkeypatch.delenv(env, raising=False)
    monkeypatch.setenv(settings.DATA_ENV, str(tmp_path))
    paths = [settings.study_db_path(), settings.cache_root(), settings.pool_cache_dir(),
             settings.numba_cache_dir(), settings.audio_dir(), settings.password_file(),
             settings.signing_key_file(), open_pool_cache().folder]
    assert all(p.is_relative_to(tmp_path) for p in paths), paths
    assert settings.study_db_url() == f"sqlite:///{tmp_path / 'study.sqlite'}"
    assert settings.demo_db_url() == f"sqlite:///{tmp_path / 'demo.sqlite'}"


def test_the_default_data_folder_is_logs_in_the_checkout(monkeypatch):
    monkeypatch.delenv(settings.DATA_ENV, raising=False)
    assert settings.data_dir() == settings.REPO_ROOT / "logs"
    # the pool cache once sat in core/logs/pool-cache, outside the git-ignored folder
    assert open_pool_cache().folder == settings.REPO_ROOT / "logs" / "pool-cache"


def test_each_path_keeps_its_own_override(monkeypatch, tmp_path):
    monkeypatch.setenv(settings.AUDIO_ENV, str(tmp_path / "a"))
    monkeypatch.setenv(settings.CACHE_ENV, str(tmp_path / "c"))
    monkeypatch.setenv(settings.DB_URL_ENV, "postgresql+psycopg://u@h/db")
    assert settings.audio_dir() == tmp_path / "a" and settings.cache_root() == tmp_path / "c"
    assert settings.study_db_url() == "postgresql+psycopg://u@h/db"


def test_the_write_check_sees_new_changed_and_deleted_files(tmp_path):
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / ".gitignore").write_text("/logs/*\n/ignored/\n")
    (tmp_path / "kept.txt").write_text("a")
    (tmp_path / "gone.txt").write_text("b")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    before = checkout_state(Path(tmp_path))
    assert before == {}
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "fine.sqlite").write_text("x")  # the data folder: allowed
    (tmp_path / "new.txt").write_text("c")
    (tmp_path / "ignored").mkdir()
    (tmp_path / "ignored" / "cache.json").write_text("d")  # git-ignored still counts
    (tmp_path / "kept.txt").write_text("changed")
    (tmp_path / "gone.txt").unlink()
    after = checkout_state(Path(tmp_path))
    assert written_outside(before, after) == ["gone.txt", "ignored/cache.json", "kept.txt",
                                              "new.txt"]


def test_researcher_access_files_follow_the_data_folder_set_after_import(monkeypatch, tmp_path):
    """study.access and study.serve read their paths when called, as core.settings promises:
    module constants computed at import sent the signing key, password hash, revocations and
    server lock to the checkout's logs/ whatever the data folder was set to later."""
    from study import access, serve

    monkeypatch.setenv(settings.DATA_ENV, str(tmp_path))
    access.signing_key()
    access.announce(env={}, echo=lambda _: None)
    assert access.stored_hash().startswith("scrypt$")
    access.Revocations().revoke(access.make_token(b"k", 0.0))
    fd = serve.claim(8599)
    assert fd is not None
    try:
        assert serve.holder()["port"] == 8599
    finally:
        os.close(fd)
    assert {p.name for p in tmp_path.iterdir()} == {
        "researcher_key", "researcher_password", "researcher_revoked", "server.lock"}
