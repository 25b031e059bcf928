"""tests.harness's throwaway servers: healthy when started, stopped after, a clear error if not."""

from __future__ import annotations

import urllib.request

import pytest

from tests.harness import running, start


def test_running_serves_the_script_until_the_block_ends(tmp_path) -> None:
    (tmp_path / "hello.py").write_text("import streamlit as st\nst.write('hello')\n")
    with running(tmp_path / "hello.py", log=tmp_path, cwd=tmp_path) as srv:
        assert srv.url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(f"{srv.url}/_stcore/health", timeout=5) as resp:
            assert resp.read() == b"ok"
        assert srv.log.parent == tmp_path and srv.log.name.startswith("streamlit-")
    assert srv.proc.poll() is not None  # stopped
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{srv.url}/_stcore/health", timeout=2)


def test_a_server_that_cannot_start_names_its_log(tmp_path) -> None:
    log = tmp_path / "out.log"
    with pytest.raises(RuntimeError, match=r"did not become healthy.*out\.log"):
        start(tmp_path / "missing.py", log=log, cwd=tmp_path, timeout=60)
    assert "missing.py" in log.read_text()  # streamlit's own message is in the log
