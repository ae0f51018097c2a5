"""NER outside the sync: the texts a sync derived without the model are run through it later,
batch by batch, each batch committed in its own short transaction (`backfill_ner`), and the
functions that find a memory's entity deriver and what still waits for it.

How many texts wait (`ner_pending`) is counted once per index generation (a scan of every
leaf: seconds at 50k notes) and carried forward by each NER step, which knows how many it
took: a `status` asked during a catch-up reads it without counting again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Protocol

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from vaultmind.entities.common_words import NoteWords
from vaultmind.entities.graph import EntityDeriver
from vaultmind.entities.leaf_reads import LeafRow, note_words
from vaultmind.entities.ner import RawSpan
from vaultmind.entities.ner_cache import count_pending, leaf_rows_at, pending_texts, store_spans
from vaultmind.entities.registry_store import committed_registry
from vaultmind.index.store import Index

PENDING_FETCH = 4096  # texts fetched per scan for pending NER
# DuckDB's buffer pool while NER's scans of every leaf find the texts that wait and the leaves
# holding them (`Index.small_pool_read`), which at 50k notes had each thread's hash tables lift a
# fetch's peak ~80 MB (so: one thread, ~35 MB) and left the blocks met in the pool; the leaves
# found again inside a step's write transaction, after another writer had committed, had taken
# the daemon's largest samples during a catch-up to 536–544 MB (483–509 MB since, with
# `serving_pool.POOL_KEEP_BYTES` lowered too). Now found again before that transaction, under the lock.
FETCH_MEMORY_LIMIT = "32MB"
HOLDERS_BATCH = 16_384  # rows of the hash column matched at a time when looking for a fetch's leaves
PENDING_VIEW = "ner_pending:"  # and the model id: the view (`Index.cached`) of the texts still waiting


def backfill_ner(
    index: Index,
    deriver: EntityDeriver,
    *,
    batch: int = 256,
    max_texts: int | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> int:
    """Run NER on the leaves a sync left without it, then re-derive those leaves.

    The model runs without holding the index; each batch is then committed in its own short
    transaction, so queries and syncs go on meanwhile. Returns the number of texts analysed.
    Safe to call any time (nothing to do: returns 0); stops early when the model cannot run.
    """
    model = deriver.ner.model_id
    if model is None or not deriver.ner.available:
        return 0
    deriver.catch_up(index)  # new rules or model: every leaf first, in committed slices
    with index.lock:
        total = _pending(index, model)
    if max_texts is not None:
        total = min(total, max_texts)
    done = 0
    if progress is not None and total:
        progress("ner", 0, total)  # the run starts now
    while done < total:
        with index.lock:
            count = min(max(batch, PENDING_FETCH), total - done)
            pending = index.small_pool_read(partial(pending_texts, index.con, model, count), FETCH_MEMORY_LIMIT)
            if not pending:
                break
            wanted = [h for h, _ in pending]
            holders = index.small_pool_read(partial(_leaves_holding, index.con, wanted), FETCH_MEMORY_LIMIT)
            seen = index.generation
            index.drop_cached_blocks()  # what the fetch's scans read: not read again
        for start in range(0, len(pending), batch):
            todo = pending[start : start + batch]
            found = deriver.ner.analyze([text for _, text in todo])
            if found is None:
                return done
            fresh = {h: spans for (h, _), spans in zip(todo, found, strict=True)}
            with index.lock:  # no other writer between finding the leaves again and the commit
                # Nothing but this run's steps committed since the fetch: each text of this step
                # waited (the fetch found it waiting, each once) and no longer does. After another
                # writer, the next count is made anew.
                waiting = index.view(PENDING_VIEW + model) if index.generation == seen else None
                if index.generation != seen:  # another writer committed: leaves may have come or gone
                    again = partial(_leaves_holding, index.con, list(holders))
                    holders = index.small_pool_read(again, FETCH_MEMORY_LIMIT)
                words = _named_notes_words(index, fresh, holders)
                # the step writes no note: the registry of the notes as committed, kept until a
                # save commits (not its fingerprint read again at every step)
                registry = committed_registry(index, fuzzy_threshold=deriver.settings.fuzzy_threshold)
                with index.transaction(ner_step=True) as con:
                    store_spans(con, model, fresh)
                    rows = sorted({row for h in fresh for row in holders.pop(h, ())}, key=lambda r: (r[0], r[1]))
                    ids = sorted({row[0] for row in rows})
                    deriver.refresh(con, ids, texts=dict(todo), rows=rows, words=words, registry=registry)
                if waiting is not None and waiting[0] == seen:
                    index.keep_view(PENDING_VIEW + model, index.generation, waiting[1] - len(fresh))
                seen = index.generation  # this commit's
            done += len(todo)
            if progress is not None:
                progress("ner", done, total)
    return done


def _named_notes_words(
    index: Index, fresh: dict[str, list[RawSpan]], holders: dict[str, list[LeafRow]]
) -> dict[str, NoteWords]:
    """What the texts of each note where this step's model found names say of their words
    (`leaf_reads.note_words`: a one-word name its note writes in lower case is a common word),
    read before the step's transaction on one DuckDB thread under a small pool, the blocks it
    read then dropped. No index holds the leaves' paths: the read meets much of the text column,
    which inside the step had stayed in DuckDB's pool (at 50k notes +135 MB for 40 notes in
    process, +51 MB under the small pool; in a daemon's catch-up a +75 MB spike at such steps)."""
    named = sorted({row[1] for h, spans in fresh.items() if spans for row in holders.get(h, ())})
    if not named:
        return {}
    words = index.small_pool_read(partial(note_words, index.con, named), FETCH_MEMORY_LIMIT)
    index.drop_cached_blocks()
    return words


def _leaves_holding(con: duckdb.DuckDBPyConnection, hashes: Sequence[str]) -> dict[str, list[LeafRow]]:
    """Content hash → the `leaves` rows with that text (all of them, wherever they are). One
    scan for a whole fetch of pending texts, not one per step of NER (at 50k notes 23 MB read
    per step, which then had to stay in DuckDB's pool to be fast). The rows are every row of
    their ids (an id is derived from its text), so a step looks none up by id: the `leaves_id`
    index (~20 MB once loaded) stays on disk through a catch-up.

    The hash column is streamed a batch at a time and matched here, then the rows found are
    read by row number (`leaf_rows_at`). At 50k notes, for 4,096 texts, +36 MB
    instead of +53 MB for a join of every leaf's columns against the hashes in DuckDB."""
    holders: dict[str, list[LeafRow]] = {h: [] for h in hashes}
    if not hashes:
        return holders
    wanted = pa.array(sorted(holders), pa.string())
    found = []
    for batch in con.execute("SELECT rowid, content_hash FROM leaves").to_arrow_reader(HOLDERS_BATCH):
        hit = pc.is_in(batch.column(1), value_set=wanted)
        if pc.any(hit).as_py():
            found.append(pc.filter(batch.column(0), hit).to_numpy())
    if not found:
        return holders
    rowids = np.unique(np.concatenate(found)).tolist()
    for leaf, path, h, author, ts in leaf_rows_at(con, "id, note_path, content_hash, author, ts", rowids):
        holders[h].append((leaf, path, h, author, ts))
    return holders


class _Derivers(Protocol):
    @property
    def derivers(self) -> Sequence[object]: ...


class RunsDerivers(Protocol):
    """An open memory as the functions here see it (`memory.Memory` is one): its index and
    the derivers its syncer runs."""

    @property
    def index(self) -> Index: ...

    @property
    def syncer(self) -> _Derivers: ...


def entity_deriver(memory: RunsDerivers) -> EntityDeriver | None:
    """The entity deriver a `Memory`'s syncer runs (None when entities are not derived)."""
    for deriver in memory.syncer.derivers:
        if isinstance(deriver, EntityDeriver):
            return deriver
    return None


def complete_ner(
    memory: RunsDerivers, *, progress: Callable[[str, int, int], None] | None = None, batch: int = 256
) -> int:
    """`backfill_ner` for a `Memory`: NER on every leaf still waiting for it."""
    deriver = entity_deriver(memory)
    return 0 if deriver is None else backfill_ner(memory.index, deriver, progress=progress, batch=batch)


def ner_pending(index: Index, deriver: EntityDeriver) -> int:
    """Distinct leaf texts still waiting for NER (0 when NER is off or unavailable)."""
    model = deriver.ner.model_id
    if model is None or not deriver.ner.available:
        return 0
    with index.lock:
        return _pending(index, model)


def ner_pending_known(index: Index, deriver: EntityDeriver) -> bool:
    """Whether `ner_pending` answers without counting (kept for this generation, or nothing to count)."""
    model = deriver.ner.model_id
    if model is None or not deriver.ner.available:
        return True
    kept = index.view(PENDING_VIEW + model)
    return kept is not None and kept[0] == index.generation


def _pending(index: Index, model: str) -> int:
    return int(index.cached(PENDING_VIEW + model, lambda _: count_pending(index.con, model)))
