"""Researcher access: a salted password hash, rate-limited attempts, signed day-long tokens.

Password order: a value the page passes in (``st.secrets["researcher_password"]``), then
``$PLEASQLARIFY_RESEARCHER_PASSWORD``; otherwise every server start generates a fresh password,
prints it on the console and keeps only its salted scrypt hash in ``logs/researcher_password``
(mode 0600). Unlocking issues an HMAC-signed token that expires after a working day
(:data:`TOKEN_TTL_S`); its key lives in ``logs/researcher_key`` (0600), so a token survives
a server restart. ``python -m study.serve`` prints the password before the server takes
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
import time
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from core import settings

ENV_PASSWORD = settings.PASSWORD_ENV
ENV_ANNOUNCED = settings.ANNOUNCED_ENV  # set by study.serve: already printed
PASSWORD_FILE = settings.password_file()
KEY_FILE = settings.signing_key_file()
SECRETS_FILE = settings.SECRETS_FILE
TOKEN_TTL_S = 10 * 3600  # a working day
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


def announce(secret: str | None = None, *, path: str | Path = PASSWORD_FILE,
             env: Mapping[str, str] | None = None,
             echo: Callable[[str], None] = print) -> str:
    """At server start: the stored hash of the password to check (generating and printing one)."""
    env = os.environ if env is None else env
    chosen = configured_password(secret, env)
    if not chosen and env.get(ENV_ANNOUNCED) and stored_hash(path):
        return stored_hash(path)
    if chosen:
        echo(f"PleaSQLarify Studio: researcher password set by {ENV_PASSWORD} or "
             "researcher_password in .streamlit/secrets.toml")
        return hash_password(chosen)
    password = secrets.token_urlsafe(9)
    stored = hash_password(password)
    _write_private(Path(path), stored + "\n")
    echo(f"PleaSQLarify Studio: researcher password for this server run: {password}  "
         f"(only its salted hash is kept, in {path}; set {ENV_PASSWORD} to choose one)")
    return stored


def stored_hash(path: str | Path = PASSWORD_FILE) -> str:
    """The hash the last :func:`announce` wrote ('' when there is none)."""
    p = Path(path)
    return p.read_text(encoding="utf-8").strip() if p.is_file() else ""


def signing_key(path: str | Path = KEY_FILE) -> bytes:
    """The HMAC key of researcher tokens (created once, mode 0600)."""
    p = Path(path)
    if not p.is_file():
        _write_private(p, secrets.token_hex(32))
    return bytes.fromhex(p.read_text(encoding="utf-8").strip())


def make_token(key: bytes, now: float, ttl_s: float = TOKEN_TTL_S) -> str:
    """``<expiry>.<signature>``: proof of an unlock, valid until ``now + ttl_s``."""
    expiry = int(now + ttl_s)
    sig = hmac.new(key, f"researcher:{expiry}".encode(), hashlib.sha256).hexdigest()
    return f"{expiry}.{sig}"


def token_valid(token: str | None, key: bytes, now: float) -> bool:
    """Whether ``token`` was signed with ``key`` and has not expired."""
    if not isinstance(token, str):
        return False
    expiry, _, sig = token.partition(".")
    if not expiry.isdigit() or int(expiry) < now:
        return False
    good = hmac.new(key, f"researcher:{expiry}".encode(), hashlib.sha256).hexdigest()
    return hmac.compare_digest(good, sig)


@dataclass
class Attempts:
    """Rate limit: after :data:`FREE_ATTEMPTS` failures, each one locks the form for longer."""

    failures: int = 0
    locked_until: float = 0.0
    clock: Callable[[], float] = field(default=time.time, repr=False)

    def wait_s(self) -> float:
        """Seconds until the next attempt is allowed (0 when it is)."""
        return max(0.0, self.locked_until - self.clock())

    def failed(self) -> None:
        """Count a wrong password (locking 30 s, 60 s, … up to 15 min after the free ones)."""
        self.failures += 1
        over = self.failures - FREE_ATTEMPTS
        if over >= 0:
            self.locked_until = self.clock() + min(MAX_LOCK_S, BASE_LOCK_S * 2**over)

    def succeeded(self) -> None:
        self.failures, self.locked_until = 0, 0.0


def _secrets_password(path: Path = SECRETS_FILE) -> str | None:
    """``researcher_password`` from .streamlit/secrets.toml, which the pages pass in."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8")).get("researcher_password")
    except (OSError, tomllib.TOMLDecodeError):
        return None


def main(argv: list[str] | None = None, *, path: str | Path = PASSWORD_FILE,
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
    announce(env={}, path=path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
