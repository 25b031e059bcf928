"""The HTML a page's address answers with under ``asgi.py``: Streamlit's own ``index.html`` plus
where the server is, which its frontend would otherwise find out one failed round trip late.

Opened at ``/workspace``, Streamlit's frontend first probes ``/workspace/_stcore/health`` and
``/workspace/_stcore/host-config`` (it takes the page's address for a possible base path), gets
404s, waits 100 ms, then probes ``/_stcore/...``: ~0.15 s before the WebSocket opens. The shell
sets ``window.__streamlit.BACKEND_BASE_URL`` (Streamlit's hook for hosts that embed it; its
frontend reads it only for that list of base addresses) to the address without the page's
segment, so the first probe is the right one. It is computed in the browser, so a reverse
proxy's path prefix is kept. Only single-segment page addresses (``/workspace``,
``/participant``, ...) are answered here; everything else, the root included (nothing to
probe there), is left to Streamlit.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

SEGMENT = re.compile(r"[A-Za-z0-9_-]+")  # a page's url_path as st.Page accepts it
BASE_SCRIPT = """<script>(() => {{
  const page = {segment}, path = location.pathname.replace(/\\/+$/, "");
  if (path.endsWith(page)) window.__streamlit = {{ ...window.__streamlit,
    BACKEND_BASE_URL: location.origin + (path.slice(0, -page.length) || "/") }};
}})();</script>
"""


def static_dir() -> Path:
    """Streamlit's built frontend (its index.html)."""
    from streamlit import file_util

    return Path(file_util.get_static_dir())


def shell(index: str, segment: str) -> str:
    """``index`` (Streamlit's index.html) for the page at ``segment``, with the base-address
    script at the end of its head (it runs before Streamlit's module, which is deferred)."""
    at = index.find("</head>")
    script = BASE_SCRIPT.format(segment=json.dumps(f"/{segment}"))
    return index[:at] + script + index[at:] if at >= 0 else index


class PageShell:
    """ASGI middleware answering a GET of a page's address with :func:`shell` (see the module
    docstring); every other request goes on to Streamlit."""

    def __init__(self, app: Any, base_url: str = "", root: Path | None = None) -> None:
        """Wrap ``app``; pages live under ``base_url`` (Streamlit's server.baseUrlPath)."""
        self.app = app
        self.prefix = "/" + "".join(f"{p}/" for p in base_url.split("/") if p)
        self.root = root or static_dir()
        self.index = (self.root / "index.html").read_text(encoding="utf-8")

    def page(self, path: str) -> str | None:
        """The page segment ``path`` addresses, or None when it is not a page's address."""
        segment = path[len(self.prefix):] if path.startswith(self.prefix) else ""
        if not SEGMENT.fullmatch(segment) or (self.root / segment).exists():
            return None
        return segment

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Serve the shell for a page's address, else pass the request on."""
        segment = (self.page(scope.get("path", ""))
                   if scope["type"] == "http" and scope.get("method") in ("GET", "HEAD")
                   else None)
        if segment is None:
            await self.app(scope, receive, send)
            return
        body = shell(self.index, segment).encode("utf-8")
        headers = [(b"content-type", b"text/html; charset=utf-8"), (b"cache-control", b"no-cache")]
        if b"gzip" in dict(scope.get("headers") or []).get(b"accept-encoding", b""):
            body = gzip.compress(body, compresslevel=6, mtime=0)
            headers += [(b"content-encoding", b"gzip"), (b"vary", b"Accept-Encoding")]
        headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body",
                    "body": b"" if scope["method"] == "HEAD" else body})
