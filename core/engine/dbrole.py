"""Setup-time checks of the role a task database is opened with (least privilege).

Candidate SQL is refused outside a pure-function allow-list and runs in READ ONLY transactions,
but the role is the last line: ``role_warnings`` says when a PostgreSQL task-database role is a
superuser, may write a table, create objects, or holds a server-file / signalling role.
"""

from __future__ import annotations

import sqlalchemy as sa

from core.engine.taskbank import DatabaseSpec

_SERVER_ROLES = ("pg_read_server_files", "pg_write_server_files", "pg_execute_server_program",
                 "pg_signal_backend")
_FIX = ("connect as a read-only role instead (see README: 'Task databases on PostgreSQL: a "
        "read-only role')")


def role_warnings(spec: DatabaseSpec) -> list[str]:
    """Warnings (empty if none) about the privileges of ``spec``'s role; SQLite needs none."""
    if spec.dialect != "postgres":
        return []
    url = sa.engine.make_url(spec.value)
    if "+" not in url.drivername:
        url = url.set(drivername="postgresql+psycopg")
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool, connect_args={
        "options": "-c default_transaction_read_only=on -c statement_timeout=5000"})
    try:
        with engine.connect() as conn:
            return _warnings(conn)
    except sa.exc.SQLAlchemyError as exc:
        return [f"cannot check the task database role ({str(exc).splitlines()[0][:200]})"]
    finally:
        engine.dispose()


def _warnings(conn: sa.Connection) -> list[str]:
    role, superuser, createrole, bypassrls = conn.execute(sa.text(
        "SELECT rolname, rolsuper, rolcreaterole, rolbypassrls FROM pg_roles "
        "WHERE rolname = current_user")).one()
    if superuser:  # a superuser may do everything the checks below look for
        return [f"the task database role '{role}' is a superuser: a candidate could read "
                f"server files or stop other sessions if a check failed; {_FIX}"]
    out = []
    if createrole or bypassrls:
        out.append(f"the task database role '{role}' may create roles or bypass row security; "
                   f"{_FIX}")
    writable = conn.execute(sa.text(
        "SELECT n.nspname || '.' || c.relname FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S') "
        "AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
        "AND n.nspname NOT LIKE 'pg_toast%' AND (has_table_privilege(c.oid, "
        "'INSERT, UPDATE, DELETE, TRUNCATE') OR pg_has_role(c.relowner, 'USAGE')) "
        "ORDER BY 1 LIMIT 6")).scalars().all()
    if writable:
        more = ", …" if len(writable) > 5 else ""
        out.append(f"the task database role '{role}' can write or owns "
                   f"{', '.join(writable[:5])}{more}; {_FIX}")
    create = conn.execute(sa.text(
        "SELECT has_database_privilege(current_database(), 'CREATE'), "
        "EXISTS (SELECT 1 FROM pg_namespace WHERE nspname NOT LIKE 'pg_%' AND nspname <> "
        "'information_schema' AND has_schema_privilege(oid, 'CREATE'))")).one()
    if any(create):
        out.append(f"the task database role '{role}' may create schemas or tables "
                   f"in this database; {_FIX}")
    held = [
        r for r in _SERVER_ROLES
        if conn.execute(sa.text("SELECT pg_has_role(current_user, :r, 'USAGE')"),
                        {"r": r}).scalar()]
    if held:
        out.append(f"the task database role '{role}' is a member of {', '.join(held)}; {_FIX}")
    return out
