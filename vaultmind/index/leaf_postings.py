"""The resident leaves' BM25 postings (`LeafPostings`): their load from the index in two streamed
passes, or from a snapshot beside the index, and a term's postings (with those a save added)."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from typing import Any

import duckdb
import numpy as np
import numpy.typing as npt
import pyarrow as pa

from vaultmind.index.leaf_state import _BATCH, LeafState
from vaultmind.index.pool import out_of_memory
from vaultmind.index.postings import PostingLists, TermCodes, load_snapshot, save_snapshot
from vaultmind.index.row_ids import id_array
from vaultmind.index.snapshot_file import POSTINGS_SNAPSHOT, snapshot_key

log = logging.getLogger(__name__)

# DuckDB's buffer pool while the postings are scanned: it only streams them, and a larger pool
# filled with their blocks (at 50k notes 16 MB: +15 MB over the scan, 128 MB: +105 MB, and
# 3.6 against 3.3 s)
POSTINGS_POOL = "24MB"
POSTINGS_SNAPSHOT_FORMAT = 1


class LeafPostings(LeafState):
    """The postings part of the resident leaves: loaded with them, read by their BM25."""

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
        """What the resident postings follow from (`snapshot_key`): the loaded leaf ids in row
        order, as a digest of their bytes (a leaf id derives from its text, and its postings
        from the text and the tokenizer; a tokenizer change comes with a migration) and, as a
        check, the postings' count (from the table's row counts: summing a column would read its
        blocks into DuckDB's pool: a 50k-note daemon's start peaked 12 MB higher)."""
        count = self.index.scalar("SELECT count(*) FROM postings")
        ids = hashlib.blake2b(np.ascontiguousarray(keys).data, digest_size=32).hexdigest()
        return snapshot_key(self.index.con, POSTINGS_SNAPSHOT_FORMAT, count, keys.dtype.str, ids)

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
        except (duckdb.Error, OSError) as exc:  # (in mid-stream, DuckDB's error comes as Arrow's OSError)
            if not pool or not out_of_memory(exc):
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


def _group_starts(grouped: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """For each element of a sorted array, the index of the first element equal to it."""
    if not len(grouped):
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate(([True], grouped[1:] != grouped[:-1])))
    return np.repeat(starts, np.diff(np.append(starts, len(grouped))))


def _narrow(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """Non-negative integers in the smallest unsigned type that holds them."""
    top = int(values.max()) if len(values) else 0
    for dtype in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(dtype).max and (not len(values) or int(values.min()) >= 0):
            return values.astype(dtype)
    return values.astype(np.int64)
