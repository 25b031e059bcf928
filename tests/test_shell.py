"""asgi.py's page shell (ui.shell, issue 24): what a page's address answers with, read from the
installed Streamlit's own frontend, and served by a real ``asgi.py`` server."""

from __future__ import annotations

import gzip
import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.harness import running
from ui.shell import FIRST_RENDER, PageShell, element_chunks, shell, static_dir

LINK = re.compile(r'<link rel="modulepreload"[^>]*href="\./([^"]+)"')


def test_the_workspace_chunks_are_its_elements_and_their_imports_not_in_the_index() -> None:
    root = static_dir()
    chunks = element_chunks(root, FIRST_RENDER["workspace"])
    index = (root / "index.html").read_text(encoding="utf-8")
    for stem in FIRST_RENDER["workspace"]:  # every element Streamlit still has is found
        assert any(c.startswith(f"{stem}.") for c in chunks), stem
    assert all((root / "static" / "js" / c).is_file() for c in chunks)
    assert not [c for c in chunks if f"/{c}" in index]  # nothing the index loads already
    assert len(chunks) > len(FIRST_RENDER["workspace"])  # their own imports come along
    assert element_chunks(root, ("NoSuchElement",)) == ()


def test_the_shell_sets_the_base_address_before_streamlit_s_module_runs() -> None:
    index = (static_dir() / "index.html").read_text(encoding="utf-8")
    page = shell(index, "workspace", ["Html.x.js"], ["_stcore/bidi-components/c/c.js"])
    assert page.count("BACKEND_BASE_URL") == 1 and '"/workspace"' in page
    assert page.index("BACKEND_BASE_URL") < page.index("</head>")
    assert LINK.findall(page)[-2:] == ["static/js/Html.x.js", "_stcore/bidi-components/c/c.js"]
    assert page.replace(page[page.index("<script>(() =>"):page.index("</head>")], "") == index


def test_only_a_page_s_address_is_answered_with_the_shell() -> None:
    plain, based = PageShell(None), PageShell(None, base_url="/studio/")
    assert plain.page("/workspace") == "workspace" and plain.page("/participant") == "participant"
    for path in ("/", "/favicon.png", "/manifest.json", "/static", "/workspace/",
                 "/workspace/_stcore/health", "/_stcore/health", "/a b"):
        assert plain.page(path) is None, path
    assert based.page("/studio/workspace") == "workspace" and based.page("/workspace") is None


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``asgi.py`` as ``python -m study.serve`` runs it."""
    tmp = tmp_path_factory.mktemp("shell")
    with running("asgi.py", log=tmp, timeout=120) as srv:
        yield srv.url


def _get(url: str, gzipped: bool = False) -> tuple[int, bytes, dict[str, str]]:
    request = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"} if gzipped else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return resp.status, resp.read(), {k.lower(): v for k, v in resp.headers.items()}
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), {k.lower(): v for k, v in exc.headers.items()}


def test_asgi_serves_the_workspace_shell_and_every_file_it_preloads(server: str) -> None:
    status, body, headers = _get(f"{server}/workspace", gzipped=True)
    assert status == 200 and headers["content-encoding"] == "gzip"
    assert headers["cache-control"] == "no-cache"
    page = gzip.decompress(body).decode()
    assert "BACKEND_BASE_URL" in page
    links = LINK.findall(page)
    # the components' modules are served from start-up on, before any page mounted one
    assert {p for p in links if "bidi-components" in p} == {
        f"_stcore/bidi-components/pleasqlarify.{c}/{f}"
        for c in ("action_space", "clauses") for f in (f"{c}.js", "logic.js")}
    for path in links:
        assert _get(f"{server}/{path}")[0] == 200, path


def test_asgi_leaves_every_other_address_to_streamlit(server: str) -> None:
    root = Path(static_dir())
    status, body, _ = _get(f"{server}/")
    assert status == 200 and body == (root / "index.html").read_bytes()
    assert _get(f"{server}/favicon.png")[1] == (root / "favicon.png").read_bytes()
    assert _get(f"{server}/_stcore/health")[:2] == (200, b"ok")
    assert _get(f"{server}/workspace/_stcore/health")[0] == 404
    status, body, _ = _get(f"{server}/participant")  # a page with nothing to preload
    assert status == 200 and b"BACKEND_BASE_URL" in body and b"bidi-components" not in body
