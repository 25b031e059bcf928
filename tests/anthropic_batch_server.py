"""A loopback HTTP server that speaks the Anthropic Message Batches API, for offline tests.

``POST /v1/messages/batches`` creates a batch (``in_progress``, every request counted as
processing); ``GET /v1/messages/batches`` lists them, newest first;
``GET /v1/messages/batches/{id}`` reports one, and after ``polls_to_end`` such
reports it has ``ended`` with the final ``request_counts`` and a ``results_url``; that URL
serves one JSON line per request, in reverse order (the API does not promise request order),
with ``succeeded`` / ``errored`` / ``expired`` results as the real API writes them. The real
SDK is pointed at it with ``base_url``; every request is recorded so tests can count them.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.anthropic_stub_server import LoopbackServer, Recorded

Outcome = Callable[[str, dict[str, Any]], dict[str, Any]]


@dataclass
class Batch:
    """One batch as the server keeps it."""

    id: str
    requests: list[dict[str, Any]]
    created_at: datetime
    polls: int = 0
    results: list[dict[str, Any]] = field(default_factory=list)


def _stamp(when: datetime | None) -> str | None:
    return when.isoformat().replace("+00:00", "Z") if when else None


class BatchServer(LoopbackServer):
    """The Batches API on 127.0.0.1; ``outcome(custom_id, params)`` scripts each result."""

    def __init__(self, texts: list[str] | None = None, polls_to_end: int = 2):
        self.polls_to_end = polls_to_end
        self.batches: dict[str, Batch] = {}
        self.requests: list[Recorded] = []
        self.gets: list[str] = []
        self._texts = itertools.cycle(texts or ["```sql\nSELECT 1\n```"])
        self.errored: set[str] = set()  # custom ids answered with an overloaded error
        self.expired: set[str] = set()
        super().__init__()

    @property
    def created(self) -> int:
        """How many batches were created."""
        with self._lock:
            return len(self.batches)

    def outcome(self, cid: str, params: dict[str, Any]) -> dict[str, Any]:
        """The result of one request: expired, errored or a message with the next text."""
        if cid in self.expired:
            return {"type": "expired"}
        if cid in self.errored:
            return {"type": "errored", "error": {"type": "error", "error": {
                "type": "overloaded_error", "message": "Overloaded"}}}
        return {"type": "succeeded", "message": {
            "id": f"msg_{cid}", "type": "message", "role": "assistant",
            "model": params.get("model", ""), "content": [{"type": "text",
                                                             "text": next(self._texts)}],
            "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 20}}}

    def _view(self, batch: Batch) -> dict[str, Any]:
        """The MessageBatch object of the API for this batch's current state."""
        ended = batch.polls >= self.polls_to_end
        counts = {"processing": 0 if ended else len(batch.requests), "succeeded": 0,
                  "errored": 0, "canceled": 0, "expired": 0}
        if ended:
            for line in batch.results:
                counts[line["result"]["type"]] += 1
        return {"id": batch.id, "type": "message_batch",
                "processing_status": "ended" if ended else "in_progress",
                "request_counts": counts, "created_at": _stamp(batch.created_at),
                "expires_at": _stamp(batch.created_at + timedelta(hours=24)),
                "ended_at": _stamp(datetime.now(UTC)) if ended else None,
                "archived_at": None, "cancel_initiated_at": None,
                "results_url": (f"{self.base_url}/v1/messages/batches/{batch.id}/results"
                                if ended else None)}

    def respond(self, path: str, headers: dict[str, str],
                body: dict[str, Any]) -> tuple[int, dict[str, str], dict[str, Any]]:
        with self._lock:
            self.requests.append(Recorded(path, headers, body))
            if path.rstrip("/") != "/v1/messages/batches":
                return 404, {}, {"type": "error", "error": {"type": "not_found_error",
                                                             "message": path}}
            ids = [r["custom_id"] for r in body.get("requests", [])]
            if not ids or len(set(ids)) != len(ids):
                return 400, {}, {"type": "error", "error": {
                    "type": "invalid_request_error",
                    "message": "requests: custom_id values must be present and unique"}}
            batch = Batch(f"msgbatch_{len(self.batches) + 1:04d}", body["requests"],
                          datetime.now(UTC))
            batch.results = [{"custom_id": r["custom_id"],
                              "result": self.outcome(r["custom_id"], r["params"])}
                             for r in reversed(body["requests"])]
            self.batches[batch.id] = batch
            return 200, {"request-id": f"req_{batch.id}"}, self._view(batch)

    def respond_get(self, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str],
                                                                        bytes]:
        with self._lock:
            self.gets.append(path)
            parts = path.split("?")[0].strip("/").split("/")
            if parts == ["v1", "messages", "batches"]:  # the list, newest first
                views = [self._view(b) for b in sorted(self.batches.values(),
                                                       key=lambda b: b.id, reverse=True)]
                page = {"data": views, "has_more": False,
                        "first_id": views[0]["id"] if views else None,
                        "last_id": views[-1]["id"] if views else None}
                return 200, {"content-type": "application/json"}, json.dumps(page).encode()
            batch = self.batches.get(parts[3]) if len(parts) >= 4 else None
            if batch is None or parts[:3] != ["v1", "messages", "batches"]:
                return super().respond_get(path, headers)
            if len(parts) == 5 and parts[4] == "results":
                if batch.polls < self.polls_to_end:
                    return super().respond_get(path, headers)
                data = "".join(json.dumps(line) + "\n" for line in batch.results)
                return 200, {"content-type": "application/binary"}, data.encode()
            batch.polls += 1
            view = self._view(batch)
        return 200, {"content-type": "application/json"}, json.dumps(view).encode()
