"""Shared pytest fixtures: the PostgreSQL server used by the store tests (see tests/pg.py)."""

from tests.pg import film_pg, pg_server_url, pg_url, store_url  # noqa: F401  (registered as fixtures)

# core/layout.py imports umap (numba) for n >= 5 classes: keep its compiled cache writable.
__import__("os").environ.setdefault("NUMBA_CACHE_DIR", "/tmp/numba-cache")
