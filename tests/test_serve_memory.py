"""A serving process keeps DuckDB's pool small between tasks (`ServingPool.trim`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import vaultmind.index.serving_pool as serving_pool
import vaultmind.index.store as store_module
import vaultmind.memory as memory_module
from vaultmind.config import load_config
from vaultmind.index.pool import size_bytes
from vaultmind.memory import Memory

from .conftest import pool_settings, write


def _pool(memory: Memory) -> int:
    return int(memory.index.scalar("SELECT sum(memory_usage_bytes) FROM duckdb_memory()"))


def test_trim_drops_cached_blocks_past_the_threshold_and_restores_the_limit(vault: Path, monkeypatch) -> None:
    for i in range(40):
        write(vault, f"n{i}.md", f"# Note {i}\n\n" + " ".join(f"word{i}x{j}" for j in range(400)) + "\n")
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        memory.index.checkpoint()  # written blocks on disk: evictable
        memory.index.query("SELECT * FROM leaves")  # blocks cached by a read
        before = _pool(memory)
        memory.serving_pool.trim()  # not serving: nothing happens
        assert _pool(memory) == before
        memory.serve()
        monkeypatch.setattr(serving_pool, "POOL_KEEP_BYTES", before + 1)
        memory.serving_pool.trim()  # under the threshold: kept
        assert _pool(memory) == before
        monkeypatch.setattr(serving_pool, "POOL_KEEP_BYTES", 0)
        monkeypatch.setattr(store_module, "EVICT_LIMIT", "1MB")  # a small index: below the usual 16 MB
        memory.serving_pool.trim()
        assert _pool(memory) < before
        limit = str(memory.index.scalar("SELECT current_setting('memory_limit')"))
        assert size_bytes(limit) > 400 * 2**20  # writes keep the full pool
        write(vault, "n0.md", "# Note 0\n\nchanged after trimming\n")
        memory.sync_paths(["n0.md"])
        assert memory.search("changed trimming")["hits"]


def test_a_serving_save_drops_what_it_read_before_its_commit_and_after(vault: Path, monkeypatch) -> None:
    """While serving, the blocks a save's statements read do not stay cached under its commit,
    nor what the commit read under the vectors' and resident structures' updates that follow:
    DuckDB's cache is dropped before the commit and after. Not serving, a save leaves it."""
    for i in range(40):
        write(vault, f"n{i}.md", f"# Note {i}\n\n" + " ".join(f"word{i}x{j}" for j in range(400)) + "\n")
    monkeypatch.setattr(store_module, "EVICT_LIMIT", "1MB")  # a small index: below the usual 16 MB
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        memory.index.checkpoint()  # written blocks on disk: evictable
        drops: list[int] = []
        drop = memory.index.drop_cached_blocks

        def counted() -> None:
            drops.append(_pool(memory))
            drop()

        monkeypatch.setattr(memory.index, "drop_cached_blocks", counted)
        for serving in (False, True):
            if serving:
                memory.serve()
            memory.index.query("SELECT * FROM leaves")  # blocks cached by a read
            before = _pool(memory)
            drops.clear()
            write(vault, "n1.md", f"# Note 1\n\nrewritten while serving {serving}\n")
            memory.sync_paths(["n1.md"])
            assert len(drops) == (2 if serving else 0)
            assert all(held >= before for held in drops[:1])  # the first drop found the read's blocks still there
            assert (_pool(memory) < before) == serving
        assert memory.search("rewritten serving")["hits"][0]["note_path"] == "n1.md"


def _pinned(memory: Memory) -> int:
    return int(
        memory.index.scalar(
            "SELECT coalesce(sum(memory_usage_bytes), 0) FROM duckdb_memory() WHERE tag IN (SELECT unnest(?))",
            [list(serving_pool.PINNED_TAGS)],
        )
    )


def test_trim_checkpoints_what_only_a_checkpoint_lets_go(vault: Path, monkeypatch) -> None:
    """The index nodes and appended rows a save leaves in DuckDB's memory stay after the pool is
    lowered; `trim` checkpoints them away past its bound: the lower one once the upkeep is done."""
    for i in range(40):
        write(vault, f"n{i}.md", f"# Note {i}\n\n" + " ".join(f"word{i}x{j}" for j in range(200)) + "\n")
    config = load_config(vault, embed_provider="static")
    wal = Path(f"{config.index_path}.wal")
    with Memory.open(config) as memory:
        memory.sync()
        memory.index.checkpoint()
        memory.serve()
        write(vault, "n0.md", "# Note 0\n\nrewritten with quokka words\n")
        memory.sync_paths(["n0.md"])
        pinned = _pinned(memory)
        assert pinned > 0 and wal.exists() and wal.stat().st_size > 0
        monkeypatch.setattr(serving_pool, "PINNED_MAX_BYTES", pinned)
        monkeypatch.setattr(serving_pool, "PINNED_IDLE_BYTES", pinned - 1)
        memory.serving_pool.trim()  # at the bound after a task: no checkpoint
        assert _pinned(memory) == pinned and wal.stat().st_size > 0
        memory.serving_pool.trim(idle=True)  # past the bound once the upkeep is done
        assert _pinned(memory) < pinned
        assert not wal.exists() or wal.stat().st_size == 0
        assert memory.search("quokka")["hits"][0]["note_path"] == "n0.md"


def test_status_runs_one_at_a_time_on_one_thread_and_drops_what_it_read(vault: Path, monkeypatch) -> None:
    """Status requests that arrive together (a client retrying while the index is busy) run
    one after the other, each on one DuckDB thread, which is set back after; while serving, the
    blocks a status read are dropped."""
    import threading
    import time

    for i in range(30):
        write(vault, f"n{i}.md", f"# Note {i}\n\n" + " ".join(f"word{i}x{j}" for j in range(300)) + "\n")
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        memory.index.checkpoint()
        threads_before = str(memory.index.scalar("SELECT current_setting('threads')"))
        import vaultmind.status as status_module

        inner = status_module._counts
        running, overlapped, seen = [0], [False], []

        def counted(*args: Any, **kwargs: bool) -> dict:
            running[0] += 1
            overlapped[0] |= running[0] > 1
            seen.append(str(memory.index.scalar("SELECT current_setting('threads')")))
            time.sleep(0.05)
            try:
                return inner(*args, **kwargs)
            finally:
                running[0] -= 1

        monkeypatch.setattr(status_module, "_counts", counted)
        reports: list[dict] = []
        callers = [threading.Thread(target=lambda: reports.append(memory.status())) for _ in range(4)]
        for caller in callers:
            caller.start()
        for caller in callers:
            caller.join()
        # one reads the index; the others, of the same index generation, answer from its counts
        assert len(reports) == 4 and not overlapped[0] and seen == ["1"]
        assert all(r["notes"]["total"] == 30 for r in reports)
        assert str(memory.index.scalar("SELECT current_setting('threads')")) == threads_before

        memory.serve()
        monkeypatch.setattr(store_module, "EVICT_LIMIT", "1MB")
        memory.index.query("SELECT * FROM leaves")  # blocks cached by a read
        cached = _pool(memory)
        memory.index.generation += 1  # (a change: the status reads the index again)
        memory.status()
        assert _pool(memory) < cached


def test_a_small_pool_read_steps_up_to_room_above_what_duckdb_holds_then_to_the_full_pool(
    vault: Path, monkeypatch
) -> None:
    """`Index.small_pool_read`: the pool asked for, on one thread; when it cannot be set (below
    the blocks DuckDB holds pinned) `SMALL_POOL_HEADROOM` above what it holds; when a read runs
    out of memory even there, the pool as it was. Settings are put back every time, and an
    error that is not about memory is the caller's."""
    import duckdb
    import pytest

    for i in range(10):
        write(vault, f"n{i}.md", f"# Note {i}\n\n" + " ".join(f"word{i}x{j}" for j in range(200)) + "\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        index = memory.index

        before = pool_settings(index)
        seen: list[tuple[str, int]] = []

        def read() -> int:
            seen.append(pool_settings(index))
            return int(index.scalar("SELECT count(*) FROM leaves"))

        leaves = int(index.scalar("SELECT count(*) FROM leaves"))
        assert index.small_pool_read(read, "32MB") == leaves and seen == [("30.5 MiB", 1)]
        assert pool_settings(index) == before
        seen.clear()
        held = _pool(memory)
        assert index.small_pool_read(read, "1KB") == leaves  # cannot be set: room above what is held
        assert len(seen) == 1 and abs(size_bytes(seen[0][0]) - (held + store_module.SMALL_POOL_HEADROOM)) < 2**20
        assert pool_settings(index) == before

        calls: list[tuple[str, int]] = []

        def runs_out() -> int:  # out of memory under any small pool, as a read wrapping it may raise
            calls.append(pool_settings(index))
            if size_bytes(calls[-1][0]) < size_bytes(before[0]):
                try:
                    raise duckdb.OutOfMemoryException("no room")
                except duckdb.OutOfMemoryException as exc:
                    raise duckdb.InvalidInputException("a scan failed") from exc
            return 7

        assert index.small_pool_read(runs_out, "1KB") == 7
        assert [c[0] for c in calls][-1] == before[0] and len(calls) == 2  # room above, then the full pool
        assert pool_settings(index) == before

        def wrong() -> int:
            raise duckdb.CatalogException("no such table")

        with pytest.raises(duckdb.CatalogException):
            index.small_pool_read(wrong, "32MB")
        assert pool_settings(index) == before


def test_a_warmed_serving_memory_freezes_what_it_loaded_for_the_collector(vault: Path) -> None:
    import gc

    write(vault, "notes/a.md", "# A\n\nThe kayak trip was cancelled because of the storm.\n")
    threshold = gc.get_threshold()
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.warm()
        assert gc.get_freeze_count() == 0 and gc.get_threshold() == threshold, "not serving: untouched"
        memory.serve()
        memory.sync()
        memory.warm()
        assert gc.get_threshold()[0] == memory_module.SERVING_GC_THRESHOLD
        assert gc.get_freeze_count() > 0
        assert memory.walk("kayak")["hits"], "queries work as before"


def test_a_small_pool_read_is_never_tried_below_the_rows_duckdb_holds_unwritten(vault: Path) -> None:
    """Rows written but not checkpointed (a reindex held ~40–50 MiB of them) are not DuckDB's
    cache: a pool below them could be set only by spilling them to disk, and the read then ran
    out of memory, putting the limit back did too, and `vaultmind reindex` ended in a traceback
    at its closing checkpoint. The read runs under room above what DuckDB holds instead."""
    write(vault, "n.md", "# Note\n\nThe kayak trip was cancelled because of the storm.\n")
    with Memory.open(load_config(vault, embed_provider="none")) as memory:
        memory.sync()
        index = memory.index
        before = index.scalar("SELECT current_setting('memory_limit')")
        with index.deferred_checkpoints():
            index.con.execute(  # fewer rows than a row group holds (`ROW_GROUP_ROWS`): none written yet
                "CREATE TABLE unwritten AS SELECT i, repeat('x', 3000) || i::VARCHAR AS t FROM range(16000) r(i)"
            )
            held = index.duckdb_memory()
            beyond_cache = sum(used for tag, used in held.items() if tag != "BASE_TABLE")
            assert beyond_cache > size_bytes("32MB"), held
            seen: list[str] = []

            def read() -> int:
                seen.append(str(index.scalar("SELECT current_setting('memory_limit')")))
                return int(index.scalar("SELECT count(*) FROM unwritten WHERE t LIKE '%7'"))

            assert index.small_pool_read(read, "16MB") == 1600
            assert len(seen) == 1 and size_bytes(seen[0]) >= beyond_cache, (seen, held)
            assert index.scalar("SELECT current_setting('memory_limit')") == before
            index.con.execute("DROP TABLE unwritten")
        index.checkpoint()


def test_a_warm_up_prepares_the_vectors_before_it_loads_the_leaves(vault: Path, monkeypatch) -> None:
    """The vectors' load and clustering hold their temporaries (and, until their rows go to
    their scratch file, the rows themselves) for a while; the resident leaves, once loaded, are
    held for good. Loaded first, the leaves stood under the vectors' peak: at 50k notes, after an
    upgrade's rebuild, the daemon's warm-up peaked at 568 MiB while filing the vectors. The
    vectors come first, the leaves after them, then the entity graph."""
    from vaultmind.index.resident import ResidentLeaves
    from vaultmind.index.resident_vectors import ResidentVectors

    for i in range(30):
        write(vault, f"n{i}.md", f"# Note {i}\n\nThe kayak trip number {i} was cancelled because of the storm.\n")
    loads: list[str] = []

    def recorded(cls: Any, name: str) -> None:
        load = cls._load

        def load_and_record(self: Any, *args: Any, **kwargs: Any) -> Any:
            loads.append(name)
            return load(self, *args, **kwargs)

        monkeypatch.setattr(cls, "_load", load_and_record)

    recorded(ResidentLeaves, "leaves")
    recorded(ResidentVectors, "vectors")
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.serve()
        memory.sync()
        loads.clear()
        memory.warm()
        assert "vectors" in loads and "leaves" in loads, loads
        assert loads.index("vectors") < loads.index("leaves"), loads
        assert memory.search("kayak storm")["hits"], "questions answered as before"
