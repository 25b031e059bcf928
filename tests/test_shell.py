"""asgi.py's page shell (ui.shell, issue 24): Streamlit's own index.html with the base address
set for a page's address, served by a real ``asgi.py`` server; every other address unchanged."""

from __future__ import annotations

import gzip
import urllib.error
import urllib.request

import pytest

from tests.harness import running
from ui.shell import PageShell, shell, static_dir


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
    assert gzip.decompress(body).decode() == shell(index, "workspace")
    status, body, _ = _get(f"{server}/participant?study=x")
    assert status == 200 and body.decode() == shell(index, "participant")


def test_asgi_leaves_every_other_address_to_streamlit(server: str) -> None:
    root = static_dir()
    status, body, _ = _get(f"{server}/")
    assert status == 200 and body == (root / "index.html").read_bytes()
    assert _get(f"{server}/favicon.png")[1] == (root / "favicon.png").read_bytes()
    assert _get(f"{server}/_stcore/health")[:2] == (200, b"ok")
    assert _get(f"{server}/workspace/_stcore/health")[0] == 404
