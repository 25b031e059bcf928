"""One rule for "is there an Anthropic key": a non-blank key passed in, else the environment's."""

import pytest

from core.engine.errors import GenerationError
from core.generation.keys import NO_KEY_MESSAGE, has_api_key, resolve_api_key


def test_a_blank_secret_falls_back_to_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")
    assert has_api_key("   ") and has_api_key(None) and has_api_key("")
    assert resolve_api_key("   ") == "sk-env"
    assert resolve_api_key(" sk-secret ") == "sk-secret"


def test_no_key_anywhere_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert not has_api_key(None) and not has_api_key("  ")
    assert has_api_key("sk-secret")
    with pytest.raises(GenerationError) as info:
        resolve_api_key("")
    assert str(info.value) == NO_KEY_MESSAGE


def test_asking_for_a_key_does_not_import_the_sdk() -> None:
    import subprocess
    import sys

    code = "import sys, core.generation.keys; print('anthropic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
