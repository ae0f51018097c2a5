"""What the read path reads of an open memory.

`memory.Memory` opens the index, loads the resident leaves and vectors and owns the syncer; the
modes here only read what it holds (but for `ingest_document`, their one write, which it does).
They take this view of it, so the read path depends on the structures it reads and not on the
object that opens, syncs and serves them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from vaultmind.config import Config
    from vaultmind.embed.base import Embedder
    from vaultmind.index.resident import ResidentLeaves
    from vaultmind.index.resident_vectors import ResidentVectors
    from vaultmind.index.store import Index
    from vaultmind.retrieval.entity_graph import EntityGraph


class MemoryView(Protocol):
    """An open memory as the read path sees it (`memory.Memory` is one)."""

    index: Index
    leaves: ResidentLeaves  # every leaf's text, terms and columns, resident
    vectors: ResidentVectors | None  # None without an embedder
    embedder: Embedder | None
    vault_name: str  # the vault's folder name, as `obsidian://` links name it
    config: Config  # the vault's settings (its path, for the commands a hit names)

    def entity_graph(self) -> EntityGraph:
        """The entity graph a question uses (see `Memory.entity_graph`)."""
        ...

    def ingest_document(self, title: str, body: str, source_id: str, *, source_ref: str | None = None) -> dict[str, Any]:
        """`ingest_document`, the modes' one write (see `Memory.ingest_document`)."""
        ...
