"""Resident leaf vectors: an exact float32 scan below `QUANTIZE_FROM`, int8 rows below
`CLUSTER_FROM` (a first pass over their leading principal axes, then the best rows in full),
and above it an inverted file over int8 rows kept in a scratch file in cluster order (see
`ResidentVectors`; where the rows are held and scanned: `vector_rows.VectorRows`)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from vaultmind.index.allocator import release_freed_memory
from vaultmind.index.leaf_state import run_load
from vaultmind.index.resident import (
    _ROWS_BATCH,
    COMPACT_SHARE,
    ChangeSet,
    LeafDelta,
)
from vaultmind.index.row_ids import RowIds, SharedIds, id_array, pack_ids
from vaultmind.index.store import Index
from vaultmind.index.vector_codec import hash_prefix, leaf_keys, matrix_of, stored_width
from vaultmind.index.vector_rows import VectorRows
from vaultmind.index.vector_scan import Clusters, FirstPass, RowFile, quantize_rows, scratch_failed
from vaultmind.index.vector_snapshot import HeldVectors, keep_vectors, read_vectors

log = logging.getLogger(__name__)


class ResidentVectors(VectorRows):
    """Leaf vectors of one model; cosine search, by an inverted file at scale.

    Below `QUANTIZE_FROM` live vectors they are float32 and every query is scored against all
    of them (one matrix product): the result is exact. From there each row is held as int8
    with one float32 scale (a quarter of the memory; a cosine moves by about 0.001): a scan
    reads a quarter of the bytes and turns them back into float32 `READ` rows at a time, into a
    buffer that stays in the core's cache, so a full int8 scan takes about half the time of a
    float32 one (memory, not arithmetic, bounds it). Below `CLUSTER_FROM` every row is still
    scored, in two passes (`FirstPass`): first by its projection on the rows' leading principal
    axes (`HEAD_SHARE` of the dimensions, held as float32: nothing to convert), then
    the `RESCORE` best (at least `RESCORE_PER_HIT` per hit asked) in full, which gives their
    scores exactly as a full scan would. Above, the vectors are clustered once (spherical
    k-means on a sample, a fixed seed, √N clusters) and a query scores the vectors of the
    clusters whose centroids are nearest (about `PROBE_SHARE` of the rows) plus every vector
    added since the clustering. The result is deterministic; the walk benchmark reports its
    recall against an exact float32 scan (`dense_recall_at_100`). The clustering is redone once
    the vectors added since pass a quarter of the rows. A load takes the int8 form when it
    holds `QUANTIZE_FROM` rows or more; a quantized matrix whose live rows fall below that is
    reloaded as float32. Where the rows are held (in memory, or int8 in a scratch file) and how
    they are read and scanned is `VectorRows`'s part.
    """

    QUANTIZE_FROM = 65_536  # a float32 scan of 65k × 256 reads 67 MB: ~5 ms on one core
    CLUSTER_FROM = 150_000  # an int8 scan of 150k × 256 costs about 10 ms on one core
    PROBE_SHARE = 0.20  # of the rows, in the nearest clusters (0.10 until reads came from the scratch file)
    MIN_PROBE = 8
    HEAD_SHARE = 0.375  # of the dimensions, the principal axes a first pass scores int8 rows by (96 of 256)
    HEAD_SAMPLE = 16_384  # rows the axes are found from (every n-th row)
    RESCORE = 4_000  # rows a first pass keeps for the full scan
    RESCORE_PER_HIT = 20

    def __init__(self, index: Index, model_id: str):
        self.index = index
        self.model_id = model_id
        self._lock = threading.RLock()  # reentrant, as the leaves' (`leaf_state.LeafState`): a load may open the file again
        self._loaded = False
        self._rows = RowIds()
        super().__init__(index.path.parent if index.path is not None else None)
        self._ivf: Clusters | None = None
        self._sum: npt.NDArray[np.float64] | None = None  # of the live vectors (None: not summed yet)
        self._unsaved: str | None = None  # the snapshot key of a load from the index not kept yet (`_keep`)
        self.room: Callable[[Callable[[], None]], None] = run_load  # runs a load (a serving process retries it with more memory)
        self.progress: Callable[[str, int, int], None] | None = None  # told (phase, done, total) as a load goes
        self.load_seconds = 0.0  # spent loading, merging and clustering the rows
        self.asked_width: int | None = None  # the last query's dimension, when not the rows' (said once)
        self.shared_ids = SharedIds()  # one copy of the loaded ids with the leaves' (`Memory` gives both one)

    def _load(self, quantize: bool | None = None, scratch: bool = True) -> None:
        """The vectors of the leaves: as the snapshot beside the index holds them when it was
        taken of the same vectors (`vector_snapshot`), else from the index, and then, once
        prepared, a snapshot taken (`_prepare`). A load for other than the usual form
        (`quantize`, no `scratch`), or of rows to be clustered, is never taken from or kept in
        a snapshot."""
        key = None
        if quantize is None and scratch:
            key, held = read_vectors(self.index, self.model_id, self._snapshot_settings, self.CLUSTER_FROM)
            if held is not None:
                self._take(held)
                return
        self._load_from_index(quantize, scratch)
        self._unsaved = key

    def _load_from_index(self, quantize: bool | None = None, scratch: bool = True) -> None:
        """The vectors of the leaves, in leaf id order: the leaves' (id, content hash) first,
        then one scan of the model's embeddings, each written to the rows of the leaves with its
        hash. DuckDB only scans (a join would hash a table of 1 KB rows). int8 rows go to a
        scratch file as they come (`scratch`), unless none can be written."""
        self._clear()
        with self.index.lock:  # `con` taken under the lock: `Index.reopen` may replace it
            con = self.index.con
            leaves = leaf_keys(con, compact=True)
            compact = leaves is not None
            if leaves is None:  # an id that is not a leaf id, or a hash not hexadecimal: as they are
                leaves = leaf_keys(con)
            assert leaves is not None
            keys, hashes = leaves
            order = np.argsort(keys, kind="stable")
            keys = keys[order]
            hashes = hashes[order]
            del order
            keys, ids_packed = (keys, True) if compact and len(keys) else pack_ids(keys)  # as `RowIds` holds them
            by_hash = np.argsort(hashes, kind="stable")  # leaf rows, by content hash
            hashes = hashes[by_hash]
            count = len(keys)
            quantize = count >= self._quantize_from if quantize is None else quantize
            filled = np.zeros(count, dtype=bool)
            width = stored_width(con, self.model_id)
            allocated = False
            file: RowFile | None = None  # int8 rows in the order they arrive: `arrived` says whose
            arrived: list[npt.NDArray[np.intp]] = []
            total = int(self.index.scalar("SELECT count(*) FROM embeddings WHERE model = ?", [self.model_id])) if self.progress else 0
            done = 0
            reader = con.execute("SELECT content_hash, vec, dim FROM embeddings WHERE model = ?", [self.model_id])
            for batch in reader.to_arrow_reader(_ROWS_BATCH):
                done += batch.num_rows
                if self.progress:
                    self.progress("load vectors", min(done, total), total)
                wanted = id_array(batch.column(0))
                if compact:
                    wanted, hexadecimal = hash_prefix(wanted)
                    if not hexadecimal.all():  # no leaf has such a hash
                        wanted, batch = wanted[hexadecimal], batch.filter(pa.array(hexadecimal))
                lo = np.searchsorted(hashes, wanted, side="left")
                hi = np.searchsorted(hashes, wanted, side="right")
                many = hi - lo
                if not many.any():
                    continue
                block, kept = matrix_of(batch.column(1), batch.column(2), width)
                if not kept.all():  # a vector of another dimension (a model changed behind its name), or broken
                    lo, many = lo[kept], many[kept]
                if not len(block) or not many.any():
                    continue
                if not allocated:
                    allocated, width = True, block.shape[1]
                    if quantize:
                        file = self._scratch(width, count) if scratch and count >= self.CLUSTER_FROM else None
                        self._q8 = np.zeros((0 if file else count, width), dtype=np.int8)
                        self._scale = np.ones(len(self._q8), dtype=np.float32)
                    else:
                        self._matrix = np.zeros((count, width), dtype=np.float32)
                src = np.repeat(np.arange(len(block)), many)  # one embedding, every leaf holding it
                dst = by_hash[np.repeat(lo, many) + np.arange(len(src)) - np.repeat(np.cumsum(many) - many, many)]
                if self._q8 is not None:
                    for start in range(0, len(src), 1024):  # small steps: small temporaries
                        part = slice(start, start + 1024)
                        q8, scale = quantize_rows(block[src[part]])
                        if file is None:
                            self._q8[dst[part]], self._scale[dst[part]] = q8, scale
                            continue
                        try:
                            file.append(q8, scale)
                        except OSError as exc:
                            scratch_failed(file, exc)
                            self._load_from_index(quantize, scratch=False)
                            return
                        arrived.append(dst[part])
                else:
                    self._matrix[dst] = block[src]
                filled[dst] = True
        renumber = np.cumsum(filled) - 1 if not filled.all() else None
        if renumber is not None:  # leaves without a vector (not embedded yet) get no row
            keys = keys[filled]
            if self._q8 is not None and file is None:
                self._q8, self._scale = self._q8[filled], self._scale[filled]
            elif allocated and self._q8 is None:
                self._matrix = self._matrix[filled]
        if self._q8 is not None and len(keys) < self._quantize_from:  # fewer vectors than leaves: float32 after all
            if file is not None:
                file.close()
            self._load_from_index(quantize=False)
            return
        if file is not None:
            order = np.concatenate(arrived) if arrived else np.zeros(0, dtype=np.intp)
            self._filed_in(file, order if renumber is None else renumber[order], len(keys))
        self.shared_ids.reset(self._rows, keys, packed=ids_packed)
        if len(keys) < self.CLUSTER_FROM:  # fewer vectors than leaves: not clustered, rows in memory
            self._into_memory()
        self._loaded = True
        release_freed_memory()

    @property
    def _quantize_from(self) -> int:
        """Rows from which the vectors are int8 (clustered rows always are)."""
        return min(self.QUANTIZE_FROM, self.CLUSTER_FROM)

    def _clear(self) -> None:
        self._matrix, self._q8, self._scale = np.zeros((0, 0), dtype=np.float32), None, np.zeros(0, np.float32)
        self._chunks, self._ivf, self._sum, self._head = [], None, None, None
        self._unsaved = None
        self._drop_file()
        self._loaded = False

    def close(self) -> None:
        """Let go of the vectors and their scratch file (a later search loads them again)."""
        with self._lock:
            self._clear()
            self._rows.reset(np.zeros(0, dtype="S1"))
            release_freed_memory()

    def apply(self, change: ChangeSet) -> None:
        with self.index.lock, self._lock:  # in the order every other path takes them
            self._unsaved = None  # no longer the load a snapshot would be taken of
            if change.reset or change.backfilled or not self._loaded:
                self._loaded = False
                return
            kept = self._vectors_of(change.removed) if change.added or self._sum is not None else {}
            if self._sum is not None:
                for vector in kept.values():
                    self._sum -= vector
            for leaf_id in change.removed:
                self._rows.remove(leaf_id)
            if self._rows.stale:  # a removed id lives on in another note: reload
                self._loaded = False
                return
            if change.added:
                self._add(change.added, {**change.vectors, **kept})
            if self._rows.dead_share > COMPACT_SHARE:
                self._loaded = False

    def _vectors_of(self, leaf_ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """The vectors of the live rows of `leaf_ids`, by id (float32; dequantized when int8)."""
        rows = self._rows.find(leaf_ids)
        found = np.flatnonzero(rows >= 0)
        if not len(found):
            return {}
        base = self._base
        tail = np.concatenate(self._chunks) if self._chunks and bool((rows[found] >= base).any()) else None
        out = {}
        for k in found.tolist():
            row = int(rows[k])
            if row >= base:
                assert tail is not None
                out[leaf_ids[k]] = tail[row - base].copy()
            else:
                out[leaf_ids[k]] = self._block(np.array([row], dtype=np.intp))[0]
        return out

    def _add(self, added: Sequence[LeafDelta], known: dict[str, npt.NDArray[np.float32]] | None = None) -> None:
        """Rows for `added`. `known` holds vectors by leaf id or by content hash: a leaf id
        derives from the leaf's text (and place), so an id that was just removed comes back
        with the same text and takes its old vector, and a text the change embedded comes with
        its vector (`ChangeSet.vectors`). Only the other texts, which had their vector from
        another note, are read from the index, with a filter on the scan (`list_contains`: an
        `IN` list or join reads the whole vector column, ~250 MB at 50k notes): a saved note
        re-adds all its leaves, mostly unchanged."""
        known = known or {}
        found: dict[str, npt.NDArray[np.float32]] = {}
        for leaf in added:
            vector = known.get(leaf.leaf_id)
            if vector is None:
                vector = known.get(leaf.content_hash)
            if vector is not None:
                found.setdefault(leaf.content_hash, vector)
        missing = sorted({leaf.content_hash for leaf in added} - set(found))
        if missing:
            with self.index.lock:
                table = self.index.con.execute(
                    "SELECT content_hash, vec, dim FROM embeddings WHERE model = ? AND list_contains(?::VARCHAR[], content_hash)",
                    [self.model_id, missing],
                ).to_arrow_table()
            if table.num_rows:
                matrix, kept = matrix_of(table.column("vec"), table.column("dim"), self._width or None)
                hashes = table.column("content_hash").filter(pa.array(kept)).to_pylist()
                for content_hash, vector in zip(hashes, matrix, strict=True):
                    found.setdefault(str(content_hash), vector)
        fresh = sorted((leaf.leaf_id, leaf.content_hash) for leaf in added if leaf.content_hash in found)
        if not fresh:
            return
        ids = [leaf_id for leaf_id, _ in fresh]
        if self._sum is not None:  # an id still live in another note (a copied source note): its row is replaced
            for vector in self._vectors_of(ids).values():
                self._sum -= vector
        self._rows.extend(ids)
        self._chunks.append(np.stack([found[content_hash] for _, content_hash in fresh]).astype(np.float32, copy=False))
        if self._sum is not None:
            self._sum += self._chunks[-1].sum(axis=0, dtype=np.float64)

    @contextmanager
    def _held(self) -> Iterator[None]:
        """This structure's lock, for a search. When a load may come (not loaded, or int8 rows
        under the size that keeps them float32), the index's lock first: a load reads the
        index, and a sync takes the index's lock and then this one (to apply its change), so a
        search that held this one while it waited for the index's would wait on the sync
        forever, and the sync on it."""
        with self._lock:
            if not self._may_load():
                yield
                return
        with self.index.lock, self._lock:
            yield

    def _may_load(self) -> bool:
        return not self._loaded or (
            self._q8 is not None and int(np.count_nonzero(self._rows.alive)) < self._quantize_from
        )

    def prepare(self) -> None:
        """Load, merge and cluster the rows now, as the next search would."""
        with self._held():
            self._ready()

    def _ready(self) -> None:
        """Load, merge or cluster the rows as they need (`load_seconds` counts the time)."""
        started = time.monotonic()
        if self._prepare():
            self.load_seconds += time.monotonic() - started

    def _prepare(self) -> bool:
        """`_ready`'s work; False when there was none."""
        worked = not self._loaded
        if not self._loaded:
            self.room(self._load)
        live = int(np.count_nonzero(self._rows.alive))
        if self._q8 is not None and live < self._quantize_from:  # small enough again: exact float32
            self.room(self._load)
            live = int(np.count_nonzero(self._rows.alive))
            worked = True
        if self._chunks and (len(self._chunks) > 64 or sum(len(c) for c in self._chunks) > self._base // 20):
            self._merge()
            worked = True
        if live < self.CLUSTER_FROM:  # scanned in full: the rows back in memory
            if self._ivf is not None:
                self._ivf = None
                worked = True
            self._into_memory()
            if self._q8 is not None and len(self._q8) and (self._head is None or self._head.of is not self._q8):
                self._head = None  # the old one's rows go first
                self._head = FirstPass.build(self._q8, self._scale, self.HEAD_SHARE, self.HEAD_SAMPLE, self.BLOCK)
                worked = True
        elif self._ivf is None or self._base - self._ivf.size > self._ivf.size // 4:
            if self.progress:
                self.progress("cluster vectors", 0, 1)
            self._ivf = Clusters.build(self._stored, self._rows.rank(self._base), self._rows.alive)
            if self._q8 is not None:
                self._file_in_order(self._ivf.members)
            release_freed_memory()  # the clustering's temporaries
            if self.progress:
                self.progress("cluster vectors", 1, 1)
            worked = True
        if self._unsaved is not None:
            self._keep(self._unsaved)
        return worked

    def search(self, query: npt.NDArray[np.float32], limit: int) -> list[tuple[str, float]]:
        """[(leaf_id, cosine)] best first; ties broken by id for determinism. A query with no
        direction (a text of only unknown tokens, such as an emoji, embeds as zeros) is near
        nothing: no hits, rather than every leaf at the same cosine."""
        if not np.any(query):
            return []
        with self._held():
            self._ready()
            if self._chunks and self._base == 0:
                self._merge()
            if not len(self._rows) or limit <= 0 or self._base == 0:
                return []
            if len(query) != self._width:  # the model changed behind its name: until its texts are embedded again
                if self.asked_width != len(query):
                    log.warning(
                        "dense search is off: %s answers %d-d vectors, the index holds %d-d ones (a sync embeds every text again)",
                        self.model_id, len(query), self._width,
                    )  # fmt: skip
                self.asked_width = len(query)
                return []
            q = query.astype(np.float32)
            base = self._base
            alive = self._rows.alive
            if self._file is not None and self._ivf is not None:
                full = limit > 1000
                runs = [(0, self._file.rows)] if full else self._ivf.runs(q, self.PROBE_SHARE, self.MIN_PROBE)
                rows, scores = self._scan_file(q, runs)
                keep = alive[rows]
                rows, scores = rows[keep], scores[keep]
                if base > self._filed:  # int8 rows added since the clustering, in memory
                    more = np.flatnonzero(alive[self._filed : base])
                    rows = np.concatenate((rows, more + self._filed))
                    scores = np.concatenate((scores, self._scan(q, more)))
            elif self._ivf is None or limit > 1000:
                # One product over the whole matrix, dead rows dropped after: gathering the
                # live rows first would copy the matrix on every query (≈ 7× slower).
                rows = np.flatnonzero(alive[:base])
                rescore = max(self.RESCORE, self.RESCORE_PER_HIT * limit)
                if self._head is not None and self._ivf is None and rescore * 4 <= len(rows):
                    first = self._head.scores(q)
                    if len(rows) < base:
                        first = first[rows]
                    rows = rows[np.sort(self._rows.top_rows(rows, first, rescore))]
                    scores = self._scan(q, rows)
                else:
                    scores = self._scan(q)
                    if len(rows) < base:
                        scores = scores[rows]
            else:
                rows = self._ivf.probe(q, base, self.PROBE_SHARE, self.MIN_PROBE)
                rows = rows[alive[rows]]
                scores = self._scan(q, rows)
            if self._chunks:  # vectors added since the last merge: all scored
                tail = np.concatenate(self._chunks)
                tail_rows = np.arange(base, base + len(tail))
                keep = alive[tail_rows]
                rows = np.concatenate((rows, tail_rows[keep]))
                scores = np.concatenate((scores, tail[keep] @ q))
            k = min(limit, len(rows))
            if k <= 0:
                return []
            top = self._rows.top_rows(rows, scores, k)
            return self._rows.best_first(rows[top], scores[top])

    def mean_direction(self) -> npt.NDArray[np.float32] | None:
        """The unit mean of the live vectors (None: no vectors). Summed once in float64, block
        by block (~10 ms at 100k float32 rows), then kept up to date by each save's removed and
        added rows (equal to a fresh sum up to float64 rounding)."""
        with self._held():
            self._ready()
            width = self._width
            if not width:
                return None
            if self._sum is None:
                self._sum = self._live_sum()
            norm = float(np.linalg.norm(self._sum))
            return (self._sum / norm).astype(np.float32) if norm > 1e-9 else None

    def _live_sum(self) -> npt.NDArray[np.float64]:
        """The sum of the live vectors, in float64, block by block."""
        total = np.zeros(self._width, dtype=np.float64)
        alive = self._rows.alive
        for rows, block in self._stored():
            total += block[alive[rows]].sum(axis=0, dtype=np.float64)
        base = self._base
        for chunk in self._chunks:
            total += chunk[alive[base : base + len(chunk)]].sum(axis=0, dtype=np.float64)
            base += len(chunk)
        return total

    # -- the snapshot beside the index (`vector_snapshot`) ---------------------------------

    @property
    def _snapshot_settings(self) -> tuple[object, ...]:
        """What shapes the prepared rows besides the stored vectors (tests lower the thresholds)."""
        return (self._quantize_from, self.CLUSTER_FROM, self.HEAD_SHARE, self.HEAD_SAMPLE, self.BLOCK, FirstPass.COLUMNS)

    def _take(self, held: HeldVectors) -> None:
        """Hold the rows a snapshot kept, as the load and preparation they were taken after."""
        self._clear()
        if held.q8 is not None:
            self._q8, self._scale = held.q8, held.scale
        elif held.matrix is not None:
            self._matrix = held.matrix
        self._head, self._sum = held.head, held.total
        self.shared_ids.reset(self._rows, held.keys, packed=held.packed)
        self._loaded = True
        if self.progress:  # done at once: a status that follows the load sees it end
            self.progress("load vectors", len(held.keys), len(held.keys))

    def _keep(self, key: str) -> None:
        """Take a snapshot of the rows just loaded from the index and prepared (under `key`),
        when they are all held in memory; clustered rows, in a scratch file, are not kept,
        and a snapshot taken while they were fewer goes (it can only be stale now)."""
        self._unsaved = None
        if self._file is not None or self._ivf is not None:
            keep_vectors(self.index, key, None)
            return
        if self._chunks:
            return
        if self._sum is None and self._width:  # none without vectors: the first ones added set the width
            self._sum = self._live_sum()
        keys, packed = self._rows.loaded_keys()
        matrix = self._matrix if self._q8 is None else None
        keep_vectors(self.index, key, HeldVectors(keys, packed, matrix, self._q8, self._scale, self._head, self._sum))

    @property
    def size(self) -> int:
        with self._held():
            if not self._loaded:
                self.room(self._load)
            return int(np.count_nonzero(self._rows.alive))

    def memory(self) -> dict[str, int]:
        """Bytes held, by part; `head`: the first pass's projections; `file`: the int8 rows in the
        scratch file (outside the process)."""
        with self._lock:
            matrix, head, file = self._row_bytes()
            ivf = 0 if self._ivf is None else self._ivf.nbytes
            ids = self._rows.nbytes - (self._rows.loaded_nbytes if self.shared_ids.counted_elsewhere(self._rows) else 0)
            return {"ids": ids, "matrix": matrix, "head": head, "clusters": ivf, "file": file}
