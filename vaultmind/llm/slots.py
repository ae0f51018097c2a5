"""How many LLM calls a process makes for a vault at once: `[queue] llm_concurrency`, shared by
everything that asks — the queue's LLM-bound jobs (a worker takes a slot without waiting, or
claims other work) and the summarizer's seals (which wait for one). A local Ollama answers one
request at a time per model anyway; more in flight only queue up there, each against its own
timeout.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

_slots: dict[tuple[str, int], threading.BoundedSemaphore] = {}
_guard = threading.Lock()


def llm_slots(vault: Path, limit: int) -> threading.BoundedSemaphore:
    """The slots of `vault`'s LLM calls in this process (one set per vault and limit)."""
    key = (os.path.realpath(vault), limit)
    with _guard:
        return _slots.setdefault(key, threading.BoundedSemaphore(limit))
