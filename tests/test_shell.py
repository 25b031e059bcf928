"""asgi.py's page shell (ui.shell, issue 24): Streamlit's own index.html with the base address
set for a page's address, served by a real ``asgi.py`` server; every other address unchanged."""

from __future__ import annotations

import asyncio
import gzip
import re
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.harness import running
from ui.shell import PageShell, StaticCache, hints, lazy_chunks, shell, static_dir


def test_the_shell_is_the_index_with_the_base_address_script_in_its_head() -> None:
    index = (static_dir() / "index.html").read_text(encoding="utf-8")
    page = shell(index, "workspace")
    assert page.count("BACKEND_BASE_URL") == 1 and 'const page = "/workspace"' in page
    assert page.index("BACKEND_BASE_URL") < page.index("</head>")
    script = page[page.index("<script>(() =>"):page.index("</head>")]
    assert page.replace(script, "") == index


def test_only_a_page_s_address_is_answered_with_the_shell() -> None:
    plain, based = PageShell(None), PageShell(None, base_url="/studio/")
    assert plain.page("/workspace") == "workspace" and plain.page("/participant") == "participant"
    for path in ("/", "/favicon.png", "/manifest.json", "/static", "/workspace/",
                 "/workspace/_stcore/health", "/_stcore/health", "/a b"):
        assert plain.page(path) is None, path
    assert based.page("/studio/workspace") == "workspace"
    assert based.page("/workspace") is None and based.page("/studio/") is None


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``asgi.py`` as ``python -m study.serve`` runs it."""
    with running("asgi.py", log=tmp_path_factory.mktemp("shell"), timeout=120) as srv:
        yield srv.url


def _get(url: str, gzipped: bool = False) -> tuple[int, bytes, dict[str, str]]:
    request = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"} if gzipped else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return resp.status, resp.read(), {k.lower(): v for k, v in resp.headers.items()}
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), {k.lower(): v for k, v in exc.headers.items()}


def test_asgi_answers_a_page_s_address_with_the_shell(server: str) -> None:
    index = (static_dir() / "index.html").read_text(encoding="utf-8")
    status, body, headers = _get(f"{server}/workspace", gzipped=True)
    assert status == 200 and headers["content-encoding"] == "gzip"
    assert headers["cache-control"] == "no-cache"
    page = gzip.decompress(body).decode()
    hinted = page[page.index("<script>(() => {\n  const hints"):page.index("</head>")]
    assert page.replace(hinted, "") == shell(index, "workspace")
    status, body, _ = _get(f"{server}/participant?study=x")
    assert status == 200 and body.decode() == shell(index, "participant")


def test_asgi_leaves_every_other_address_to_streamlit(server: str) -> None:
    root = static_dir()
    status, body, _ = _get(f"{server}/")
    assert status == 200 and body == (root / "index.html").read_bytes()
    assert _get(f"{server}/favicon.png")[1] == (root / "favicon.png").read_bytes()
    assert _get(f"{server}/_stcore/health")[:2] == (200, b"ok")
    assert _get(f"{server}/workspace/_stcore/health")[0] == 404


def test_each_lazy_element_chunk_is_listed_with_the_chunks_it_imports() -> None:
    root = static_dir()
    index = (root / "index.html").read_text(encoding="utf-8")
    chunks = lazy_chunks(root)
    for element in ("Html", "PageLink", "BidiComponent", "Selectbox", "TextInput", "Button"):
        files = chunks[element]
        assert files[0].startswith(f"{element}.") and files[0].endswith(".js")
        assert len(set(files)) == len(files)
        for name in files:  # real files, none of them already preloaded by the page
            assert (root / "static" / "js" / name).is_file(), name
            assert f"./static/js/{name}" not in index, name
    assert "purify" in " ".join(chunks["Html"])  # Html's sanitizer is a chunk of its own
    assert len(chunks["Selectbox"]) > 10


def test_a_bundle_of_another_layout_gives_no_chunks_and_so_no_hints(tmp_path) -> None:
    (tmp_path / "static" / "js").mkdir(parents=True)
    (tmp_path / "index.html").write_text('<script type="module" src="./static/js/i.js"></script>')
    (tmp_path / "static" / "js" / "i.js").write_text("import('./Selectbox.x.js')")
    assert lazy_chunks(tmp_path) == {}
    assert hints({}, ["Selectbox"]) == []


def test_hints_list_each_file_once_modules_before_stylesheets_as_given() -> None:
    chunks = {"A": ["A.1.js", "dep.js"], "B": ["B.2.js", "dep.js"]}
    assert hints(chunks, ["A", "B", "Missing"], ["_stcore/x/m.js", "_stcore/x/m.css"]) == [
        ("modulepreload", "./static/js/A.1.js", ""), ("modulepreload", "./static/js/dep.js", ""),
        ("modulepreload", "./static/js/B.2.js", ""), ("modulepreload", "./_stcore/x/m.js", ""),
        ("preload", "./_stcore/x/m.css", "style")]


def test_the_hints_are_added_once_the_websocket_opens() -> None:
    index = (static_dir() / "index.html").read_text(encoding="utf-8")
    page = shell(index, "workspace", [("modulepreload", "./static/js/A.1.js", "")])
    script = page[page.index("BACKEND_BASE_URL"):page.index("</head>")]
    assert '[["modulepreload", "./static/js/A.1.js", ""]]' in script
    assert 'addEventListener("open", add' in script and "window.WebSocket = Native" in script
    assert "WebSocket" not in shell(index, "workspace")


def test_later_hints_wait_for_their_selector_and_leave_out_the_first_ones() -> None:
    index = (static_dir() / "index.html").read_text(encoding="utf-8")
    page = shell(index, "workspace", [("modulepreload", "./static/js/A.1.js", "")],
                 [("modulepreload", "./static/js/B.2.js", "")], ".pq-space[data-revision]")
    script = page[page.index("BACKEND_BASE_URL"):page.index("</head>")]
    assert 'later = [["modulepreload", "./static/js/B.2.js", ""]]' in script
    assert 'after = ".pq-space[data-revision]"' in script
    assert "if (later.length) requestAnimationFrame(wait)" in script
    root = static_dir()
    chunks = lazy_chunks(root)
    both = PageShell(None, preload={"workspace": (["Html"], [])},
                     later={"workspace": (["Html", "Selectbox"], ".x")})
    later, after = both.later["workspace"]
    assert after == ".x" and later == [
        h for h in hints(chunks, ["Selectbox"]) if h not in hints(chunks, ["Html"])]
    assert later and not set(later) & set(both.hints("workspace"))


def test_the_shell_prepares_its_files_once_and_hints_chunks_only_if_that_fails() -> None:
    calls: list[int] = []
    preload = {"workspace": (["Button"], ["_stcore/bidi-components/c/c.js"])}
    shell_ok = PageShell(None, preload=preload, prepare=lambda: calls.append(1))
    assert shell_ok.hints("home") == () and calls == []  # a page without hints prepares nothing
    first = shell_ok.hints("workspace")
    assert shell_ok.hints("workspace") == first and calls == [1]
    assert [h[1] for h in first][-1] == "./_stcore/bidi-components/c/c.js"

    def broken() -> None:
        raise RuntimeError("no runtime")

    shell_broken = PageShell(None, preload=preload, prepare=broken)
    assert [h[1] for h in shell_broken.hints("workspace")] == [
        h[1] for h in first if "static/js" in h[1]]


def _call(app: Any, path: str, headers: dict[bytes, bytes] | None = None,
          method: str = "GET") -> tuple[int, dict[bytes, bytes], bytes]:
    """One HTTP request through the ASGI ``app``: status, headers and body."""
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b""}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {"type": "http", "method": method, "path": path,
             "headers": list((headers or {}).items())}
    with ThreadPoolExecutor(1) as pool:  # its own thread: a browser test's loop may be running
        pool.submit(asyncio.run, app(scope, receive, send)).result()
    return (sent[0]["status"], dict(sent[0]["headers"]),
            b"".join(m.get("body", b"") for m in sent[1:]))


async def _downstream(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 299, "headers": []})
    await send({"type": "http.response.body", "body": b"streamlit"})


def test_static_files_are_served_from_memory_gzipped_with_streamlit_s_cache_headers() -> None:
    root = static_dir()
    index = (root / "index.html").read_text(encoding="utf-8")
    bundle = re.search(r'src="\./(static/js/index\.[^"]+\.js)"', index).group(1)
    app = StaticCache(_downstream)
    status, headers, body = _call(app, f"/{bundle}", {b"accept-encoding": b"gzip, br"})
    assert status == 200 and headers[b"content-encoding"] == b"gzip"
    assert gzip.decompress(body) == (root / bundle).read_bytes()
    assert headers[b"cache-control"] == b"public, immutable, max-age=31536000"
    assert headers[b"content-type"].startswith(b"text/javascript")
    assert int(headers[b"content-length"]) == len(body) < (root / bundle).stat().st_size / 2
    status, headers, body = _call(app, f"/{bundle}")  # no gzip accepted: the file as it is
    assert status == 200 and b"content-encoding" not in headers
    assert body == (root / bundle).read_bytes()
    assert _call(app, f"/{bundle}", method="HEAD")[2] == b""
    font = next(p for p in (root / "static" / "media").iterdir() if p.suffix == ".woff2")
    status, headers, body = _call(app, f"/static/media/{font.name}", {b"accept-encoding": b"gzip"})
    assert b"content-encoding" not in headers and body == font.read_bytes()  # already packed


def test_everything_but_a_plain_get_of_a_static_file_goes_on_to_streamlit() -> None:
    index = (static_dir() / "index.html").read_text(encoding="utf-8")
    bundle = re.search(r'src="\./(static/js/index\.[^"]+\.js)"', index).group(1)
    app, based = StaticCache(_downstream), StaticCache(_downstream, base_url="/studio/")
    for path, headers, method in ((f"/{bundle}", {b"range": b"bytes=0-10"}, "GET"),
                                  (f"/{bundle}", {}, "POST"), ("/static/js/nope.js", {}, "GET"),
                                  ("/static/js/../../index.html", {}, "GET"), ("/", {}, "GET"),
                                  ("/index.html", {}, "GET"), ("/_stcore/health", {}, "GET")):
        assert _call(app, path, headers, method)[::2] == (299, b"streamlit"), path
    assert _call(based, f"/{bundle}")[::2] == (299, b"streamlit")
    assert _call(based, f"/studio/{bundle}")[0] == 200


def test_every_file_the_workspace_shell_hints_is_served_before_any_page_has_run() -> None:
    with running("asgi.py", timeout=120) as srv:  # a fresh server: no script has run yet
        page = gzip.decompress(_get(f"{srv.url}/workspace", gzipped=True)[1]).decode()
        hinted = re.findall(r'"\./([^"]+)"', page[page.index("const hints"):])
        assert any("bidi-components/pleasqlarify.action_space" in h for h in hinted)
        assert sum("static/js/" in h for h in hinted) > 30
        for path in hinted:
            status, body, headers = _get(f"{srv.url}/{path}", gzipped=True)
            assert status == 200 and body, path
            if path.startswith("static/"):  # Streamlit's files: from memory, compressed
                packed = headers.get("content-encoding") == "gzip"  # (unless too small)
                assert (gzip.decompress(body) if packed else body) == (
                    static_dir() / path).read_bytes(), path
                assert packed or len(body) < 1000, path
