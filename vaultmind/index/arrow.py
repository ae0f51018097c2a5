"""Arrow tables read by SQL statements without entering DuckDB's catalog.

A view registered with `con.register` and dropped again inside a transaction stays in the
catalog's undo log, its Arrow table with it, until the transaction ends. A bulk load runs as
one transaction (`Index.bulk`): with registered views it kept every batch's rows and keys alive
until its commit (+170 MB over 10,000 notes). Here DuckDB reads the tables through its
replacement scan of the calling Python frame's variables instead, so nothing outlives the
statement.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import duckdb
import pyarrow as pa


def execute_with(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    params: Sequence[Any] | None = None,
    *,
    rows: pa.Table,
    more: pa.Table | None = None,
) -> duckdb.DuckDBPyConnection:
    """`con.execute(sql, params)`, in which `_rows` (and `_more`) are the given Arrow tables."""
    _rows, _more = rows, more  # found by DuckDB's replacement scan under these names
    return con.execute(sql, params)


def key_table(values: Iterable[Any], name: str = "k", type: pa.DataType | None = None) -> pa.Table:
    """A one-column table of `values` (strings unless `type` says otherwise), for `execute_with`."""
    return pa.table({name: pa.array(list(values), type or pa.string())})


def insert_arrow(con: duckdb.DuckDBPyConnection, table: str, data: pa.Table) -> None:
    """Insert the rows of `data` into `table`, its columns matched by name."""
    if not data.num_rows:
        return
    cols = ", ".join(data.schema.names)
    execute_with(con, f"INSERT INTO {table} ({cols}) SELECT {cols} FROM _rows", rows=data)
