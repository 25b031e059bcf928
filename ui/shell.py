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

For a page given ``preload`` elements (the free workspace), the shell also asks the browser for
what that page's first run will need, once the WebSocket has opened (the server then runs the
script): the lazy chunks of Streamlit's elements it draws (read from Streamlit's bundle, so the
names follow the installed version) and the mounted components' modules and stylesheets.
Without them the frontend asked for ~35 chunks only once the first deltas had arrived, and for
the components' modules only after their bridge chunk had loaded. Added at DOMContentLoaded
instead, the same hints held the connections ahead of the health probe and the WebSocket.

:class:`StaticCache` serves Streamlit's frontend files from memory, gzipped (see there).
"""

from __future__ import annotations

import gzip
import json
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

LOG = logging.getLogger(__name__)
YEAR = 365 * 24 * 60 * 60  # Streamlit's max-age for its content-hashed files
SEGMENT = re.compile(r"[A-Za-z0-9_-]+")  # a page's url_path as st.Page accepts it
BASE_SCRIPT = """<script>(() => {{
  const page = {segment}, path = location.pathname.replace(/\\/+$/, "");
  if (path.endsWith(page)) window.__streamlit = {{ ...window.__streamlit,
    BACKEND_BASE_URL: location.origin + (path.slice(0, -page.length) || "/") }};
}})();</script>
"""


# in Streamlit's index bundle: every element's lazy chunk and its dependencies, as indices into
# the bundle's list of chunk files (the ``m.f=[...]`` of Vite's ``__vite__mapDeps``)
CHUNK_FILES = re.compile(r'm\.f=\[([^\]]*)\]')
LAZY_IMPORT = re.compile(r'import\(`\./([^`]+\.js)`\)(?:\.then\([^()]*\))?,__vite__mapDeps\(\[([\d,]*)\]\)')
INDEX_SCRIPT = re.compile(r'<script type="module"[^>]*src="\./static/js/([^"]+\.js)"')
PRELOADED = re.compile(r'rel="modulepreload"[^>]*href="\./static/js/([^"]+\.js)"')
HINT_SCRIPT = """<script>(() => {{
  const hints = {hints}, later = {later}, after = {after}, Native = window.WebSocket;
  let added = false;
  const link = ([rel, href, as]) => {{
    const link = document.createElement("link");
    link.rel = rel; link.href = href;
    if (as) link.as = as;
    if (rel === "modulepreload") link.crossOrigin = "";
    document.head.appendChild(link);
  }};
  const wait = () => {{  // the later hints once the page shows `after` (checked each frame)
    if (document.querySelector(after)) later.forEach(link); else requestAnimationFrame(wait);
  }};
  const add = () => {{
    if (added) return;
    added = true;
    hints.forEach(link);
    if (later.length) requestAnimationFrame(wait);
  }};
  window.WebSocket = class extends Native {{
    constructor(...args) {{
      super(...args);
      window.WebSocket = Native;
      this.addEventListener("open", add, {{ once: true }});
    }}
  }};
}})();</script>
"""


def lazy_chunks(root: Path) -> dict[str, list[str]]:
    """Each lazily loaded element's chunk in Streamlit's frontend (``root``: its static folder)
    by element name (``"Selectbox"``), with the chunks it imports that the page does not
    already preload; file names relative to ``static/js``, the element's own first. Empty when
    the bundle's layout is not the one expected (a Streamlit upgrade then costs the hints,
    nothing else)."""
    index = (root / "index.html").read_text(encoding="utf-8")
    entry = INDEX_SCRIPT.search(index)
    if entry is None:
        return {}
    bundle = (root / "static" / "js" / entry.group(1)).read_text(encoding="utf-8")
    listed = CHUNK_FILES.search(bundle)
    if listed is None:
        return {}
    files = [f.strip().strip('"').removeprefix("./") for f in listed.group(1).split(",")]
    loaded = {entry.group(1), *PRELOADED.findall(index)}
    chunks = {}
    for chunk, deps in LAZY_IMPORT.findall(bundle):
        needed = [files[int(i)] for i in deps.split(",") if i and int(i) < len(files)]
        chunks[chunk.split(".", 1)[0]] = [chunk, *(f for f in needed
                                                    if f not in loaded and f != chunk)]
    return chunks


def hints(chunks: Mapping[str, Sequence[str]], elements: Sequence[str],
          files: Sequence[str] = ()) -> list[tuple[str, str, str]]:
    """The preload hints (rel, href relative to the page, as) for the lazy chunks of
    ``elements`` and for ``files`` (paths under the server's root: ``.js`` modules or ``.css``
    stylesheets), each once, in order."""
    out: dict[str, tuple[str, str, str]] = {}
    for element in elements:
        for chunk in chunks.get(element, ()):
            out.setdefault(chunk, ("modulepreload", f"./static/js/{chunk}", ""))
    for path in files:
        out.setdefault(path, ("modulepreload", f"./{path}", "") if path.endswith(".js")
                       else ("preload", f"./{path}", "style"))
    return list(out.values())


def static_dir() -> Path:
    """Streamlit's built frontend (its index.html)."""
    from streamlit import file_util

    return Path(file_util.get_static_dir())


def shell(index: str, segment: str, preload: Sequence[tuple[str, str, str]] = (),
          later: Sequence[tuple[str, str, str]] = (), after: str = "") -> str:
    """``index`` (Streamlit's index.html) for the page at ``segment``, with the base-address
    script at the end of its head (it runs before Streamlit's module, which is deferred) and,
    with ``preload`` (:func:`hints`), a script adding those hints once the page's WebSocket has
    opened (after the health probe and the connection, so they do not delay either), and the
    ``later`` hints once the page shows the CSS selector ``after`` (e.g. what a rerun after the
    first paint draws, fetched while the server runs it and not during the first paint)."""
    at = index.find("</head>")
    script = BASE_SCRIPT.format(segment=json.dumps(f"/{segment}"))
    if preload or later:
        script += HINT_SCRIPT.format(hints=json.dumps([list(h) for h in preload]),
                                     later=json.dumps([list(h) for h in later] if after else []),
                                     after=json.dumps(after))
    return index[:at] + script + index[at:] if at >= 0 else index


class PageShell:
    """ASGI middleware answering a GET of a page's address with :func:`shell` (see the module
    docstring); every other request goes on to Streamlit."""

    def __init__(self, app: Any, base_url: str = "", root: Path | None = None,
                 preload: Mapping[str, tuple[Sequence[str], Sequence[str]]] | None = None,
                 prepare: Callable[[], None] | None = None,
                 later: Mapping[str, tuple[Sequence[str], str]] | None = None) -> None:
        """Wrap ``app``; pages live under ``base_url`` (Streamlit's server.baseUrlPath).
        ``preload`` maps a page's segment to the Streamlit elements its first run draws and
        other files it loads (:func:`hints`), fetched while the server runs its script;
        ``prepare`` makes the server serve those files (called before the first shell that
        hints them; if it fails, the shells hint Streamlit's chunks only). ``later`` maps a
        page's segment to elements drawn after its first paint and the CSS selector that says
        the page is painted: their chunks are hinted then (those of ``preload`` left out)."""
        self.app = app
        self.prefix = "/" + "".join(f"{p}/" for p in base_url.split("/") if p)
        self.root = root or static_dir()
        self.index = (self.root / "index.html").read_text(encoding="utf-8")
        chunks = lazy_chunks(self.root) if preload or later else {}
        self.preload = {page: hints(chunks, elements, files)
                        for page, (elements, files) in (preload or {}).items()}
        self.chunks_only = {page: hints(chunks, elements)
                            for page, (elements, _) in (preload or {}).items()}
        self.later = {page: ([h for h in hints(chunks, elements)
                              if h not in self.preload.get(page, ())], after)
                      for page, (elements, after) in (later or {}).items()}
        self.prepare, self.prepared = prepare, prepare is None

    def hints(self, segment: str) -> Sequence[tuple[str, str, str]]:
        """The preload hints for the page at ``segment`` (after :attr:`prepare` once)."""
        if not self.prepared and self.prepare is not None and segment in self.preload:
            try:
                self.prepare()
                self.prepared = True
            except Exception:  # the page works without the hints; a file hinted but not
                LOG.exception("cannot prepare the page shell's files")  # served would not
                self.prepare = None
        return (self.preload if self.prepared else self.chunks_only).get(segment, ())

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
        later, after = self.later.get(segment, ((), ""))
        body = shell(self.index, segment, self.hints(segment), later, after).encode("utf-8")
        headers = [(b"content-type", b"text/html; charset=utf-8"), (b"cache-control", b"no-cache")]
        if b"gzip" in dict(scope.get("headers") or []).get(b"accept-encoding", b""):
            body = gzip.compress(body, compresslevel=6, mtime=0)
            headers += [(b"content-encoding", b"gzip"), (b"vary", b"Accept-Encoding")]
        headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body",
                    "body": b"" if scope["method"] == "HEAD" else body})


class StaticCache:
    """ASGI middleware serving Streamlit's frontend files (``static/...`` under the base path)
    from memory, gzip-compressed when the browser accepts it, with Streamlit's own
    Cache-Control; anything else (other paths, methods, Range requests) goes on to ``app``.

    Streamlit's static route reads each file in worker threads (stat, open, read), which wait
    for the GIL while a session's script runs: the lazy chunks a first run needs came late
    exactly while the server ran that script. Here a file is read and compressed once per
    process, on its first request, and then sent in one step from the event loop; only files
    that exist under Streamlit's static folder when the server starts are served (the names
    are a fixed set, so no path outside it can be asked for). Streamlit serves these files
    uncompressed: a first load moves ~3 MB, ~0.8 MB gzipped.
    """

    def __init__(self, app: Any, base_url: str = "", root: Path | None = None) -> None:
        """Wrap ``app``; Streamlit's files are under ``base_url`` + ``static/``."""
        self.app = app
        self.prefix = "/" + "".join(f"{p}/" for p in base_url.split("/") if p)
        self.root = root or static_dir()
        self.names = {p.relative_to(self.root).as_posix()
                      for p in (self.root / "static").rglob("*") if p.is_file()}
        self.cache: dict[str, tuple[bytes, bytes | None, bytes]] = {}

    def entry(self, name: str) -> tuple[bytes, bytes | None, bytes]:
        """``name``'s bytes, its gzip form (None when it does not shrink) and content type."""
        if name not in self.cache:
            import mimetypes

            body = (self.root / name).read_bytes()
            packed = gzip.compress(body, compresslevel=6, mtime=0)
            kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
            if kind.startswith("text/") or kind.endswith(("javascript", "json")):
                kind += "; charset=utf-8"
            self.cache[name] = (body, packed if len(packed) < 0.9 * len(body) else None,
                                kind.encode())
        return self.cache[name]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Serve a static file from memory, else pass the request on."""
        path = scope.get("path", "") if scope["type"] == "http" else ""
        name = path[len(self.prefix):] if path.startswith(self.prefix) else ""
        headers = dict(scope.get("headers") or []) if name in self.names else {}
        if (name not in self.names or scope.get("method") not in ("GET", "HEAD")
                or b"range" in headers):
            await self.app(scope, receive, send)
            return
        body, packed, kind = self.entry(name)
        out = [(b"content-type", kind), (b"vary", b"Accept-Encoding"),
               (b"cache-control", f"public, immutable, max-age={YEAR}".encode())]
        if packed is not None and b"gzip" in headers.get(b"accept-encoding", b""):
            body = packed
            out.append((b"content-encoding", b"gzip"))
        out.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": 200, "headers": out})
        await send({"type": "http.response.body",
                    "body": b"" if scope["method"] == "HEAD" else body})
