"""Ingest adapters: exports in, canonical source notes (docs/vault-format.md) out."""
