"""The index file is opened with small row groups (`connection.ROW_GROUP_ROWS`): a whole-vault
load holds each table's filling group in memory until it is written, so the group's size bounds
what the load holds. On real DuckDB files; the shapes read back from `pragma_storage_info`."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from vaultmind.index.row_groups import group_sizes
from vaultmind.index.store import Index

SMALL = 16_384  # the row group size the index is opened with
DEFAULT = 122_880  # DuckDB's own, which an index written by earlier versions has


def _append(con: duckdb.DuckDBPyConnection, start: int, count: int) -> None:
    con.execute(
        "INSERT INTO embeddings SELECT sha256('text ' || i), 'm', 2, encode(i::VARCHAR) FROM range(?, ?) t(i)",
        [start, start + count],
    )


def test_a_new_index_writes_row_groups_of_16384_rows(tmp_path: Path) -> None:
    index = Index.open(tmp_path / "index.duckdb")
    try:
        with index.transaction() as con:
            _append(con, 0, 40_000)
        index.checkpoint()
        assert group_sizes(index.con, "embeddings") == [SMALL, SMALL, 40_000 - 2 * SMALL]
    finally:
        index.close()
    index = Index.open(tmp_path / "index.duckdb")  # opened again: the size is set again, nothing merged
    try:
        with index.transaction() as con:
            _append(con, 40_000, 10)
        index.checkpoint()
        assert max(group_sizes(index.con, "embeddings")) == SMALL
        assert index.scalar("SELECT count(DISTINCT content_hash) FROM embeddings") == 40_010
    finally:
        index.close()


def test_a_bulk_loads_uncommitted_rows_in_memory_stay_within_a_small_group(tmp_path: Path) -> None:
    """A load's rows wait in memory only until their group fills and is written: of 120,000
    rows (~13 MiB) no more than about one small group is held at a time, where DuckDB's
    default group held all of them until the commit."""
    index = Index.open(tmp_path / "index.duckdb")
    held = []
    try:
        with index.bulk():
            for start in range(0, 120_000, 4_000):
                with index.transaction() as con:
                    _append(con, start, 4_000)
                held.append(index.duckdb_memory().get("IN_MEMORY_TABLE", 0))
        assert index.scalar("SELECT count(*) FROM embeddings") == 120_000
    finally:
        index.close()
    assert max(held) < 6 * 2**20, held


@pytest.mark.slow
def test_an_index_written_with_default_row_groups_keeps_them_and_adds_small_ones(tmp_path: Path) -> None:
    """An index an earlier version wrote (DuckDB's default groups): its full groups stay as
    they are (nothing is rewritten), new rows go into small groups, and no row is lost."""
    path = tmp_path / "index.duckdb"
    Index.open(path).close()  # the schema
    con = duckdb.connect(str(path))  # as earlier versions opened it
    try:
        _append(con, 0, DEFAULT + 100)
        con.execute("CHECKPOINT")
        assert group_sizes(con, "embeddings") == [DEFAULT, 100]
    finally:
        con.close()
    index = Index.open(path)
    try:
        with index.transaction() as con:
            _append(con, DEFAULT + 100, 20_000)
        index.checkpoint()
        sizes = group_sizes(index.con, "embeddings")
        assert sizes[0] == DEFAULT and max(sizes[1:]) <= SMALL and sum(sizes) == DEFAULT + 20_100
        assert index.scalar("SELECT count(DISTINCT content_hash) FROM embeddings") == DEFAULT + 20_100
    finally:
        index.close()


def test_a_file_opened_twice_in_a_process_is_shared_and_let_go_with_the_last(tmp_path: Path) -> None:
    """DuckDB attaches a file once per process: a second open (a command run in a process that
    holds the index) gets a connection of its own to the same database, not an error that would
    move the file aside; the first closed, the second goes on; the last closed lets the file go."""
    path = tmp_path / "index.duckdb"
    first, second = Index.open(path), Index.open(path)
    try:
        assert second.quarantined is None and not list(tmp_path.glob("quarantine*"))
        with first.transaction() as con:
            _append(con, 0, 10)
        first.close()
        assert second.scalar("SELECT count(*) FROM embeddings") == 10
    finally:
        second.close()
    con = duckdb.connect(str(path))  # let go: a plain open of the file works
    try:
        assert con.execute("SELECT count(*) FROM embeddings").fetchone() == (10,)
    finally:
        con.close()
