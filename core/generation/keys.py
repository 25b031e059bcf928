"""The Anthropic key: where it comes from and whether one is set.

Kept apart from the sampler so pages can ask "is there a key?" without importing the SDK
(importing ``anthropic`` costs about a second on a cold start).
"""

from __future__ import annotations

import os

from core import settings
from core.engine.errors import GenerationError

ENV_VAR = settings.API_KEY_ENV
NO_KEY_MESSAGE = (
    "No Anthropic API key: set the ANTHROPIC_API_KEY environment variable (or "
    "ANTHROPIC_API_KEY in .streamlit/secrets.toml for the app). Without a key, use the shipped "
    "pools or the offline variant generator (--offline-variants).")


def resolve_api_key(api_key: str | None = None) -> str:
    """The key passed in (when not blank), else ``$ANTHROPIC_API_KEY``; GenerationError if neither."""
    key = (api_key or "").strip() or os.environ.get(ENV_VAR, "").strip()
    if not key:
        raise GenerationError(NO_KEY_MESSAGE)
    return key


def has_api_key(api_key: str | None = None) -> bool:
    """Whether a key is configured: the one passed in (e.g. a secret) or the environment's."""
    return bool((api_key or "").strip() or os.environ.get(ENV_VAR, "").strip())
