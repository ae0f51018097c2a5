"""`status`: the counts it reads from the index are kept per index generation, and never
outlive a change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vaultmind.config import load_config
from vaultmind.memory import Memory

from .conftest import write


def test_a_status_asked_again_reads_the_index_only_after_a_change(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A status bar polling a daemon every second: the second status of an unchanged index
    answers from the first's counts (no read of every leaf); a save, a note gone or the daemon
    leaving its start-up is counted by the very next status."""
    write(vault, "a.md", "# Alpha\n\nThe heron nests by the river.\n")
    with Memory.open(load_config(vault, embed_provider="static")) as memory:
        memory.sync()
        reads: list[str] = []
        small_pool_read = memory.index.small_pool_read

        def counted(read: Any, limit: str) -> Any:
            reads.append(limit)
            return small_pool_read(read, limit)

        monkeypatch.setattr(memory.index, "small_pool_read", counted)
        first = memory.status()
        again = memory.status()
        assert len(reads) == 1, "the second status read the index again"
        assert again == first
        assert first["notes"]["total"] == 1 and first["embeddings"]["missing"] == 0

        write(vault, "b.md", "# Beta\n\nA kingfisher dives.\n\n## Later\n\nIt flies off.\n")
        memory.sync_paths(["b.md"])
        after_save = memory.status()
        assert len(reads) == 2
        assert after_save["notes"]["total"] == 2 and after_save["leaves"] > first["leaves"]
        assert after_save["embeddings"]["embedded"] == after_save["leaves"]

        (vault / "a.md").unlink()
        memory.sync_paths(["a.md"])
        assert memory.status()["notes"]["total"] == 1

        memory.loading = True  # a daemon's start-up leaves out the counts that hash every leaf
        assert memory.status()["embeddings"]["missing"] is None
        assert len(reads) == 4
        memory.loading = False  # ready again, nothing changed: the counts of this generation
        assert memory.status()["embeddings"]["missing"] == 0
        assert len(reads) == 4
