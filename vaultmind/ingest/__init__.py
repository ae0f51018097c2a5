"""Ingest adapters: exports in, canonical source notes (docs/vault-format.md) out."""

KINDS: tuple[str, ...] = ("chat", "agent", "email", "document")
"""What `vaultmind ingest KIND …` reads."""
FORMATS: tuple[str, ...] = (
    "auto", "slack", "whatsapp", "telegram", "signal", "instagram", "messenger", "chatgpt", "generic", "locomo",
)  # fmt: skip
"""Chat export formats (`auto` detects them)."""
