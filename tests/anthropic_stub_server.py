"""A loopback HTTP server that speaks the Anthropic Messages API, for offline tests.

The real ``anthropic`` SDK is pointed at it with ``base_url``; nothing in the SDK is mocked.
Replies are scripted: queued :class:`Reply` objects are served first (in order), then the
``default`` callable decides. Every request is recorded so tests can count them.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error",
                404: "not_found_error", 429: "rate_limit_error", 500: "api_error",
                529: "overloaded_error"}


@dataclass
class Reply:
    """One scripted answer: a text message (status 200) or an API error."""

    text: str = "SELECT 1"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    message: str = ""
    input_tokens: int = 100
    output_tokens: int = 20


@dataclass
class Recorded:
    """One request as the server saw it."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class LoopbackServer:
    """A threaded HTTP server on 127.0.0.1 that answers every POST with JSON from ``respond``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def respond(self, path: str, headers: dict[str, str],
                body: dict[str, Any]) -> tuple[int, dict[str, str], dict[str, Any]]:
        """Status, extra headers and JSON payload for one request (called in its thread)."""
        raise NotImplementedError

    def respond_get(self, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        """Status, headers (with content-type) and body for a GET; none by default."""
        body = json.dumps({"type": "error", "error": {"type": "not_found_error",
                                                      "message": f"no GET {path}"}})
        return 404, {"content-type": "application/json"}, body.encode()

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _handler(server: LoopbackServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # keep test output quiet
            return

        def do_POST(self) -> None:  # http.server naming
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            status, headers, payload = server.respond(self.path, dict(self.headers),
                                                      json.loads(raw or b"{}"))
            self._send(status, {"content-type": "application/json", **headers},
                       json.dumps(payload).encode())

        def do_GET(self) -> None:
            self._send(*server.respond_get(self.path, dict(self.headers)))

        def _send(self, status: int, headers: dict[str, str], data: bytes) -> None:
            try:
                self.send_response(status)
                self.send_header("content-length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)

    return Handler


class StubServer(LoopbackServer):
    """A threaded Messages API server on 127.0.0.1 with a scripted reply queue."""

    def __init__(self, texts: list[str] | None = None, known_models: set[str] | None = None):
        self.queue: list[Reply] = []
        self.requests: list[Recorded] = []
        self.known_models = known_models
        self._cycle = itertools.cycle(texts or ["```sql\nSELECT 1\n```"])
        self.default: Callable[[int, dict[str, Any]], Reply] = \
            lambda _i, _body: Reply(next(self._cycle))
        super().__init__()

    @property
    def count(self) -> int:
        """How many /v1/messages requests arrived."""
        with self._lock:
            return sum(1 for r in self.requests if r.path.startswith("/v1/messages"))

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self.queue.extend(replies)

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            index = len(self.requests) - 1
            if self.known_models is not None and body.get("model") not in self.known_models:
                return Reply(status=404, message=f"model: {body.get('model')}")
            if self.queue:
                return self.queue.pop(0)
        return self.default(index, body)

    def respond(self, path: str, headers: dict[str, str],
                body: dict[str, Any]) -> tuple[int, dict[str, str], dict[str, Any]]:
        with self._lock:
            self.requests.append(Recorded(path, headers, body))
            n = len(self.requests)
        reply = self._next(body)
        if reply.delay_s:
            time.sleep(reply.delay_s)
        if reply.status == 200:
            payload: dict[str, Any] = {
                "id": f"msg_stub_{n}", "type": "message",
                "role": "assistant", "model": body.get("model", ""),
                "content": [{"type": "text", "text": reply.text}],
                "stop_reason": "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": reply.input_tokens,
                          "output_tokens": reply.output_tokens},
            }
        else:
            kind = _ERROR_TYPES.get(reply.status, "api_error")
            payload = {"type": "error", "error": {
                "type": kind, "message": reply.message or kind.replace("_", " ")}}
        return reply.status, {"request-id": f"req_stub_{n}", **reply.headers}, payload
