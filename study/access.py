"""Researcher access: a salted password hash, rate-limited attempts, signed day-long tokens.

Password order: a value the page passes in (``st.secrets["researcher_password"]``), then
``$PLEASQLARIFY_RESEARCHER_PASSWORD``; otherwise the first server start generates a password,
prints it on the console and keeps only its salted scrypt hash in ``logs/researcher_password``
(mode 0600); later starts keep it (and say so), ``python -m study.access`` replaces it.
Unlocking issues an HMAC-signed token that expires after a working day
(:data:`TOKEN_TTL_S`), signed with a key derived from ``logs/researcher_key`` (0600) and the
current password's hash: a token survives a restart (the password is the same), dies with a
new password, and logging out revokes it on the server (``logs/researcher_revoked``). Every
start used to generate a new password, so a restart locked every researcher out. Wrong passwords
are rate-limited per client (:class:`RateLimit`). ``python -m study.serve`` prints the password before the server takes
requests; ``python -m study.access`` prints a fresh one for a running server (unless a
password is configured: the server checks that one).
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import os
import secrets
import sys
import threading
import time
import tomllib
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from core import settings
from study.limits import parse_int

ENV_PASSWORD = settings.PASSWORD_ENV
ENV_ANNOUNCED = settings.ANNOUNCED_ENV  # set by study.serve: already printed
SECRETS_FILE = settings.SECRETS_FILE
TOKEN_TTL_S = 10 * 3600  # a working day
NEW_PASSWORD = "PleaSQLarify Studio: new researcher password: "  # then the password
SCRYPT = {"n": 2**14, "r": 8, "p": 1}
FREE_ATTEMPTS, BASE_LOCK_S, MAX_LOCK_S = 5, 30.0, 900.0


def hash_password(password: str, salt: bytes | None = None) -> str:
    """``scrypt$<salt hex>$<hash hex>`` of ``password`` (a fresh 16-byte salt by default)."""
    salt = salt if salt is not None else secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode("utf-8"), salt=salt, dklen=32, **SCRYPT)
    return f"scrypt${salt.hex()}${digest.hex()}"


def verify_password(given: str, stored: str) -> bool:
    """True iff ``given`` hashes to ``stored`` (constant-time; empty passwords never match)."""
    try:
        kind, salt, digest = stored.strip().split("$")
    except ValueError:
        return False
    if kind != "scrypt" or not given:
        return False
    return hmac.compare_digest(hash_password(given, bytes.fromhex(salt)).split("$")[2], digest)


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically with mode 0600."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def configured_password(secret: str | None = None,
                        env: Mapping[str, str] | None = None) -> str | None:
    """The password the researcher chose (secrets, then environment), if any."""
    env = os.environ if env is None else env
    return secret or env.get(ENV_PASSWORD) or None


def announce(secret: str | None = None, *, path: str | Path | None = None,
             env: Mapping[str, str] | None = None,
             echo: Callable[[str], None] = print, fresh: bool = False) -> str:
    """At server start: the stored hash of the password to check. A generated password is
    kept across restarts (so is every researcher's unlock, bound to it) and said to be
    unchanged; one is generated and printed when there is none, or with ``fresh``."""
    env = os.environ if env is None else env
    path = path or settings.password_file()
    chosen = configured_password(secret, env)
    if not chosen and env.get(ENV_ANNOUNCED) and stored_hash(path):
        return stored_hash(path)
    if chosen:
        echo(f"PleaSQLarify Studio: researcher password set by {ENV_PASSWORD} or "
             "researcher_password in .streamlit/secrets.toml")
        return hash_password(chosen)
    if not fresh and (kept := stored_hash(path)):
        made = time.strftime("%Y-%m-%d %H:%M", time.localtime(Path(path).stat().st_mtime))
        echo(f"PleaSQLarify Studio: researcher password unchanged (printed when it was made, "
             f"{made}; researchers stay unlocked). `python -m study.access` prints a new one "
             "and ends every researcher session.")
        return kept
    password = secrets.token_urlsafe(9)
    stored = hash_password(password)
    _write_private(Path(path), stored + "\n")
    echo(f"{NEW_PASSWORD}{password}  (kept across restarts until `python -m study.access`; "
         f"only its salted hash is kept, in {path}; set {ENV_PASSWORD} to choose one)")
    return stored


def stored_hash(path: str | Path | None = None) -> str:
    """The hash the last :func:`announce` wrote ('' when there is none)."""
    p = Path(path or settings.password_file())
    return p.read_text(encoding="utf-8").strip() if p.is_file() else ""


def signing_key(path: str | Path | None = None) -> bytes:
    """The HMAC key of researcher tokens (created once, mode 0600)."""
    p = Path(path or settings.signing_key_file())
    if not p.is_file():
        _write_private(p, secrets.token_hex(32))
    return bytes.fromhex(p.read_text(encoding="utf-8").strip())


def token_key(key: bytes, password_hash: str) -> bytes:
    """The HMAC key of tokens under the current password (its stored hash): a token issued
    before a password change, or before a restart with a new password, stops working."""
    return hmac.new(key, f"password:{password_hash}".encode(), hashlib.sha256).digest()


def _signature(key: bytes, expiry: str, tid: str) -> str:
    """The HMAC of a token's expiry and id."""
    return hmac.new(key, f"researcher:{expiry}:{tid}".encode(), hashlib.sha256).hexdigest()


def make_token(key: bytes, now: float, ttl_s: float = TOKEN_TTL_S) -> str:
    """``<expiry>.<id>.<signature>``: proof of an unlock, valid until ``now + ttl_s`` unless
    its id is revoked (:class:`Revocations`); ``key`` comes from :func:`token_key`."""
    expiry, tid = str(int(now + ttl_s)), secrets.token_hex(8)
    return f"{expiry}.{tid}.{_signature(key, expiry, tid)}"


def _parts(token: object) -> tuple[str, str, str] | None:
    """(expiry, id, signature) of a well-formed token, else None (never raises)."""
    if not isinstance(token, str) or len(token) > 200:
        return None
    parts = token.split(".")
    if len(parts) != 3 or parse_int(parts[0], 0, 10**12) is None:
        return None
    return parts[0], parts[1], parts[2]


def token_valid(token: str | None, key: bytes, now: float,
                revoked: Container[str] = frozenset()) -> bool:
    """Whether ``token`` was signed with ``key``, has not expired and is not revoked."""
    parts = _parts(token)
    if parts is None or int(parts[0]) < now or parts[1] in revoked:
        return False
    return hmac.compare_digest(_signature(key, parts[0], parts[1]), parts[2])


class Revocations:
    """The server-side list of revoked token ids (logout), shared by every server process of
    this data folder through an append-only 0600 file; expired entries are ignored on read."""

    def __init__(self, path: str | Path | None = None,
                 clock: Callable[[], float] = time.time):
        self.path = Path(path or settings.revoked_tokens_file())
        self.clock = clock
        self._lock = threading.Lock()
        self._seen: tuple[int, int] | None = None
        self._ids: frozenset[str] = frozenset()

    def revoke(self, token: str | None) -> bool:
        """Revoke ``token`` everywhere (its id, until its expiry); False for a malformed one."""
        parts = _parts(token)
        if parts is None:
            return False
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            with os.fdopen(fd, "a", encoding="utf-8") as fh:
                fh.write(f"{parts[1]} {parts[0]}\n")
            self._seen = None
        return True

    def ids(self) -> frozenset[str]:
        """The ids revoked and not yet expired (re-read when the file changed)."""
        with self._lock:
            try:
                stat = self.path.stat()
            except FileNotFoundError:
                return frozenset()
            if self._seen != (stat.st_mtime_ns, stat.st_size):
                now, ids = self.clock(), set()
                for line in self.path.read_text(encoding="utf-8").splitlines():
                    tid, _, expiry = line.partition(" ")
                    if (parse_int(expiry, 0, 10**12) or 0) >= now:
                        ids.add(tid)
                self._seen, self._ids = (stat.st_mtime_ns, stat.st_size), frozenset(ids)
            return self._ids


@dataclass
class _Client:
    """One client's wrong passwords and lock."""

    failures: int = 0
    locked_until: float = 0.0


@dataclass
class RateLimit:
    """Per-client back-off on wrong passwords, atomic under a lock.

    An attempt counts as a failure *before* the password is checked, so parallel guesses see
    each other at once: after :data:`FREE_ATTEMPTS` the client (its IP address) is locked for
    30 s, 60 s, … up to 15 min, and its further attempts are refused without being checked. A
    correct password clears the client's count. Other clients are never locked by someone
    else's guesses, so nobody can lock the right password out for every researcher.
    """

    clock: Callable[[], float] = field(default=time.time, repr=False)
    max_clients: int = 10_000
    _clients: dict[str, _Client] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def wait_s(self, client: str) -> float:
        """Seconds until ``client`` may try again (0 when it may)."""
        with self._lock:
            c = self._clients.get(client)
            return max(0.0, c.locked_until - self.clock()) if c else 0.0

    def attempt(self, client: str, check: Callable[[], bool]) -> tuple[bool, float]:
        """(whether ``check()`` passed, seconds left on the lock when it was not run)."""
        with self._lock:
            now = self.clock()
            c = self._clients.get(client)
            if c is None:
                if len(self._clients) >= self.max_clients:
                    self._forget_idle(now)
                c = self._clients[client] = _Client()
            if c.locked_until > now:
                return False, c.locked_until - now
            c.failures += 1
            over = c.failures - FREE_ATTEMPTS
            if over >= 0:
                c.locked_until = now + min(MAX_LOCK_S, BASE_LOCK_S * 2 ** min(over, 20))
        ok = check()
        if ok:
            with self._lock:
                self._clients.pop(client, None)
        return ok, 0.0

    def _forget_idle(self, now: float) -> None:
        """Drop clients that are not locked (bounded memory under many addresses)."""
        for key in [k for k, c in self._clients.items() if c.locked_until <= now]:
            del self._clients[key]


def _secrets_password(path: Path = SECRETS_FILE) -> str | None:
    """``researcher_password`` from .streamlit/secrets.toml, which the pages pass in."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8")).get("researcher_password")
    except (OSError, tomllib.TOMLDecodeError):
        return None


def main(argv: list[str] | None = None, *, path: str | Path | None = None,
         secrets_file: Path = SECRETS_FILE, env: Mapping[str, str] | None = None) -> int:
    """Print a fresh researcher password (a running server re-reads the stored hash); refused
    when a password is configured, since the server then checks that one instead."""
    argparse.ArgumentParser(
        prog="python -m study.access",
        description="Print a fresh researcher password for a running server started without a "
                    "configured one (only its salted hash is kept).").parse_args(argv)
    if configured_password(_secrets_password(secrets_file), env):
        print(f"A researcher password is configured ({ENV_PASSWORD} or researcher_password in "
              f"{secrets_file}); the server checks that one, so a fresh password would not "
              "work. Change it there and restart the server.", file=sys.stderr)
        return 1
    announce(env={}, path=path, fresh=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
