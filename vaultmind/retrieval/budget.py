"""The evidence block's default size, in one place for the library, the API, MCP and the CLI
(a module of its own: the CLI reads it without loading the read path)."""

EVIDENCE_BUDGET = 1000  # tokens of walk's evidence block when none is asked for
