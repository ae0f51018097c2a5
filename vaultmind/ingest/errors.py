"""Ingest errors live in the one hierarchy (`vaultmind.errors`); re-exported for adapters."""

from vaultmind.errors import IngestError

__all__ = ["IngestError"]
