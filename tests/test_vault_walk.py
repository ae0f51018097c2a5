"""The vault's own folders walked once, with the rules each reader asks for (`walk_folders`)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import write
from vaultmind.ingest.moved import moved_notes
from vaultmind.vault.scan import walk_folders

NOTE = "---\nvaultmind: source\nkind: chat\nsource_id: whatsapp:family\n---\n\nHello.\n"


def test_the_moved_notes_walk_passes_over_the_kinds_folder_hidden_folders_and_links(vault: Path) -> None:
    write(vault, "sources/chat/whatsapp/family.md", NOTE)  # in its kind's folder: not moved
    write(vault, "Trips/family.md", NOTE)  # dragged into a folder of yours
    write(vault, "Trips/plan.md", "# Plan\n")
    write(vault, ".trash/family.md", NOTE)  # Obsidian's trash: hidden
    os.symlink(vault / "Trips" / "family.md", vault / "Trips" / "link.md")  # no other copy of its messages
    os.mkfifo(vault / "Trips" / "pipe.md")  # never opened (a read would wait for a writer)
    os.symlink(vault / "Trips", vault / "Linked")  # a symlinked folder: not followed

    walked = walk_folders(vault, hidden=False, regular=True, skip=vault / "sources" / "chat")
    assert [(folder.relative_to(vault).as_posix(), names) for folder, names in walked] == [
        (".", []),
        ("Trips", ["family.md", "plan.md"]),
        ("sources", []),
    ]
    # without `regular`, a link to a file or a pipe is a file too; without `skip`, every folder is entered
    everything = {folder.relative_to(vault).as_posix(): names for folder, names in walk_folders(vault)}
    assert everything["Trips"] == ["family.md", "link.md", "pipe.md", "plan.md"]
    assert everything[".trash"] == ["family.md"] and everything["sources/chat/whatsapp"] == ["family.md"]
    assert "Linked" not in everything
    assert moved_notes(vault, "chat") == [("Trips/family.md", "whatsapp:family")]
