"""A loopback Messages-API server that replays scripted assistant turns with ``tool_use`` blocks.

Sibling of :mod:`tests.anthropic_stub_server` for agent tests: each scripted turn is a list of
content blocks (``{"type": "text", ...}`` or ``{"type": "tool_use", "name", "input"}``); the
server assigns tool-use ids, sets ``stop_reason`` to ``tool_use`` when a turn calls a tool, and
records every request body so tests can read the ``tool_result`` s the agent sent back.
"""

from __future__ import annotations

from typing import Any

from tests.anthropic_stub_server import LoopbackServer


class ToolScriptServer(LoopbackServer):
    """Serves scripted turns in order on 127.0.0.1; past the script it answers with text."""

    def __init__(self, turns: list[list[dict[str, Any]]]):
        self.turns = list(turns)
        self.bodies: list[dict[str, Any]] = []
        super().__init__()

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

    def respond(self, path: str, headers: dict[str, str],
                body: dict[str, Any]) -> tuple[int, dict[str, str], dict[str, Any]]:
        with self._lock:
            self.bodies.append(body)
            index = len(self.bodies) - 1
        return 200, {}, self._payload(index, body)
