"""The HTML a page's address answers with under ``asgi.py``: Streamlit's own ``index.html`` plus
what its frontend would otherwise find out late, one round trip at a time.

1. **Where the server is.** Opened at ``/workspace``, Streamlit's frontend first probes
   ``/workspace/_stcore/health`` and ``/workspace/_stcore/host-config`` (it takes the page's
   address for a possible base path), gets 404s, waits 100 ms, then probes ``/_stcore/...``
   (~0.15 s before the WebSocket opens). The shell sets ``window.__streamlit.BACKEND_BASE_URL``
   (Streamlit's documented hook for hosts that embed it) to the address without the page's
   segment, so the first probe is the right one. It is computed in the browser, so a reverse
   proxy's path prefix is kept.
2. **What the first render mounts.** Streamlit fetches an element's code (select box, text
   input, the components' bridge with Arrow, ...) only once that element's first delta has
   arrived, and the components' modules after that. For the pages listed in
   :data:`FIRST_RENDER` the shell asks for them at once (``modulepreload``; their static
   imports too, read from Streamlit's own bundle), so they load while the page's script runs.

Only single-segment page addresses are answered here (``/workspace``, ``/participant``, ...);
everything else, the root included, is left to Streamlit.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from ui.components import COMPONENTS

# Streamlit element chunks (the names before the hash) a page's first render mounts, and whether
# it mounts the studio's components: what the shell preloads for that page (measured, see the
# README's first-paint section). Pages not listed get only the base address (point 1).
FIRST_RENDER: dict[str, tuple[str, ...]] = {
    "workspace": ("Html", "PageLink", "BidiComponent", "Selectbox", "TextInput", "Button"),
}
COMPONENT_PAGES = frozenset({"workspace"})
SEGMENT = re.compile(r"[A-Za-z0-9_-]+")  # a page's url_path as st.Page accepts it
_STATIC_IMPORT = re.compile(r"""(?:\bfrom|\bimport)\s*["'`]\./([\w.-]+\.js)["'`]""")
_LINKED = re.compile(r"""<(?:script|link)\b[^>]*\b(?:src|href)="\./static/js/([\w.-]+\.js)\"""")
BASE_SCRIPT = """<script>(() => {{
  const page = {segment}, path = location.pathname.replace(/\\/+$/, "");
  if (path.endsWith(page)) window.__streamlit = {{ ...window.__streamlit,
    BACKEND_BASE_URL: location.origin + (path.slice(0, -page.length) || "/") }};
}})();</script>
"""


def static_dir() -> Path:
    """Streamlit's built frontend (index.html and static/js)."""
    from streamlit import file_util

    return Path(file_util.get_static_dir())


@lru_cache(maxsize=4)
def element_chunks(root: Path, stems: tuple[str, ...]) -> tuple[str, ...]:
    """The files under ``root``/static/js that mounting elements ``stems`` loads and
    ``index.html`` does not: each element's lazy chunk and its static imports, recursively.

    An element Streamlit no longer has (renamed in an upgrade) is skipped, not an error.
    """
    js = root / "static" / "js"
    index = (root / "index.html").read_text(encoding="utf-8")
    loaded = set(_LINKED.findall(index))
    entry = next((js / name for name in loaded if name.startswith("index.")), None)
    if entry is None or not entry.is_file():
        return ()
    bundle = entry.read_text(encoding="utf-8")
    wanted: list[str] = []
    for stem in stems:
        found = re.search(rf"import\(\s*[\"'`]\./({re.escape(stem)}\.[\w-]+\.js)[\"'`]", bundle)
        if found:
            wanted.append(found.group(1))
    order: list[str] = []
    seen = set(loaded)
    while wanted:
        name = wanted.pop(0)
        if name in seen or not (js / name).is_file():
            continue
        seen.add(name)
        order.append(name)
        wanted.extend(_STATIC_IMPORT.findall((js / name).read_text(encoding="utf-8")))
    return tuple(order)


def component_files(registered: Callable[[str], bool]) -> list[str]:
    """The modules (paths from the server's root) of the studio's components the runtime
    serves now (``registered(name)``): a fresh process serves them once a page has mounted one,
    and a preloaded module that failed would fail its import too. Not their small stylesheets:
    a preloaded one was fetched again by the second panel's ``<link>``."""
    files = []
    for c in COMPONENTS:
        name = f"pleasqlarify.{c}"
        if registered(name):
            files += [f"_stcore/bidi-components/{name}/{f}" for f in (f"{c}.js", "logic.js")]
    return files


def shell(index: str, segment: str, chunks: Iterable[str] = (),
          components: Iterable[str] = ()) -> str:
    """``index`` (Streamlit's index.html) for the page at ``segment``: the base-address script,
    then a preload of each of ``chunks`` (static/js file names) and ``components`` (paths)."""
    links = [f'<link rel="modulepreload" crossorigin href="./static/js/{c}">' for c in chunks]
    links += [f'<link rel="modulepreload" href="./{path}">' for path in components]
    head = BASE_SCRIPT.format(segment=json.dumps(f"/{segment}")) + "".join(f"    {x}\n" for x in links)
    at = index.find("</head>")
    return index[:at] + head + index[at:] if at >= 0 else index


class PageShell:
    """ASGI middleware answering a GET of a page's address with :func:`shell` (see the module
    docstring); every other request goes on to Streamlit."""

    def __init__(self, app: Any, base_url: str = "", root: Path | None = None,
                 registered: Callable[[str], bool] | None = None) -> None:
        """Wrap ``app``; pages live under ``base_url`` (Streamlit's server.baseUrlPath)."""
        self.app = app
        self.base = "/" + "/".join(p for p in base_url.split("/") if p)
        self.root = root or static_dir()
        self.index = (self.root / "index.html").read_text(encoding="utf-8")
        self.registered = registered or _registered

    def page(self, path: str) -> str | None:
        """The page segment ``path`` addresses, or None when it is not a page's address."""
        prefix = self.base.rstrip("/") + "/"
        if not path.startswith(prefix):
            return None
        segment = path[len(prefix):]
        if not SEGMENT.fullmatch(segment) or (self.root / segment).exists():
            return None
        return segment

    def body(self, segment: str) -> str:
        """The shell for ``segment`` as it stands now (component files once they are served)."""
        chunks = element_chunks(self.root, FIRST_RENDER.get(segment, ()))
        components = component_files(self.registered) if segment in COMPONENT_PAGES else []
        return shell(self.index, segment, chunks, components)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Serve the shell for a page's address, else pass the request on."""
        segment = (self.page(scope.get("path", ""))
                   if scope["type"] == "http" and scope.get("method") in ("GET", "HEAD")
                   else None)
        if segment is None:
            await self.app(scope, receive, send)
            return
        body = self.body(segment).encode("utf-8")
        headers = [(b"content-type", b"text/html; charset=utf-8"), (b"cache-control", b"no-cache")]
        accepts = dict(scope.get("headers") or []).get(b"accept-encoding", b"")
        if b"gzip" in accepts:
            body = gzip.compress(body, compresslevel=6, mtime=0)
            headers += [(b"content-encoding", b"gzip"), (b"vary", b"Accept-Encoding")]
        headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body",
                    "body": b"" if scope["method"] == "HEAD" else body})


def _registered(name: str) -> bool:
    """Whether the running Streamlit runtime serves component ``name``'s files."""
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return False
    manager = Runtime.instance().bidi_component_registry
    return manager.get(name) is not None and manager.get_component_path(name) is not None
