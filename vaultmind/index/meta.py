"""The index's `meta` table: one value a key, for the state that outlives a process (the
admission policy seen, a re-ask's state, the window vectors were made with, ...)."""

from __future__ import annotations

import duckdb


def put_meta(con: duckdb.DuckDBPyConnection, key: str, value: str) -> None:
    """Set one `meta` key, in the caller's transaction: an UPDATE when the key is there, else
    an INSERT. A DELETE and INSERT of one primary key in a transaction whose commit then fails
    (a full disk) aborts the process: DuckDB's revert of that commit trips on the key."""
    if con.execute("UPDATE meta SET value = ? WHERE key = ? RETURNING key", [value, key]).fetchone() is None:
        con.execute("INSERT INTO meta VALUES (?, ?)", [key, value])
