"""Issue #22, observations 4-6 and 9: deletion that deletes, researcher access that cannot be
guessed in parallel or used as a lock-out, revocable tokens bound to the password, and one
server per data folder."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis import strategies as hs
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from streamlit.testing.v1 import AppTest

from study import access as A
from study import schema as S
from study.audio import save_recording
from study.runner import join
from study.spec import load_study
from study.store import open_store
from study.withdraw import withdraw
from tests.harness import LOOPBACK, free_port, stop, wait_healthy
from tests.study_flow_fixtures import ROOT, open_page, write_mini
from ui.access import FLAG, TOKEN

FREE_TEXT = "my-unmistakable-free-text-7Q2X"


def _disk_bytes(db: Path) -> bytes:
    """The SQLite main file, its WAL and its shared-memory index, as they are on disk now."""
    return b"".join(p.read_bytes() for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm"))
                    if p.exists())


def test_withdrawal_leaves_no_copy_in_the_wal_or_the_main_file(tmp_path):
    """Observation 4: right after a withdrawal the WAL held 25 copies of the free text and 536
    of the pseudonym; now neither file holds any (secure_delete + WAL checkpoint TRUNCATE)."""
    db = tmp_path / "study.sqlite"
    store = open_store(f"sqlite:///{db}")
    spec = load_study(write_mini(tmp_path / "studies"))
    other = join(store, spec)
    runner = join(store, spec)
    pid = runner.participant
    for i in range(25):  # an answer edited as it is typed: one row version per edit
        runner.answer("task:film-pulp-review/1", f"{FREE_TEXT} {i}")
        runner.log("space.hover", {"candidate": i, "client_ts": None, "step": 0})
    save_recording(pid, "t1", b"RIFF....", root=tmp_path / "audio")
    before = _disk_bytes(db)
    assert FREE_TEXT.encode() in before and pid.encode() in before  # the scan can see them
    withdraw(store, spec, pid, by="participant", now=10**6, audio=tmp_path / "audio")
    after = _disk_bytes(db)
    assert after.count(FREE_TEXT.encode()) == 0
    assert after.count(pid.encode()) == 0
    assert Path(f"{db}-wal").stat().st_size == 0
    assert not (tmp_path / "audio" / pid).exists()
    assert store.participant(other.participant) is not None  # the others' data is intact
    store.close()


def test_parallel_wrong_guesses_are_not_all_checked_and_lock_only_their_client():
    """Observation 5: 20 simultaneous wrong guesses were all evaluated, and the lock that
    followed refused the right password to every researcher for up to 15 minutes."""
    limit = A.RateLimit()
    stored = A.hash_password("right")
    checked: list[str] = []
    gate = threading.Barrier(20)

    def guess(password: str) -> tuple[bool, float]:
        gate.wait()
        return limit.attempt("10.0.0.66", lambda: (checked.append(password),
                                                   A.verify_password(password, stored))[1])

    with ThreadPoolExecutor(20) as pool:
        results = list(pool.map(guess, [f"wrong-{i}" for i in range(20)]))
    assert len(checked) == A.FREE_ATTEMPTS  # the rest were refused without an scrypt
    assert sum(1 for ok, wait in results if not ok and wait > 0) == 20 - A.FREE_ATTEMPTS
    assert limit.wait_s("10.0.0.66") > 0
    # the researcher at another address is not locked out
    assert limit.attempt("10.0.0.7", lambda: A.verify_password("right", stored)) == (True, 0.0)


def test_tokens_are_bound_to_the_password_and_revocable(tmp_path):
    """Observation 6: after logout, and after a restart with a new password, a captured token
    still unlocked Setup."""
    key = A.signing_key(tmp_path / "key")
    old_hash, new_hash = A.hash_password("first"), A.hash_password("second")
    token = A.make_token(A.token_key(key, old_hash), now=1000)
    assert A.token_valid(token, A.token_key(key, old_hash), 1000)
    assert not A.token_valid(token, A.token_key(key, new_hash), 1000)  # password changed
    revoked = A.Revocations(tmp_path / "revoked", clock=lambda: 1000)
    other = A.make_token(A.token_key(key, old_hash), now=1000)
    assert revoked.revoke(token)
    assert stat.S_IMODE((tmp_path / "revoked").stat().st_mode) == 0o600
    second_server = A.Revocations(tmp_path / "revoked", clock=lambda: 1000)  # another process
    for rev in (revoked, second_server):
        assert not A.token_valid(token, A.token_key(key, old_hash), 1000, rev.ids())
        assert A.token_valid(other, A.token_key(key, old_hash), 1000, rev.ids())
    later = A.Revocations(tmp_path / "revoked", clock=lambda: 1000 + A.TOKEN_TTL_S + 1)
    assert later.ids() == frozenset()  # an expired entry no longer matters


@pytest.mark.parametrize("token", ["9" * 5000 + ".a.b", "²³.a.b", "12.a", "", "x" * 10**6,
                                   None, 12])
def test_a_malformed_token_is_invalid_not_an_exception(token):
    """A 5000-digit token expiry raised ValueError on every page of the app."""
    assert not A.token_valid(token, b"k" * 32, 1000)
    assert not A.Revocations(Path("/nonexistent/revoked")).revoke(token)


def test_logging_out_revokes_the_token_on_the_server(tmp_path, monkeypatch):
    """The researcher page's Log out puts the session's token on the revocation list, and the
    same token no longer unlocks a fresh session."""
    monkeypatch.setenv(A.ENV_PASSWORD, "lab-s3cret")
    at = open_page("researcher")
    at.text_input(key="researcher_login_pw").input("lab-s3cret")
    at.button[0].click().run()
    token = at.session_state[TOKEN]
    assert A.token_valid(token, A.token_key(A.signing_key(), "lab-s3cret"), time.time())
    at.button(key="researcher_logout").click().run()
    assert token.split(".")[1] in A.Revocations().ids()
    fresh = AppTest.from_file(str(ROOT / "pages" / "researcher.py"), default_timeout=60)
    fresh.session_state[FLAG], fresh.session_state[TOKEN] = True, token  # a captured copy
    fresh.run()
    assert fresh.text_input(key="researcher_login_pw")  # locked again


def _serve(port: int, env: dict[str, str], **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "study.serve", "--server.headless", "true", "--server.port",
         str(port), "--server.address", LOOPBACK, "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, text=True, **kw)


def test_a_second_serve_finds_the_running_one_and_keeps_its_password(tmp_path):
    """Observation 9: a second ``python -m study.serve`` moved to 8502 and printed a new
    password, which the 8501 server then refused on its own console."""
    env = {k: v for k, v in os.environ.items()
           if k not in (A.ENV_PASSWORD, A.ENV_ANNOUNCED, "STREAMLIT_SERVER_PORT")}
    env.update(PLEASQLARIFY_STUDIES_DIR=str(tmp_path / "studies"),
               PLEASQLARIFY_DB_URL=f"sqlite:///{tmp_path / 'study.sqlite'}",
               PLEASQLARIFY_DATA_DIR=str(tmp_path / "data"))  # a first start: a new password
    port1, port2 = free_port(), free_port()
    first = _serve(port1, env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        line = first.stdout.readline()
        assert A.NEW_PASSWORD in line, line
        password = line.split(A.NEW_PASSWORD)[1].split()[0]
        wait_healthy(f"http://{LOOPBACK}:{port1}", first, 90, "the first server did not start")
        second = _serve(port2, env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = second.communicate(timeout=60)
        assert second.returncode == 1 and "new researcher password" not in out
        assert f"pid {first.pid}" in err and f"http://localhost:{port1}" in err
        stored = A.stored_hash(tmp_path / "data" / "researcher_password")
        assert A.verify_password(password, stored)  # unchanged under the first
        with pytest.raises(OSError):
            urllib.request.urlopen(f"http://{LOOPBACK}:{port2}/_stcore/health", timeout=2)
    finally:
        first.kill()  # SIGKILL: the kernel releases the lock with the process
        first.wait()
    third = _serve(port2, env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_healthy(f"http://{LOOPBACK}:{port2}", third, 90, "the third server did not start")
    finally:
        stop(third)


class RateLimitModel(RuleBasedStateMachine):
    """RateLimit against a model: per client, attempts before a lock are checked (the first
    FREE_ATTEMPTS of a run free), a lock refuses unchecked until it expires, a right password
    clears the client, and nothing one client does changes another's wait."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 1000.0
        self.limit = A.RateLimit(clock=lambda: self.now)
        self.failures: dict[str, int] = {}
        self.until: dict[str, float] = {}

    @rule(client=hs.sampled_from(["a", "b", "c"]), right=hs.booleans())
    def attempt(self, client: str, right: bool) -> None:
        others = {c: self.limit.wait_s(c) for c in "abc" if c != client}
        checked: list[bool] = []
        ok, wait = self.limit.attempt(client, lambda: checked.append(True) or right)
        locked = self.until.get(client, 0.0) > self.now
        assert bool(checked) is not locked
        assert wait == (self.until[client] - self.now if locked else 0.0)
        assert ok is (right and not locked)
        if not locked:
            n = self.failures.get(client, 0) + 1
            self.failures[client] = n
            if n >= A.FREE_ATTEMPTS:
                self.until[client] = self.now + min(A.MAX_LOCK_S, A.BASE_LOCK_S * 2 ** (
                    n - A.FREE_ATTEMPTS))
            if right:
                self.failures.pop(client)
                self.until.pop(client, None)
        assert others == {c: self.limit.wait_s(c) for c in "abc" if c != client}

    @rule(seconds=hs.sampled_from([1.0, A.BASE_LOCK_S, A.MAX_LOCK_S]))
    def wait(self, seconds: float) -> None:
        self.now += seconds

    @invariant()
    def waits_match(self) -> None:
        for c in "abc":
            assert self.limit.wait_s(c) == max(0.0, self.until.get(c, 0.0) - self.now)


TestRateLimitModel = RateLimitModel.TestCase
TestRateLimitModel.settings = settings(max_examples=40, stateful_step_count=30, deadline=None)


def test_a_withdrawal_beside_a_long_read_neither_stalls_writes_nor_leaves_the_wal(tmp_path):
    """The scrub's checkpoint waits for readers: it must not hold the process's write lock
    while it waits (every participant's events stalled for the whole read), and a scrub that
    gave up beside a reader is finished by a later write."""
    db = tmp_path / "study.sqlite"
    store = open_store(f"sqlite:///{db}")
    spec = load_study(write_mini(tmp_path / "studies"))
    other = join(store, spec)
    runner = join(store, spec)
    runner.answer("task:film-pulp-review/1", FREE_TEXT)

    def reading() -> tuple[threading.Thread, threading.Event, list[bool]]:
        """A researcher's long read (an export) in another thread, until released."""
        started, release, by_hang_detector = threading.Event(), threading.Event(), []

        def read() -> None:
            with store.read() as conn:
                conn.exec_driver_sql("SELECT count(*) FROM events").fetchone()
                started.set()
                by_hang_detector.append(not release.wait(20))

        thread = threading.Thread(target=read)
        thread.start()
        started.wait()
        return thread, release, by_hang_detector

    reader, release, timed_out = reading()
    withdrawer = threading.Thread(target=lambda: withdraw(
        store, spec, runner.participant, by="participant", now=10**6, audio=tmp_path / "audio"))
    withdrawer.start()
    gone = runner.participant
    while store.participant(gone) is not None:  # until the withdrawal's deletion commits;
        time.sleep(0.01)  # its scrub then waits for the reader
    time.sleep(0.05)
    other.log("space.hover", {"candidate": 1, "client_ts": None, "step": 0})
    release.set()  # the other participant's write finished while the read was still open
    reader.join()
    withdrawer.join()
    assert timed_out == [False]
    assert _disk_bytes(db).count(FREE_TEXT.encode()) == 0

    runner = join(store, spec)
    runner.answer("task:film-pulp-review/1", FREE_TEXT)
    reader, release, timed_out = reading()
    with store.write() as conn:  # a deletion committed after the reader's snapshot
        for table in (S.answers, S.events):
            conn.execute(table.delete().where(table.c.participant == runner.participant))
    assert store.scrub(attempts=1) is False  # gives up beside the reader, without waiting
    release.set()
    reader.join()
    assert timed_out == [False]
    other.log("space.hover", {"candidate": 2, "client_ts": None, "step": 0})  # finishes it
    assert Path(f"{db}-wal").stat().st_size == 0
    assert _disk_bytes(db).count(FREE_TEXT.encode()) == 0
    store.close()
