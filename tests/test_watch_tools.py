"""What sync tools, editors and git do to a vault, seen through the real daemon and watchfiles:
the index ends as a cold rebuild of the final vault has it, a tool's temporary files never
enter it, and a user's note is never dropped for a file the tool has not finished."""

from __future__ import annotations

from pathlib import Path

from vaultmind.config import Config
from vaultmind.daemon import Daemon
from vaultmind.memory import Memory

from .conftest import write
from .test_watch import _until, _wait_for_parity, running

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
    assert _until(lambda: "Plans.md" in _paths(memory))
    (vault / "Plans.md").unlink()
    (vault / "Plans.md").mkdir()
    write(vault, "Plans.md/inner.md", "# Inner\n\nThe inner note mentions harbor.\n")
    assert _until(lambda: "Plans.md/inner.md" in _paths(memory))
    _wait_for_parity(config, memory, tmp_path, timeout=5)
    assert "Plans.md" not in _paths(memory)
    assert not memory.search("lantern", limit=3)["hits"]
