"""The one place that bounds what a participant's browser can send.

Everything a participant (or anyone holding a participant link) can put in a request passes
here before it reaches the store: written answers (:func:`answer_problem`), selections in the
Action Space (:func:`selection`), think-aloud recordings (:func:`audio_problem`), hover reports
(:func:`hover`), tab-visibility batches (:func:`tab_events`) and numbers parsed from text
(:func:`parse_int`). Over a bound, an answer or a recording gets a message for the participant; a telemetry report is dropped and counted
(:data:`DROPPED`, per reason) — never an exception on the page, never an unbounded row.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from typing import Any

MAX_ANSWER_CHARS = 5_000  # a written answer (subtask, questionnaire text item, chat reply)
MAX_SELECTION = 5_000  # candidate ids in one lasso / box / click (pools hold up to ~1000)
MAX_EVENTS_PER_MESSAGE = 20  # tab-visibility transitions read from one browser message
MAX_PAYLOAD_BYTES = 256_000  # one trace event's JSON payload
MAX_INT_DIGITS = 15  # digits of any number parsed from the browser (epoch ms has 13)
MAX_TS_MS = 10**14  # a client timestamp past year 5000 is not a timestamp
MAX_AUDIO_BYTES = 64_000_000  # one think-aloud recording: ~33 min of st.audio_input's 16 kHz WAV


class _Dropped:
    """Telemetry reports dropped at a bound, counted per reason (thread-safe, per process)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()

    def add(self, reason: str, n: int = 1) -> None:
        """Count ``n`` dropped reports of ``reason``."""
        with self._lock:
            self._counts[reason] += n

    def counts(self) -> dict[str, int]:
        """A snapshot of the counts so far."""
        with self._lock:
            return dict(self._counts)


DROPPED = _Dropped()


def parse_int(raw: Any, lo: int = 0, hi: int = MAX_TS_MS) -> int | None:
    """``raw`` as an int in [lo, hi] (an int, or a string of at most 15 ASCII digits with an
    optional minus), else None: never ``ValueError`` on 5000 digits, "abc", "²" or 1e300."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        value = raw
    elif isinstance(raw, float) and raw.is_integer() and abs(raw) <= hi + abs(lo):
        value = int(raw)
    elif isinstance(raw, str):
        text = raw.strip()
        digits = text[1:] if text.startswith("-") else text
        if not digits or len(digits) > MAX_INT_DIGITS or not (digits.isascii()
                                                              and digits.isdigit()):
            return None
        value = int(text)
    else:
        return None
    return value if lo <= value <= hi else None


def answer_problem(value: Any) -> str | None:
    """The message to show when a written answer is over :data:`MAX_ANSWER_CHARS`, else None."""
    if isinstance(value, str) and len(value) > MAX_ANSWER_CHARS:
        return (f"Your answer is {len(value):,} characters long; at most {MAX_ANSWER_CHARS:,} "
                "are kept. Please shorten it and try again.")
    return None


def audio_problem(n_bytes: int) -> str | None:
    """The message to show when a recording is over :data:`MAX_AUDIO_BYTES`, else None."""
    if n_bytes > MAX_AUDIO_BYTES:
        return (f"This recording is {n_bytes / 1e6:,.0f} MB; at most {MAX_AUDIO_BYTES / 1e6:,.0f}"
                " MB are kept. Please record a shorter one.")
    return None


def selection(raw_ids: Any, n: int) -> list[int]:
    """The distinct candidate ids of a selection that exist in a pool of ``n`` (sorted).

    More than :data:`MAX_SELECTION` ids, or a value that is not a list, drops the whole
    selection (counted): a real lasso never sends more ids than the pool has glyphs. Ids
    that are not numbers of this pool are dropped one by one (counted).
    """
    if not isinstance(raw_ids, list | tuple):
        if raw_ids:
            DROPPED.add("selection: not a list")
        return []
    if len(raw_ids) > MAX_SELECTION:
        DROPPED.add("selection: too many ids")
        return []
    parsed = [parse_int(i, 0, n - 1) for i in raw_ids]
    bad = parsed.count(None)
    if bad:
        DROPPED.add("selection: id not in the pool", bad)
    return sorted({i for i in parsed if i is not None})


def hover(value: Any, n: int) -> tuple[int, int | None] | None:
    """(candidate id, client ms or None) of a hover report, or None (dropped, counted) when the
    id is not a candidate of a pool of ``n`` or the report is malformed."""
    if not isinstance(value, dict):
        DROPPED.add("hover: not an object")
        return None
    cid = parse_int(value.get("id"), 0, n - 1)
    if cid is None:
        DROPPED.add("hover: bad candidate id")
        return None
    ts = value.get("ts")
    parsed = parse_int(ts) if ts is not None else None
    if ts is not None and parsed is None:
        DROPPED.add("hover: bad timestamp")
    return cid, parsed


def tab_events(state: Any) -> list[tuple[str, int, int | None]]:
    """(type, seq, client ms) of the last :data:`MAX_EVENTS_PER_MESSAGE` tab transitions of one
    browser message; the rest and every malformed entry are dropped and counted."""
    events = state.get("events") if isinstance(state, dict) else None
    if not isinstance(events, list):
        return []
    if len(events) > MAX_EVENTS_PER_MESSAGE:
        DROPPED.add("tab: over the events per message", len(events) - MAX_EVENTS_PER_MESSAGE)
        events = events[-MAX_EVENTS_PER_MESSAGE:]
    out: list[tuple[str, int, int | None]] = []
    for ev in events:
        seq = parse_int(ev.get("seq"), 1, 10**9) if isinstance(ev, dict) else None
        if seq is None:
            DROPPED.add("tab: malformed transition")
            continue
        kind = "tab.hidden" if ev.get("state") == "hidden" else "tab.visible"
        out.append((kind, seq, parse_int(ev.get("ts"))))
    return out


def feature_key(value: Any) -> bool:
    """Whether a Yes/No press carries a usable ``key`` (text of at most
    :data:`MAX_ANSWER_CHARS`, as every clause is); a longer one is dropped and counted."""
    if not isinstance(value, dict) or not isinstance(value.get("key"), str):
        return False
    if len(value["key"]) > MAX_ANSWER_CHARS:
        DROPPED.add("answer: key too long")
        return False
    return True


def payload_problem(payload: dict[str, Any]) -> str | None:
    """Why a trace payload is too large to store (over :data:`MAX_PAYLOAD_BYTES`), else None."""
    size = len(json.dumps(payload, sort_keys=True))
    if size > MAX_PAYLOAD_BYTES:
        return f"the payload is {size:,} bytes; at most {MAX_PAYLOAD_BYTES:,} are stored"
    return None
