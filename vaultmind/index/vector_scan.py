"""How int8 rows of vectors are held and scanned: quantization, scans shared between threads,
the first pass over the rows' leading principal axes, the inverted file, and the scratch file
that holds clustered rows (`vector_rows.VectorRows` holds the rows with them, and
`resident_vectors.ResidentVectors` searches them)."""

from __future__ import annotations

import itertools
import logging
import math
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from vaultmind.index.scratch import ScratchFile

log = logging.getLogger(__name__)

# A scan is shared between the calling thread and helper threads, one per other core: each
# takes the next block of rows until none is left. numpy releases the GIL for matrix products
# and BLAS stays on one thread (`vaultmind/__init__.py`), so no thread spin-waits (at 100k ×
# 256 float32 rows: 7 ms on one core, 2–3 ms on two). When the other cores are busy, the
# calling thread takes every block itself and a helper that has not started is cancelled: the
# scan costs what it would on one thread. Every block is one product, so a row's score does
# not depend on the number of cores. Below `SPLIT_ROWS` rows a scan stays on the calling thread.
SPLIT_ROWS = 32_768
_SCAN_THREADS = max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))
_scan_pool: ThreadPoolExecutor | None = None
_scan_pool_lock = threading.Lock()


def split_scan(rows: int, block: int, part: Callable[[int, int], None], at_least: int | None = None) -> None:
    """Run `part(lo, hi)` for every `block` of [0, rows) (the last one short), shared between
    this thread and the helpers; returns when every block is done. Fewer rows than `at_least`
    (default `SPLIT_ROWS`) stay on this thread, in one call."""
    global _scan_pool
    blocks = -(-rows // block)
    threads = min(_SCAN_THREADS, blocks)
    if threads < 2 or rows < (SPLIT_ROWS if at_least is None else at_least):
        part(0, rows)
        return
    with _scan_pool_lock:
        if _scan_pool is None:
            _scan_pool = ThreadPoolExecutor(_SCAN_THREADS - 1, thread_name_prefix="vaultmind-scan")
        pool = _scan_pool
    taken = itertools.count()
    take = threading.Lock()

    def work() -> None:
        while True:
            with take:
                b = next(taken)
            if b >= blocks:
                return
            part(b * block, min(rows, (b + 1) * block))

    helpers = [pool.submit(work) for _ in range(threads - 1)]
    work()
    for helper in helpers:
        if not helper.cancel():  # started: it finishes the block it holds
            helper.result()


def quantize_rows(matrix: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """Each row as int8 and one scale (its largest magnitude / 127): row ≈ int8 × scale."""
    top = np.abs(matrix).max(axis=1) if matrix.size else np.zeros(len(matrix), dtype=np.float32)
    scale = (np.where(top > 0, top, 127.0) / 127.0).astype(np.float32)
    q8 = np.rint(matrix / scale[:, None]).clip(-127, 127).astype(np.int8)
    return q8, scale


@dataclass(frozen=True, slots=True)
class FirstPass:
    """The first pass of a scan of int8 rows: their projections on the leading principal axes of
    the rows (found from a sample of them), kept as float32. A vector's score there is its full
    score less what lies off those axes: the rows that score best on them hold the best rows in
    full, nearly always (the walk benchmark reports the recall). float32, not int8: a scan of
    int8 rows spends most of its time turning them into float32, and the projections are
    narrow (96 dimensions: 38 MB at 100k rows, scanned in about a third of the time).

    The projections are held transposed, in blocks of `COLUMNS` rows (dims × rows each, every
    block full but the last): a block's scores are then one pass over it that adds each axis's
    row, scaled, to the scores, which streams through memory; the same product over rows of 96
    numbers each (`rows @ q`) took half as long again (100k rows: 2.5 against 1.6 ms on two
    threads).
    Each block is one product, whatever the threads: a row's score does not depend on them."""

    of: npt.NDArray[np.int8]  # the rows it projects (`ResidentVectors._q8`)
    axes: npt.NDArray[np.float32]  # width × dims
    blocks: tuple[npt.NDArray[np.float32], ...]  # dims × COLUMNS each (the last may be shorter)

    COLUMNS: ClassVar[int] = 16_384

    @classmethod
    def build(
        cls, q8: npt.NDArray[np.int8], scale: npt.NDArray[np.float32], share: float, sample: int, block: int
    ) -> FirstPass:
        """`share` of the dimensions as axes, found from every n-th row (about `sample` rows);
        every row projected on them, `block` rows at a time."""
        dims = max(1, min(q8.shape[1], round(q8.shape[1] * share)))
        step = max(1, len(q8) // max(1, sample))
        rows = q8[::step].astype(np.float32) * scale[::step, None]
        rows -= rows.mean(axis=0)
        _, vectors = np.linalg.eigh((rows.T @ rows).astype(np.float64))  # ascending eigenvalues
        axes = np.ascontiguousarray(vectors[:, ::-1][:, :dims], dtype=np.float32)
        return cls(q8, axes, cls._blocks(q8, scale, axes, block))

    def extended(
        self, of: npt.NDArray[np.int8], q8: npt.NDArray[np.int8], scale: npt.NDArray[np.float32], block: int
    ) -> FirstPass:
        """With rows `q8` appended (now the last rows of `of`), on the same axes: the blocks
        are those a build on these axes would make."""
        blocks = self.blocks
        if blocks and blocks[-1].shape[1] < self.COLUMNS:  # the short last block takes rows first
            *full, last = blocks
            more = np.concatenate((last.T, project(q8, scale, self.axes, block)))
            return FirstPass(of, self.axes, (*full, *self._transposed(more)))
        return FirstPass(of, self.axes, (*blocks, *self._blocks(q8, scale, self.axes, block)))

    def scores(self, q: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """q's score on every row's projection (q: a full-width vector), the blocks shared
        between `split_scan`'s threads."""
        qp = q @ self.axes
        blocks, columns = self.blocks, self.COLUMNS
        out = np.empty(len(self.of), dtype=np.float32)

        def part(lo: int, hi: int) -> None:
            for start in range(lo, hi, columns):
                block = blocks[start // columns]
                np.dot(qp, block, out=out[start : start + block.shape[1]])

        split_scan(len(out), columns, part)
        return out

    @property
    def nbytes(self) -> int:
        return self.axes.nbytes + sum(block.nbytes for block in self.blocks)

    @classmethod
    def _blocks(
        cls, q8: npt.NDArray[np.int8], scale: npt.NDArray[np.float32], axes: npt.NDArray[np.float32], block: int
    ) -> tuple[npt.NDArray[np.float32], ...]:
        """The projections of `q8`, transposed, `COLUMNS` rows a block (projected a block at a
        time: no temporary of every row)."""
        starts = range(0, len(q8), cls.COLUMNS)
        return tuple(cls._transposed(project(q8[i : i + cls.COLUMNS], scale[i : i + cls.COLUMNS], axes, block))[0] for i in starts)

    @classmethod
    def _transposed(cls, rows: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.float32], ...]:
        """`rows` (one a row) as blocks of `COLUMNS`, each transposed."""
        return tuple(np.ascontiguousarray(rows[start : start + cls.COLUMNS].T) for start in range(0, len(rows), cls.COLUMNS))


def project(
    q8: npt.NDArray[np.int8], scale: npt.NDArray[np.float32], axes: npt.NDArray[np.float32], block: int
) -> npt.NDArray[np.float32]:
    """int8 rows' projections on `axes`, `block` rows at a time."""
    out = np.empty((len(q8), axes.shape[1]), dtype=np.float32)
    for start in range(0, len(q8), block):
        stop = min(len(q8), start + block)
        rows = q8[start:stop].astype(np.float32)
        rows *= scale[start:stop, None]
        np.dot(rows, axes, out=out[start:stop])
    return out


@dataclass(slots=True)
class Clusters:
    """An inverted file: k-means centroids and, per cluster, its rows (compressed)."""

    centroids: npt.NDArray[np.float32]
    starts: npt.NDArray[np.int64]
    members: npt.NDArray[np.int64]
    size: int  # rows of the matrix when it was built; later rows are the exact tail

    @property
    def nbytes(self) -> int:
        return self.centroids.nbytes + self.starts.nbytes + self.members.nbytes

    @classmethod
    def build(
        cls,
        stored: Callable[[], Iterator[tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]]],
        rank: npt.NDArray[np.int64],
        alive: npt.NDArray[np.bool_],
        iterations: int = 8,
    ) -> Clusters:
        """Cluster the live rows among the first `len(rank)`, taken in `rank` order (leaf id
        order: the clusters do not depend on the order rows were loaded or stored in);
        `stored()` gives every row as float32, block by block, in any order (read twice)."""
        total = len(rank)
        rows = np.flatnonzero(alive[:total])
        rows = rows[np.argsort(rank[rows], kind="stable")]
        count = min(len(rows), max(16, int(math.sqrt(len(rows)))))  # fewer rows than 16: one each
        rng = np.random.default_rng(0)
        sample_rows = rows[np.sort(rng.choice(len(rows), size=min(len(rows), 32 * count), replace=False))]
        in_sample = np.full(total, -1, dtype=np.int64)
        in_sample[sample_rows] = np.arange(len(sample_rows))
        sample = np.zeros((0, 0), dtype=np.float32)
        for part, vectors in stored():
            if not sample.size:
                sample = np.zeros((len(sample_rows), vectors.shape[1]), dtype=np.float32)
            at = in_sample[part]
            sample[at[at >= 0]] = vectors[at >= 0]
        del in_sample
        centroids = sample[np.sort(rng.choice(len(sample), size=count, replace=False))].copy()
        for _ in range(iterations):  # spherical k-means on the sample
            assign = nearest(sample, centroids)
            sums = np.zeros_like(centroids)
            np.add.at(sums, assign, sample)
            norms = np.linalg.norm(sums, axis=1, keepdims=True)
            keep = norms[:, 0] > 0
            centroids[keep] = sums[keep] / norms[keep]
        label_of = np.full(total, -1, dtype=np.int64)
        for part, vectors in stored():  # every row to its nearest centroid
            label_of[part] = nearest(vectors, centroids)
        labels = label_of[rows]
        del label_of
        order = np.argsort(labels, kind="stable")
        starts = np.searchsorted(labels[order], np.arange(count + 1)).astype(np.int64)
        return cls(centroids, starts, rows[order].astype(np.int64), total)

    def runs(self, q: npt.NDArray[np.float32], share: float, minimum: int) -> list[tuple[int, int]]:
        """The places in `members` [start, stop) of the clusters nearest `q` — at least
        `minimum` clusters, then more until they hold `share` of the rows (clusters differ a
        lot in size) — in order, neighbouring clusters joined into one run."""
        order = np.argsort(-(self.centroids @ q), kind="stable")
        sizes = np.diff(self.starts)[order]
        enough = int(np.searchsorted(np.cumsum(sizes), share * self.size)) + 1
        runs: list[tuple[int, int]] = []
        for c in np.sort(order[: min(len(order), max(minimum, enough))]).tolist():
            start, stop = int(self.starts[c]), int(self.starts[c + 1])
            if runs and runs[-1][1] == start:
                runs[-1] = (runs[-1][0], stop)
            elif stop > start:
                runs.append((start, stop))
        return runs

    def probe(self, q: npt.NDArray[np.float32], total: int, share: float, minimum: int) -> npt.NDArray[np.intp]:
        """The rows of `runs`, plus the unclustered tail (rows ≥ `size`), in row order."""
        parts = [self.members[start:stop] for start, stop in self.runs(q, share, minimum)]
        parts.append(np.arange(self.size, total, dtype=np.int64))
        return np.sort(np.concatenate(parts)).astype(np.intp)


def score_into(
    out: npt.NDArray[np.float32],
    q8: npt.NDArray[np.int8],
    scale: npt.NDArray[np.float32],
    q: npt.NDArray[np.float32],
    buffer: npt.NDArray[np.float32],
) -> None:
    """out = (q8 × scale) · q, the int8 rows turned into float32 in `buffer` (at least as many
    rows): reused, it stays in the core's cache, where a fresh array per block would not."""
    floats = buffer[: len(q8)]
    np.copyto(floats, q8, casting="unsafe")
    np.dot(floats, q, out=out)
    out *= scale


def nearest(vectors: npt.NDArray[np.float32], centroids: npt.NDArray[np.float32]) -> npt.NDArray[np.int64]:
    """Each row's nearest centroid (largest dot product), `_LABEL_BLOCK` rows to a product,
    the blocks shared between the scan threads (a row is as costly as `len(centroids)` rows of
    a search: worth splitting from a few blocks)."""
    out = np.empty(len(vectors), dtype=np.int64)

    def part(lo: int, hi: int) -> None:
        for start in range(lo, hi, _LABEL_BLOCK):
            stop = min(hi, start + _LABEL_BLOCK)
            out[start:stop] = np.argmax(vectors[start:stop] @ centroids.T, axis=1)

    split_scan(len(vectors), _LABEL_BLOCK, part, at_least=2 * _LABEL_BLOCK)
    return out


_LABEL_BLOCK = 2_048


def scratch_failed(file: RowFile, exc: OSError) -> None:
    """A scratch file that could not be written: let it go, and say the rows stay in memory."""
    log.warning("vector rows stay in memory: the scratch file failed (%s)", exc)
    file.close()


class RowFile:
    """int8 rows of one width in a `ScratchFile`, and a float32 scale each (in memory)."""

    def __init__(self, folder: Path | None, width: int, capacity: int):
        self.width = width
        self.rows = 0
        self.scale = np.ones(capacity, dtype=np.float32)
        self._file = ScratchFile(folder, "vaultmind-vectors-")
        self.close = self._file.close

    def append(self, q8: npt.NDArray[np.int8], scale: npt.NDArray[np.float32]) -> None:
        """Rows (and their scales) after the last, up to the capacity."""
        if self.rows + len(q8) > len(self.scale):
            raise ValueError(f"{self.rows + len(q8)} rows for a file of {len(self.scale)}")
        self._file.write(self.rows * self.width, np.ascontiguousarray(q8).data)
        self.scale[self.rows : self.rows + len(q8)] = scale
        self.rows += len(q8)

    def read(self, start: int, stop: int, buffer: npt.NDArray[np.int8] | None = None) -> npt.NDArray[np.int8]:
        """Rows [start, stop), into `buffer` when given (its first rows)."""
        out = np.empty((stop - start, self.width), dtype=np.int8) if buffer is None else buffer[: stop - start]
        self._file.read_into(start * self.width, out.data)
        return out
