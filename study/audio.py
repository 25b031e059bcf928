"""Optional think-aloud recordings: stored locally under logs/audio/<participant>/<task>.wav.

Recordings never leave the machine the study server runs on; the trace gets an ``audio`` event
with the path (relative to the audio root), the size and the duration read from the WAV header.
"""

from __future__ import annotations

import io
import os
import re
import wave
from pathlib import Path

from core import settings
from study.limits import audio_problem

AUDIO_ENV = settings.AUDIO_ENV
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


def audio_root() -> Path:
    """``$PLEASQLARIFY_AUDIO_DIR`` or ``audio/`` in the data folder (core.settings)."""
    return settings.audio_dir()


def wav_duration_ms(data: bytes) -> int | None:
    """The duration of a WAV recording in ms (None when it is not a readable WAV)."""
    try:
        with wave.open(io.BytesIO(data)) as w:
            rate = w.getframerate()
            return int(w.getnframes() * 1000 / rate) if rate else None
    except (wave.Error, EOFError):
        return None


def save_recording(participant: str, task: str, data: bytes,
                   root: Path | None = None) -> tuple[Path, int | None]:
    """Write the recording atomically to ``<root>/<participant>/<task>.wav``; (path, ms).
    Raises ValueError (the message for the participant) over the participant input bound."""
    problem = audio_problem(len(data))
    if problem:
        raise ValueError(problem)
    root = root or audio_root()
    folder = root / _SAFE.sub("_", participant)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{_SAFE.sub('_', task)}.wav"
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return path, wav_duration_ms(data)
