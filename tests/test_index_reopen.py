"""The index's connection opened again after a whole-vault rebuild (`Memory.reopen_index`):
DuckDB's database keeps memory after such a load that no eviction lets go, and a new one
starts without it. Questions and saves go on across the swap, from any thread."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.index.store import Index
from vaultmind.memory import Memory

from .conftest import running_daemon, until


def write(vault: Path, rel: str, text: str) -> None:
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def found(memory: Memory, query: str) -> list[str]:
    return sorted({str(hit["note_path"]) for hit in memory.search(query)["hits"]})


def settings(memory: Memory) -> tuple[str, str]:
    return tuple(memory.index.query(  # type: ignore[return-value]
        "SELECT current_setting('memory_limit'), current_setting('allocator_flush_threshold')"
    )[0])


def test_questions_and_saves_go_on_across_a_reopen_with_the_serving_settings(memory: Memory) -> None:
    vault = memory.config.vault
    write(vault, "kayak.md", "# Kayak\n\nThe kayak trip to the fjord is in June.\n")
    memory.serve()
    memory.sync()
    memory.warm()
    before, old = settings(memory), memory.index.con
    assert found(memory, "kayak fjord") == ["kayak.md"]
    memory.reopen_index()
    assert memory.index.con is not old
    assert settings(memory) == before  # the pool and the serving allocator's flush, set again
    assert found(memory, "kayak fjord") == ["kayak.md"]
    write(vault, "canoe.md", "# Canoe\n\nThe canoe lesson is on Tuesday.\n")
    stats = memory.sync()
    assert stats.added == 1
    assert found(memory, "canoe lesson") == ["canoe.md"]


def test_a_reopen_waits_for_readers_of_other_threads_and_they_go_on(memory: Memory) -> None:
    """Every use of the connection holds the index's lock, and the reopen holds it throughout:
    readers on other threads (questions, counts, the entity graph) meet the old connection or
    the new one, never a closed one."""
    vault = memory.config.vault
    for n in range(20):
        write(vault, f"n{n}.md", f"# Note {n}\n\nThe harbour meeting number {n} with Ada Lovelace.\n")
    memory.sync()
    memory.warm()
    stop, failures, rounds = threading.Event(), [], [0]

    def read() -> None:
        while not stop.is_set():
            try:
                assert len(found(memory, "harbour meeting")) > 0
                assert memory.index.scalar("SELECT count(*) FROM notes") == 20
                memory.entity_graph()
                rounds[0] += 1
            except Exception as exc:  # any failure of a reader is the finding
                failures.append(exc)
                return

    readers = [threading.Thread(target=read) for _ in range(2)]
    for thread in readers:
        thread.start()
    try:
        for _ in range(5):
            assert until(lambda: rounds[0] > 0 or bool(failures), 30)
            rounds[0] = 0
            memory.reopen_index()
    finally:
        stop.set()
        for thread in readers:
            thread.join(30)
    assert failures == []


@pytest.mark.slow
def test_the_daemon_reopens_the_index_after_a_rebuild_before_its_warm_up(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A start that rebuilds the index (an upgrade asked for it) opens it again before the
    warm-up; a start that does not, does not. The real reopen runs; it is only recorded."""
    write(vault, "kayak.md", "# Kayak\n\nThe kayak trip to the fjord is in June.\n")
    config = load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)
    with Memory.open(config) as memory:
        memory.sync()
        memory.index.con.execute("INSERT INTO meta VALUES ('needs_rebuild', '1')")  # as a migration asks
    events: list[str] = []
    reopen, warm = Index.reopen, Memory.warm

    def recorded_reopen(index: Index) -> None:
        events.append("reopen")
        reopen(index)

    def recorded_warm(memory: Memory) -> None:
        events.append("warm")
        warm(memory)

    monkeypatch.setattr(Index, "reopen", recorded_reopen)
    monkeypatch.setattr(Memory, "warm", recorded_warm)
    with running_daemon(config) as (memory, _):
        assert events == ["reopen", "warm"]
        assert found(memory, "kayak fjord") == ["kayak.md"]
        write(vault, "canoe.md", "# Canoe\n\nThe canoe lesson is on Tuesday.\n")
        assert until(lambda: found(memory, "canoe lesson") == ["canoe.md"], 60)
    events.clear()
    with running_daemon(config) as (memory, _):
        assert events == ["warm"]
