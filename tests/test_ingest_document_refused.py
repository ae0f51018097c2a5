"""`ingest_document` refuses, with the reason, a document this vault would never find: one whose
note is over the vault's cap on a note it indexes, and one written into a folder the vault ignores."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultmind.config import load_config
from vaultmind.errors import NotFound, UsageError
from vaultmind.memory import Memory

MINUTES = "The atlas launch moved to March, and Lina wrote the budget.\n\n"


def test_a_document_over_the_vaults_cap_on_a_note_is_refused_and_not_written(vault: Path) -> None:
    with Memory.open(load_config(vault, embed_provider="none", max_file_bytes=4096)) as memory:
        with pytest.raises(UsageError, match=r"over this vault's cap of .* MB a note \(\[vault\] max_file_mb\)"):
            memory.query("ingest_document", {"title": "Minutes", "body": MINUTES * 100, "source_id": "minutes"})
        assert not (vault / "sources" / "document" / "agent").exists(), "nothing was written"
        under = memory.query("ingest_document", {"title": "Minutes", "body": MINUTES * 10, "source_id": "minutes"})
        assert under["ingested"]["leaves"] >= 1


def test_a_note_written_where_the_vault_ignores_says_so_never_that_the_source_does_not_exist(vault: Path) -> None:
    config = load_config(vault, embed_provider="none", ignore=("sources/document/agent/**",))
    with Memory.open(config) as memory:
        with pytest.raises(UsageError, match=r"sources/document/agent/minutes\.md was written but is not indexed: \[vault\] ignore") as caught:
            memory.query("ingest_document", {"title": "Minutes", "body": MINUTES, "source_id": "minutes"})
        assert not isinstance(caught.value, NotFound)
        assert (vault / "sources" / "document" / "agent" / "minutes.md").is_file(), "the note written is kept"

