"""A folder of notes renamed (Obsidian's rename, `mv`, `git mv`) while applied in several
batches and slices: each moved note stays in the index throughout, under its old path or its
new one, never both, and the change counts as renames."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from watchfiles import Change

import vaultmind.sync_apply as sync_apply
from vaultmind.config import Config, load_config
from vaultmind.daemon import Daemon
from vaultmind.index.resident import ChangeSet
from vaultmind.memory import Memory
from vaultmind.model import SyncStats
from vaultmind.watch_slices import paths_of, take

from .conftest import READY_S, until, write
from .test_watch import _wait_for_parity, running

__all__ = ["running"]  # the fixture, shared with test_watch.py

MOVED = 40
OTHERS = 1  # the fixture's start.md


def _fill(vault: Path) -> None:
    for i in range(MOVED):  # two levels, and names that repeat across subfolders
        write(vault, f"Projects/p{i % 2}/n{i // 2:03d}.md", f"# Note {i}\n\nThe moved note mentions lantern{i}.\n")


def _count_at_each_commit(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The notes the index holds right after each batch's commit (the listeners hear of it
    then), with batches of 5, 10 and 10 notes."""
    monkeypatch.setattr(sync_apply, "FIRST_APPLY_BATCH", 5)
    memory.syncer.apply_batch = 10
    counts: list[int] = []

    def count(_change: ChangeSet) -> None:
        counts.append(int(memory.index.scalar("SELECT count(*) FROM notes")))

    memory.syncer.listeners.append(count)
    return counts


def test_a_folder_renamed_under_the_daemon_keeps_each_note_in_the_index_while_applied(
    running: tuple[Config, Memory, Daemon], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Every path gone used to be removed by the first batch (50 notes) of a sync, and over a
    slice's worth of paths the renamed folder's old path came in the daemon's first slice: all
    but 50 notes of a renamed folder of 1,000 were missing from answers for seconds. A note's
    old path now goes with its new one, in one batch of one slice."""
    import vaultmind.daemon as daemon_module

    config, memory, daemon = running
    seen: list[SyncStats] = []
    daemon.on_batch = lambda _what, stats: seen.append(stats)
    _fill(config.vault)
    total = MOVED + OTHERS
    assert until(lambda: sum(s.added for s in seen) == MOVED, seconds=READY_S)  # reported
    seen.clear()
    monkeypatch.setattr(daemon_module, "BULK_SLICE", 20)  # the rename's 40 notes come in 2+ slices
    counts = _count_at_each_commit(memory, monkeypatch)
    os.rename(config.vault / "Projects", config.vault / "Archive")
    moved = "SELECT count(*) FROM notes WHERE path LIKE 'Archive/%'"
    assert until(lambda: memory.index.scalar(moved) == MOVED, seconds=READY_S)
    _wait_for_parity(config, memory, tmp_path)
    assert len(counts) >= 4, f"applied in several batches: {counts}"
    assert set(counts) == {total}, f"notes in the index at each commit: {counts}"
    assert sum(s.renamed for s in seen) == MOVED, [(s.added, s.deleted, s.renamed) for s in seen]
    assert sum(s.added + s.deleted for s in seen) == 0, [(s.added, s.deleted, s.renamed) for s in seen]


def test_a_folder_renamed_with_no_daemon_running_keeps_each_note_in_the_index_while_a_sync_applies_it(
    vault: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The whole-vault sync (a start-up's or the periodic reconcile's) that finds a folder
    renamed applies each note's removal with its write, as the daemon's watcher does."""
    write(vault, "start.md", "# Start\n\nThe first note mentions atlas.\n")
    _fill(vault)
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync()
        counts = _count_at_each_commit(memory, monkeypatch)
        os.rename(vault / "Projects", vault / "Archive")
        stats = memory.sync()
        assert (stats.renamed, stats.added, stats.deleted) == (MOVED, 0, 0)
        assert len(counts) >= 4 and set(counts) == {MOVED + OTHERS}, counts
        _wait_for_parity(config, memory, tmp_path, timeout=0)


def test_a_large_change_to_notes_whose_move_waits_in_the_backlog_keeps_their_old_paths_removal(
    vault: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Notes moved one by one (a checkout, a sync tool: an event per file, none for a folder),
    then all touched again (the sync tool setting their times) before the daemon applied the
    move: the second batch's plan put each moved note back in the backlog with no old path,
    in place of the one it had, and the old paths stayed in the index (each note there twice)
    until the next whole-vault pass, ten minutes later. The old path planned stays planned."""
    import vaultmind.daemon as daemon_module

    monkeypatch.setattr(daemon_module, "BULK_SLICE", 4)
    for i in range(10):
        write(vault, f"Projects/n{i}.md", f"# Note {i}\n\nThe moved note mentions lantern{i}.\n")
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync()
        daemon = Daemon(config, memory)
        (vault / "Archive").mkdir()
        moved = [(vault / f"Projects/n{i}.md", vault / f"Archive/n{i}.md") for i in range(10)]
        for old, new in moved:
            os.rename(old, new)
        daemon._apply({change for old, new in moved for change in ((Change.deleted, str(old)), (Change.added, str(new)))})
        assert daemon._backlog, "the move is applied in slices"
        for _, new in moved:
            os.utime(new, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
        daemon._apply({(Change.modified, str(new)) for _, new in moved})
        while daemon._backlog:  # as the daemon's steps apply it, a slice each
            daemon._apply_paths(*paths_of(take(daemon._backlog, daemon_module.BULK_SLICE)))
        assert memory.index.scalar("SELECT count(*) FROM notes WHERE path LIKE 'Projects/%'") == 0
        _wait_for_parity(config, memory, tmp_path, timeout=0)


def test_a_folder_moved_into_a_folder_then_moved_with_it_keeps_each_note_once(
    running: tuple[Config, Memory, Daemon], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`mv Inbox Projects/Inbox; mv Projects Archive` under the daemon, notes of the same names
    in both folders (an `index.md` in each subfolder): every note stays in the index, once."""
    import vaultmind.daemon as daemon_module

    config, memory, daemon = running
    vault = config.vault
    seen: list[SyncStats] = []
    daemon.on_batch = lambda _what, stats: seen.append(stats)
    for top in ("Inbox", "Projects"):
        for i in range(15):
            write(vault, f"{top}/s{i:02d}/index.md", f"# {top} {i}\n\nThe {top} note mentions lantern{i}.\n")
    total = 30 + OTHERS
    assert until(lambda: memory.index.scalar("SELECT count(*) FROM notes") == total, seconds=READY_S)
    assert until(lambda: sum(s.added for s in seen) == 30, seconds=READY_S)
    seen.clear()
    monkeypatch.setattr(daemon_module, "BULK_SLICE", 20)
    counts = _count_at_each_commit(memory, monkeypatch)
    os.rename(vault / "Inbox", vault / "Projects" / "Inbox")
    os.rename(vault / "Projects", vault / "Archive")
    moved = "SELECT count(*) FROM notes WHERE path LIKE 'Archive/%'"
    assert until(lambda: memory.index.scalar(moved) == 30, seconds=READY_S)
    _wait_for_parity(config, memory, tmp_path)
    assert set(counts) == {total}, f"notes in the index at each commit: {counts}"
    assert sum(s.renamed for s in seen) == 30, [(s.added, s.deleted, s.renamed) for s in seen]
