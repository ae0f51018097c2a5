"""A serving process's warm-up: what questions and saves need, loaded before the first of them.

Split from `memory.py` (`Memory.warm` calls `warm`): the order of the loads is what keeps the
daemon's start-up peak down, and the read path's lazy parts are loaded here so the first question
does not pay for them.
"""

from __future__ import annotations

import gc
import logging
from typing import TYPE_CHECKING, Protocol

from vaultmind.index.allocator import release_freed_memory
from vaultmind.index.tables import has_table
from vaultmind.retrieval.dense import question_vector
from vaultmind.retrieval.view import MemoryView

if TYPE_CHECKING:
    from vaultmind.index.serving_pool import ServingPool

log = logging.getLogger(__name__)


class Warming(MemoryView, Protocol):
    """An open memory as its warm-up sees it (`memory.Memory` is one): what the read path reads,
    the serving pool it evicts after loading, and the reload of the views that follow the index."""

    serving_pool: ServingPool

    def prepare_reads(self) -> None:
        """Bring the entity graph up to date with what was committed (`Memory.prepare_reads`)."""
        ...


def warm(memory: Warming) -> None:
    """Load what queries and saves need (search structures, entity graph, registry) now
    rather than on the first query or save. Questions need no NER model (`entities.query`).
    A serving process, past its first sync, maps a static model's table from its file
    (`StaticEmbedder.keep_as_stored`: not held between texts; it embeds questions and saves)."""
    from vaultmind.embed.static import StaticEmbedder
    from vaultmind.retrieval.people import query_entities

    if memory.serving_pool.serving and isinstance(memory.embedder, StaticEmbedder):
        memory.embedder.keep_as_stored()
    if memory.vectors is not None and memory.embedder is not None:
        # The vectors first: before the model, so their load's temporaries and the model's
        # tables (a static model's: ~60 MB) are never held at once (at 50k notes the daemon's
        # start-up peaked while the vectors were clustered, the model loaded); and before the
        # resident leaves, which are held for good once loaded, so they do not stand under the
        # vectors' load and filing (at 50k notes after an upgrade's rebuild the daemon's
        # warm-up peaked at 568 MiB filing the vectors after the leaves; in process on that
        # index, the warm-up's peak 329–339 -> 313–315 MiB with the same memory after).
        memory.vectors.prepare()
        vector, notice = question_vector(memory, "warm up")  # a failure is remembered for the questions
        if vector is not None:
            memory.vectors.search(vector, 1)
        elif notice:  # Ollama down: questions are answered without dense search
            log.warning("the embedding model did not answer the warm-up: %s", notice)
    _ = memory.leaves.document_frequency("")
    _load_read_path()
    if has_table(memory.index, "occurrences"):
        memory.prepare_reads()
        query_entities(memory, "Warm Up")  # the registry and the known entities
    memory.serving_pool.evict()  # the blocks loading read are not needed again
    release_freed_memory()
    if memory.serving_pool.serving:
        _freeze_loaded()


def _load_read_path() -> None:
    """Load the read path's lazy parts: its modules (some forty, their patterns compiled as
    they are imported) and the English word list spelling checks against. Without this the
    first question after a warm-up paid for them: 1-2 s on a loaded machine, against tens of
    ms for the next."""
    from vaultmind.retrieval import dispatch, walk  # noqa: F401  (imported for their loading)
    from vaultmind.retrieval.spelling import english_words

    english_words()


def _freeze_loaded() -> None:
    """Move every object alive now (what warming loaded: structures, caches, models) out of the
    collector's reach for the process's life (`gc.freeze`): its collections then scan only what
    requests make. Objects freed later by reference counting still go; only cycles among
    them would stay."""
    gc.collect()
    gc.freeze()
