"""The vault's scan: symlinked folders, ignore rules, names and paths it cannot see."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.memory import Memory

from .conftest import cold_rows, dump_index, write


def _paths(memory: Memory) -> list[str]:
    return sorted(row[0] for row in memory.index.query("SELECT path FROM notes"))


def _problems(memory: Memory) -> set[tuple[str, str]]:
    return {(p["path"], p["kind"]) for p in memory.status()["problems"]}


@pytest.mark.parametrize("link", ["Archive", "zArchive"])  # the link's name before the real folder's, and after
def test_a_symlinked_folder_inside_the_vault_leaves_its_notes_under_their_own_path(tmp_path: Path, link: str) -> None:
    """The real folder wins whatever the order of the names: the link is reported and not
    followed, a save seen by the watcher and the next full pass agree, and the index is what a
    cold rebuild makes of the vault."""
    vault = tmp_path / "vault"
    write(vault, "notes/plan.md", "# Plan\n\nThe launch is in May.\n")
    os.symlink(vault / "notes", vault / link)
    config = load_config(vault, embed_provider="none")
    with Memory.open(config) as memory:
        memory.sync()
        assert _paths(memory) == ["notes/plan.md"]
        assert (link, "symlink_loop") in _problems(memory)
        assert not any(path.startswith("notes") for path, _ in _problems(memory))
        write(vault, "notes/plan.md", "# Plan\n\nThe launch is in June.\n")
        memory.sync_paths(["notes/plan.md"])  # what the watcher reports for the edit
        assert _paths(memory) == ["notes/plan.md"]
        memory.sync_paths(["notes"])  # a folder's event: its subtree's scan
        memory.sync()
        assert _paths(memory) == ["notes/plan.md"]
        assert dump_index(memory) == cold_rows(config, tmp_path)


def test_a_symlink_does_not_open_a_folder_the_ignore_rules_leave_out(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write(vault, "Private/secret.md", "# Secret\n\nThe pin is 1234.\n")
    write(vault, "open.md", "# Open\n\nNothing to hide.\n")
    os.symlink(vault / "Private", vault / "Linked")
    with Memory.open(load_config(vault, embed_provider="none", ignore=("Private/**",))) as memory:
        memory.sync()
        assert _paths(memory) == ["open.md"]
        assert ("Linked", "symlink_loop") in _problems(memory)
