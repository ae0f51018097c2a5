"""The offline default embedder: a static token table, averaged per text.

A static model is one vector per WordPiece token (here distilled from all-MiniLM-L6-v2, see
`models/minilm-l6-static-256/README.md`). A text's embedding is the mean of its tokens' rows,
L2-normalised. A text longer than the model's `max_tokens` (a long email is one leaf) is read in
windows of that many tokens, up to `MAX_WINDOWS`: its embedding is the normalised mean of its
windows' embeddings, each weighing as many tokens as it holds, so its last paragraph counts as
much as its first and a short last window (a word past a full one) no more than its words. No
network, no torch: numpy and the `tokenizers` package only, and about a thousand sentences in a
few hundredths of a second.

The model folder holds `embeddings.npy` (vocab x dim), `tokenizer.json` and `model.json`
(dim, sizes and the sha256 of the table, written when the model was built, so that the
model id is known without hashing the table on every start).
"""

from __future__ import annotations

import json
import mmap
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from vaultmind.embed.base import Vectors, normalize_rows
from vaultmind.errors import ConfigError, EmbedError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from vaultmind.config import Config

MODELS_DIR = Path(__file__).resolve().parent / "models"
DEFAULT_MODEL = "minilm-l6-static-256"
DEFAULT_MAX_TOKENS = 512
MAX_WINDOWS = 32  # windows of `max_tokens` tokens read of a long text; what follows is not read
# Characters kept before tokenizing: far more than the windows' tokens ever need, so a
# multi-megabyte note is not tokenized in full only to be truncated afterwards.
_CHARS_PER_TOKEN_CAP = 16

_HINT = "reinstall vaultmind, or set [embeddings] model to a complete static model folder"


@dataclass(frozen=True, slots=True)
class StaticModelInfo:
    """What `model.json` says about a static model; read without touching the table."""

    name: str
    dim: int
    vocab_size: int
    embeddings_bytes: int
    embeddings_sha256: str
    unk_token_id: int | None
    max_tokens: int

    @property
    def model_id(self) -> str:
        return f"static:{self.name}@{self.embeddings_sha256[:12]}"


def resolve_model_dir(model: str) -> Path:
    """A bundled model name (e.g. `minilm-l6-static-256`) or a path to a model folder."""
    if not model:
        return MODELS_DIR / DEFAULT_MODEL
    bundled = MODELS_DIR / model
    if "/" not in model and "\\" not in model and bundled.is_dir():
        return bundled
    return Path(model).expanduser()


def read_model_info(model_dir: Path) -> StaticModelInfo:
    path = model_dir / "model.json"
    try:
        raw: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise EmbedError(
            "static embedding model is missing (no model.json)", path=model_dir, hint=_HINT
        ) from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EmbedError(f"cannot read static model description: {exc}", path=path, hint=_HINT) from exc
    try:
        unk = raw.get("unk_token_id")
        info = StaticModelInfo(
            name=str(raw["name"]),
            dim=int(raw["dim"]),
            vocab_size=int(raw["vocab_size"]),
            embeddings_bytes=int(raw["embeddings_bytes"]),
            embeddings_sha256=str(raw["embeddings_sha256"]),
            unk_token_id=None if unk is None else int(unk),
            max_tokens=int(raw.get("max_tokens", DEFAULT_MAX_TOKENS)),
        )
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise EmbedError(f"static model description is incomplete: {exc!r}", path=path, hint=_HINT) from exc
    if info.dim <= 0 or info.vocab_size <= 0 or len(info.embeddings_sha256) < 12:
        raise EmbedError("static model description has invalid values", path=path, hint=_HINT)
    return info


class StaticEmbedder:
    """Mean of static token vectors, L2-normalised; loads its files on first use."""

    averages_tokens = True  # a text's vector is the mean of its tokens' rows (`base.averages_words`)

    def __init__(self, model_dir: str | Path | None = None, *, max_tokens: int | None = None) -> None:
        self._dir = Path(model_dir) if model_dir is not None else MODELS_DIR / DEFAULT_MODEL
        self._max_tokens_arg = max_tokens
        self._info: StaticModelInfo | None = None
        self._table: npt.NDArray[np.floating[Any]] | None = None
        self._tokenizer: _TokenIds | None = None
        self._lock = threading.Lock()
        self._as_stored = False  # the table mapped from its file (`keep_as_stored`)
        self._mapping: mmap.mmap | None = None  # that mapping, whose pages each embed gives back
        self._unk: int | None = None  # the unknown token's id: its row is skipped

    @classmethod
    def from_config(cls, config: Config) -> StaticEmbedder:
        """The embedder of `[embeddings] model` (the bundled default when left out); a model it
        names that is none is said as the setting it is, with the file, as any bad setting is."""
        from vaultmind.config import CONFIG_RELPATH

        model_dir = resolve_model_dir(config.embed_model)
        if config.embed_model and not (model_dir / "model.json").is_file():
            bundled = ", ".join(sorted(p.name for p in MODELS_DIR.iterdir() if (p / "model.json").is_file()))
            raise ConfigError(
                f"[embeddings] model = {config.embed_model!r} is no static embedding model ({model_dir} holds no model.json)",
                path=config.vault / CONFIG_RELPATH,
                hint=f"a bundled model's name ({bundled}) or the folder of a complete static model; or leave it out for {DEFAULT_MODEL}",
            )
        return cls(model_dir)

    @property
    def model_dir(self) -> Path:
        return self._dir

    @property
    def info(self) -> StaticModelInfo:
        if self._info is None:
            self._info = read_model_info(self._dir)
        return self._info

    @property
    def model_id(self) -> str:
        return self.info.model_id

    @property
    def dim(self) -> int:
        return self.info.dim

    @property
    def max_tokens(self) -> int:
        return self._max_tokens_arg if self._max_tokens_arg is not None else self.info.max_tokens

    @property
    def loaded(self) -> bool:
        return self._table is not None

    def load(self) -> None:
        """Read the table and the tokenizer now (otherwise the first `embed` does it)."""
        with self._lock:
            if self._table is None:
                self._load_locked()

    def keep_as_stored(self) -> None:
        """Map the token table from its file instead of copying it into memory, for a process
        that embeds few texts (the daemon: questions and saves): the pages of the rows a text
        uses are read in while it is embedded and given back after (`MADV_DONTNEED`; the page
        cache keeps them), so the table (the shipped model's float16: 15 MB, 30 as float32) is
        not held between texts. Each text's rows are still summed in float32 from the same
        values, so its vector is the same to the bit; a text takes about twice as long (a bulk
        load would feel it). A file not float16 or float32 is held in memory as float32."""
        with self._lock:
            self._as_stored = True
            if self._table is not None:
                self._table, self._mapping = self._read_table()

    def embed(self, texts: Sequence[str]) -> Vectors:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single string")
        if self._table is None or self._tokenizer is None:
            self.load()
        table, tokenizer, mapping, unk = self._table, self._tokenizer, self._mapping, self._unk
        assert table is not None and tokenizer is not None
        n = len(texts)
        out = np.zeros((n, table.shape[1]), dtype=np.float32)
        if n == 0:
            return out
        window = self.max_tokens
        for row, token_ids in enumerate(tokenizer.token_ids(texts)):
            if len(token_ids) <= window:
                out[row] = _token_sum(table, token_ids, unk)
            else:  # the mean of its windows' unit vectors, each weighing as many tokens as it holds
                starts = range(0, len(token_ids), window)
                sums = np.stack([_token_sum(table, token_ids[at : at + window], unk) for at in starts])
                sizes = np.array([min(window, len(token_ids) - at) for at in starts], dtype=np.float32)
                out[row] = (normalize_rows(sums) * sizes[:, None]).sum(axis=0, dtype=np.float32)
        if mapping is not None and hasattr(mmap, "MADV_DONTNEED"):
            mapping.madvise(mmap.MADV_DONTNEED)  # read-only and shared: the file's pages, unchanged
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        out /= norms
        return out

    def _load_locked(self) -> None:
        info = self.info
        table, mapping = self._read_table()
        tok_path = self._dir / "tokenizer.json"
        if not tok_path.is_file():
            raise EmbedError("static embedding model file is missing: tokenizer.json", path=tok_path, hint=_HINT)

        from tokenizers import Tokenizer

        try:
            tokenizer = Tokenizer.from_file(str(tok_path))
        except Exception as exc:  # the Rust side raises a bare Exception on any parse error
            raise EmbedError(f"cannot read tokenizer: {exc}", path=tok_path, hint=_HINT) from exc
        if tokenizer.get_vocab_size(with_added_tokens=True) != info.vocab_size:
            raise EmbedError(
                f"tokenizer has {tokenizer.get_vocab_size(with_added_tokens=True)} tokens, "
                f"the table {info.vocab_size}",
                path=tok_path,
                hint=_HINT,
            )
        self._tokenizer = _TokenIds(tokenizer, tok_path, self.max_tokens * MAX_WINDOWS)
        if info.unk_token_id is not None and 0 <= info.unk_token_id < info.vocab_size:
            self._unk = info.unk_token_id  # an unknown token carries no meaning
        self._mapping = mapping
        self._table = table

    def _read_table(self) -> tuple[npt.NDArray[np.floating[Any]], mmap.mmap | None]:
        """The token table, checked: float32 in memory, or mapped read-only as stored
        (`keep_as_stored`), with its mapping. A mapped table's finiteness is checked on the file
        read in chunks apart from the mapping, so the check leaves none of its pages resident."""
        info = self.info
        npy = self._dir / "embeddings.npy"
        if not npy.is_file():
            raise EmbedError("static embedding model file is missing: embeddings.npy", path=npy, hint=_HINT)
        size = npy.stat().st_size
        if size != info.embeddings_bytes:
            raise EmbedError(
                f"embeddings.npy has {size} bytes, model.json expects {info.embeddings_bytes}",
                path=npy,
                hint=_HINT,
            )
        try:
            raw = np.load(npy, mmap_mode="r" if self._as_stored else None, allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            raise EmbedError(f"cannot read embedding table: {exc}", path=npy, hint=_HINT) from exc
        if raw.ndim != 2 or raw.shape != (info.vocab_size, info.dim) or raw.dtype.kind != "f":
            raise EmbedError(
                f"embedding table has shape {raw.shape} {raw.dtype}, "
                f"expected ({info.vocab_size}, {info.dim}) floats",
                path=npy,
                hint=_HINT,
            )
        mapping = raw.base if isinstance(raw, np.memmap) and isinstance(raw.base, mmap.mmap) else None
        if mapping is not None and raw.dtype in (np.float16, np.float32) and raw.flags.c_contiguous:
            finite = _file_is_finite(npy, raw.offset, raw.dtype, raw.size)
            table: npt.NDArray[np.floating[Any]] = np.asarray(raw)
        else:
            mapping = None
            table = np.ascontiguousarray(raw, dtype=np.float32)
            finite = bool(np.isfinite(table).all())
        if not finite:
            raise EmbedError("embedding table holds non-finite values", path=npy, hint=_HINT)
        return table, mapping


def _token_sum(table: npt.NDArray[np.floating[Any]], token_ids: list[int], unk: int | None) -> npt.NDArray[np.float32]:
    """The sum of the tokens' rows (the direction of their mean), unknown tokens skipped: their
    gathered rows are zeroed (zero rows keep the sum's order, so its bits, those of a zeroed
    table's). One gather + sum per text measured faster than np.add.reduceat."""
    if not token_ids:
        return np.zeros(table.shape[1], dtype=np.float32)
    rows = table[token_ids]
    if unk is not None and unk in token_ids:
        rows[np.asarray(token_ids) == unk] = 0.0
    total: npt.NDArray[np.float32] = rows.sum(axis=0, dtype=np.float32)
    return total


def _file_is_finite(npy: Path, offset: int, dtype: np.dtype[Any], count: int) -> bool:
    """Whether `count` floats of `dtype` from `offset` in the file are all finite, read in
    chunks of a megabyte (plain reads: the page cache holds them, not the process)."""
    chunk = (1 << 20) // dtype.itemsize
    with npy.open("rb") as handle:
        handle.seek(offset)
        while count > 0:
            values = np.fromfile(handle, dtype=dtype, count=min(chunk, count))
            if values.size == 0 or not np.isfinite(values).all():
                return False
            count -= values.size
    return True


class _TokenIds:
    """Text -> token ids, without special tokens, truncated to `max_tokens` (all windows').

    The `tokenizers` pipeline is the reference. For a BERT WordPiece tokenizer (the shipped
    model) pure-ASCII text takes an equivalent fast path, about four times quicker: BERT's
    normaliser and pre-tokenizer reduce, on ASCII, to dropping control characters,
    lowercasing, and splitting into alphanumeric runs and single punctuation characters; each
    word's WordPiece ids are cached. The equivalence is tested against `encode_batch`.
    """

    _CACHE_LIMIT = 200_000
    _ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
    _ASCII_WORD = re.compile(r"[a-z0-9]+|[!-/:-@\[-`{-~]")

    def __init__(self, tokenizer: Tokenizer, path: Path, max_tokens: int) -> None:
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=max_tokens)
        self._tokenizer = tokenizer
        self._max_tokens = max_tokens
        self._max_chars = max_tokens * _CHARS_PER_TOKEN_CAP
        self._cache: dict[str, list[int]] = {}
        self._max_word_chars = 100
        self._added: list[dict[str, Any]] = []
        self.ascii_fast_path = self._is_bert_wordpiece(path)
        # Added tokens (e.g. a literal "[UNK]") are matched on the raw text: leave those to the reference.
        self._literals = tuple(str(t.get("content", "")) for t in self._added if t.get("content"))

    def _is_bert_wordpiece(self, path: Path) -> bool:
        try:
            spec: Any = json.loads(path.read_text(encoding="utf-8"))
            normalizer, pre, model = (
                spec.get("normalizer") or {},
                spec.get("pre_tokenizer") or {},
                spec["model"],
            )
            self._added = [dict(t) for t in spec.get("added_tokens") or []]
        except (OSError, ValueError, KeyError, AttributeError, TypeError):
            return False
        self._max_word_chars = int(model.get("max_input_chars_per_word", 100))
        return bool(
            normalizer.get("type") == "BertNormalizer"
            and normalizer.get("lowercase") is True
            and normalizer.get("clean_text") is True
            and pre.get("type") == "BertPreTokenizer"
            and model.get("type") == "WordPiece"
            and all(not t.get("normalized", True) for t in self._added)
        )

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        clipped = [text[: self._max_chars] for text in texts]
        result: list[list[int]] = [[] for _ in clipped]
        slow: list[int] = []
        for i, text in enumerate(clipped):
            if self.ascii_fast_path and text.isascii() and not any(lit in text for lit in self._literals):
                result[i] = self._ascii_ids(text)
            else:
                slow.append(i)
        if slow:
            encodings = self._tokenizer.encode_batch([clipped[i] for i in slow], add_special_tokens=False)
            for i, encoding in zip(slow, encodings, strict=True):
                result[i] = encoding.ids
        return result

    def reference_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """The `tokenizers` pipeline alone (for tests of the fast path)."""
        encodings = self._tokenizer.encode_batch(
            [t[: self._max_chars] for t in texts], add_special_tokens=False
        )
        return [encoding.ids for encoding in encodings]

    def _ascii_ids(self, text: str) -> list[int]:
        words = self._ASCII_WORD.findall(self._ASCII_CONTROL.sub("", text).lower())
        cache = self._cache
        try:
            pieces = [cache[word] for word in words]
        except KeyError:
            pieces = [cache.get(word) or self._wordpiece(word) for word in words]
        ids = list(chain.from_iterable(pieces))
        return ids[: self._max_tokens] if len(ids) > self._max_tokens else ids

    def _wordpiece(self, word: str) -> list[int]:
        ids = [token.id for token in self._tokenizer.model.tokenize(word)]
        if len(word) <= self._max_word_chars:  # longer words are one [UNK]; keep the cache small
            if len(self._cache) >= self._CACHE_LIMIT:
                self._cache.clear()
            self._cache[word] = ids
        return ids
