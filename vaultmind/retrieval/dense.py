"""A question's vector, or none when the embedder cannot give one (Ollama down, its model
missing, a timeout): the read path then ranks by the other signals — words, names, links,
dates — and the answer says so in its `notice`, never an error.

A failure is remembered for `RETRY_AFTER_S` seconds per provider (its host and model): the
questions asked meanwhile go straight to that answer instead of each waiting up to
`[ollama] timeout_s` for an Ollama that timed out a moment ago. The first question after
that asks again (the others still skip it while it waits), and an answer clears the failure.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from vaultmind.embed.base import embed_query
from vaultmind.errors import EmbedError

if TYPE_CHECKING:
    from vaultmind.embed.base import Embedder, Vectors
    from vaultmind.index.resident_vectors import ResidentVectors
    from vaultmind.retrieval.view import MemoryView

log = logging.getLogger(__name__)

LEXICAL_ONLY = "no dense search (the embedding model did not answer: {why}); these hits come from words, names, links and dates only"
RETRY_AFTER_S = 30.0  # how long a failed embedder is not asked again for a question


class Outages:
    """The embedders that failed in the last `retry_after_s` seconds, by provider, and why:
    process-wide (two vaults asking one Ollama share its outage), thread-safe (the daemon
    answers questions on several threads). `clock` is monotonic seconds."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, retry_after_s: float = RETRY_AFTER_S) -> None:
        self.clock = clock
        self.retry_after_s = retry_after_s
        self._lock = threading.Lock()
        self._failed: dict[tuple[str, str], tuple[float, str]] = {}

    def recent(self, provider: tuple[str, str]) -> str | None:
        """Why `provider` failed, if it did less than `retry_after_s` ago; None when it is to
        be asked (never failed, or long enough ago: the caller then retries it, and until that
        answers or fails the other callers are told the failure still holds)."""
        with self._lock:
            failed = self._failed.get(provider)
            if failed is None:
                return None
            now = self.clock()
            if now - failed[0] < self.retry_after_s:
                return failed[1]
            self._failed[provider] = (now, failed[1])  # this caller retries; the rest wait for it
            return None

    def failed(self, provider: tuple[str, str], why: str) -> None:
        with self._lock:
            self._failed[provider] = (self.clock(), why)

    def answered(self, provider: tuple[str, str]) -> None:
        with self._lock:
            self._failed.pop(provider, None)


OUTAGES = Outages()


def provider_of(embedder: Embedder, vectors: ResidentVectors) -> tuple[str, str]:
    """Where a question's vector comes from: the embedder's host (none for a model run here)
    and the model (the id its vectors are held under: read without asking the embedder)."""
    return str(getattr(embedder, "host", "")), vectors.model_id


def question_vector(memory: MemoryView, text: str) -> tuple[Vectors | None, str | None]:
    """`(vector, None)` of `text`; `(None, None)` without an embedder or vectors; `(None,
    notice)` when the embedder fails or failed a moment ago (`Outages`), the notice saying why
    dense search is left out."""
    if memory.embedder is None or memory.vectors is None:
        return None, None
    provider = provider_of(memory.embedder, memory.vectors)
    why = OUTAGES.recent(provider)
    if why is not None:
        return None, LEXICAL_ONLY.format(why=why)
    try:
        vector = embed_query(memory.embedder, text)
    except EmbedError as exc:
        log.info("question answered without dense search: %s", exc)
        OUTAGES.failed(provider, str(exc))
        return None, LEXICAL_ONLY.format(why=str(exc))
    OUTAGES.answered(provider)
    return vector, None


def noticed(notice: str | None) -> dict[str, Any]:
    """The answer's `notice` field when there is one (the keyword arguments of `envelope`)."""
    return {"notice": notice} if notice else {}
