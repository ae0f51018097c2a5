"""Embeddings from a local Ollama server (`/api/embed`), the upgrade over the static model.

Every request is bounded by `[ollama] timeout_s` (connect, send and each wait for the answer);
any failure becomes an `EmbedError` that says what to do about it. The dimension is learned
from the answers: a model replaced behind its name (`ollama pull` of another version) may
answer another one, which the sync then notices against the stored vectors (they are dropped
and every text embedded again).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from vaultmind.embed.base import Vectors, normalize_rows
from vaultmind.errors import EmbedError
from vaultmind.llm.ollama_client import open_client
from vaultmind.plural import counted

if TYPE_CHECKING:
    import ollama

    from vaultmind.config import Config

log = logging.getLogger(__name__)

_CONFIG_HINT = "check [ollama] host in .vaultmind/config.toml"


class OllamaEmbedder:
    """Embeds through `ollama.Client.embed`, in batches of `batch` texts."""

    def __init__(
        self,
        model: str,
        *,
        host: str = "http://127.0.0.1:11434",
        timeout_s: float = 30.0,
        batch: int = 256,
        dim: int | None = None,
    ) -> None:
        if not model:
            raise EmbedError("no Ollama embedding model configured", hint="set [ollama] embed_model")
        if timeout_s <= 0:
            raise EmbedError(f"[ollama] timeout_s must be positive, got {timeout_s}")
        self._model = model
        self._host = host
        self._timeout_s = timeout_s
        self._batch = max(1, batch)
        self._dim = dim
        self._client: ollama.Client | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, config: Config) -> OllamaEmbedder:
        return cls(
            config.embed_model or config.ollama_embed_model,
            host=config.ollama_host,
            timeout_s=config.ollama_timeout_s,
            batch=config.embed_batch,
        )

    @property
    def model(self) -> str:
        return self._model

    @property
    def host(self) -> str:
        return self._host

    @property
    def model_id(self) -> str:
        """`ollama:` and the model's name; its `latest` tag, which Ollama gives a name without
        one, left out: "nomic-embed-text" and "nomic-embed-text:latest" share their vectors."""
        return f"ollama:{self._bare}"

    @property
    def former_ids(self) -> tuple[str, ...]:
        """Ids this model's vectors were stored under before (the name with its `latest` tag)."""
        return (f"ollama:{self._bare}:latest",)

    @property
    def _bare(self) -> str:
        return self._model.removesuffix(":latest")

    @property
    def dim(self) -> int:
        """The model's dimension; asks Ollama once (embedding a short probe) if not known yet."""
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single string")
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        parts = [
            self._embed_batch(list(texts[i : i + self._batch])) for i in range(0, len(texts), self._batch)
        ]
        if len({part.shape[1] for part in parts}) > 1:
            raise EmbedError(f"{self._model!r} changed its dimension while it embedded {len(texts)} texts", hint="try again")
        return normalize_rows(np.concatenate(parts, axis=0))

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()  # type: ignore[no-untyped-call]
                self._client = None

    def _get_client(self) -> ollama.Client:
        with self._lock:
            if self._client is None:
                self._client = open_client(self._host, self._timeout_s)
            return self._client

    def _embed_batch(self, batch: list[str]) -> Vectors:
        import httpx
        import ollama

        where = f"Ollama at {self._host}"
        try:
            response = self._get_client().embed(model=self._model, input=batch)
        except ollama.ResponseError as exc:
            raise self._response_error(exc, where) from exc
        except ConnectionError as exc:  # the client's translation of httpx.ConnectError
            raise EmbedError(
                f"cannot connect to {where}",
                hint=f"start it with `ollama serve`, or {_CONFIG_HINT}",
            ) from exc
        except httpx.TimeoutException as exc:
            raise EmbedError(
                f"{where} did not answer within {self._timeout_s:g} s (a batch of {len(batch)} text(s))",
                hint="raise [ollama] timeout_s or lower [embeddings] batch in .vaultmind/config.toml",
            ) from exc
        except httpx.HTTPError as exc:
            raise EmbedError(f"request to {where} failed: {exc!r}", hint=_CONFIG_HINT) from exc
        except (ValueError, TypeError) as exc:  # invalid JSON or a body of the wrong shape
            raise EmbedError(
                f"{where} sent a malformed embed response: {_short(exc)}",
                hint=f"is {self._host} an Ollama server? {_CONFIG_HINT}",
            ) from exc
        return self._to_array(response.embeddings, len(batch), where)

    def _response_error(self, exc: ollama.ResponseError, where: str) -> EmbedError:
        message = _clip(str(exc.error))
        if exc.status_code == 404 or "not found" in message.lower():
            return EmbedError(
                f"{where} has no model {self._model!r}: {message}",
                hint=f"run `ollama pull {self._model}`, or set [ollama] embed_model in .vaultmind/config.toml",
            )
        if exc.status_code == 400 and "does not support" in message.lower():
            return EmbedError(
                f"{self._model!r} is not an embedding model: {message}",
                hint="set [ollama] embed_model to an embedding model such as nomic-embed-text",
            )
        if exc.status_code >= 500:
            return EmbedError(
                f"{where} failed with HTTP {exc.status_code}: {message}",
                hint="the error is on the Ollama side: see its log (the `ollama serve` output)",
            )
        return EmbedError(f"{where} answered HTTP {exc.status_code}: {message}", hint=_CONFIG_HINT)

    def _to_array(self, embeddings: object, expected: int, where: str) -> Vectors:
        try:
            array = np.asarray(embeddings, dtype=np.float32)
        except (ValueError, TypeError) as exc:
            raise EmbedError(f"{where} sent embeddings that are not numbers: {_short(exc)}") from exc
        if array.ndim != 2 or array.shape[0] != expected or array.shape[1] == 0:
            raise EmbedError(
                f"{where} sent {_shape_in_words(array)} for {counted(expected, 'text')} (model {self._model!r})",
                hint=f"one vector is wanted per text: is {self._host} an Ollama server, and {self._model!r} an "
                f"embedding model (`ollama show {self._model}`)? {_CONFIG_HINT}",
            )
        if not np.isfinite(array).all():
            raise EmbedError(f"{where} sent non-finite embedding values for model {self._model!r}")
        dim = int(array.shape[1])
        if self._dim is not None and dim != self._dim:
            log.warning("%s changed the dimension of %r from %d to %d", where, self._model, self._dim, dim)
        self._dim = dim
        return array


def _shape_in_words(array: Vectors) -> str:
    """What an embed answer of the wrong shape held ("0 embeddings", "2 embeddings of width
    0"): the client lets through only a list of lists of numbers, maybe empty."""
    rows = int(array.shape[0]) if array.ndim >= 1 else 0
    empty = array.ndim == 2 and rows > 0 and array.shape[1] == 0
    return counted(rows, "embedding") + (" of width 0" if empty else "")


def _clip(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short(exc: BaseException) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON ({exc.msg})"
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]
