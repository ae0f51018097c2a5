"""DuckDB's allocator hands freed memory back at once during a whole-vault load."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from vaultmind.index.allocator import decay_settings, duckdb_allocator_bytes, prompt_purge
from vaultmind.index.store import Index

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="DuckDB bundles jemalloc in its Linux builds only"
)

# a query whose hash table takes a few tens of MB and is freed when it ends
BURST = "SELECT count(*) FROM (SELECT i % 400000 AS k, list(i) FROM range(2000000) t(i) GROUP BY k)"


def test_a_bulk_load_sets_decay_to_zero_and_restores_it(tmp_path: Path) -> None:
    """The decay, and DuckDB's row groups buffered before a write (one, not five), for the
    load only."""
    index = Index.open(tmp_path / "index.duckdb")
    before = decay_settings()
    assert before is not None and before["dirty_decay_ms"] > 0, "DuckDB's jemalloc was not found"

    def buffered() -> int:
        return int(index.scalar("SELECT current_setting('write_buffer_row_group_count')"))

    buffered_before = buffered()
    assert buffered_before > 1
    with index.bulk():
        assert decay_settings() == {"dirty_decay_ms": 0, "muzzy_decay_ms": 0}
        assert buffered() == 1
    assert decay_settings() == before and buffered() == buffered_before
    with pytest.raises(RuntimeError), index.bulk():
        raise RuntimeError("the load failed")
    assert decay_settings() == before and buffered() == buffered_before
    index.close()


def test_freed_memory_leaves_at_once_under_prompt_purge(tmp_path: Path) -> None:
    index = Index.open(tmp_path / "index.duckdb")
    index.con.execute("SET threads = 1")

    def resident_after_burst() -> int:
        index.query(BURST)
        held = duckdb_allocator_bytes()
        assert held is not None
        return held["resident"]

    plain = resident_after_burst()
    with prompt_purge():
        purged = resident_after_burst()
    again = resident_after_burst()
    assert purged < plain / 2 and purged < again / 2, (plain, purged, again)
    index.close()


def test_overlapping_loads_restore_the_decay_when_the_last_ends() -> None:
    """Two loads in two threads need not end in the order they began."""
    before = decay_settings()
    first, second = prompt_purge(), prompt_purge()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert decay_settings() == {"dirty_decay_ms": 0, "muzzy_decay_ms": 0}
    second.__exit__(None, None, None)
    assert decay_settings() == before
