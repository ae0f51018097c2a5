"""Dropping DuckDB's cached blocks inside a whole-vault load (`Index.drop_cached_blocks` in
`Index.bulk`) drops the stored blocks a step read, but not the load's own rows not yet
committed: those stay in memory instead of being written to temporary files and read back for
the next batch (a 50k-note rebuild so spilled failed at times with DuckDB's "Invalid unicode …
detected in segment statistics update")."""

from __future__ import annotations

from pathlib import Path

from vaultmind.index.store import Index

ROWS = 60_000


def _spilled(index: Index) -> int:
    return int(index.scalar("SELECT coalesce(sum(size), 0) FROM duckdb_temporary_files()"))


def test_a_bulk_loads_uncommitted_rows_are_not_spilled_when_cached_blocks_are_dropped(tmp_path: Path) -> None:
    with Index.open(tmp_path / "index.duckdb") as index:
        with index.transaction() as con:
            con.execute("CREATE TABLE stored AS SELECT range AS id, repeat('y', 200) || range AS text FROM range(200000)")
            con.execute("CREATE TABLE loaded (id BIGINT, text VARCHAR)")
        index.checkpoint()
        before_commit: list[int] = []
        with index.bulk(before_commit=lambda: before_commit.append(_spilled(index))):
            with index.transaction() as con:
                con.execute("SELECT sum(length(text)) FROM stored").fetchall()  # its blocks now cached
                con.execute(
                    "INSERT INTO loaded SELECT range, repeat('é—日', 1 + range % 400) || range FROM range(?)", [ROWS]
                )
            held = index.duckdb_memory()
            assert held.get("IN_MEMORY_TABLE", 0) > 16 * 2**20  # more than `EVICT_LIMIT` not committed
            assert held.get("BASE_TABLE", 0) > 2**20
            index.drop_cached_blocks()
            assert _spilled(index) == 0
            assert index.duckdb_memory().get("BASE_TABLE", 0) <= 2**20  # the stored blocks went
        assert before_commit == [0]  # nor by the drop that ends the load, before its commit
        assert index.scalar("SELECT count(*) FROM loaded WHERE text LIKE 'é—日%'") == ROWS
