"""A loopback Messages-API server that replays scripted assistant turns with ``tool_use`` blocks.

Sibling of :mod:`tests.anthropic_stub_server` for agent tests: each scripted turn is a list of
content blocks (``{"type": "text", ...}`` or ``{"type": "tool_use", "name", "input"}``); the
server assigns tool-use ids, sets ``stop_reason`` to ``tool_use`` when a turn calls a tool, and
records every request body so tests can read the ``tool_result`` s the agent sent back.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ToolScriptServer:
    """Serves scripted turns in order on 127.0.0.1; past the script it answers with text."""

    def __init__(self, turns: list[list[dict[str, Any]]]):
        self.turns = list(turns)
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> ToolScriptServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def tool_results(self, request: int) -> list[dict[str, Any]]:
        """The tool_result blocks the agent sent in request number ``request`` (0-based)."""
        last = self.bodies[request]["messages"][-1]
        content = last["content"] if isinstance(last["content"], list) else []
        return [b for b in content if b.get("type") == "tool_result"]

    def _payload(self, index: int, body: dict[str, Any]) -> dict[str, Any]:
        blocks = self.turns[index] if index < len(self.turns) else [
            {"type": "text", "text": "(script finished)"}]
        content = []
        for j, b in enumerate(blocks):
            if b["type"] == "tool_use":
                content.append({"type": "tool_use", "id": f"toolu_{index}_{j}",
                                "name": b["name"], "input": b.get("input", {})})
            else:
                content.append({"type": "text", "text": b["text"]})
        calls = any(b["type"] == "tool_use" for b in content)
        return {"id": f"msg_tools_{index}", "type": "message", "role": "assistant",
                "model": body.get("model", ""), "content": content,
                "stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": 50, "output_tokens": 10}}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                return

            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.bodies.append(body)
                    index = len(server.bodies) - 1
                data = json.dumps(server._payload(index, body)).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
