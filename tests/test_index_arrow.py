"""Arrow tables read by SQL (`index.arrow`): inside a transaction, nothing outlives the statement."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from vaultmind.index.arrow import execute_with, insert_arrow, key_table
from vaultmind.index.store import Index


def _keys(n: int, tag: str) -> pa.Table:
    return key_table(f"{tag}-{i:07d}" for i in range(n))


def _held_after(con: duckdb.DuckDBPyConnection, run: Any, tag: str) -> int:
    """Bytes of Arrow memory still allocated after `run` inserted three tables inside one
    (still open) transaction and every reference here is gone."""
    gc.collect()
    base = pa.total_allocated_bytes()
    con.execute("BEGIN TRANSACTION")
    for i in range(3):
        run(_keys(100_000, f"{tag}{i}"))
    gc.collect()
    held = pa.total_allocated_bytes() - base
    con.execute("COMMIT")
    return held


def test_tables_read_by_a_statement_are_not_kept_by_an_open_transaction(tmp_path: Path) -> None:
    with Index.open(tmp_path / "index.duckdb") as index:
        con = index.con
        con.execute("CREATE TABLE t (k VARCHAR)")

        def registered(table: pa.Table) -> None:  # what a view does: kept until the commit
            con.register("_v", table)
            con.execute("INSERT INTO t SELECT k FROM _v")
            con.unregister("_v")

        assert _held_after(con, registered, "view") > 1_000_000
        assert _held_after(con, lambda table: insert_arrow(con, "t", table), "rows") == 0
        delete = "DELETE FROM t WHERE k IN (SELECT k FROM _rows)"
        assert _held_after(con, lambda table: execute_with(con, delete, rows=table), "rows") == 0
        assert con.execute("SELECT count(*), min(k) FROM t").fetchone() == (300_000, "view0-0000000")


def test_execute_with_reads_both_tables_and_works_through_a_wrapped_connection(tmp_path: Path) -> None:
    with Index.open(tmp_path / "index.duckdb") as index:

        class Traced:
            """A wrapper that calls `execute` from a frame of its own."""

            def __init__(self, con: duckdb.DuckDBPyConnection):
                self.con = con
                self.statements: list[str] = []

            def execute(self, sql: str, params: object = None) -> duckdb.DuckDBPyConnection:
                self.statements.append(sql)
                return self.con.execute(sql, params)

        traced = Traced(index.con)
        rows = execute_with(
            traced,  # type: ignore[arg-type]
            "SELECT k FROM _rows WHERE k NOT IN (SELECT k FROM _more) ORDER BY k",
            rows=key_table(["a", "b", "c"]),
            more=key_table(["b"]),
        ).fetchall()
        assert rows == [("a",), ("c",)] and len(traced.statements) == 1
        ids = execute_with(index.con, "SELECT sum(id) FROM _rows", rows=key_table([1, 2, 3], "id", pa.int64()))
        assert ids.fetchone() == (6,)
