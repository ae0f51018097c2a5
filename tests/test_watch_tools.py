"""What sync tools, editors and git do to a vault, seen through the real daemon and watchfiles:
the index ends as a cold rebuild of the final vault has it, a tool's temporary files never
enter it, and a user's note is never dropped for a file the tool has not finished."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vaultmind.config import Config, load_config
from vaultmind.daemon import Daemon
from vaultmind.index.store import BACKLOG_LEFT
from vaultmind.memory import Memory
from vaultmind.vault.template import GITIGNORE, GITIGNORE_LINES

from .conftest import READY_S, running_daemon, until, write
from .test_watch import Batches, _wait_for_parity, a_later_slice, running

__all__ = ["running"]  # the fixture, shared with test_watch.py


def _paths(memory: Memory) -> set[str]:
    return {path for (path,) in memory.index.query("SELECT path FROM notes")}


def test_a_note_replaced_by_a_folder_of_its_name_leaves_the_index(
    running: tuple[Config, Memory, Daemon], tmp_path: Path
) -> None:
    """`Plans.md` deleted and a folder `Plans.md/` made in its place (a git checkout of a branch
    where it is one, a sync tool's delivery): the note's rows go at once, not at the next
    reconcile ten minutes later (the folder's sync looked up only what lay under it)."""
    config, memory, _ = running
    vault = config.vault
    write(vault, "Plans.md", "# Plans\n\nThe old plans mention lantern.\n")
    assert until(lambda: "Plans.md" in _paths(memory))
    (vault / "Plans.md").unlink()
    (vault / "Plans.md").mkdir()
    write(vault, "Plans.md/inner.md", "# Inner\n\nThe inner note mentions harbor.\n")
    assert until(lambda: "Plans.md/inner.md" in _paths(memory))
    _wait_for_parity(config, memory, tmp_path)
    assert "Plans.md" not in _paths(memory)
    assert not memory.search("lantern", limit=3)["hits"]


def test_sync_tools_and_editors_temporary_files_stay_out_and_their_conflict_copies_are_indexed(
    running: tuple[Config, Memory, Daemon], tmp_path: Path
) -> None:
    """What Syncthing, Dropbox, iCloud, OneDrive, Nextcloud, vim and VS Code leave in a vault
    while the daemon watches: a conflict copy is the user's note (indexed, never lost); a
    temporary, partial, placeholder or owner file is not, and the note it becomes is, once."""
    config, memory, _ = running
    vault = config.vault
    write(vault, "Trip.md", "# Trip\n\nThe trip note mentions meadow.\n")
    assert until(lambda: "Trip.md" in _paths(memory))
    # Syncthing: its marker folder, old versions, a temporary file renamed into place, a conflict
    write(vault, ".stfolder/.keep", "")
    write(vault, ".stversions/Trip~20241201-123456.md", "# Trip\n\nAn old version.\n")
    write(vault, ".syncthing.Synced.md.tmp", "# Synced\n\nDelivered by Syncthing: copper.\n")
    os.replace(vault / ".syncthing.Synced.md.tmp", vault / "Synced.md")
    write(vault, "Trip.sync-conflict-20241201-123456-ABCDEFG.md", "# Trip\n\nThe laptop's version: river.\n")
    # Dropbox and Nextcloud conflict copies; an iCloud placeholder whose note arrives later
    write(vault, "Trip (conflicted copy 2024-12-01).md", "# Trip\n\nDropbox's copy: violet.\n")
    write(vault, "Trip (conflicted copy 2024-12-01 123456).md", "# Trip\n\nNextcloud's copy: orbit.\n")
    write(vault, ".Later.md.icloud", "placeholder")
    # OneDrive/Office owner file, partial downloads, a Nextcloud lock
    write(vault, "~$Trip.md", "\x0bZoë")
    write(vault, "Big.md.part", "# Big\n\nhalf")
    write(vault, ".~lock.Trip.md#", "lock")
    # vim: the write test, a swap file, a backup, and a save by rename
    write(vault, "4913", "")
    (vault / "4913").unlink()
    write(vault, ".Trip.md.swp", "swap")
    os.replace(vault / "Trip.md", vault / "Trip.md~")
    write(vault, "Trip.md", "# Trip\n\nThe trip note, saved by vim: meadow and summit.\n")
    (vault / "Trip.md~").unlink()
    # VS Code: a save through a temporary file
    write(vault, "Code.md.tmp-1234", "# Code\n\nSaved by VS Code: falcon.\n")
    os.replace(vault / "Code.md.tmp-1234", vault / "Code.md")
    (vault / ".Later.md.icloud").unlink()  # iCloud delivers the note
    write(vault, "Later.md", "# Later\n\nDownloaded at last: harbor.\n")
    expected = {
        "start.md",
        "Trip.md",
        "Synced.md",
        "Code.md",
        "Later.md",
        "Trip.sync-conflict-20241201-123456-ABCDEFG.md",
        "Trip (conflicted copy 2024-12-01).md",
        "Trip (conflicted copy 2024-12-01 123456).md",
    }
    assert until(lambda: expected <= _paths(memory))
    time.sleep(0.5)  # the watcher's last batch
    assert _paths(memory) == expected
    _wait_for_parity(config, memory, tmp_path)
    assert [h["note_path"] for h in memory.search("summit meadow", limit=1)["hits"]] == ["Trip.md"]
    copies = {p["path"]: p["message"] for p in memory.status()["problems"] if p["kind"] == "conflict_copy"}
    assert sorted(copies) == sorted(expected - {"start.md", "Trip.md", "Synced.md", "Code.md", "Later.md"})
    assert all(message.startswith("a sync tool's conflict copy of Trip.md;") for message in copies.values())


def _git(vault: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(vault.parent), "GIT_AUTHOR_NAME": "Zoë"}
    env |= {"GIT_AUTHOR_EMAIL": "z@example.org", "GIT_COMMITTER_NAME": "Zoë", "GIT_COMMITTER_EMAIL": "z@example.org"}
    return subprocess.run(["git", *args], cwd=vault, env=env, capture_output=True, text=True, check=False)


def test_git_branches_a_merge_conflict_and_gc_under_the_watcher(
    running: tuple[Config, Memory, Daemon], tmp_path: Path
) -> None:
    """A vault under git: checking out a branch that renames a folder, deletes and edits notes,
    and back, leaves the index as a cold rebuild has it; a merge conflict git leaves in a note
    is indexed as it is and named by `status` until it is resolved; `git gc` (all of it under
    the hidden `.git/`) applies no batch."""
    config, memory, daemon = running
    vault = config.vault
    for i in range(12):
        write(vault, f"projects/alpha/Alpha {i}.md", f"# Alpha {i}\n\nThe alpha note {i} mentions [[Beta {i}]] #launch.\n")
    write(vault, "Trip.md", "# Trip\n\nThe trip note mentions meadow.\n")
    # as `vaultmind init` writes it: the daemon's live index is not committed (its WAL, written
    # meanwhile, made `git checkout` refuse: "local changes would be overwritten")
    write(vault, GITIGNORE, "\n".join(GITIGNORE_LINES) + "\n")
    assert _git(vault, "init", "-q", "-b", "main").returncode == 0
    assert _git(vault, "add", "-A").returncode == 0 and _git(vault, "commit", "-qm", "base").returncode == 0
    _git(vault, "checkout", "-qb", "feature")
    _git(vault, "mv", "projects/alpha", "projects/omega")
    for i in range(4):
        _git(vault, "rm", "-q", f"projects/omega/Alpha {i}.md")
    for i in range(4, 10):
        with open(vault / f"projects/omega/Alpha {i}.md", "a", encoding="utf-8") as fh:
            fh.write("Edited on the branch: copper.\n")
    write(vault, "Trip.md", "# Trip\n\nThe branch's trip: river.\n")
    assert _git(vault, "commit", "-qam", "feature").returncode == 0
    _wait_for_parity(config, memory, tmp_path)
    for branch in ("main", "feature", "main"):
        assert _git(vault, "checkout", "-q", branch).returncode == 0
    _wait_for_parity(config, memory, tmp_path)
    assert "projects/alpha/Alpha 0.md" in _paths(memory)
    write(vault, "Trip.md", "# Trip\n\nMain's trip: harbor.\n")
    _git(vault, "commit", "-qam", "main's trip")
    assert _git(vault, "merge", "-q", "feature").returncode != 0, "a conflict in Trip.md"
    assert "<<<<<<< HEAD" in (vault / "Trip.md").read_text(encoding="utf-8")

    def conflicts() -> list[str]:
        return [p["path"] for p in memory.status()["problems"] if p["kind"] == "merge_conflict"]

    assert until(lambda: conflicts() == ["Trip.md"])
    _wait_for_parity(config, memory, tmp_path)
    assert {h["note_path"] for h in memory.search("harbor river", limit=3)["hits"]} == {"Trip.md"}
    write(vault, "Trip.md", "# Trip\n\nBoth trips: harbor and river.\n")  # resolved
    assert _git(vault, "commit", "-qam", "merged").returncode == 0
    assert until(lambda: conflicts() == [])
    _wait_for_parity(config, memory, tmp_path)
    batches = daemon.batches
    assert _git(vault, "gc", "-q", "--aggressive").returncode == 0
    time.sleep(1.0)  # the watcher has heard every event of it
    assert daemon.batches == batches


def test_a_save_while_a_whole_folder_of_notes_moves_in_waits_for_one_slice(
    running: tuple[Config, Memory, Daemon], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A folder of many notes moved into the vault is one event of the watcher; it is applied a
    slice of notes at a time like any large batch (it used to be read whole in one sync, a save
    made meanwhile waiting for all of it); status says the daemon is catching up, and in the end
    the index equals a cold rebuild — and a folder moved out again takes its notes with it."""
    import vaultmind.daemon as daemon_module

    config, memory, _ = running
    monkeypatch.setattr(daemon_module, "BULK_SLICE", 20)
    batches = Batches(memory, monkeypatch)
    second_slice = batches.hold(a_later_slice("Imported/"))
    bulk = 160
    outside = tmp_path / "outside" / "Imported"
    for i in range(bulk):
        write(outside, f"part-{i % 4}/bulk-{i:03d}.md", f"# Bulk {i}\n\nA moved note about copper {i}.\n")

    def indexed() -> int:
        return int(memory.index.scalar("SELECT count(*) FROM notes WHERE path LIKE 'Imported/%'"))

    os.rename(outside, config.vault / "Imported")
    write(config.vault, "with.md", "# With\n\nThe heron note saved as the folder came.\n")  # its batch
    assert until(lambda: bool(memory.search("heron", limit=5)["hits"]))
    assert batches.applied_before("with.md", "Imported/") < bulk, "the save in the folder's batch came in before the folder's notes"
    assert until(lambda: indexed() > 0), "the first slice"
    write(config.vault, "save.md", "# Save\n\nThe kingfisher note saved by hand.\n")
    second_slice.set()
    assert until(lambda: bool(memory.search("kingfisher", limit=5)["hits"]))
    assert batches.applied_before("save.md", "Imported/") < bulk, "the save came in before the whole folder"
    assert until(lambda: indexed() == bulk, seconds=READY_S)
    assert until(lambda: memory.catching_up == 0) and memory.status()["index"]["health"] == "ok"
    _wait_for_parity(config, memory, tmp_path)
    os.rename(config.vault / "Imported", outside)
    assert until(lambda: indexed() == 0)
    _wait_for_parity(config, memory, tmp_path)


def test_a_fault_in_a_batch_leaves_the_watcher_running_and_says_why(
    running: tuple[Config, Memory, Daemon], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Syncs that fail on something no sync expects (a vaultmind upgraded under the running
    daemon: its parse workers start with the new code, and their results no longer unpickle)
    used to end the daemon; now the watcher and queries go on, `status` says the index is behind
    and why, and a retry once the fault is gone (a restart, here the fault undone) repairs it."""
    config, memory, daemon = running
    fault = TypeError("Loaded.__init__() takes from 3 to 14 positional arguments but 15 were given")
    broken = [True]

    def failing(sync: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            if broken[0]:
                raise fault
            return sync(*args, **kwargs)

        return run

    monkeypatch.setattr(memory, "sync_paths", failing(memory.sync_paths))
    monkeypatch.setattr(memory, "sync", failing(memory.sync))
    write(config.vault, "first.md", "# First\n\nThe first save mentions copper.\n")
    assert until(lambda: daemon.failed_batches >= 1 and memory.behind is not None)
    index = memory.status()["index"]
    assert index["health"] == "behind"
    assert "an internal error (TypeError: Loaded.__init__()" in index["notice"]
    assert "if vaultmind was upgraded while this daemon runs, restart it" in index["notice"]
    assert [h["note_path"] for h in memory.search("mentions", limit=3)["hits"]] == ["start.md"], "queries answered"
    broken[0] = False
    assert until(lambda: bool(memory.search("copper", limit=3)["hits"])), "the retry took the note in"
    write(config.vault, "second.md", "# Second\n\nThe second save mentions harbor.\n")
    assert until(lambda: bool(memory.search("harbor", limit=3)["hits"])), "the watcher still runs"
    assert memory.status()["index"]["health"] == "ok"
    _wait_for_parity(config, memory, tmp_path)


@pytest.mark.slow
def test_a_daemon_that_ends_with_part_of_a_large_change_left_leaves_status_saying_the_index_lags(
    vault: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A daemon that ends (a crash, a kill, a stop) while it applies a large change in slices
    leaves an index that lags the vault: the status of the next process says so (it said "ok"),
    until a whole-vault sync applies the rest."""
    import vaultmind.daemon as daemon_module

    monkeypatch.setattr(daemon_module, "BULK_SLICE", 20)
    write(vault, "start.md", "# Start\n\nThe first note mentions atlas.\n")
    config = load_config(vault, embed_provider="none", debounce_ms=50, step_ms=20)
    bulk = 100
    outside = tmp_path / "outside" / "Imported"
    for i in range(bulk):
        write(outside, f"bulk-{i:03d}.md", f"# Bulk {i}\n\nA moved note about copper {i}.\n")
    with running_daemon(config) as (memory, runner):
        batches = Batches(memory, monkeypatch)
        second_slice = batches.hold(a_later_slice("Imported/"))
        os.rename(outside, config.vault / "Imported")
        assert batches.waiting.wait(READY_S), "the daemon applies the change in slices"
        assert memory.index.get_meta(BACKLOG_LEFT) is not None, "kept in the index while some is left"
        runner.stop_event.set()  # the daemon ends with the rest of the change not applied
        second_slice.set()
    with Memory.open(config) as memory:
        assert memory.index.scalar("SELECT count(*) FROM notes WHERE path LIKE 'Imported/%'") < bulk
        index = memory.status()["index"]
        assert index["health"] == "behind" and "ended before it applied all of a large change" in index["notice"]
        memory.sync()
        assert memory.index.scalar("SELECT count(*) FROM notes WHERE path LIKE 'Imported/%'") == bulk
        assert memory.status()["index"]["health"] == "ok"


def test_an_editor_lock_link_and_a_broken_attachment_link_are_not_reported_and_leave_no_trace(
    running: tuple[Config, Memory, Daemon], tmp_path: Path
) -> None:
    """Emacs marks a buffer with unsaved changes by a symlink to nothing, `.#Note.md`: a whole
    pass reported it (`broken_symlink`), as it did a broken `pic.png`, and the watcher, which
    hears nothing of hidden files, left the report standing once Emacs removed the lock — the
    index then differed from a cold rebuild. Only a link to nothing with a note's name the
    rules would index is reported."""
    config, memory, daemon = running
    vault = config.vault
    write(vault, "Note.md", "# Note\n\nThe note being edited mentions juniper.\n")
    (vault / ".#Note.md").symlink_to("user@host.4242:1700000000")
    (vault / "pic.png").symlink_to("nowhere.png")
    (vault / "Ghost.md").symlink_to("nowhere.md")
    assert until(lambda: bool(memory.search("juniper", limit=3)["hits"]))
    daemon.force_reconcile = True
    assert until(lambda: not daemon.force_reconcile)

    def reported() -> set[tuple[str, str]]:
        return {(p["path"], p["kind"]) for p in memory.status()["problems"]}

    assert reported() == {("Ghost.md", "broken_symlink")}
    (vault / ".#Note.md").unlink()  # the user saved
    (vault / "pic.png").unlink()
    (vault / "Ghost.md").unlink()
    assert until(lambda: not reported())
    _wait_for_parity(config, memory, tmp_path)
