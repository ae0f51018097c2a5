"""Resident (in-memory) search structures kept in step with the index by deltas.

A serving process answers lexical and dense queries from memory: BM25 over numpy postings
and cosine over a numpy matrix. They load once from DuckDB, then follow every sync through
`apply(change)` — removed leaves become tombstones, new leaves are appended — so saving a
note never reloads the whole index. Tombstones are compacted away by a full reload once they
pass a quarter of the rows. Results are identical to the SQL definitions in `lexical.py`.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import logging
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from vaultmind import __version__
from vaultmind.index.allocator import release_freed_memory
from vaultmind.index.lexical import K1, B
from vaultmind.index.postings import PostingLists, TermCodes, load_snapshot, save_snapshot
from vaultmind.index.row_ids import RowIds, SharedIds, id_array
from vaultmind.index.scratch import ScratchFile
from vaultmind.index.store import Index

COMPACT_SHARE = 0.25
log = logging.getLogger(__name__)

# rows per Arrow batch of the leaves' load: each carries texts, and the C heap kept what bigger
# batches had freed (at 50k notes, 8,192 rows: the load's peak ~50 MB higher)
_ROWS_BATCH = 2048
# a load's batches between two hand-backs of what they freed (`release_freed_memory`, ~20 ms):
# handed back only once the 210 batches of a 50k-note vault were in, the daemon's RSS grew
# 297 -> 492 MiB over the stream and fell by 213 MiB after it (its start-up peak, 477-503 MiB;
# 462-464 MiB with this and DuckDB's cached blocks dropped before the columns are joined)
RELEASE_EVERY = 16
_BATCH = 8192  # rows per Arrow batch read from DuckDB (bigger batches raised peak memory ~100 MB at 50k notes)
# DuckDB's buffer pool while the postings are scanned: it only streams them, and a larger pool
# filled with their blocks (at 50k notes 16 MB: +15 MB over the scan, 128 MB: +105 MB, and
# 3.6 against 3.3 s)
POSTINGS_POOL = "24MB"
POSTINGS_SNAPSHOT = "resident-postings.bin"  # beside the index file (`_postings_from_snapshot_or_index`)
POSTINGS_SNAPSHOT_FORMAT = 1


@dataclass(slots=True)
class LeafDelta:
    leaf_id: str
    content_hash: str
    counts: Counter[str]
    term_count: int


@dataclass(slots=True)
class ChangeSet:
    """What one sync changed, for resident structures: ids gone and leaves added."""

    removed: list[str] = field(default_factory=list)
    added: list[LeafDelta] = field(default_factory=list)
    reset: bool = False  # a rebuild: reload everything on next use
    backfilled: bool = False  # vectors appeared for leaves older than this change
    vectors: dict[str, Any] = field(default_factory=dict)  # embedded by this change, by content hash, as stored


_LEAF_FIELDS = (
    "id", "note_path", "seq", "anchor", "text", "ts", "author", "source_ref", "message_id", "content_hash",
    "term_count", "heading_path", "mail_to", "mail_cc",
)  # fmt: skip
_LEAF_COLUMNS = ", ".join(f"l.{name}" for name in _LEAF_FIELDS)
_NOTE_EXPRESSIONS = {
    "note_kind": "n.kind", "title": "n.title", "source_id": "n.source_id",
    "scope": "coalesce(json_extract_string(n.frontmatter, '$.scope'), '')", "source_kind": "n.source_kind",
}  # fmt: skip
_NOTE_FIELDS = tuple(_NOTE_EXPRESSIONS)
_NOTE_COLUMNS = ", ".join(f"{expression} AS {name}" for name, expression in _NOTE_EXPRESSIONS.items())
LEAF_META_SQL = f"SELECT {_LEAF_COLUMNS}, {_NOTE_COLUMNS} FROM leaves l JOIN notes n ON n.path = l.note_path"


def _json_sql(fields: dict[str, str]) -> str:
    """DuckDB's JSON text of an object of `fields` (name: SQL expression), in their order."""
    return "to_json({" + ", ".join(f"'{name}': {expression}" for name, expression in fields.items()) + "})::VARCHAR"


# A leaf's load reads the leaves and the notes apart, and joins them here by path (`_with_notes`):
# joined by DuckDB, a load at 50k notes held ~110 MB more (the notes' hash table did not fit a
# small pool, and the join then held the leaves' rows; a larger pool kept the scan's blocks).
# Each leaf's row goes to the row store as JSON (`LEAF_META_SQL`'s columns, in order): the
# leaf's part, without its text (a null keeps its place; to_json of the texts held ~90 MB of
# their blocks until the scan's end) and its closing brace, then its note's part (`tail`).
_LEAF_ROWS_SQL = (
    "SELECT l.id, l.note_path, l.seq, l.author, l.ts, l.term_count, "
    + _json_sql({name: "NULL::VARCHAR" if name == "text" else f"l.{name}" for name in _LEAF_FIELDS})
    + " AS head, l.text FROM leaves l"
)
_NOTE_ROWS_SQL = (
    "SELECT n.path, n.kind AS note_kind, n.source_kind, "
    f"',' || substr({_json_sql(_NOTE_EXPRESSIONS)}, 2) AS tail FROM notes n"
)
_ADDED_SCHEMA = pa.schema(
    [("id", pa.string()), ("note_path", pa.string()), ("seq", pa.int32()), ("author", pa.string()),
     ("ts", pa.timestamp("us")), ("term_count", pa.int32()), ("note_kind", pa.string()),
     ("source_kind", pa.string())]
)  # fmt: skip
# the kinds of leaf whose lengths BM25 weighs apart (`ResidentLeaves._stats`)
MESSAGE, SECTION, ENTITY_SECTION, EMAIL = 0, 1, 2, 3


@dataclass(frozen=True, slots=True)
class LeafColumns:
    """Some leaves' places, authors, lengths and times as arrays, in the order they were asked
    for (`ResidentLeaves.columns`). A leaf that is not live has `known` False, note and author -1,
    length NaN and no time (NaT). Codes index `note_names` and `author_names`: the lists of the
    load that gave them (a reload makes new lists; these stay as they were)."""

    known: npt.NDArray[np.bool_]
    note: npt.NDArray[np.int32]
    seq: npt.NDArray[np.int32]
    author: npt.NDArray[np.int32]
    length: npt.NDArray[np.float64]
    ts: npt.NDArray[np.datetime64]
    note_names: list[str]
    author_names: list[str]

    def extended(self, more: LeafColumns) -> LeafColumns:
        """These columns followed by `more`'s (both of the same load: the same code lists)."""
        assert more.note_names is self.note_names and more.author_names is self.author_names
        return LeafColumns(
            np.concatenate((self.known, more.known)), np.concatenate((self.note, more.note)),
            np.concatenate((self.seq, more.seq)), np.concatenate((self.author, more.author)),
            np.concatenate((self.length, more.length)), np.concatenate((self.ts, more.ts)),
            self.note_names, self.author_names,
        )  # fmt: skip

    def place(self, k: int) -> tuple[str, int, str | None] | None:
        """(note_path, seq, author) of the k-th leaf; None when it is not live."""
        if not self.known[k]:
            return None
        who = int(self.author[k])
        return self.note_names[int(self.note[k])], int(self.seq[k]), self.author_names[who] if who >= 0 else None


class ResidentLeaves:
    """Every leaf's place, time, length and BM25 postings (k1 = 1.2, b = 0.75), held in memory.

    Ranking needs no SQL round trip: lexical scores, timestamps, places and neighbours come
    from here, in numpy arrays (note and author as codes into small lists, postings as row and
    term frequency arrays grouped by term). The rows of the few hits a query shows (text,
    anchor, title, …) are read from the index by id (`rows`): texts are most of a leaf's bytes.
    """

    def __init__(self, index: Index):
        self.index = index
        self._lock = threading.Lock()
        self._loaded = False
        self._rows = RowIds()
        self._note: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)  # code into _notes, per row
        self._seq: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        self._author: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)  # code into _author_names; -1 none
        self._notes = _Codes()
        self._author_names = _Codes()
        self._doc_len: npt.NDArray[np.float64] = np.zeros(0)
        self._kind: npt.NDArray[np.int8] = np.zeros(0, dtype=np.int8)  # MESSAGE, SECTION or ENTITY_SECTION, per row
        self._ts: npt.NDArray[np.datetime64] = np.zeros(0, dtype="datetime64[us]")
        self._term_code = TermCodes(pa.array([], pa.string()))
        self._lists = PostingLists(np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.uint8))
        self._extra: dict[str, list[tuple[int, int]]] = {}
        self._place_keys: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)  # (note, seq) of loaded rows, sorted
        self._place_rows: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._place_added: dict[tuple[int, int], int] = {}  # (note, seq) → row, for rows added since
        self._authors: Counter[str] = Counter()  # live leaves per author
        self._author_set: frozenset[str] | None = None
        self._live_stats: tuple[float, npt.NDArray[np.float64]] | None = None  # (live leaves, mean length per kind); None: not counted
        self._note_stats: tuple[npt.NDArray[np.float64], int, float] | None = None  # `_note_lengths`; None: not counted
        self._store = _RowStore(index.path.parent if index.path is not None else None)
        self.room: Callable[[Callable[[], None]], None] = run_load  # runs a load (a serving process retries it with more memory)
        self.progress: Callable[[str, int, int], None] | None = None  # told (phase, done, total) as a load goes
        self.load_seconds = 0.0  # spent loading
        self.shared_ids = SharedIds()  # one copy of the loaded ids with the vectors' (`Memory` gives both one)

    # -- loading and deltas ----------------------------------------------------------------

    def _append_meta(self, meta: pa.Table | pa.RecordBatch) -> None:
        """Places, times and lengths of new rows (in `meta` order, already in `_rows`)."""
        notes, who, seq, length, ts, kind = self._columns(meta)
        self._note = np.concatenate((self._note, notes))
        self._kind = np.concatenate((self._kind, kind))
        self._author = np.concatenate((self._author, who))
        self._seq = np.concatenate((self._seq, seq))
        self._doc_len = np.concatenate((self._doc_len, length))
        self._ts = np.concatenate((self._ts, ts))
        self._authors.update(a for a in (self._author_names.names[c] for c in who.tolist() if c >= 0) if a)
        self._author_set = None

    def _columns(
        self, meta: pa.Table | pa.RecordBatch
    ) -> tuple[
        npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.float64],
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
            meta.column("term_count").to_numpy().astype(np.float64),
            _ts_array(meta.column("ts")),
            kind,
        )

    def _load(self) -> None:
        self._rows = RowIds()
        self._live_stats = None
        self._note_stats = None
        self._notes, self._author_names = _Codes(), _Codes()
        self._extra, self._place_added = {}, {}
        self._store.clear()
        parts: list[tuple[npt.NDArray[Any], ...]] = []
        with self.index.lock:  # streamed: each batch's rows go to the row store as JSON
            total = int(self.index.scalar("SELECT count(*) FROM leaves")) if self.progress else 0
            done = 0
            notes = self.index.con.execute(_NOTE_ROWS_SQL).to_arrow_table()
            reader = self.index.con.execute(_LEAF_ROWS_SQL).to_arrow_reader(_ROWS_BATCH)  # in any order: the rows know their ids
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
                     np.zeros(0), np.zeros(0, dtype="datetime64[us]"), np.zeros(0, np.int8))  # fmt: skip
            keys, notes, who, seq, length, ts, kind = (np.concatenate(c) for c in zip(*parts, strict=True)) if parts else empty
            del parts
            order = np.argsort(keys, kind="stable")  # rows in id order: lookups need no second copy
            if not bool((order == np.arange(len(order))).all()):
                keys, notes, who, seq, length, ts, kind = (a[order] for a in (keys, notes, who, seq, length, ts, kind))
                self._store.reorder(order)
            self.shared_ids.reset(self._rows, keys)
            self._note, self._author, self._seq, self._doc_len, self._ts, self._kind = notes, who, seq, length, ts, kind
            counts = np.bincount(who[who >= 0], minlength=len(self._author_names.names))
            names = self._author_names.names
            self._authors = Counter({name: n for name, n in zip(names, counts.tolist(), strict=True) if n and name})
            self._author_set = None
            release_freed_memory()  # the batches' columns, joined
            self._postings_from_snapshot_or_index(keys)
        places = (self._note.astype(np.int64) << 32) | (self._seq.astype(np.int64) & 0xFFFFFFFF)
        self._place_rows = np.argsort(places, kind="stable")
        self._place_keys = places[self._place_rows]
        self._loaded = True
        release_freed_memory()

    def _postings_from_snapshot_or_index(self, keys: npt.NDArray[np.bytes_]) -> None:
        """The postings as the last load left them in a snapshot beside the index, when it was
        taken of the same postings (`_postings_key`); otherwise loaded from the index, and a
        snapshot taken. A process that answers questions without a daemon loads them for its
        first question: at 50k notes 12–18 s from the index, a fraction of a second from the
        snapshot."""
        if self.index.path is None:
            self._load_postings(POSTINGS_POOL)
            return
        path = self.index.path.parent / POSTINGS_SNAPSHOT
        key = self._postings_key(keys)
        found = load_snapshot(path, key)
        if found is not None:
            self._term_code, self._lists = found
            if self.progress:
                self.progress("load postings", int(self._lists.bounds[-1]), int(self._lists.bounds[-1]))
            return
        self._load_postings(POSTINGS_POOL)
        try:
            save_snapshot(path, key, self._term_code, self._lists)
        except OSError as exc:  # a full disk, a read-only folder: the next load reads the index
            log.info("could not write the postings snapshot %s: %s", path, exc)

    def _postings_key(self, keys: npt.NDArray[np.bytes_]) -> str:
        """What the resident postings follow from: the loaded leaf ids in row order (a leaf id
        derives from its text, and its postings from the text and the tokenizer), the last
        migration (a tokenizer change comes with one), vaultmind's version, and, as a check, the
        postings' count (from the table's row counts: summing a column would read its blocks
        into DuckDB's pool: a 50k-note daemon's start peaked 12 MB higher)."""
        count = self.index.scalar("SELECT count(*) FROM postings")
        last = self.index.scalar("SELECT max(name) FROM migrations")
        digest = hashlib.blake2b(digest_size=20)
        digest.update(f"{POSTINGS_SNAPSHOT_FORMAT}|{__version__}|{last}|{count}|{keys.dtype.str}|".encode())
        digest.update(np.ascontiguousarray(keys).data)
        return digest.hexdigest()

    def _load_postings(self, pool: str | None) -> None:
        """Postings grouped by term, in two streamed passes: DuckDB counts each term's
        postings, then every posting is written to its term's slot of two preallocated arrays
        (its term's number joined by DuckDB — a hash table of the distinct terms, where a lookup
        per term and batch here took a quarter of the load —, its leaf's row found here, by id).
        Neither DuckDB nor this process ever holds the table at once. The lists are then kept
        in two bytes a row (`PostingLists`). The second pass runs under a buffer pool of `pool`
        (None: as it is), once more as it is if that runs out of memory."""
        con = self.index.con
        counts = con.execute(
            "SELECT term, count(*) AS n, max(tf) AS top FROM postings GROUP BY term ORDER BY term"
        ).to_arrow_table()
        n_terms = counts.num_rows
        codes = TermCodes(counts.column("term"))
        bounds = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(counts.column("n").to_numpy(), out=bounds[1:])
        top = int(counts.column("top").to_numpy().max()) if n_terms else 0
        post_row = np.full(int(bounds[-1]), -1, dtype=np.int32)
        post_tf = np.zeros(int(bounds[-1]), dtype=_narrow(np.array([top])).dtype)
        fill = bounds[:-1].copy()  # next free slot of each term
        numbered = pa.table({"term": counts.column("term"), "code": np.arange(n_terms, dtype=np.int32)})
        con.register("_term_codes", numbered)
        again = False
        try:
            with self.index.memory_limit(pool) if pool else nullcontext():
                reader = con.execute(
                    "SELECT c.code, p.leaf_id, p.tf FROM postings p JOIN _term_codes c USING (term)"
                ).to_arrow_reader(8 * _BATCH)
                self._fill_postings(reader, fill, post_row, post_tf, int(bounds[-1]))
        except duckdb.OutOfMemoryException as exc:
            if not pool:
                raise
            log.info("the postings ran out of memory under %s (%s); loading them again", pool, exc)
            again = True
        finally:
            con.unregister("_term_codes")
        if again:
            del post_row, post_tf
            self._load_postings(pool=None)
            return
        # The scan left DuckDB's pool full of postings blocks (~100 MB at 50k notes) that nothing
        # reads again: dropped before the lists are packed, the load's peak is that much lower.
        self.index.drop_cached_blocks()
        if not np.array_equal(fill, bounds[1:]):
            raise RuntimeError("the postings changed while they were loaded")
        known = post_row >= 0
        if not known.all():  # postings of leaves without a note (not loaded): dropped
            kept = np.add.reduceat(known.astype(np.int64), bounds[:-1]) if n_terms else np.zeros(0, np.int64)
            bounds = np.concatenate(([0], np.cumsum(kept))).astype(np.int64)
            post_row, post_tf = post_row[known], post_tf[known]
        self._term_code = codes
        self._lists = PostingLists(bounds, post_row, post_tf)

    def _fill_postings(
        self, reader: pa.RecordBatchReader, fill: npt.NDArray[np.int64], post_row: npt.NDArray[np.int32],
        post_tf: npt.NDArray[Any], total: int,
    ) -> None:
        """Write each posting of `reader` (code, leaf id, tf) to its term's next free slot
        (`total` postings in all)."""
        done = 0
        for batch in reader:
            # Leaf ids repeat within a batch (a leaf's postings are stored together): each
            # distinct one is looked up once.
            code = batch.column(0).to_numpy(zero_copy_only=False).astype(np.int64)
            leaf = batch.column(1).dictionary_encode()
            rows = self._rows.find_keys(id_array(leaf.dictionary))[leaf.indices.to_numpy(zero_copy_only=False)]
            order = np.argsort(code, kind="stable")
            grouped = code[order]
            slot = fill[grouped] + np.arange(len(grouped)) - _group_starts(grouped)
            post_row[slot] = rows[order]
            post_tf[slot] = batch.column(2).to_numpy(zero_copy_only=False)[order]
            fill += np.bincount(code, minlength=len(fill))
            done += len(code)
            if self.progress:
                self.progress("load postings", min(done, total), total)

    def apply(self, change: ChangeSet) -> None:
        with self.index.lock, self._lock:  # in the order every other path takes them
            self._live_stats = None
            self._note_stats = None
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
        found = self._meta_of([leaf.leaf_id for leaf in added])
        self._store.append_rows(found)
        meta = pa.Table.from_pylist(found, schema=_ADDED_SCHEMA)
        by_id = {leaf.leaf_id: leaf for leaf in added}
        new_ids = [str(x) for x in meta.column("id").to_pylist()]
        new_rows = self._rows.extend(new_ids)
        self._append_meta(meta)
        for leaf_id, row in zip(new_ids, new_rows, strict=True):
            self._place_added[(int(self._note[row]), int(self._seq[row]))] = row
            for term, tf in by_id[leaf_id].counts.items():
                self._extra.setdefault(term, []).append((row, tf))

    def _meta_of(self, leaf_ids: list[str]) -> list[dict[str, Any]]:
        """`LEAF_META_SQL` rows of a few leaves, in id order: the leaves, then their notes, in
        two lookups (one join over the whole index cost a scan of every note's front matter)."""
        with self.index.lock:
            leaves = self.index.con.execute(
                f"SELECT {_LEAF_COLUMNS} FROM leaves l WHERE l.id IN (SELECT unnest(string_split(?, chr(31)))) ORDER BY l.id",
                ["\x1f".join(leaf_ids)],
            ).to_arrow_table()
            paths = sorted(set(leaves.column("note_path").to_pylist()))
            notes = self.index.con.execute(
                f"SELECT n.path, {_NOTE_COLUMNS} FROM notes n WHERE n.path IN (SELECT unnest(string_split(?, chr(31))))",
                ["\x1f".join(paths)],
            ).fetchall()
        by_path = {row[0]: row[1:] for row in notes}
        rows = []
        for row in leaves.to_pylist():
            note = by_path.get(row["note_path"])
            if note is not None:  # the inner join of LEAF_META_SQL
                rows.append({**row, **dict(zip(_NOTE_FIELDS, note, strict=True))})
        return rows

    @contextmanager
    def _held(self) -> Iterator[None]:
        """This structure's lock, for a query. When it is not loaded, the index's lock first: a
        load reads the index, and a sync takes the index's lock and then this one (to apply
        its change), so a query that held this one while it waited for the index's would wait
        on the sync forever, and the sync on it. Loaded, a query never touches the index."""
        with self._lock:
            if self._loaded:
                yield
                return
        with self.index.lock, self._lock:
            yield

    def _ensure(self) -> None:
        if not self._loaded:
            started = time.monotonic()
            self.room(self._load)
            self.load_seconds += time.monotonic() - started

    # -- queries ---------------------------------------------------------------------------

    def search(
        self, query_terms: Sequence[str], limit: int, joined: Mapping[str, Sequence[str]] | None = None
    ) -> list[tuple[str, float]]:
        """[(leaf_id, bm25)] best first, ties by id — the same ranking as `lexical.bm25`. A term
        of `joined` is also held by the leaves holding its joined forms ("ice" by "icecream")."""
        unique = sorted(set(query_terms))
        with self._held():
            self._ensure()
            alive = self._rows.alive
            n, of_kind = self._stats()
            if n == 0 or not unique:
                return []
            scores = np.zeros(len(self._rows))
            for term in unique:
                rows, tfs = self._postings_of(term, joined)
                keep = alive[rows]
                rows, tfs = rows[keep], tfs[keep]
                if len(rows) == 0:
                    continue
                df = float(len(rows))
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                # a leaf's length against the mean of its own kind's (`_stats`)
                avgdl = of_kind[self._kind[rows]]
                dl = self._doc_len[rows]
                scores[rows] += idf * tfs * (K1 + 1) / (tfs + K1 * (1 - B + B * dl / avgdl))
            hit = np.flatnonzero(scores > 0)
            if len(hit) == 0:
                return []
            k = min(limit, len(hit))
            top = hit[self._rows.top_rows(hit, scores[hit], k)]
            return self._rows.best_first(top, scores[top])

    def document_frequency(self, term: str, joined: Mapping[str, Sequence[str]] | None = None) -> tuple[int, int]:
        """(leaves containing `term` or, by `joined`, a form of it joined to a neighbour, live leaves)."""
        with self._held():
            self._ensure()
            rows, _ = self._postings_of(term, joined)
            return int(np.count_nonzero(self._rows.alive[rows])), int(self._stats()[0])

    def _stats(self) -> tuple[float, npt.NDArray[np.float64]]:
        """(live leaves, the mean length of the live leaves of each kind — messages, sections of
        documents and notes, sections of entity notes — at least 1), counted once per change
        (BM25's N and avgdl: a pass over every row). A leaf's length is weighed against its own
        kind's mean, as BM25F weighs each field's: a memory of short chat messages made every
        document section "long", and "Worth planning for." outranked the runbook's "Rollback"
        section for "what is the rollback plan?"; the short entity notes made sections look
        long as well; and an email among them, a letter beside chat lines, lost to the note that
        only named its subject. A message is a leaf with an author, an email one of an email
        note (`lexical.bm25` alike)."""
        if self._live_stats is None:
            alive = self._rows.alive
            n = float(np.count_nonzero(alive))
            means = [_mean_length(self._doc_len[alive & (self._kind == kind)]) for kind in (MESSAGE, SECTION, ENTITY_SECTION, EMAIL)]
            self._live_stats = (n, np.array(means))
        return self._live_stats

    def notes_with(
        self, query_terms: Sequence[str], among: Collection[str], joined: Mapping[str, Sequence[str]] | None = None
    ) -> dict[str, set[str]]:
        """Per term of `query_terms`, those of the notes `among` (paths) with at least one live
        leaf holding it or, by `joined`, a form of it joined to a neighbour (the paths are
        looked up once for all the terms)."""
        with self._held():
            self._ensure()
            found = [(path, code) for path in among if (code := self._notes.find(path)) is not None]
            if not found:
                return {term: set() for term in query_terms}
            paths = [path for path, _ in found]
            codes = np.array([code for _, code in found], dtype=np.int64)
            out: dict[str, set[str]] = {}
            for term in query_terms:
                rows, _ = self._postings_of(term, joined)
                held = np.zeros(len(self._notes.names), dtype=bool)
                held[self._note[rows[self._rows.alive[rows]]]] = True
                out[term] = {paths[k] for k in np.flatnonzero(held[codes]).tolist()}
            return out

    def note_bm25(
        self, query_terms: Sequence[str], among: Collection[str], joined: Mapping[str, Sequence[str]] | None = None
    ) -> dict[str, float]:
        """Per note of `among` (paths) that holds a term of `query_terms`, BM25 with the note as one
        document: a term's frequency summed over the note's live leaves, the note's length the sum
        of theirs against the mean of the notes with live leaves, a term's idf from how many of
        those notes hold it (or, by `joined`, a form of it joined to a neighbour)."""
        with self._held():
            self._ensure()
            found = [(path, code) for path in among if (code := self._notes.find(path)) is not None]
            lengths, n, mean = self._note_lengths()
            if not found or n == 0:
                return {}
            codes = np.array([code for _, code in found], dtype=np.int64)
            norm = K1 * (1 - B + B * lengths[codes] / mean)
            scores = np.zeros(len(codes))
            for term in sorted(set(query_terms)):
                rows, tfs = self._postings_of(term, joined)
                keep = self._rows.alive[rows]
                tf = np.bincount(self._note[rows[keep]], weights=tfs[keep], minlength=len(lengths))
                df = float(np.count_nonzero(tf))
                if df:
                    held = tf[codes]
                    scores += math.log(1 + (n - df + 0.5) / (df + 0.5)) * held * (K1 + 1) / (held + norm)
            return {path: float(value) for (path, _), value in zip(found, scores.tolist(), strict=True) if value > 0}

    def _note_lengths(self) -> tuple[npt.NDArray[np.float64], int, float]:
        """(each note code's length, the sum of its live leaves' lengths; how many notes have a
        live leaf; their mean length, at least 1), counted once per change (`note_bm25`)."""
        stats = self._note_stats
        if stats is None:
            alive = self._rows.alive
            lengths = np.bincount(self._note[alive], weights=self._doc_len[alive], minlength=len(self._notes.names)).astype(np.float64)
            held = np.bincount(self._note[alive], minlength=len(self._notes.names)) > 0
            n = int(np.count_nonzero(held))
            stats = (lengths, n, max(float(lengths[held].mean()), 1.0) if n else 1.0)
            self._note_stats = stats
        return stats

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

    def _postings_of(
        self, term: str, joined: Mapping[str, Sequence[str]] | None
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]]:
        """The postings of `term` merged with those of its joined forms (`joined`): a leaf holding
        both counts once, with the sum of their counts."""
        rows, tfs = self._postings(term)
        forms = joined.get(term, ()) if joined else ()
        if not forms:
            return rows, tfs
        for form in forms:
            more_rows, more_tfs = self._postings(form)
            rows, tfs = np.concatenate((rows, more_rows)), np.concatenate((tfs, more_tfs))
        merged, at = np.unique(rows, return_inverse=True)
        return merged.astype(np.int32), np.bincount(at, weights=tfs, minlength=len(merged)).astype(np.float64)

    def _postings(self, term: str) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]]:
        code = self._term_code.get(term)
        if code is not None:
            rows, counts = self._lists.get(code)
            tfs = counts.astype(np.float64)
        else:
            rows, tfs = np.zeros(0, dtype=np.int32), np.zeros(0)
        extra = self._extra.get(term)
        if extra:
            rows = np.concatenate((rows, np.array([r for r, _ in extra], dtype=np.int32)))
            tfs = np.concatenate((tfs, np.array([t for _, t in extra], dtype=np.float64)))
        return rows, tfs


def _with_notes(batch: pa.RecordBatch, notes: pa.Table) -> tuple[pa.Table, pa.Array]:
    """The leaves of `batch` whose note is among `notes` (the inner join of `LEAF_META_SQL`),
    with their note's kind and source kind, and their rows as JSON (`_LEAF_ROWS_SQL`)."""
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


def _group_starts(grouped: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """For each element of a sorted array, the index of the first element equal to it."""
    if not len(grouped):
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate(([True], grouped[1:] != grouped[:-1])))
    return np.repeat(starts, np.diff(np.append(starts, len(grouped))))


class _RowStore:
    """Each leaf's `LEAF_META_SQL` row in an unnamed temporary file next to the index (deleted
    by the OS when the process ends), read back by offset: the rows of a whole vault stay on
    disk (the page cache, not this process's memory) and a hit's row costs two reads. A record
    is the row as JSON with a null for its text, then the text as UTF-8 elsewhere in the file
    (`_LEAF_ROWS_SQL`). Row i of the resident structures is record i here; rows are only
    appended, a reload starts the file over."""

    def __init__(self, folder: Path | None):
        self._folder = folder
        self._file: ScratchFile | None = None
        self._start, self._size = _no_spans()  # each row's JSON
        self._text_start, self._text_size = _no_spans()  # its text
        self._end = 0

    def _scratch(self) -> ScratchFile:
        if self._file is None:
            self._file = ScratchFile(self._folder, "vaultmind-rows-")
        return self._file

    def clear(self) -> None:
        if self._file is not None:
            self._file.truncate()
        self._start, self._size = _no_spans()
        self._text_start, self._text_size = _no_spans()
        self._end = 0

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self.clear()

    def append_columns(self, rows: pa.Array | pa.ChunkedArray, texts: pa.Array | pa.ChunkedArray) -> None:
        """Append the records of two string columns, straight from their buffers: the rows as
        JSON (their text null) and the texts."""
        start, size = self._write_column(rows)
        text_start, text_size = self._write_column(texts)
        self._append(start, size, text_start, text_size)

    def _write_column(self, column: pa.Array | pa.ChunkedArray) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32]]:
        array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        if len(array) == 0:
            return _no_spans()
        if pa.types.is_large_string(array.type) or pa.types.is_string_view(array.type):
            array = array.cast(pa.large_string())
            wide = True
        else:
            wide = False
        offsets = np.frombuffer(array.buffers()[1], dtype=np.int64 if wide else np.int32)
        offsets = offsets[array.offset : array.offset + len(array) + 1].astype(np.int64)
        data = memoryview(array.buffers()[2] or b"")[int(offsets[0]) : int(offsets[-1])]
        return self._write(bytes(data) if not data.contiguous else data, offsets - offsets[0])

    def reorder(self, order: npt.NDArray[np.int64]) -> None:
        """Record i becomes record order[i] (the file stays as it is)."""
        self._start, self._size = self._start[order], self._size[order]
        self._text_start, self._text_size = self._text_start[order], self._text_size[order]

    def append_rows(self, rows: Sequence[dict[str, Any]]) -> None:
        """Append rows given as dicts (a few leaves a save added), stored as a load stores them."""
        texts = pa.array([row["text"] for row in rows], pa.string())
        encoded = pa.array(
            [json.dumps({**row, "text": None}, ensure_ascii=False, separators=(",", ":"), default=str) for row in rows],
            pa.string(),
        )
        self.append_columns(encoded, texts)

    def _write(self, data: bytes | memoryview, offsets: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32]]:
        """Write records back to back at the file's end: (their starts, their sizes)."""
        self._scratch().write(self._end, data)
        start = self._end + offsets[:-1]
        self._end += len(data)
        return start, np.diff(offsets).astype(np.int32)

    def _append(self, start: npt.NDArray[np.int64], size: npt.NDArray[np.int32],
                text_start: npt.NDArray[np.int64], text_size: npt.NDArray[np.int32]) -> None:  # fmt: skip
        self._start, self._size = np.concatenate((self._start, start)), np.concatenate((self._size, size))
        self._text_start = np.concatenate((self._text_start, text_start))
        self._text_size = np.concatenate((self._text_size, text_size))

    @property
    def nbytes(self) -> int:
        """Bytes held in memory (the offsets; the rows themselves are in the file)."""
        return sum(a.nbytes for a in (self._start, self._size, self._text_start, self._text_size))

    def row(self, i: int) -> dict[str, Any]:
        file = self._scratch()
        row: dict[str, Any] = json.loads(file.read(int(self._start[i]), int(self._size[i])))
        row["text"] = file.read(int(self._text_start[i]), int(self._text_size[i])).decode()
        if row.get("ts") is not None:
            row["ts"] = datetime.fromisoformat(row["ts"])
        return row


def _no_spans() -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32]]:
    """No records' (starts, sizes)."""
    return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32)


class _Codes:
    """Distinct strings (note paths, authors) numbered in order of first appearance."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._code: dict[str, int] = {}

    def find(self, name: str) -> int | None:
        return self._code.get(name)

    def code(self, name: str) -> int:
        found = self._code.get(name)
        if found is None:
            found = self._code[name] = len(self.names)
            self.names.append(name)
        return found

    def codes(self, column: pa.Array | pa.ChunkedArray) -> npt.NDArray[np.int32]:
        """The code of each value of a string column (-1 for null), through its dictionary: one
        Python call per distinct value, not per row."""
        array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        encoded = array.dictionary_encode()
        mapping = np.array([*(self.code(v) for v in encoded.dictionary.to_pylist()), -1], dtype=np.int32)
        indices = pc.fill_null(encoded.indices, len(mapping) - 1).to_numpy(zero_copy_only=False)
        codes: npt.NDArray[np.int32] = mapping[indices]
        return codes


def _mean_length(lengths: npt.NDArray[np.float64]) -> float:
    """BM25's avgdl of some leaves: their mean length, at least 1 (1 for none)."""
    return max(float(lengths.mean()), 1.0) if len(lengths) else 1.0


def _narrow(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """Non-negative integers in the smallest unsigned type that holds them."""
    top = int(values.max()) if len(values) else 0
    for dtype in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(dtype).max and (not len(values) or int(values.min()) >= 0):
            return values.astype(dtype)
    return values.astype(np.int64)


def _ts_array(column: pa.Array | pa.ChunkedArray) -> npt.NDArray[np.datetime64]:
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    out: npt.NDArray[np.datetime64] = array.cast(pa.timestamp("us")).to_numpy(zero_copy_only=False).astype("datetime64[us]")
    return out


def run_load(load: Callable[[], None]) -> None:
    load()
