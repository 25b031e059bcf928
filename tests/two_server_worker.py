"""One study server process for tests/test_study_two_servers.py: participants join and log.

``python -m tests.two_server_worker URL STUDY_YAML N JOURNAL [resume PID...]``

Runs ``N`` participants concurrently (one thread each, like browser sessions on one server):
each joins, then logs EVENTS trace events with client event ids ``<pid>:e<i>`` and advances
through the flow every few events. After each call returns (committed), one line goes to the
JOURNAL with ``os.write`` (no buffering a SIGKILL could lose): ``join <pid>`` or ``ev <id>``.
``resume PID...`` also reconnects those participants (a new session on this server),
re-sends all their events (a browser resends what it has no acknowledgement for) and
finishes their flow.
"""

from __future__ import annotations

import os
import sys
import threading
import time

from study.runner import Runner, join
from study.spec import load_study
from study.store import open_store

EVENTS = 24
ADVANCE_EVERY = 3


def main(argv: list[str]) -> int:
    url, study_path, n, journal = argv[:4]
    resume = argv[5:] if len(argv) > 4 and argv[4] == "resume" else []
    store = open_store(url, pool_size=12)
    spec = load_study(study_path)
    fd = os.open(journal, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    errors: list[BaseException] = []

    def note(line: str) -> None:
        os.write(fd, (line + "\n").encode())

    def session(pid: str | None) -> None:
        try:
            runner = Runner(store, spec, pid) if pid else join(store, spec)
            if pid is None:
                note(f"join {runner.participant}")
            for i in range(EVENTS):
                ev = runner.log("x.load", {"i": i}, event_id=f"{runner.participant}:e{i}",
                                client_ts=int(time.time() * 1000))
                note(f"ev {ev.event_id}")
                if i % ADVANCE_EVERY == ADVANCE_EVERY - 1:
                    runner.advance(runner.current().id)
                time.sleep(0.01)
            while runner.current().kind != "done":
                runner.advance(runner.current().id)
            note(f"done {runner.participant}")
        except BaseException as exc:  # pragma: no cover - reported through the exit code
            errors.append(exc)

    targets = [*resume, *[None] * int(n)]
    threads = [threading.Thread(target=session, args=(p,)) for p in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for exc in errors:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
