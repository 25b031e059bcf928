"""Researcher access: salted hash, printed password, rate limit, signed expiring tokens."""

from __future__ import annotations

import stat

import pytest

from study import access as A


def test_configured_password_is_hashed_and_never_written(tmp_path):
    out: list[str] = []
    stored = A.announce("from-secrets", path=tmp_path / "pw", env={}, echo=out.append)
    assert A.verify_password("from-secrets", stored) and not A.verify_password("x", stored)
    assert not (tmp_path / "pw").exists() and "from-secrets" not in out[0]
    env = {A.ENV_PASSWORD: "from-env"}
    assert A.verify_password("from-env", A.announce(path=tmp_path / "pw", env=env, echo=out.append))


def test_generated_password_is_printed_and_only_its_salted_hash_stored(tmp_path):
    out: list[str] = []
    path = tmp_path / "logs" / "pw"
    stored = A.announce(path=path, env={}, echo=out.append)
    password = out[0].split(A.NEW_PASSWORD)[1].split()[0]
    text = path.read_text()
    assert password not in text and text.strip() == stored == A.stored_hash(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert A.verify_password(password, A.stored_hash(path))
    # a new server start keeps it (a restart used to lock every researcher out) and says so
    assert A.announce(path=path, env={}, echo=out.append) == stored == A.stored_hash(path)
    assert "unchanged" in out[1] and "python -m study.access" in out[1]
    assert password not in out[1]
    # a fresh one (python -m study.access) rotates it; the old one stops working
    A.announce(path=path, env={}, echo=out.append, fresh=True)
    assert A.NEW_PASSWORD in out[2]
    assert not A.verify_password(password, A.stored_hash(path))
    # same password, different salt: different hashes
    assert A.hash_password("a") != A.hash_password("a")


def test_access_command_rotates_only_a_generated_password(tmp_path, capsys):
    path, secrets_file = tmp_path / "pw", tmp_path / "secrets.toml"
    with pytest.raises(SystemExit) as done:  # --help explains and writes nothing
        A.main(["--help"], path=path, secrets_file=secrets_file, env={})
    assert done.value.code == 0 and "python -m study.access" in capsys.readouterr().out
    assert not path.exists()
    assert A.main([], path=path, secrets_file=secrets_file, env={}) == 0
    password = capsys.readouterr().out.split(A.NEW_PASSWORD)[1].split()[0]
    assert A.verify_password(password, A.stored_hash(path))
    assert A.main([], path=path, secrets_file=secrets_file, env={}) == 0  # a new one each time
    second = capsys.readouterr().out.split(A.NEW_PASSWORD)[1].split()[0]
    assert second != password and not A.verify_password(password, A.stored_hash(path))
    password = second
    before = A.stored_hash(path)
    assert A.main([], path=path, secrets_file=secrets_file, env={A.ENV_PASSWORD: "x"}) == 1
    assert A.ENV_PASSWORD in capsys.readouterr().err and A.stored_hash(path) == before
    secrets_file.write_text('researcher_password = "chosen"\n')
    assert A.main([], path=path, secrets_file=secrets_file, env={}) == 1
    assert A.stored_hash(path) == before


def test_empty_and_malformed_never_match():
    stored = A.hash_password("secret")
    assert not A.verify_password("", stored)
    assert not A.verify_password("secret", "plaintext-secret")
    assert not A.verify_password("secret", "")


def test_attempts_are_rate_limited_with_growing_locks():
    now = [1000.0]
    limit = A.RateLimit(clock=lambda: now[0])
    for _ in range(A.FREE_ATTEMPTS - 1):
        assert limit.attempt("a", lambda: False) == (False, 0.0)
        assert limit.wait_s("a") == 0
    limit.attempt("a", lambda: False)
    assert limit.wait_s("a") == A.BASE_LOCK_S and limit.wait_s("b") == 0
    assert limit.attempt("a", lambda: True) == (False, A.BASE_LOCK_S)  # refused, not checked
    now[0] += A.BASE_LOCK_S
    limit.attempt("a", lambda: False)
    assert limit.wait_s("a") == 2 * A.BASE_LOCK_S
    now[0] += 2 * A.BASE_LOCK_S
    assert limit.attempt("a", lambda: True) == (True, 0.0)
    assert limit.wait_s("a") == 0


def test_tokens_are_signed_and_expire(tmp_path):
    key = A.signing_key(tmp_path / "key")
    assert A.signing_key(tmp_path / "key") == key
    assert stat.S_IMODE((tmp_path / "key").stat().st_mode) == 0o600
    token = A.make_token(key, now=1000)
    assert A.token_valid(token, key, 1000 + A.TOKEN_TTL_S - 1)
    assert not A.token_valid(token, key, 1000 + A.TOKEN_TTL_S + 1)
    assert not A.token_valid(token, b"other key", 1000)
    expiry, tid, sig = token.split(".")
    assert not A.token_valid(f"{int(expiry) + 999}.{tid}.{sig}", key, 1000)  # tampered expiry
    assert not A.token_valid(None, key, 1000) and not A.token_valid("junk", key, 1000)
