"""The Embedder protocol and what every embedder shares (a question's vector, unit rows).

The registry that resolves a configured name to an embedder is `embed/providers.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of one dimension (a model replaced behind
    its name may answer another: `sync_embed.DimensionChanged`)."""

    @property
    def model_id(self) -> str:
        """Stable identity of the model; embeddings are cached by (content hash, model_id)."""
        ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Return an array of shape (len(texts), dim), each row unit length (or all zero)."""
        ...


def averages_words(embedder: Embedder | None) -> bool:
    """Whether the model's vector of a text is the mean of its tokens' rows (a static model,
    `averages_tokens`), not read from the words in their context (e5, Ollama's models): of a
    long question it is then a blurred mean of many words, which walk weighs less."""
    return bool(getattr(embedder, "averages_tokens", False))


def embed_query(embedder: Embedder, text: str) -> Vectors:
    """A question's vector: `embedder.embed_query(text)` when the model is asymmetric (queries
    and passages embedded differently, as e5), else the same embedding as stored text."""
    as_query = getattr(embedder, "embed_query", None)
    if callable(as_query):
        out: Vectors = np.asarray(as_query(text), dtype=np.float32)
        return out
    row: Vectors = embedder.embed([text])[0]
    return row


def normalize_rows(vectors: Vectors) -> Vectors:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: Vectors = (vectors / norms).astype(np.float32, copy=False)
    return out
