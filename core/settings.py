"""Every path and environment override of the studio, in one place.

The data folder (``$PLEASQLARIFY_DATA_DIR``, default ``logs/`` in the repository) holds everything
the studio writes: the study database, the demo database, pool and database caches, numba's cache,
the researcher password hash and signing key, think-aloud audio and uploaded studies. Each path
has its own override for tests and deployments; the functions read the environment when called,
so a test's ``monkeypatch.setenv`` takes effect at once. Nothing here imports beyond the standard
library, so core/, study/ and ui/ may all use it.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
BUILTIN_STUDIES = REPO_ROOT / "studies"
BUILTIN_BANK = BUILTIN_STUDIES / "film" / "tasks.jsonl"
SECRETS_FILE = REPO_ROOT / ".streamlit" / "secrets.toml"  # Streamlit's own place for secrets

DATA_ENV = "PLEASQLARIFY_DATA_DIR"
DB_URL_ENV = "PLEASQLARIFY_DB_URL"
DEMO_DB_URL_ENV = "PLEASQLARIFY_DEMO_DB_URL"
CACHE_ENV = "PLEASQLARIFY_CACHE_DIR"
AUDIO_ENV = "PLEASQLARIFY_AUDIO_DIR"
STUDIES_ENV = "PLEASQLARIFY_STUDIES_DIR"
BANK_ENV = "PLEASQLARIFY_BANK"
PASSWORD_ENV = "PLEASQLARIFY_RESEARCHER_PASSWORD"
ANNOUNCED_ENV = "PLEASQLARIFY_PASSWORD_ANNOUNCED"  # set by study.serve
API_KEY_ENV = "ANTHROPIC_API_KEY"
NUMBA_ENV = "NUMBA_CACHE_DIR"


def _env_path(name: str, default: Path) -> Path:
    """``$name`` as a path when set and not empty, else ``default``."""
    return Path(os.environ.get(name) or default)


def data_dir() -> Path:
    """The folder everything the studio writes goes under: ``$PLEASQLARIFY_DATA_DIR`` or logs/."""
    return _env_path(DATA_ENV, REPO_ROOT / "logs")


def sqlite_url(path: Path) -> str:
    """The SQLAlchemy URL of a SQLite file."""
    return f"sqlite:///{path}"


def study_db_path() -> Path:
    """The default SQLite study database (used when ``$PLEASQLARIFY_DB_URL`` is not set)."""
    return data_dir() / "study.sqlite"


def study_db_url() -> str:
    """The study store: ``$PLEASQLARIFY_DB_URL``, else SQLite at ``<data>/study.sqlite``."""
    return os.environ.get(DB_URL_ENV) or sqlite_url(study_db_path())


def demo_db_url() -> str:
    """The demo database: ``$PLEASQLARIFY_DEMO_DB_URL``, else ``<data>/demo.sqlite``."""
    return os.environ.get(DEMO_DB_URL_ENV) or sqlite_url(data_dir() / "demo.sqlite")


def has_demo_db(url: str | None = None) -> bool:
    """Whether the demo database exists (a SQLite file; other URLs are assumed to)."""
    url = url or demo_db_url()
    return not url.startswith("sqlite:///") or Path(url.removeprefix("sqlite:///")).is_file()


def cache_root() -> Path:
    """Derived files (materialised databases, …): ``$PLEASQLARIFY_CACHE_DIR`` or ``<data>/cache``."""
    return _env_path(CACHE_ENV, data_dir() / "cache")


def pool_cache_dir() -> Path:
    """JSON files of sampled candidate pools: ``<data>/pool-cache``."""
    return data_dir() / "pool-cache"


def numba_cache_dir() -> Path:
    """numba's compiled-code cache when ``$NUMBA_CACHE_DIR`` is not set: ``<data>/numba-cache``."""
    return data_dir() / "numba-cache"


def audio_dir() -> Path:
    """Think-aloud recordings: ``$PLEASQLARIFY_AUDIO_DIR`` or ``<data>/audio``."""
    return _env_path(AUDIO_ENV, data_dir() / "audio")


def password_file() -> Path:
    """The researcher password's salted scrypt hash: ``<data>/researcher_password``."""
    return data_dir() / "researcher_password"


def signing_key_file() -> Path:
    """The key that signs researcher access tokens: ``<data>/researcher_key``."""
    return data_dir() / "researcher_key"


def revoked_tokens_file() -> Path:
    """Researcher access tokens revoked before they expire (logout, a new password):
    ``<data>/researcher_revoked``."""
    return data_dir() / "researcher_revoked"


def server_lock_file() -> Path:
    """The lock a running ``study.serve`` holds (pid and port inside): ``<data>/server.lock``."""
    return data_dir() / "server.lock"


def studies_dir() -> Path:
    """Where Setup saves uploaded studies: ``$PLEASQLARIFY_STUDIES_DIR`` or ``<data>/studies``."""
    return _env_path(STUDIES_ENV, data_dir() / "studies")


def study_roots() -> list[Path]:
    """Where study files are found: only ``$PLEASQLARIFY_STUDIES_DIR`` when it is set, else the
    built-in studies/ of the checkout and then the uploads under the data folder."""
    if os.environ.get(STUDIES_ENV):
        return [studies_dir()]
    return [BUILTIN_STUDIES, studies_dir()]


def bank_path() -> Path:
    """The workspace's task bank: ``$PLEASQLARIFY_BANK`` or the built-in film bank."""
    return _env_path(BANK_ENV, BUILTIN_BANK)
