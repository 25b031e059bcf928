"""A throwaway PostgreSQL server for the store tests (session-scoped pytest fixtures).

``pg_server_url`` yields the URL of a server: ``$PLEASQLARIFY_TEST_PG_URL`` if set, otherwise a
fresh cluster initialised in a temporary directory and started on a free loopback port (as the
``postgres`` OS user when running as root, since initdb refuses root), stopped afterwards.
``pg_url`` yields a fresh, empty database on that server for each test, ``film_pg`` one holding
a small film table; ``run_sql`` and ``fetch`` reach a database as its owner, outside the code
under test. The tests are skipped only when no PostgreSQL server binaries (initdb, pg_ctl) can
be found.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from sqlalchemy import create_engine, pool, text

ENV_URL = "PLEASQLARIFY_TEST_PG_URL"


def find_pg_bindir() -> Path | None:
    """The directory holding initdb and pg_ctl ($PG_BINDIR, PATH, /usr/lib/postgresql/*/bin)."""
    candidates = [os.environ.get("PG_BINDIR", "")]
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(str(Path(initdb).parent))
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    candidates += sorted(glob.glob("/usr/local/pgsql*/bin"), reverse=True)
    for c in candidates:
        if c and (Path(c) / "initdb").is_file() and (Path(c) / "pg_ctl").is_file():
            return Path(c)
    return None


def _free_port() -> int:
    """A currently unused TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_as(user: str | None, args: list[str]) -> subprocess.CompletedProcess:
    """Run a command (as ``user`` via runuser when given), raising with its output on failure."""
    cmd = ["runuser", "-u", user, "--", *args] if user else args
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}\n"
                           f"{proc.stderr}")
    return proc


class LocalCluster:
    """A PostgreSQL cluster in a temporary directory, listening on loopback only."""

    def __init__(self, bindir: Path):
        self.bindir = bindir
        self.user: str | None = None
        if os.geteuid() == 0:
            try:
                pwd.getpwnam("postgres")
            except KeyError:
                raise RuntimeError("running as root and no 'postgres' OS user exists to run "
                                   "initdb; create one (useradd postgres) or set "
                                   f"{ENV_URL}") from None
            self.user = "postgres"
        self.root = Path(tempfile.mkdtemp(prefix="pleasqlarify-pg-"))
        self.data = self.root / "data"
        self.port = 0
        if self.user:
            info = pwd.getpwnam(self.user)
            os.chown(self.root, info.pw_uid, info.pw_gid)

    def start(self) -> str:
        """initdb, start on a free port and return the server's URL."""
        _run_as(self.user, [str(self.bindir / "initdb"), "-D", str(self.data), "-U", "postgres",
                            "--auth=trust", "-E", "UTF8", "--no-sync"])
        last: Exception | None = None
        for _ in range(3):  # the free port may be taken between probe and start
            self.port = _free_port()
            opts = (f"-c listen_addresses=127.0.0.1 -p {self.port} -c fsync=off "
                    f"-c unix_socket_directories={self.root} -c max_connections=200")
            try:
                _run_as(self.user, [str(self.bindir / "pg_ctl"), "-D", str(self.data), "-w",
                                    "-t", "60", "-l", str(self.root / "server.log"), "-o",
                                    opts, "start"])
                return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"
            except RuntimeError as exc:
                last = exc
        raise RuntimeError(f"PostgreSQL did not start: {last}\n{self.log()}")

    def log(self) -> str:
        """The server log (for error messages)."""
        p = self.root / "server.log"
        return p.read_text(errors="replace") if p.exists() else ""

    def stop(self) -> None:
        """Stop the server and delete the cluster."""
        if self.data.exists():
            subprocess.run((["runuser", "-u", self.user, "--"] if self.user else [])
                           + [str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast",
                              "-w", "stop"], capture_output=True, timeout=120)
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server_url() -> Iterator[str]:
    """URL of a PostgreSQL server for this test session (env override or throwaway cluster)."""
    if os.environ.get(ENV_URL):
        yield os.environ[ENV_URL]
        return
    bindir = find_pg_bindir()
    if bindir is None:
        pytest.skip("no PostgreSQL server binaries (initdb, pg_ctl) found on PATH, in $PG_BINDIR "
                    f"or /usr/lib/postgresql/*/bin; install postgresql or set {ENV_URL}")
    cluster = LocalCluster(bindir)
    try:
        yield cluster.start()
    finally:
        cluster.stop()


def create_database(server_url: str) -> str:
    """Create a fresh uniquely named database on the server; returns its URL."""
    name = f"t_{uuid.uuid4().hex[:16]}"
    engine = create_engine(server_url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    finally:
        engine.dispose()
    base, _, _ = server_url.rpartition("/")
    return f"{base}/{name}"


@pytest.fixture
def pg_url(pg_server_url: str) -> str:
    """URL of a new empty database for one test."""
    return create_database(pg_server_url)


def run_sql(url: str, *statements: str) -> None:
    """Run ``statements`` in one transaction on a connection of its own (disposed after)."""
    engine = create_engine(url, poolclass=pool.NullPool)
    try:
        with engine.begin() as conn:
            for statement in statements:
                conn.exec_driver_sql(statement)
    finally:
        engine.dispose()


def fetch(url: str, sql: str) -> Sequence[tuple]:
    """Every row of ``sql`` read on a connection of its own (disposed after)."""
    engine = create_engine(url, poolclass=pool.NullPool)
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.exec_driver_sql(sql).fetchall()]
    finally:
        engine.dispose()


@pytest.fixture
def film_pg(pg_url: str) -> str:
    """URL of a new database holding film(id, title, year, score) with three rows."""
    run_sql(pg_url, "CREATE TABLE film (id int PRIMARY KEY, title text, year int, "
                    "score numeric(4,2))",
            "INSERT INTO film VALUES (1, 'Pulp Fiction', 1994, 8.90), "
            "(2, 'Jackie Brown', 1997, 7.50), (3, 'Heat', 1995, 8.30)")
    return pg_url


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh study-store URL on each backend: a SQLite file, then a PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'study.sqlite'}"
    return create_database(request.getfixturevalue("pg_server_url"))
