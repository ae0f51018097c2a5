"""The Embedder protocol and the registry that resolves a configured name to one.

Real embedders and test fakes register through the same `register` call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from vaultmind.errors import ConfigError

if TYPE_CHECKING:
    from vaultmind.config import Config

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    @property
    def model_id(self) -> str:
        """Stable identity of the model; embeddings are cached by (content hash, model_id)."""
        ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Return an array of shape (len(texts), dim), each row unit length (or all zero)."""
        ...


EmbedderFactory = Callable[["Config"], Embedder]

_REGISTRY: dict[str, EmbedderFactory] = {}


def register(name: str, factory: EmbedderFactory) -> None:
    _REGISTRY[name] = factory


def check_provider(name: str) -> EmbedderFactory | None:
    """The factory of provider `name` (None for "none"); a ConfigError naming the known ones
    for any other name. Nothing is loaded."""
    from vaultmind.embed import providers  # noqa: F401  (registers the built-in providers)

    if name == "none":
        return None
    factory = _REGISTRY.get(name)
    if factory is None:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise ConfigError(
            f"unknown embeddings provider {name!r}",
            hint=f"set [embeddings] provider to one of: {known}, none",
        )
    return factory


def create_embedder(config: Config) -> Embedder | None:
    """The embedder named by `config.embed_provider`, or None when embeddings are off."""
    factory = check_provider(config.embed_provider)
    return None if factory is None else factory(config)


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
