"""The built-in embedders, registered by name: `static` (offline default) and `ollama`.

Imported by `create_embedder`; registering only stores factories, nothing is loaded here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vaultmind.embed.base import Embedder, register

if TYPE_CHECKING:
    from vaultmind.config import Config


def _static(config: Config) -> Embedder:
    from vaultmind.embed.static import StaticEmbedder

    return StaticEmbedder.from_config(config)


def _ollama(config: Config) -> Embedder:
    from vaultmind.embed.ollama import OllamaEmbedder

    return OllamaEmbedder.from_config(config)


register("static", _static)
register("ollama", _ollama)
