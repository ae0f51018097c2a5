"""Bring an opened index file to the schema of this version: the named migrations it has not
applied (`schema.migrations`), and the lookup indexes a suspended load dropped, created again."""

from __future__ import annotations

import json
from collections.abc import Callable

import duckdb

from vaultmind.index.schema import SCHEMA_VERSION, migrations, rebuilds


def migrations_compatible(con: duckdb.DuckDBPyConnection) -> bool:
    exists = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'migrations'"
    ).fetchone()
    if not exists or exists[0] == 0:
        tables = con.execute("SELECT count(*) FROM information_schema.tables").fetchone()
        return tables is None or tables[0] == 0  # an empty file is fine; foreign tables are not
    applied = [row[0] for row in con.execute("SELECT name FROM migrations ORDER BY seq").fetchall()]
    known = [name for name, _ in migrations()]
    return applied == known[: len(applied)]


def migrate(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE TABLE IF NOT EXISTS migrations (seq INTEGER PRIMARY KEY, name VARCHAR NOT NULL)")
    applied = {row[0] for row in con.execute("SELECT name FROM migrations").fetchall()}
    upgraded = bool(applied) and any(name not in applied and rebuilds(sql) for name, sql in migrations())
    for seq, (name, sql) in enumerate(migrations(), start=1):
        if name in applied:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            for statement in _statements(sql):
                con.execute(statement)
            con.execute("INSERT INTO migrations VALUES (?, ?)", [seq, name])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    con.execute("CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL)")
    row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is None:
        con.execute("INSERT INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])
    if upgraded:
        # New tables of derived rows are empty for the notes already indexed: the next sync
        # rebuilds the derived rows from the vault (caches such as embeddings are kept).
        con.execute("DELETE FROM meta WHERE key = 'needs_rebuild'")
        con.execute("INSERT INTO meta VALUES ('needs_rebuild', '1')")


def create_suspended_indexes(con: duckdb.DuckDBPyConnection, after_each: Callable[[], None] | None = None) -> bool:
    """Create the indexes a suspended load dropped, one transaction each (`after_each` runs
    after each commit); True when there were any. The record goes last: a crash on the way
    leaves it for the next open, which creates the rest."""
    row = con.execute("SELECT value FROM meta WHERE key = 'suspended_indexes'").fetchone()
    if row is None:
        return False
    for sql in json.loads(row[0]):
        _in_transaction(con, sql.replace("CREATE INDEX", "CREATE INDEX IF NOT EXISTS", 1))
        if after_each is not None:
            after_each()
    _in_transaction(con, "DELETE FROM meta WHERE key = 'suspended_indexes'")
    return True


def _in_transaction(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(sql)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def _statements(sql: str) -> list[str]:
    lines = [line.split("--", 1)[0] for line in sql.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
