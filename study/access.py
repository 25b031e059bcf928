"""The researcher password: from Streamlit secrets or the environment, else generated once.

Order: a value the page passes in (``st.secrets["researcher_password"]``), then
``$PLEASQLARIFY_RESEARCHER_PASSWORD``, then ``logs/researcher_password`` (mode 0600). If none
exists, a random password is generated, written there atomically and printed once to the
console. :func:`check_password` compares in constant time.
"""

from __future__ import annotations

import hmac
import os
import secrets
from collections.abc import Callable, Mapping
from pathlib import Path

from study.store import REPO_ROOT

ENV_PASSWORD = "PLEASQLARIFY_RESEARCHER_PASSWORD"
PASSWORD_FILE = REPO_ROOT / "logs" / "researcher_password"


def researcher_password(secret: str | None = None, *, path: str | Path = PASSWORD_FILE,
                        env: Mapping[str, str] | None = None,
                        echo: Callable[[str], None] = print) -> str:
    """The researcher password (generating, storing and printing one on first start)."""
    if secret:
        return secret
    env = os.environ if env is None else env
    if env.get(ENV_PASSWORD):
        return env[ENV_PASSWORD]
    path = Path(path)
    if path.is_file():
        return path.read_text(encoding="utf-8").strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    password = secrets.token_urlsafe(12)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process generated it first
        return path.read_text(encoding="utf-8").strip()
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(password + "\n")
    echo(f"PleaSQLarify Studio: generated researcher password {password!r}, stored in {path} "
         f"(set {ENV_PASSWORD} or researcher_password in .streamlit/secrets.toml to choose one)")
    return password


def check_password(given: str, expected: str) -> bool:
    """True iff ``given`` equals ``expected`` (constant-time; empty passwords never match)."""
    if not given or not expected:
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))
