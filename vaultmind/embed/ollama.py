"""Embeddings from a local Ollama server (`/api/embed`), the upgrade over the static model.

Every request is bounded by `[ollama] timeout_s` (connect, send and each wait for the answer);
any failure becomes an `EmbedError` that says what to do about it. The dimension is learned
from the answers: a model replaced behind its name (`ollama pull` of another version) may
answer another one, which the sync then notices against the stored vectors (they are dropped
and every text embedded again).

Ollama reads a text up to the model's context and drops the rest: a long email (one leaf)
would get the vector of its beginning. So a text is sent whole only when it fits
`window_tokens` (the context less a margin for the model's own tokens, counted by the
conservative `count_tokens`); a longer one is sent in windows cut between words, up to
`MAX_WINDOWS`, and its vector is the normalised mean of theirs, each weighing its tokens, as
the static model does. The context is `[ollama] embed_context` when set, else learned once
from `/api/show`: the model's `<arch>.context_length`, or its Modelfile's `num_ctx` when
smaller (without one, Ollama's default `SERVER_CONTEXT` caps it), `DEFAULT_CONTEXT` when Ollama
says neither. The sync keeps the window the stored vectors were made with
(`sync_embed.drop_other_windows`).
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from vaultmind.embed.base import Vectors, normalize_rows
from vaultmind.errors import EmbedError
from vaultmind.llm.ollama_client import open_client
from vaultmind.markdown.spans import window_spans
from vaultmind.markdown.tokens import MAX_CHARS_PER_TOKEN, count_tokens
from vaultmind.plural import counted

if TYPE_CHECKING:
    import ollama

    from vaultmind.config import Config

log = logging.getLogger(__name__)
_Answer = TypeVar("_Answer")

_CONFIG_HINT = "check [ollama] host in .vaultmind/config.toml"
DEFAULT_CONTEXT = 512  # tokens read when Ollama names no context: the smallest of the common embedding models'
SERVER_CONTEXT = 2048  # Ollama's default num_ctx (older servers'; newer ones read more), for a model without one
SPECIAL_TOKENS = 16  # of the context, left to the tokens the model adds itself ([CLS], [SEP], a prefix)
MAX_WINDOWS = 32  # windows read of a long text (each costs the model a pass); what follows is not read
_NUM_CTX_RE = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.MULTILINE)


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
        context: int | None = None,
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
        self._context = context or None  # tokens the model reads (None: learned from Ollama)
        self._client: ollama.Client | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, config: Config) -> OllamaEmbedder:
        return cls(
            config.embed_model or config.ollama_embed_model,
            host=config.ollama_host,
            timeout_s=config.ollama_timeout_s,
            batch=config.embed_batch,
            context=config.ollama_embed_context,
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

    @property
    def context(self) -> int:
        """Tokens the model reads of one text: `[ollama] embed_context`, else learned from
        Ollama once (`/api/show`; an unreachable Ollama raises `EmbedError`, and is asked again
        the next time)."""
        if self._context is None:
            self._context = self._learn_context()
        return self._context

    @property
    def window_tokens(self) -> int:
        """The most tokens (`count_tokens`) of a text sent whole; a longer one goes in windows."""
        return max(1, self.context - SPECIAL_TOKENS)

    def embed(self, texts: Sequence[str]) -> Vectors:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single string")
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        pieces, owners, weights = self._windows(texts)
        parts = [
            self._embed_batch(pieces[i : i + self._batch]) for i in range(0, len(pieces), self._batch)
        ]
        if len({part.shape[1] for part in parts}) > 1:
            raise EmbedError(f"{self._model!r} changed its dimension while it embedded {len(texts)} texts", hint="try again")
        vectors = np.concatenate(parts, axis=0)
        if len(pieces) == len(texts):  # every text whole: its vector as the model gave it
            return normalize_rows(vectors)
        out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
        np.add.at(out, owners, normalize_rows(vectors) * weights[:, None])
        return normalize_rows(out)

    def _windows(self, texts: Sequence[str]) -> tuple[list[str], list[int], Vectors]:
        """What is sent for `texts`: a text that fits `window_tokens` whole, a longer one in
        windows (`text_windows`); with the text each piece belongs to and its weight (its
        tokens; a whole text's weight does not matter)."""
        window = self.window_tokens
        pieces: list[str] = []
        owners: list[int] = []
        weights: list[float] = []
        for row, text in enumerate(texts):
            windows = text_windows(text, window)
            pieces += windows
            owners += [row] * len(windows)
            weights += [float(count_tokens(piece)) for piece in windows] if len(windows) > 1 else [1.0]
        return pieces, owners, np.asarray(weights, dtype=np.float32)

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
        where = f"Ollama at {self._host}"
        doing = f"a batch of {len(batch)} text(s)"
        response = self._asking(doing, lambda client: client.embed(model=self._model, input=batch))
        return self._to_array(response.embeddings, len(batch), where)

    def _learn_context(self) -> int:
        """The context Ollama reads of a text for this model (see the module's docstring)."""
        try:
            shown = self._asking("a request for the model's details", lambda client: client.show(self._model))
        except EmbedError as exc:
            if not _says_nothing_of_the_model(exc.__cause__):
                raise
            log.warning("%s; %r is read in windows of %d tokens", exc, self._model, DEFAULT_CONTEXT)
            return DEFAULT_CONTEXT
        return context_of(getattr(shown, "modelinfo", None), getattr(shown, "parameters", None))

    def _asking(self, doing: str, request: Callable[[ollama.Client], _Answer]) -> _Answer:
        """`request`'s answer from the client; any failure an `EmbedError` saying what to do."""
        import httpx
        import ollama

        where = f"Ollama at {self._host}"
        try:
            return request(self._get_client())
        except ollama.ResponseError as exc:
            raise self._response_error(exc, where) from exc
        except ConnectionError as exc:  # the client's translation of httpx.ConnectError
            raise EmbedError(
                f"cannot connect to {where}",
                hint=f"start it with `ollama serve`, or {_CONFIG_HINT}",
            ) from exc
        except httpx.TimeoutException as exc:
            raise EmbedError(
                f"{where} did not answer within {self._timeout_s:g} s ({doing})",
                hint="raise [ollama] timeout_s or lower [embeddings] batch in .vaultmind/config.toml",
            ) from exc
        except httpx.HTTPError as exc:
            raise EmbedError(f"request to {where} failed: {exc!r}", hint=_CONFIG_HINT) from exc
        except (ValueError, TypeError) as exc:  # invalid JSON or a body of the wrong shape
            raise EmbedError(
                f"{where} sent a malformed answer to {doing}: {_short(exc)}",
                hint=f"is {self._host} an Ollama server? {_CONFIG_HINT}",
            ) from exc

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


def text_windows(text: str, window: int) -> list[str]:
    """`text` whole when it fits `window` tokens (`count_tokens`), else the windows it is read
    in: spans of at most `window` tokens cut at whitespace (a longer word is cut), up to
    `MAX_WINDOWS` of them (the rest is not read)."""
    most = MAX_CHARS_PER_TOKEN * (window + 1)  # a text longer than this holds more than `window` tokens
    if len(text) <= most and count_tokens(text) <= window:
        return [text]
    read = text[: most * MAX_WINDOWS]  # (a multi-megabyte text is not split whole)
    return [read[start:end] for start, end in window_spans(read, window, MAX_WINDOWS)] or [text[:most]]


def context_of(model_info: Mapping[str, Any] | None, parameters: str | None) -> int:
    """The tokens Ollama reads of a text, from `/api/show`: the model's `<arch>.context_length`,
    or its Modelfile's `num_ctx` when smaller; a model without `num_ctx` is read up to Ollama's
    default (`SERVER_CONTEXT`); `DEFAULT_CONTEXT` when Ollama names no context length."""
    lengths = [
        int(value)
        for key, value in (model_info or {}).items()
        if key.endswith(".context_length") and isinstance(value, int | float) and value > 0
    ]
    found = _NUM_CTX_RE.search(parameters or "")
    num_ctx = int(found.group(1)) if found else SERVER_CONTEXT
    return max(1, min(min(lengths, default=DEFAULT_CONTEXT), num_ctx))


def _says_nothing_of_the_model(cause: BaseException | None) -> bool:
    """Whether `/api/show` failed in a way that leaves the embeddings to the default context:
    an answer the client cannot read (a server without `model_info`, older than /api/embed's),
    or a server without the route (a proxy serving /api/embed alone: 404 naming no model, 405,
    501). A model Ollama does not have, a server down or failing (5xx) is an error, as it is
    to the embed call."""
    import ollama

    if isinstance(cause, ValueError | TypeError):
        return True
    if not isinstance(cause, ollama.ResponseError):
        return False
    return cause.status_code in (405, 501) or (cause.status_code == 404 and "model" not in str(cause.error).lower())


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
