"""A question's vector, or none when the embedder cannot give one (Ollama down, its model
missing, a timeout): the read path then ranks by the other signals — words, names, links,
dates — and the answer says so in its `notice`, never an error."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from vaultmind.embed.base import embed_query
from vaultmind.errors import EmbedError

if TYPE_CHECKING:
    from vaultmind.embed.base import Vectors
    from vaultmind.retrieval.view import MemoryView

log = logging.getLogger(__name__)

LEXICAL_ONLY = "no dense search (the embedding model did not answer: {why}); these hits come from words, names, links and dates only"


def question_vector(memory: MemoryView, text: str) -> tuple[Vectors | None, str | None]:
    """`(vector, None)` of `text`; `(None, None)` without an embedder or vectors; `(None,
    notice)` when the embedder fails, the notice saying why dense search is left out."""
    if memory.embedder is None or memory.vectors is None:
        return None, None
    try:
        return embed_query(memory.embedder, text), None
    except EmbedError as exc:
        log.info("question answered without dense search: %s", exc)
        return None, LEXICAL_ONLY.format(why=str(exc))


def noticed(notice: str | None) -> dict[str, Any]:
    """The answer's `notice` field when there is one (the keyword arguments of `envelope`)."""
    return {"notice": notice} if notice else {}
