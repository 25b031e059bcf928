"""Shared pytest fixtures: the PostgreSQL server used by the store tests (see tests/pg.py)."""

from tests.pg import pg_server_url, pg_url, store_url  # noqa: F401  (registered as fixtures)
