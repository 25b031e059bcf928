"""Issue #22, observations 4-6 and 9: deletion that deletes, researcher access that cannot be
guessed in parallel or used as a lock-out, revocable tokens bound to the password, and one
server per data folder."""

from __future__ import annotations

from pathlib import Path

from study.audio import save_recording
from study.runner import join
from study.spec import load_study
from study.store import open_store
from study.withdraw import withdraw
from tests.study_flow_fixtures import write_mini

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
