"""Resident (in-memory) search structures kept in step with the index by deltas.

A serving process answers lexical and dense queries from memory: BM25 over numpy postings
and cosine over a numpy matrix. They load once from DuckDB, then follow every sync through
`apply(change)` — removed leaves become tombstones, new leaves are appended — so saving a
note never reloads the whole index. Tombstones are compacted away by a full reload once they
pass a quarter of the rows. Results are identical to the SQL definitions in `lexical.py`.
"""

from __future__ import annotations

import bisect
import heapq
import math
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from vaultmind.index.lexical import K1, B
from vaultmind.index.store import Index

COMPACT_SHARE = 0.25


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


class _Rows:
    """Leaf ids ↔ row numbers, with tombstones.

    A leaf id can live in two notes at once (a copied source note keeps its message ids):
    such ids are remembered as shared, and removing one marks the rows `stale` — the caller
    then reloads, since the copy that remains must keep its row."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.pos: dict[str, int] = {}
        self.alive: npt.NDArray[np.bool_] = np.zeros(0, dtype=bool)
        self.shared: set[str] = set()
        self.stale = False

    def reset(self, ids: list[str]) -> None:
        self.ids = ids
        self.pos = {leaf_id: i for i, leaf_id in enumerate(ids)}
        self.alive = np.ones(len(ids), dtype=bool)
        self.shared = set() if len(self.pos) == len(ids) else {i for i, n in Counter(ids).items() if n > 1}
        self.stale = False

    def extend(self, leaf_ids: Sequence[str]) -> list[int]:
        """Append rows for `leaf_ids` (a re-added id tombstones its old row); their row numbers."""
        start = len(self.ids)
        rows = []
        self.alive = np.concatenate((self.alive, np.ones(len(leaf_ids), dtype=bool)))
        for offset, leaf_id in enumerate(leaf_ids):
            old = self.pos.get(leaf_id)
            if old is not None:
                if self.alive[old]:
                    self.shared.add(leaf_id)  # still alive: the same id in another note
                self.alive[old] = False
            self.ids.append(leaf_id)
            self.pos[leaf_id] = start + offset
            rows.append(start + offset)
        return rows

    def remove(self, leaf_id: str) -> None:
        i = self.pos.pop(leaf_id, None)
        if i is not None:
            self.alive[i] = False
        if leaf_id in self.shared:
            self.stale = True

    @property
    def dead_share(self) -> float:
        return 0.0 if not self.ids else 1.0 - float(self.alive.sum()) / len(self.ids)


_LEAF_COLUMNS = (
    "l.id, l.note_path, l.seq, l.anchor, l.text, l.ts, l.author, l.source_ref, l.message_id, l.content_hash, "
    "l.term_count, l.heading_path"
)
_NOTE_COLUMNS = "n.kind AS note_kind, n.title, n.source_id, coalesce(json_extract_string(n.frontmatter, '$.scope'), '') AS scope"
LEAF_META_SQL = f"SELECT {_LEAF_COLUMNS}, {_NOTE_COLUMNS} FROM leaves l JOIN notes n ON n.path = l.note_path"


class ResidentLeaves:
    """Every leaf's metadata and BM25 postings (k1 = 1.2, b = 0.75), held in memory.

    Ranking needs no SQL round trip: lexical scores, timestamps and the rows of the top hits
    all come from here. Rows are Arrow tables (compact; text is the bulk).
    """

    def __init__(self, index: Index):
        self.index = index
        self._lock = threading.Lock()
        self._loaded = False
        self._rows = _Rows()
        self._meta: list[pa.Table] = []
        self._meta_offsets: list[int] = []
        self._doc_len: npt.NDArray[np.float64] = np.zeros(0)
        self._ts: npt.NDArray[np.datetime64] = np.zeros(0, dtype="datetime64[us]")
        self._slices: dict[str, tuple[int, int]] = {}
        self._post_row: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        self._post_tf: npt.NDArray[np.float64] = np.zeros(0)
        self._extra: dict[str, list[tuple[int, int]]] = {}
        self._place: list[tuple[str, int, str | None]] = []  # (note_path, seq, author) per row
        self._authors: Counter[str] = Counter()  # live leaves per author
        self._author_set: frozenset[str] | None = None
        self._at: dict[tuple[str, int], str] = {}  # (note_path, seq) → live leaf id

    # -- loading and deltas ----------------------------------------------------------------

    def _index_places(self, meta: pa.Table) -> None:
        paths = meta.column("note_path").to_pylist()
        seqs = meta.column("seq").to_pylist()
        authors = meta.column("author").to_pylist()
        ids = meta.column("id").to_pylist()
        for path, seq, author, leaf_id in zip(paths, seqs, authors, ids, strict=True):
            self._place.append((path, seq, author))
            self._at[(path, seq)] = leaf_id
        self._authors.update(a for a in authors if a)
        self._author_set = None

    def _load(self) -> None:
        with self.index.lock:
            meta = self.index.con.execute(LEAF_META_SQL + " ORDER BY l.id").to_arrow_table()
            post = self.index.con.execute("SELECT term, leaf_id, tf FROM postings").to_arrow_table()
        self._rows.reset([str(x) for x in meta.column("id").to_pylist()])
        self._meta = [meta]
        self._meta_offsets = [0]
        self._place = []
        self._at = {}
        self._authors = Counter()
        self._index_places(meta)
        self._doc_len = meta.column("term_count").to_numpy().astype(np.float64)
        self._ts = _ts_array(meta)
        # Map leaf ids to rows and group postings by term, in numpy (faster than SQL sort + join).
        leaf_codes = post.column("leaf_id").combine_chunks().dictionary_encode()
        pos = self._rows.pos
        row_of = np.array([pos.get(leaf_id, -1) for leaf_id in leaf_codes.dictionary.to_pylist()], dtype=np.int32)
        rows = row_of[leaf_codes.indices.to_numpy(zero_copy_only=False)] if len(row_of) else np.zeros(0, np.int32)
        terms = post.column("term").combine_chunks().dictionary_encode()
        term_codes = terms.indices.to_numpy(zero_copy_only=False)
        order = np.lexsort((rows, term_codes))
        codes = term_codes[order]
        words = terms.dictionary.to_pylist()
        self._post_row = rows[order]
        self._post_tf = post.column("tf").to_numpy().astype(np.float64)[order]
        self._slices = {}
        if len(codes):
            bounds = np.flatnonzero(np.diff(codes)) + 1
            starts = np.concatenate(([0], bounds))
            ends = np.concatenate((bounds, [len(codes)]))
            for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
                self._slices[words[codes[start]]] = (start, end)
        self._extra = {}
        self._loaded = True

    def apply(self, change: ChangeSet) -> None:
        with self._lock:
            if change.reset or not self._loaded:
                self._loaded = False
                return
            for leaf_id in change.removed:
                i = self._rows.pos.get(leaf_id)
                author = self._place[i][2] if i is not None and self._rows.alive[i] else None
                if author:
                    self._authors[author] -= 1
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
        meta = self._meta_of([leaf.leaf_id for leaf in added])
        by_id = {leaf.leaf_id: leaf for leaf in added}
        self._meta_offsets.append(len(self._rows.ids))
        self._meta.append(meta)
        new_ids = [str(x) for x in meta.column("id").to_pylist()]
        new_rows = self._rows.extend(new_ids)
        self._index_places(meta)
        for leaf_id, row in zip(new_ids, new_rows, strict=True):
            for term, tf in by_id[leaf_id].counts.items():
                self._extra.setdefault(term, []).append((row, tf))
        self._doc_len = np.concatenate((self._doc_len, meta.column("term_count").to_numpy().astype(np.float64)))
        self._ts = np.concatenate((self._ts, _ts_array(meta)))

    def _meta_of(self, leaf_ids: list[str]) -> pa.Table:
        """`LEAF_META_SQL` rows of a few leaves: the leaves, then their notes, in two lookups
        (one join over the whole index cost a scan of every note's front matter)."""
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
        names = ("note_kind", "title", "source_id", "scope")
        rows = []
        for row in leaves.to_pylist():
            note = by_path.get(row["note_path"])
            if note is not None:  # the inner join of LEAF_META_SQL
                rows.append({**row, **dict(zip(names, note, strict=True))})
        schema = self._meta[0].schema if self._meta else None
        return pa.Table.from_pylist(rows, schema=schema)

    def _ensure(self) -> None:
        if not self._loaded:
            self._load()

    # -- queries ---------------------------------------------------------------------------

    def search(self, query_terms: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """[(leaf_id, bm25)] best first, ties by id — the same ranking as `lexical.bm25`."""
        unique = sorted(set(query_terms))
        with self._lock:
            self._ensure()
            alive = self._rows.alive
            n = float(alive.sum())
            if n == 0 or not unique:
                return []
            avgdl = max(float(self._doc_len[alive].mean()), 1.0)
            scores = np.zeros(len(self._rows.ids))
            for term in unique:
                rows, tfs = self._postings(term)
                keep = alive[rows]
                rows, tfs = rows[keep], tfs[keep]
                if len(rows) == 0:
                    continue
                df = float(len(rows))
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                dl = self._doc_len[rows]
                scores[rows] += idf * tfs * (K1 + 1) / (tfs + K1 * (1 - B + B * dl / avgdl))
            hit = np.flatnonzero(scores > 0)
            if len(hit) == 0:
                return []
            k = min(limit, len(hit))
            top = hit[np.argpartition(-scores[hit], k - 1)[:k]] if len(hit) > k else hit
            ids = self._rows.ids
            ranked = sorted(top.tolist(), key=lambda i: (-float(scores[i]), ids[i]))
            return [(ids[i], float(scores[i])) for i in ranked]

    def document_frequency(self, term: str) -> tuple[int, int]:
        """(leaves containing `term`, live leaves)."""
        with self._lock:
            self._ensure()
            rows, _ = self._postings(term)
            alive = self._rows.alive
            return int(alive[rows].sum()), int(alive.sum())

    def authors(self) -> frozenset[str]:
        """The authors of live leaves (as written in their notes)."""
        with self._lock:
            self._ensure()
            if self._author_set is None:
                self._author_set = frozenset(a for a, n in self._authors.items() if n > 0)
            return self._author_set

    def times(self, leaf_ids: Sequence[str]) -> dict[str, datetime]:
        with self._lock:
            self._ensure()
            pos = self._rows.pos
            found = [(leaf_id, pos[leaf_id]) for leaf_id in leaf_ids if leaf_id in pos]
            if not found:
                return {}
            stamps = self._ts[np.fromiter((i for _, i in found), dtype=np.int64, count=len(found))]
            values = stamps.astype("datetime64[us]").tolist()  # datetime objects, None for NaT
            return {leaf_id: when for (leaf_id, _), when in zip(found, values, strict=True) if when is not None}

    def places(self, leaf_ids: Sequence[str]) -> dict[str, tuple[str, int, str | None]]:
        """(note_path, seq, author) of live leaves, by id."""
        with self._lock:
            self._ensure()
            out = {}
            for leaf_id in leaf_ids:
                i = self._rows.pos.get(leaf_id)
                if i is not None and self._rows.alive[i]:
                    out[leaf_id] = self._place[i]
            return out

    def neighbours(self, leaf_id: str, span: int = 1) -> list[str]:
        """Live leaves right before and after `leaf_id` in the same note (conversation context)."""
        with self._lock:
            self._ensure()
            i = self._rows.pos.get(leaf_id)
            if i is None:
                return []
            path, seq, _ = self._place[i]
            out = []
            for other in range(seq - span, seq + span + 1):
                if other == seq:
                    continue
                found = self._at.get((path, other))
                if found is not None and self._rows.pos.get(found) is not None:
                    j = self._rows.pos[found]
                    if self._rows.alive[j]:
                        out.append(found)
            return out

    def in_window(self, start: datetime, end: datetime, limit: int) -> list[str]:
        """Live leaves with start <= ts < end, earliest first (ties by id)."""
        with self._lock:
            self._ensure()
            if limit <= 0:
                return []
            lo, hi = np.datetime64(start, "us"), np.datetime64(end, "us")
            ts = self._ts  # NaT compares False: rows without a time drop out
            rows = np.flatnonzero(self._rows.alive & (ts >= lo) & (ts < hi))
            ids = self._rows.ids
            if len(rows) > limit:  # the `limit` earliest; among rows tied at the cut, the lowest ids
                cut = np.partition(ts[rows], limit - 1)[limit - 1]
                before = rows[ts[rows] < cut]
                tied = rows[ts[rows] == cut].tolist()
                keep = np.array(heapq.nsmallest(limit - len(before), tied, key=ids.__getitem__), dtype=np.int64)
                rows = np.concatenate((before, keep))
            order = sorted(rows.tolist(), key=lambda i: (ts[i], ids[i]))
            return [ids[i] for i in order]

    def rows(self, leaf_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Metadata rows (as dicts) of live leaves, by id; unknown ids are absent."""
        with self._lock:
            self._ensure()
            wanted: dict[int, list[tuple[str, int]]] = {}  # meta part → [(leaf id, row in part)]
            for leaf_id in leaf_ids:
                i = self._rows.pos.get(leaf_id)
                if i is None or not self._rows.alive[i]:
                    continue
                part = bisect.bisect_right(self._meta_offsets, i) - 1
                wanted.setdefault(part, []).append((leaf_id, i - self._meta_offsets[part]))
            out: dict[str, dict[str, Any]] = {}
            for part, items in wanted.items():
                picked = self._meta[part].take([local for _, local in items]).to_pylist()
                for (leaf_id, _), row in zip(items, picked, strict=True):
                    out[leaf_id] = row
            return {leaf_id: out[leaf_id] for leaf_id in leaf_ids if leaf_id in out}

    def _postings(self, term: str) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]]:
        span = self._slices.get(term)
        rows = self._post_row[span[0] : span[1]] if span else np.zeros(0, dtype=np.int32)
        tfs = self._post_tf[span[0] : span[1]] if span else np.zeros(0)
        extra = self._extra.get(term)
        if extra:
            rows = np.concatenate((rows, np.array([r for r, _ in extra], dtype=np.int32)))
            tfs = np.concatenate((tfs, np.array([t for _, t in extra], dtype=np.float64)))
        return rows, tfs


def _ts_array(meta: pa.Table) -> npt.NDArray[np.datetime64]:
    column = meta.column("ts").combine_chunks().cast(pa.timestamp("us"))
    out: npt.NDArray[np.datetime64] = column.to_numpy(zero_copy_only=False).astype("datetime64[us]")
    return out


class ResidentVectors:
    """Leaf vectors of one model (float32); cosine search, by an inverted file at scale.

    Up to `EXACT_BELOW` live vectors every query is scored against all of them (one matrix
    product). Above, the vectors are clustered once (spherical k-means on a sample, a fixed
    seed, √N clusters) and a query scores exactly the vectors of the clusters whose centroids
    are nearest (about `PROBE_SHARE` of the rows) plus every vector added since the
    clustering. The result is deterministic; the walk benchmark reports its recall against a
    full scan (`dense_recall_at_100`). The clustering is redone once the vectors added since
    pass a quarter of the rows.
    """

    EXACT_BELOW = 150_000  # a full scan of 150k × 256 floats costs about 10 ms on one core
    PROBE_SHARE = 0.10  # of the rows, in the nearest clusters
    MIN_PROBE = 8

    def __init__(self, index: Index, model_id: str):
        self.index = index
        self.model_id = model_id
        self._lock = threading.Lock()
        self._loaded = False
        self._rows = _Rows()
        self._chunks: list[npt.NDArray[np.float32]] = []
        self._matrix: npt.NDArray[np.float32] = np.zeros((0, 0), dtype=np.float32)
        self._ivf: _Clusters | None = None

    def _load(self) -> None:
        ids: list[str] = []
        blocks: list[npt.NDArray[np.float32]] = []
        with self.index.lock:  # streamed in batches: never the whole result twice in memory
            reader = self.index.con.execute(
                """
                SELECT l.id, e.vec FROM leaves l
                JOIN embeddings e ON e.content_hash = l.content_hash AND e.model = ?
                ORDER BY l.id
                """,
                [self.model_id],
            ).to_arrow_reader(65_536)
            for batch in reader:
                ids.extend(str(x) for x in batch.column(0).to_pylist())
                blocks.append(_matrix_of(batch.column(1)))
        self._rows.reset(ids)
        blocks = [b for b in blocks if b.size]
        self._matrix = np.vstack(blocks) if blocks else np.zeros((0, 0), dtype=np.float32)
        self._chunks = []
        self._ivf = None
        self._loaded = True

    def apply(self, change: ChangeSet) -> None:
        with self._lock:
            if change.reset or change.backfilled or not self._loaded:
                self._loaded = False
                return
            for leaf_id in change.removed:
                self._rows.remove(leaf_id)
            if self._rows.stale:  # a removed id lives on in another note: reload
                self._loaded = False
                return
            if change.added:
                self._add(change.added)
            if self._rows.dead_share > COMPACT_SHARE:
                self._loaded = False

    def _add(self, added: Sequence[LeafDelta]) -> None:
        hashes = sorted({leaf.content_hash for leaf in added})
        with self.index.lock:  # by content hash: no join with the leaves
            table = self.index.con.execute(
                """SELECT content_hash, vec FROM embeddings
                   WHERE model = ? AND content_hash IN (SELECT unnest(string_split(?, chr(31))))""",
                [self.model_id, "\x1f".join(hashes)],
            ).to_arrow_table()
        if table.num_rows == 0:
            return
        matrix = _matrix_of(table.column("vec"))
        row_of = {h: i for i, h in enumerate(table.column("content_hash").to_pylist())}
        fresh = sorted((leaf.leaf_id, row_of[leaf.content_hash]) for leaf in added if leaf.content_hash in row_of)
        self._rows.extend([leaf_id for leaf_id, _ in fresh])
        self._chunks.append(matrix[[i for _, i in fresh]])

    def _ready(self) -> None:
        if not self._loaded:
            self._load()
        if self._chunks and (len(self._chunks) > 64 or sum(len(c) for c in self._chunks) > len(self._matrix) // 20):
            self._merge()
        live = int(self._rows.alive.sum())
        if live < self.EXACT_BELOW:
            self._ivf = None
        elif self._ivf is None or len(self._matrix) - self._ivf.size > self._ivf.size // 4:
            self._ivf = _Clusters.build(self._matrix, self._rows.alive)

    def _merge(self) -> None:
        """Fold the vectors added since the last merge into the matrix (a copy of it: done once
        they pass 5 % of it, not on every save)."""
        parts = [m for m in (self._matrix, *self._chunks) if m.size]
        self._matrix = np.vstack(parts) if parts else self._matrix
        self._chunks = []

    def search(self, query: npt.NDArray[np.float32], limit: int) -> list[tuple[str, float]]:
        """[(leaf_id, cosine)] best first; ties broken by id for determinism."""
        with self._lock:
            self._ready()
            if self._chunks and self._matrix.size == 0:
                self._merge()
            if not self._rows.ids or limit <= 0 or self._matrix.size == 0:
                return []
            q = query.astype(np.float32)
            base = len(self._matrix)
            alive = self._rows.alive
            if self._ivf is None or limit > 1000:
                # One product over the whole matrix, dead rows dropped after: gathering the
                # live rows first would copy the matrix on every query (≈ 7× slower).
                rows = np.flatnonzero(alive[:base])
                scores = self._matrix @ q
                if len(rows) < base:
                    scores = scores[rows]
            else:
                rows = self._ivf.probe(q, base, self.PROBE_SHARE, self.MIN_PROBE)
                rows = rows[alive[rows]]
                scores = _scores(self._matrix, rows, q)
            if self._chunks:  # vectors added since the last merge: all scored
                tail = np.concatenate(self._chunks)
                tail_rows = np.arange(base, base + len(tail))
                keep = alive[tail_rows]
                rows = np.concatenate((rows, tail_rows[keep]))
                scores = np.concatenate((scores, tail[keep] @ q))
            k = min(limit, len(rows))
            if k <= 0:
                return []
            top = np.argpartition(-scores, k - 1)[:k] if len(rows) > k else np.arange(len(rows))
            ids = self._rows.ids
            order = sorted(top.tolist(), key=lambda i: (-float(scores[i]), ids[rows[i]]))
            return [(ids[rows[i]], float(scores[i])) for i in order]

    @property
    def size(self) -> int:
        with self._lock:
            if not self._loaded:
                self._load()
            return int(self._rows.alive.sum())


def _scores(matrix: npt.NDArray[np.float32], rows: npt.NDArray[np.intp], q: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Cosines of `rows` of `matrix` (unit vectors) with `q`, gathered in blocks (the copy of a
    block stays small)."""
    out = np.empty(len(rows), dtype=np.float32)
    step = 16_384
    for start in range(0, len(rows), step):
        out[start : start + step] = matrix[rows[start : start + step]] @ q
    return out


@dataclass(slots=True)
class _Clusters:
    """An inverted file: k-means centroids and, per cluster, its rows (compressed)."""

    centroids: npt.NDArray[np.float32]
    starts: npt.NDArray[np.int64]
    members: npt.NDArray[np.int64]
    size: int  # rows of the matrix when it was built; later rows are the exact tail

    @classmethod
    def build(cls, matrix: npt.NDArray[np.float32], alive: npt.NDArray[np.bool_], iterations: int = 8) -> _Clusters:
        rows = np.flatnonzero(alive)
        count = max(16, int(math.sqrt(len(rows))))
        rng = np.random.default_rng(0)
        sample_rows = np.sort(rng.choice(rows, size=min(len(rows), 32 * count), replace=False))
        sample = matrix[sample_rows]
        centroids = sample[np.sort(rng.choice(len(sample), size=count, replace=False))].copy()
        for _ in range(iterations):  # spherical k-means on the sample
            assign = np.argmax(sample @ centroids.T, axis=1)
            sums = np.zeros_like(centroids)
            np.add.at(sums, assign, sample)
            norms = np.linalg.norm(sums, axis=1, keepdims=True)
            keep = norms[:, 0] > 0
            centroids[keep] = sums[keep] / norms[keep]
        labels = np.empty(len(rows), dtype=np.int64)
        for start in range(0, len(rows), 16_384):  # every live row to its nearest centroid
            block = matrix[rows[start : start + 16_384]]
            labels[start : start + len(block)] = np.argmax(block @ centroids.T, axis=1)
        order = np.argsort(labels, kind="stable")
        starts = np.searchsorted(labels[order], np.arange(count + 1)).astype(np.int64)
        return cls(centroids, starts, rows[order].astype(np.int64), len(matrix))

    def probe(self, q: npt.NDArray[np.float32], total: int, share: float, minimum: int) -> npt.NDArray[np.intp]:
        """Rows of the clusters nearest `q` — at least `minimum` clusters, then more until they
        hold `share` of the rows (clusters differ a lot in size) — plus the unclustered tail
        (rows ≥ `size`)."""
        order = np.argsort(-(self.centroids @ q), kind="stable")
        sizes = np.diff(self.starts)[order]
        enough = int(np.searchsorted(np.cumsum(sizes), share * self.size)) + 1
        best = order[: min(len(order), max(minimum, enough))]
        parts = [self.members[self.starts[c] : self.starts[c + 1]] for c in np.sort(best).tolist()]
        parts.append(np.arange(self.size, total, dtype=np.int64))
        return np.sort(np.concatenate(parts)).astype(np.intp)


def _matrix_of(column: pa.ChunkedArray | pa.Array) -> npt.NDArray[np.float32]:
    """Little-endian float32 blobs of equal length as one matrix (read from the Arrow buffers,
    without a Python object per vector)."""
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    n = len(array)
    if n == 0:
        return np.zeros((0, 0), dtype=np.float32)
    wide = pa.types.is_large_binary(array.type)
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int64 if wide else np.int32)[array.offset : array.offset + n + 1]
    lengths = np.diff(offsets)
    if array.null_count or not (lengths == lengths[0]).all():  # mixed dimensions: only after a model mix-up
        blobs = [b for b in array.to_pylist() if b]
        return np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), -1).copy()
    data = np.frombuffer(array.buffers()[2], dtype=np.uint8)[int(offsets[0]) : int(offsets[-1])]
    return data.view("<f4").reshape(n, int(lengths[0]) // 4).astype(np.float32, copy=True)
