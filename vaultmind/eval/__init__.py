"""Retrieval evaluations on real benchmark data, run by path (`vaultmind eval …`).

`metrics` scores ranked items against gold turns and sessions; `gold` reads and checks a
LoCoMo file's samples, questions and gold evidence before any is ingested; `locomo` runs the
benchmark end to end through the real ingest, index and read path (docs/eval.md).
"""

MODES: tuple[str, ...] = ("walk", "search", "bm25-baseline")
"""The retrievals `vaultmind eval` can measure."""
DEFAULT_MODE = "walk"
