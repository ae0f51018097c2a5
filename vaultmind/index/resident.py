"""Resident (in-memory) search structures kept in step with the index by deltas.

A serving process answers lexical and dense queries from memory: BM25 over numpy postings
and cosine over a numpy matrix. They load once from DuckDB, then follow every sync through
`apply(change)` — removed leaves become tombstones, new leaves are appended — so saving a
note never reloads the whole index. Tombstones are compacted away by a full reload once they
pass a quarter of the rows. Results are identical to the SQL definitions in `lexical.py`.
"""

from __future__ import annotations

import heapq
import logging
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from vaultmind.index.allocator import release_freed_memory
from vaultmind.index.growing import appended
from vaultmind.index.leaf_columns import (
    EMAIL,
    ENTITY_SECTION,
    MESSAGE,
    SECTION,
    LeafColumns,
    NameCodes,
    ts_array,
)
from vaultmind.index.leaf_conversations import LeafConversations
from vaultmind.index.leaf_rows import LEAF_ROWS_SQL, NOTE_ROWS_SQL
from vaultmind.index.leaf_snapshot import HeldLeaves, leaves_key, load_leaves, save_leaves
from vaultmind.index.row_ids import RowIds, id_array
from vaultmind.index.snapshot_file import LEAVES_SNAPSHOT

log = logging.getLogger(__name__)

COMPACT_SHARE = 0.25

# rows per Arrow batch of the leaves' load: each carries texts, and the C heap kept what bigger
# batches had freed (at 50k notes, 8,192 rows: the load's peak ~50 MB higher)
_ROWS_BATCH = 2048
# a load's batches between two hand-backs of what they freed (`release_freed_memory`, ~20 ms):
# handed back only once the 210 batches of a 50k-note vault were in, the daemon's RSS grew
# 297 -> 492 MiB over the stream and fell by 213 MiB after it (its start-up peak, 477-503 MiB;
# 462-464 MiB with this and DuckDB's cached blocks dropped before the columns are joined)
RELEASE_EVERY = 16
# postings held by fewer than 1/32 of the rows are merged by a sort, more by a mask of every row
# (`_union`: at 100k leaves, the 13-16k postings of a week's relative day words, 1.5 ms -> 0.3)
_SORT_SHARE = 32


@dataclass(slots=True)
class LeafDelta:
    leaf_id: str
    content_hash: str
    counts: Counter[str]
    term_count: int
    row: dict[str, Any]  # its `LEAF_META_SQL` row, as the save wrote it (nothing read back)


@dataclass(slots=True)
class ChangeSet:
    """What one sync changed, for resident structures: ids gone and leaves added."""

    removed: list[str] = field(default_factory=list)
    added: list[LeafDelta] = field(default_factory=list)
    reset: bool = False  # a rebuild: reload everything on next use
    backfilled: bool = False  # vectors appeared for leaves older than this change
    vectors: dict[str, Any] = field(default_factory=dict)  # embedded by this change, by content hash, as stored


_ADDED_SCHEMA = pa.schema(
    [("id", pa.string()), ("note_path", pa.string()), ("seq", pa.int32()), ("author", pa.string()),
     ("ts", pa.timestamp("us")), ("term_count", pa.int32()), ("note_kind", pa.string()),
     ("source_kind", pa.string())]
)  # fmt: skip


class ResidentLeaves(LeafConversations):
    """Every leaf's place, time, length and BM25 postings (k1 = 1.2, b = 0.75), held in memory.

    Ranking needs no SQL round trip: lexical scores, timestamps, places and neighbours come
    from here, in numpy arrays (note and author as codes into small lists, postings as row and
    term frequency arrays grouped by term). The rows of the few hits a query shows (text,
    anchor, title, …) are read from the index by id (`rows`): texts are most of a leaf's bytes.
    """

    # -- loading and deltas ----------------------------------------------------------------

    def _append_meta(self, meta: pa.Table | pa.RecordBatch) -> None:
        """Places, times and lengths of new rows (in `meta` order, already in `_rows`)."""
        notes, who, seq, length, ts, kind = self._columns(meta)
        self._note = appended(self._note, notes)
        self._kind = appended(self._kind, kind)
        self._author = appended(self._author, who)
        self._seq = appended(self._seq, seq)
        self._doc_len = appended(self._doc_len, length)
        self._ts = appended(self._ts, ts)
        self._authors.update(a for a in (self._author_names.names[c] for c in who.tolist() if c >= 0) if a)
        self._author_set = None

    def _columns(
        self, meta: pa.Table | pa.RecordBatch
    ) -> tuple[
        npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.int32],
        npt.NDArray[np.datetime64], npt.NDArray[np.int8],
    ]:  # fmt: skip
        """Note codes, author codes (-1: none), seqs, lengths, times and kinds of `meta`'s rows."""
        who = self._author_names.codes(meta.column("author"))
        entity = pc.fill_null(pc.equal(meta.column("note_kind"), "entity"), False).to_numpy(zero_copy_only=False)
        email = pc.fill_null(pc.equal(meta.column("source_kind"), "email"), False).to_numpy(zero_copy_only=False)
        message = np.where(email, EMAIL, MESSAGE)
        kind = np.where(who >= 0, message, np.where(entity, ENTITY_SECTION, SECTION)).astype(np.int8)
        return (
            self._notes.codes(meta.column("note_path")),
            who,
            meta.column("seq").to_numpy().astype(np.int32),
            meta.column("term_count").to_numpy().astype(np.int32),
            ts_array(meta.column("ts")),
            kind,
        )

    def _load(self) -> None:
        """Every leaf: as the snapshot beside the index holds them when it was taken of the same
        leaves (`leaf_snapshot`), else streamed from the index and a snapshot taken."""
        self._rows = RowIds()
        self._live_stats = None
        self._note_stats = None
        self._conversation_sizes = None
        self._note_folders = np.zeros(0, dtype=np.int32)  # notes are coded anew; their folders keep their codes
        self._notes, self._author_names = NameCodes(), NameCodes()
        self._extra, self._place_added = {}, {}
        self._store.clear()
        with self.index.lock:
            path = self.index.path.parent / LEAVES_SNAPSHOT if self.index.path is not None else None
            key = leaves_key(self.index.con) if path is not None else None
            held = load_leaves(path, key, self._store) if path is not None and key is not None else None
            if held is not None:
                keys = self._take(held)
            else:
                keys = self._stream()
                if path is not None and key is not None:
                    self._keep(path, key, keys)
            self.shared_ids.reset(self._rows, keys)
            counts = np.bincount(self._author[self._author >= 0], minlength=len(self._author_names.names))
            names = self._author_names.names
            self._authors = Counter({name: n for name, n in zip(names, counts.tolist(), strict=True) if n and name})
            self._author_set = None
            release_freed_memory()  # the batches' columns, joined
            self._postings_from_snapshot_or_index(keys)
        places = (self._note.astype(np.int64) << 32) | (self._seq.astype(np.int64) & 0xFFFFFFFF)
        self._place_rows = np.argsort(places, kind="stable").astype(np.int32)
        self._place_keys = places[self._place_rows]
        self._loaded = True
        release_freed_memory()

    def _stream(self) -> npt.NDArray[np.bytes_]:
        """Read every leaf from the index (under its lock), in batches: each batch's rows go to
        the row store, its columns are joined at the end, in id order. Returns the ids."""
        self._store.clear()  # a snapshot found damaged may have copied its rows
        parts: list[tuple[npt.NDArray[Any], ...]] = []
        total = int(self.index.scalar("SELECT count(*) FROM leaves")) if self.progress else 0
        done = 0
        notes = self.index.con.execute(NOTE_ROWS_SQL).to_arrow_table()
        reader = self.index.con.execute(LEAF_ROWS_SQL).to_arrow_reader(_ROWS_BATCH)  # in any order: the rows know their ids
        for batch in reader:
            done += batch.num_rows
            meta, rows = _with_notes(batch, notes)
            self._store.append_columns(rows, meta.column("text"))
            parts.append((id_array(meta.column("id")), *self._columns(meta)))
            if len(parts) % RELEASE_EVERY == 0:  # the batches' tables and the row store's old spans
                release_freed_memory()
            if self.progress and done < total:
                self.progress("load leaves", done, total)
        self.index.drop_cached_blocks()  # the leaves' blocks, before the columns are joined
        if self.progress:  # leaves of no note are not loaded: done may stay below the count
            self.progress("load leaves", total, total)
        empty = (np.zeros(0, dtype="S1"), np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.int32),
                 np.zeros(0, np.int32), np.zeros(0, dtype="datetime64[us]"), np.zeros(0, np.int8))  # fmt: skip
        keys, notes, who, seq, length, ts, kind = (np.concatenate(c) for c in zip(*parts, strict=True)) if parts else empty
        del parts
        order = np.argsort(keys, kind="stable")  # rows in id order: lookups need no second copy
        if not bool((order == np.arange(len(order))).all()):
            keys, notes, who, seq, length, ts, kind = (a[order] for a in (keys, notes, who, seq, length, ts, kind))
            self._store.reorder(order)
        self._note, self._author, self._seq, self._doc_len, self._ts, self._kind = notes, who, seq, length, ts, kind
        return keys

    def _take(self, held: HeldLeaves) -> npt.NDArray[np.bytes_]:
        """Hold the leaves a snapshot kept (its rows already in the row store); returns the ids."""
        self._notes, self._author_names = NameCodes.of(held.notes), NameCodes.of(held.authors)
        c = held.columns
        self._note, self._author, self._seq, self._doc_len, self._ts, self._kind = (
            c["note"], c["author"], c["seq"], c["doc_len"], c["ts"], c["kind"]
        )  # fmt: skip
        self._store.take_spans(held.spans)
        if self.progress:  # done at once: a status that follows the load sees it end
            self.progress("load leaves", len(held.keys), len(held.keys))
        return held.keys

    def _keep(self, path: Path, key: str, keys: npt.NDArray[np.bytes_]) -> None:
        """Take a snapshot of the leaves just streamed from the index (under `key`)."""
        columns = {"note": self._note, "author": self._author, "seq": self._seq, "doc_len": self._doc_len,
                   "ts": self._ts, "kind": self._kind}  # fmt: skip
        held = HeldLeaves(keys, self._notes.names, self._author_names.names, columns, self._store.spans())
        try:
            save_leaves(path, key, held, self._store)
        except OSError as exc:  # a full disk, a read-only folder: the next load reads the index
            log.info("could not write the leaves snapshot %s: %s", path, exc)

    def apply(self, change: ChangeSet) -> None:
        with self.index.lock, self._lock:  # in the order every other path takes them
            self._live_stats = None
            self._note_stats = None
            self._conversation_sizes = None
            if change.reset or not self._loaded:
                self._loaded = False
                return
            for leaf_id in change.removed:
                i = self._rows.row(leaf_id)
                code = int(self._author[i]) if i is not None else -1
                if code >= 0 and self._author_names.names[code]:
                    self._authors[self._author_names.names[code]] -= 1
                    self._author_set = None
                self._rows.remove(leaf_id)
            if self._rows.stale:  # a removed id lives on in another note: reload
                self._loaded = False
                return
            if change.added:
                self._add(change.added)
            if self._rows.dead_share > COMPACT_SHARE:
                self._loaded = False

    def _add(self, added: Sequence[LeafDelta]) -> None:
        """Append the rows of `added`, which come with them: no lookup in the index (at 50k
        notes, reading them back by id raised a save's peak by 11–14 MiB of DuckDB's blocks)."""
        found = [leaf.row for leaf in added]
        self._store.append_rows(found)
        meta = pa.Table.from_pylist(found, schema=_ADDED_SCHEMA)
        new_rows = self._rows.extend([leaf.leaf_id for leaf in added])
        self._append_meta(meta)
        for leaf, row in zip(added, new_rows, strict=True):
            self._place_added[(int(self._note[row]), int(self._seq[row]))] = row
            for term, tf in leaf.counts.items():
                self._extra.setdefault(term, []).append((row, tf))

    # -- lookups ---------------------------------------------------------------------------

    def authors(self) -> frozenset[str]:
        """The authors of live leaves (as written in their notes)."""
        with self._held():
            self._ensure()
            if self._author_set is None:
                self._author_set = frozenset(a for a, n in self._authors.items() if n > 0)
            return self._author_set

    def columns(self, leaf_ids: Sequence[str]) -> LeafColumns:
        """`LeafColumns` of `leaf_ids`, in their order: one lookup, no Python object per leaf."""
        with self._held():
            self._ensure()
            rows = self._rows.find(leaf_ids)
            known = rows >= 0
            live = rows[known]
            n = len(rows)
            note, author = np.full(n, -1, dtype=np.int32), np.full(n, -1, dtype=np.int32)
            seq, length = np.zeros(n, dtype=np.int32), np.full(n, np.nan)
            ts = np.full(n, np.datetime64("NaT", "us"))
            note[known], author[known], seq[known] = self._note[live], self._author[live], self._seq[live]
            length[known], ts[known] = self._doc_len[live], self._ts[live]
            return LeafColumns(known, note, seq, author, length, ts, self._notes.names, self._author_names.names)

    def of_notes(self, paths: Sequence[str]) -> dict[str, list[str]]:
        """The live leaves of each note of `paths` that has any, in place order."""
        with self._held():
            self._ensure()
            codes = {code: path for path in paths if (code := self._notes.find(path)) is not None}
            if not codes:
                return {}
            rows = np.flatnonzero(self._rows.alive & np.isin(self._note, list(codes)))
            rows = rows[np.lexsort((self._seq[rows], self._note[rows]))]
            out: dict[str, list[str]] = {}
            for code, leaf_id in zip(self._note[rows].tolist(), self._rows.ids_of(rows), strict=True):
                out.setdefault(codes[code], []).append(leaf_id)
            return out

    def neighbours(self, leaf_id: str, span: int = 1) -> list[str]:
        """Live leaves right before and after `leaf_id` in the same note (conversation context)."""
        return self.neighbours_of([leaf_id], span).get(leaf_id, [])

    def neighbours_of(self, leaf_ids: Sequence[str], span: int = 1) -> dict[str, list[str]]:
        """`neighbours` of each live leaf of `leaf_ids`, in order of place, found at once."""
        with self._held():
            self._ensure()
            rows = self._rows.find(leaf_ids)
            known = np.flatnonzero(rows >= 0)
            if not len(known):
                return {}
            offsets = np.array([o for o in range(-span, span + 1) if o], dtype=np.int64)
            notes = self._note[rows[known]].astype(np.int64)
            seqs = self._seq[rows[known]].astype(np.int64)
            others = seqs[:, None] + offsets[None, :]
            keys = (notes[:, None] << 32) | (others & 0xFFFFFFFF)
            at = np.searchsorted(self._place_keys, keys.ravel(), side="right") - 1
            hit = at >= 0
            hit[hit] = self._place_keys[at[hit]] == keys.ravel()[hit]
            flat = np.full(keys.size, -1, dtype=np.int64)  # loaded with no leaf: every leaf added since
            flat[hit] = self._place_rows[at[hit]]
            grid = flat.reshape(len(known), len(offsets))
            alive = self._rows.alive
            if self._place_added:  # a live leaf added at a place since the load takes it
                for i, (note, other_seqs) in enumerate(zip(notes.tolist(), others.tolist(), strict=True)):
                    for c, other in enumerate(other_seqs):
                        added = self._place_added.get((note, other))
                        if added is not None and alive[added]:
                            grid[i, c] = added
            live = grid >= 0
            live[live] = alive[grid[live]]
            # each leaf's neighbours, as rows
            picked = [(leaf_ids[k], row[keep].tolist()) for k, row, keep in zip(known.tolist(), grid, live, strict=True)]
            ids = iter(self._rows.ids_of([j for _, near in picked for j in near]))  # in one conversion
            return {leaf_id: [next(ids) for _ in near] for leaf_id, near in picked}

    def in_window(self, start: datetime, end: datetime, limit: int, *, latest: bool = False) -> list[str]:
        """Live leaves with start <= ts < end: the `limit` earliest (or, `latest`, the `limit`
        latest), earliest first (ties by id)."""
        with self._held():
            self._ensure()
            if limit <= 0:
                return []
            lo, hi = np.datetime64(start, "us"), np.datetime64(end, "us")
            ts = self._ts  # NaT compares False: rows without a time drop out
            rows = np.flatnonzero(self._rows.alive & (ts >= lo) & (ts < hi))
            if len(rows) > limit:  # the `limit` earliest (latest)
                rows = self._smallest(rows, ts[rows].astype(np.int64) * (-1 if latest else 1), limit)
            ids = self._rows.ids_of(rows)
            stamps = ts[rows].astype(np.int64).tolist()  # as ints: numpy datetime scalars compare slowly
            return [ids[j] for j in sorted(range(len(ids)), key=lambda j: (stamps[j], ids[j]))]

    def holding_all(self, groups: Sequence[Collection[str]], limit: int, *, near: datetime) -> list[str]:
        """Live leaves holding a term of each of `groups` ("23" or "23rd", and "april" or "apr":
        the leaves that may say "23 April"): the `limit` written nearest `near`, those without
        a time last (ties by id), in no particular order."""
        with self._held():
            self._ensure()
            if limit <= 0 or not groups:
                return []
            postings = sorted(([self._postings(term)[0] for term in group] for group in groups), key=lambda p: sum(map(len, p)))
            rows = self._union(postings[0])
            for other in postings[1:]:  # the rarest group first: each other one only narrows it
                if not len(rows):
                    break
                held = np.zeros(len(self._rows), dtype=bool)
                for found in other:
                    held[found] = True
                rows = rows[held[rows]]
            rows = rows[self._rows.alive[rows]]
            if len(rows) > limit:
                stamps = self._ts[rows].astype(np.int64)
                at = np.datetime64(near, "us").astype(np.int64)
                nat = stamps == np.iinfo(np.int64).min
                key = np.where(nat, np.iinfo(np.int64).max, np.abs(np.where(nat, 0, stamps - at)))
                rows = self._smallest(rows, key, limit)
            return self._rows.ids_of(rows)

    def _union(self, postings: Sequence[npt.NDArray[np.int32]]) -> npt.NDArray[np.int64]:
        """The rows in any of `postings`, ascending: sorted when they are few, else marked on a
        mask of every row (a common word's postings: a pass over the rows beats a sort)."""
        total = sum(map(len, postings))
        if total * _SORT_SHARE < len(self._rows):
            return np.unique(np.concatenate(postings)).astype(np.int64) if postings else np.zeros(0, np.int64)
        held = np.zeros(len(self._rows), dtype=bool)
        for found in postings:
            held[found] = True
        return np.flatnonzero(held).astype(np.int64)

    def by_authors(
        self, names: Collection[str], limit: int, *, near: tuple[datetime, datetime] | None = None
    ) -> list[str]:
        """Live leaves written by any of `names` (as written in their notes): the `limit`
        latest (or, `near` a span, the `limit` nearest it, those inside it first; those without
        a time last), ties by id."""
        with self._held():
            self._ensure()
            codes = [code for name in names if (code := self._author_names.find(name)) is not None]
            if not codes or limit <= 0:
                return []
            rows = np.flatnonzero(self._rows.alive & np.isin(self._author, codes))
            stamps = self._ts[rows].astype(np.int64)  # NaT is the smallest int64
            if near is None:
                order = -stamps  # latest first
            else:
                lo, hi = (np.datetime64(t, "us").astype(np.int64) for t in near)
                order = np.maximum(np.maximum(lo - stamps, stamps - hi + 1), 0)  # 0 inside [lo, hi)
            key = np.where(stamps == np.iinfo(np.int64).min, np.iinfo(np.int64).max, order)  # NaT last
            if len(rows) > limit:
                keep = np.isin(rows, self._smallest(rows, key, limit))
                rows, key = rows[keep], key[keep]
            ids = self._rows.ids_of(rows)
            keys = key.tolist()
            return [ids[j] for j in sorted(range(len(ids)), key=lambda j: (keys[j], ids[j]))]

    def _smallest(self, rows: npt.NDArray[np.int64], key: npt.NDArray[np.int64], limit: int) -> npt.NDArray[np.int64]:
        """The `limit` of `rows` with the smallest `key` (one per row); among rows tied at the
        cut, those of the lowest ids (a live daemon and a rebuild choose alike)."""
        cut = np.partition(key, limit - 1)[limit - 1]
        before = rows[key < cut]
        tied = rows[key == cut]
        lowest = heapq.nsmallest(limit - len(before), zip(self._rows.ids_of(tied), tied.tolist(), strict=True))
        return np.concatenate((before, np.array([row for _, row in lowest], dtype=np.int64)))

    def first_time(self) -> datetime | None:
        """The time of the earliest live leaf that has one."""
        with self._held():
            self._ensure()
            ts = self._ts[self._rows.alive & ~np.isnat(self._ts)]
            return ts.min().astype(datetime) if len(ts) else None

    def rows(self, leaf_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Metadata rows (as dicts, the columns of `LEAF_META_SQL`) of live leaves, by id;
        unknown ids are absent. Read from the row store (a few reads per query)."""
        with self._held():
            self._ensure()
            found = self._rows.find(leaf_ids).tolist()
            return {leaf_id: self._store.row(i) for leaf_id, i in zip(leaf_ids, found, strict=True) if i >= 0}

    def texts(self, leaf_ids: Sequence[str]) -> dict[str, str]:
        """The texts of live leaves, by id (unknown ids absent): `rows` without the metadata,
        for a caller that reads many leaves' words (day mentions)."""
        with self._held():
            self._ensure()
            found = self._rows.find(leaf_ids).tolist()
            return {leaf_id: self._store.text(i) for leaf_id, i in zip(leaf_ids, found, strict=True) if i >= 0}

    def close(self) -> None:
        with self._lock:
            self._store.close()
            self._loaded = False

    def memory(self) -> dict[str, int]:
        """Bytes held, by part (numpy arrays; Python containers estimated per entry)."""
        with self._lock:
            arrays = (self._note, self._seq, self._author, self._doc_len, self._kind, self._ts, self._place_keys, self._place_rows)
            return {
                "ids": self._rows.nbytes,
                "places_times": sum(a.nbytes for a in arrays) + self._store.nbytes,
                "postings": self._lists.nbytes
                + self._term_code.nbytes + 100 * sum(len(v) for v in self._extra.values()),
                "names": 120 * (len(self._notes.names) + len(self._author_names.names)),
            }  # fmt: skip


def _with_notes(batch: pa.RecordBatch, notes: pa.Table) -> tuple[pa.Table, pa.Array]:
    """The leaves of `batch` whose note is among `notes` (the inner join of `LEAF_META_SQL`),
    with their note's kind and source kind, and their rows as JSON (`LEAF_ROWS_SQL`)."""
    at = pc.index_in(batch.column("note_path"), value_set=notes.column("path"))
    leaves = pa.Table.from_batches([batch])
    if at.null_count:
        found = pc.is_valid(at)
        leaves, at = leaves.filter(found), at.filter(found)
    note = notes.take(at)
    meta = leaves.append_column("note_kind", note.column("note_kind")).append_column("source_kind", note.column("source_kind"))
    head = pc.utf8_slice_codeunits(leaves.column("head"), 0, -1)  # without its closing brace
    rows = pc.binary_join_element_wise(head, note.column("tail"), "").combine_chunks()
    return meta, rows
