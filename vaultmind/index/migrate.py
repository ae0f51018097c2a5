"""Bring an opened index file to the schema of this version: the named migrations it has not
applied (`schema.migrations`); and the lookup indexes of a large load, dropped for it and
created again after it (or on the next open, after a crash)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from contextlib import suppress

import duckdb

from vaultmind.index.meta import put_meta
from vaultmind.index.schema import SCHEMA_VERSION, migrations, rebuilds
from vaultmind.model import Progress
from vaultmind.ticking import TickingProgress


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


def migrate(con: duckdb.DuckDBPyConnection, progress: Progress | None = None) -> None:
    """Apply the migrations `con`'s index has not applied, each in its transaction. `progress`
    hears each one's statements run (phase "upgrading the index (migration NAME)"), and again
    every `TICK_S` while one runs: a migration that rewrites a large table takes seconds, which
    a command's progress line then says instead of a silence."""
    con.execute("CREATE TABLE IF NOT EXISTS migrations (seq INTEGER PRIMARY KEY, name VARCHAR NOT NULL)")
    applied = {row[0] for row in con.execute("SELECT name FROM migrations").fetchall()}
    work = "upgrading" if applied else "creating"
    pending = [name for name, _ in migrations() if name not in applied]
    for seq, (name, sql) in enumerate(migrations(), start=1):
        if name not in applied:
            statements = [] if _discarded(con, name, pending) else _statements(sql)
            if applied and rebuilds(sql):
                statements += MARK_REBUILD
            _apply(con, seq, name, statements, TickingProgress(progress, f"{work} the index (migration {name})", TICK_S))
    con.execute("CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL)")
    row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is None:
        con.execute("INSERT INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])


# Applied to an index that holds rows, a migration that rebuilds marks it for a rebuild, in its
# own transaction: new tables of derived rows are empty for the notes already indexed, and the
# next sync rebuilds the derived rows from the vault (caches such as embeddings are kept). An
# upgrade stopped after it (Ctrl-C) keeps the mark, though the migrations left are `rebuild: no`.
MARK_REBUILD = [
    "DELETE FROM meta WHERE key = 'needs_rebuild'",
    "INSERT INTO meta VALUES ('needs_rebuild', '1')",
]


# Migrations that only rewrite rows of the index's leaves in place, each with the later
# migration that rebuilds every index holding a leaf: applied in one upgrade with it, the
# rewrite would be thrown away by that rebuild, so it is recorded without running. (0032 renames
# section leaf ids in place; at 50k notes that needed more memory than an index is given, and
# 0033, released with it, rebuilds the same index at its next sync.)
DISCARDED_BY = {"0032_section_leaf_ids_by_text": "0033_conservative_token_counts"}


def _discarded(con: duckdb.DuckDBPyConnection, name: str, pending: list[str]) -> bool:
    """Whether `name`'s rewrite would be discarded by a rebuild pending in the same upgrade."""
    if DISCARDED_BY.get(name) not in pending:
        return False
    held = con.execute("SELECT EXISTS (SELECT 1 FROM leaves)").fetchone()
    return bool(held and held[0])


def _apply(con: duckdb.DuckDBPyConnection, seq: int, name: str, statements: list[str], progress: TickingProgress) -> None:
    """One migration's statements and its record, in one transaction (all or nothing)."""
    with progress:
        con.execute("BEGIN TRANSACTION")
        try:
            for done, statement in enumerate(statements):
                progress.at(done, len(statements))
                con.execute(statement)
            con.execute("INSERT INTO migrations VALUES (?, ?)", [seq, name])
            con.execute("COMMIT")
        except BaseException:
            roll_back(con)
            raise
        progress.at(len(statements), len(statements))


TICK_S = 1.0  # a migration's count told again this often while a statement runs


def suspend_indexes(con: duckdb.DuckDBPyConnection, tables: Sequence[str]) -> None:
    """Drop the lookup indexes of `tables`, in the caller's transaction, their SQL kept in
    `meta` for `create_suspended_indexes` (nothing when they are suspended already: the kept SQL
    stays the record)."""
    if con.execute("SELECT 1 FROM meta WHERE key = 'suspended_indexes'").fetchone():
        return
    rows = con.execute(
        "SELECT index_name, sql FROM duckdb_indexes() WHERE table_name IN (SELECT unnest(?)) ORDER BY index_name",
        [list(tables)],
    ).fetchall()
    if not rows:
        return
    put_meta(con, "suspended_indexes", json.dumps([sql for _, sql in rows]))
    for name, _ in rows:
        con.execute(f'DROP INDEX "{name}"')


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
        roll_back(con)
        raise


def roll_back(con: duckdb.DuckDBPyConnection) -> None:
    """Roll back the transaction of an error on its way out, unless DuckDB ended it already: a
    statement Ctrl-C stopped may have rolled it back, or a Ctrl-C may come just after a COMMIT.
    The ROLLBACK's own error ("no transaction is active") must not take the place of the one
    on its way (a Ctrl-C during an upgrade was taken for a broken index, and the index moved
    aside)."""
    with suppress(duckdb.Error):
        con.execute("ROLLBACK")


# A migration's text as SQL reads it: a quoted string or name (a doubled quote within it is
# one), a comment (`--` to the line's end, `/* … */`), a `;` that ends a statement, other text
_SQL = re.compile(r"""'(?:[^']|'')*'|"(?:[^"]|"")*"|(--[^\n]*|/\*.*?\*/)|(;)|[^'"/;-]+|.""", re.DOTALL)


def _statements(sql: str) -> list[str]:
    """The statements of a migration, its comments left out: a `;` or `--` within a quoted
    string (`'a; b'`, `'<!--'`) is the string's."""
    statements: list[str] = []
    current: list[str] = []
    for token in _SQL.finditer(sql):
        comment, end = token.group(1), token.group(2)
        if end:
            statements.append("".join(current))
            current = []
        elif not comment:
            current.append(token.group(0))
    statements.append("".join(current))
    return [statement.strip() for statement in statements if statement.strip()]
