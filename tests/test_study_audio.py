"""Think-aloud recordings are written locally, atomically, under a safe name, with a duration."""

from __future__ import annotations

import io
import wave

import pytest

from study.audio import audio_root, save_recording, wav_duration_ms


def _wav(seconds: float, rate: int = 8000) -> bytes:
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"\x00\x00" * int(seconds * rate))
    return buf.getvalue()


def test_recording_is_saved_under_participant_and_task_with_its_duration(tmp_path):
    data = _wav(1.5)
    path, ms = save_recording("p-Abc_12", "film-pulp-review", data, root=tmp_path)
    assert path == tmp_path / "p-Abc_12" / "film-pulp-review.wav"
    assert path.read_bytes() == data and ms == 1500
    assert not list(tmp_path.rglob("*.tmp"))  # written atomically, no leftovers


def test_a_new_recording_replaces_the_old_one_and_names_cannot_escape_the_root(tmp_path):
    save_recording("p1", "t", _wav(1.0), root=tmp_path)
    path, ms = save_recording("../../etc", "t/../../x", _wav(0.5), root=tmp_path)
    assert path.resolve().is_relative_to(tmp_path.resolve()) and ms == 500
    path, ms = save_recording("p1", "t", _wav(2.0), root=tmp_path)
    assert ms == 2000 and len(list((tmp_path / "p1").iterdir())) == 1


def test_unreadable_audio_is_kept_without_a_duration(tmp_path):
    path, ms = save_recording("p1", "t", b"not a wav", root=tmp_path)
    assert ms is None and path.read_bytes() == b"not a wav"
    assert wav_duration_ms(b"") is None


def test_audio_root_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("PLEASQLARIFY_AUDIO_DIR", str(tmp_path))
    assert audio_root() == tmp_path


def test_a_recording_over_the_bound_is_refused_before_anything_is_written(tmp_path):
    """A participant link could store Streamlit's whole upload limit (200 MB) per task and
    rerun; a recording over study.limits.MAX_AUDIO_BYTES is refused with the reason."""
    from study.limits import MAX_AUDIO_BYTES

    with pytest.raises(ValueError, match="at most 64 MB are kept"):
        save_recording("p1", "t", bytes(MAX_AUDIO_BYTES + 1), root=tmp_path)
    assert not any(tmp_path.iterdir())
    path, _ = save_recording("p1", "t", _wav(0.5), root=tmp_path)
    assert path.is_file()
