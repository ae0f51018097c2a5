"""Where the resident vectors' rows are held, and how they are read and scanned (`VectorRows`):
float32 in memory, int8 in memory, or int8 in a scratch file in cluster order.

Clustered int8 rows are not held in memory but in a `RowFile`, an unnamed scratch file
beside the index: a load streams them there as they arrive, and the clustering rewrites it in
cluster order, so a probe reads a few runs of it (from the operating system's page cache,
which can drop them under memory pressure) instead of gathering rows spread over a matrix
the process holds (at 50k notes: 106 MB less, and a probe 2–3× faster). Rows added since the
clustering stay in memory (`_q8` holds rows `_filed` and up) until the next one. Where no
scratch file can be written every int8 row stays in memory (`_filed` is 0)."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from vaultmind.index.vector_scan import (
    FirstPass,
    RowFile,
    quantize_rows,
    score_into,
    scratch_failed,
    split_scan,
)

log = logging.getLogger(__name__)


class VectorRows:
    """The rows of the resident vectors (`resident_vectors.ResidentVectors`, which numbers them
    by leaf, loads and clusters them): the float32 matrix, or the int8 rows with their float32
    scales, below `_filed` in a scratch file (`_file`, in the order `_order` gives) and from
    there in memory (`_q8`), and the float32 rows added since the last merge (`_chunks`)."""

    BLOCK = 8_192  # rows gathered (and dequantized) at a time, and a scan's unit of work
    WINDOW_BYTES = 16 * 2**20  # rows put in cluster order at a time (each window reads the old file once)
    READ = 1_024  # int8 rows turned into float32 (and read from the scratch file) at a time, in each scan thread's buffers

    def __init__(self, scratch_in: Path | None):
        self._scratch_in = scratch_in  # the folder of the scratch files (None: the temporary folder)
        self._chunks: list[npt.NDArray[np.float32]] = []  # float32 rows added since the last merge
        self._matrix: npt.NDArray[np.float32] = np.zeros((0, 0), dtype=np.float32)
        self._q8: npt.NDArray[np.int8] | None = None  # int8 rows `_filed`… (then `_matrix` is empty)
        self._scale: npt.NDArray[np.float32] = np.zeros(0, dtype=np.float32)
        self._file: RowFile | None = None  # the int8 rows below `_filed` (clustered: in cluster order)
        self._filed = 0
        # int32: a row number or place fits (4 bytes a row instead of 8 for each: 3.3 MB at 50k notes)
        self._order = np.zeros(0, dtype=np.int32)  # place in `_file` → row
        self._position = np.zeros(0, dtype=np.int32)  # row → place in `_file` (-1: not in it)
        self._head: FirstPass | None = None  # the int8 rows' first-pass projection (rows in memory, not clustered)

    @property
    def _width(self) -> int:
        """The vectors' dimension (0 while there are none)."""
        if self._q8 is not None:
            return int(self._q8.shape[1])
        if self._matrix.size:
            return int(self._matrix.shape[1])
        return next((int(c.shape[1]) for c in self._chunks if c.size), 0)

    @property
    def _base(self) -> int:
        """Rows in the matrix (float32, or int8 in the file and in memory); later rows are in
        `_chunks`."""
        return self._filed + len(self._q8) if self._q8 is not None else len(self._matrix)

    def _merge(self) -> None:
        """Fold the vectors added since the last merge into the matrix (a copy of it: done once
        they pass 5 % of it, not on every save)."""
        tail = [c for c in self._chunks if c.size]
        if tail and self._q8 is not None:
            q8, scale = quantize_rows(np.concatenate(tail))
            head = self._head if self._head is not None and self._head.of is self._q8 else None
            self._q8, self._scale = np.concatenate((self._q8, q8)), np.concatenate((self._scale, scale))
            self._head = head.extended(self._q8, q8, scale, self.BLOCK) if head is not None else None
        elif tail:
            self._matrix = np.vstack([m for m in (self._matrix, *tail) if m.size])
        self._chunks = []

    def _scratch(self, width: int, capacity: int) -> RowFile | None:
        """A new scratch file beside the index (None, the rows then held in memory, where none can
        be made: a read-only folder, a full disk)."""
        folder = self._scratch_in
        try:
            return RowFile(folder, width, capacity)
        except OSError as exc:
            log.warning("vector rows stay in memory: no scratch file in %s (%s)", folder or "the temporary folder", exc)
            return None

    def _filed_in(self, file: RowFile, order: npt.NDArray[np.intp], rows: int) -> None:
        """Take `file` as the store of rows [0, `rows`), its place p holding row `order[p]`."""
        self._drop_file()
        self._position = np.full(rows, -1, dtype=np.int32)
        self._position[order] = np.arange(len(order), dtype=np.int32)
        self._file, self._order, self._filed = file, order.astype(np.int32), rows
        width = file.width
        self._q8, self._scale = np.zeros((0, width), dtype=np.int8), np.zeros(0, dtype=np.float32)
        self._head = None

    def _file_in_order(self, members: npt.NDArray[np.int64]) -> None:
        """Write the rows `members` (the live ones, in cluster order) to a new scratch file,
        from the current one and from memory, a window of rows at a time; the rows of the
        old file are read in order, once per window. Where no file can be written the rows
        stay in (or come back to) memory: searches are the same, only slower and larger."""
        base = self._base
        new = self._scratch(self._width, len(members))
        if new is not None:
            try:
                self._copy_rows(new, members)
            except OSError as exc:
                scratch_failed(new, exc)
                new = None
        if new is None:
            self._into_memory()
            return
        self._filed_in(new, members, base)

    def _copy_rows(self, new: RowFile, members: npt.NDArray[np.int64]) -> None:
        window = max(1, self.WINDOW_BYTES // new.width)
        old, filed = self._file, self._filed
        assert self._q8 is not None
        chunk = np.empty((min(window, old.rows if old is not None else 0), new.width), dtype=np.int8)
        for w0 in range(0, len(members), window):
            rows = members[w0 : w0 + window]
            out = np.empty((len(rows), new.width), dtype=np.int8)
            scale = np.empty(len(rows), dtype=np.float32)
            held = rows >= filed
            out[held] = self._q8[rows[held] - filed]
            scale[held] = self._scale[rows[held] - filed]
            if old is not None and not held.all():
                at = np.flatnonzero(~held)
                places = self._position[rows[at]]
                by_place = np.argsort(places, kind="stable")
                at, places = at[by_place], places[by_place]
                for c0 in range(int(places[0]), int(places[-1]) + 1, len(chunk)):
                    a, b = np.searchsorted(places, [c0, c0 + len(chunk)])
                    if a < b:
                        read = old.read(c0, min(old.rows, c0 + len(chunk)), chunk)
                        out[at[a:b]] = read[places[a:b] - c0]
                scale[at] = old.scale[places]
            new.append(out, scale)

    def _into_memory(self) -> None:
        """Every int8 row in memory, in row order (when no scratch file can be written)."""
        file = self._file
        if file is None or self._q8 is None:
            return
        q8 = np.zeros((self._base, file.width), dtype=np.int8)  # rows not in the file are dead: zero
        scale = np.ones(self._base, dtype=np.float32)
        for start in range(0, file.rows, self.BLOCK):
            stop = min(file.rows, start + self.BLOCK)
            q8[self._order[start:stop]] = file.read(start, stop)
            scale[self._order[start:stop]] = file.scale[start:stop]
        q8[self._filed :], scale[self._filed :] = self._q8, self._scale
        self._drop_file()
        self._q8, self._scale, self._head = q8, scale, None

    def _drop_file(self) -> None:
        if self._file is not None:
            self._file.close()
        self._file, self._filed = None, 0
        self._position = self._order = np.zeros(0, dtype=np.int32)

    def _row_bytes(self) -> tuple[int, int, int]:
        """Bytes of the rows held in memory (with their scales and places in the scratch file),
        of the first pass's projections, and of the int8 rows in the scratch file (outside the
        process)."""
        matrix = self._matrix.nbytes + sum(c.nbytes for c in self._chunks)
        if self._q8 is not None:
            matrix += self._q8.nbytes + self._scale.nbytes + self._position.nbytes + self._order.nbytes
        if self._file is not None:
            matrix += self._file.scale.nbytes
        file = 0 if self._file is None else self._file.rows * self._file.width
        head = 0 if self._head is None else self._head.nbytes
        return matrix, head, file

    def _block(self, rows: npt.NDArray[np.intp]) -> npt.NDArray[np.float32]:
        """Rows of the matrix as float32 (dequantized when stored as int8; read from the file
        one by one when filed)."""
        if self._q8 is None:
            return self._matrix[rows]
        out = np.empty((len(rows), self._width), dtype=np.float32)
        filed = rows < self._filed
        if self._file is not None and filed.any():
            for at, place in zip(np.flatnonzero(filed).tolist(), self._position[rows[filed]].tolist(), strict=True):
                if place < 0:  # a row that was dead when the file was written
                    out[at] = 0.0
                else:
                    out[at] = self._file.read(place, place + 1)[0].astype(np.float32) * self._file.scale[place]
        local = rows[~filed] - self._filed
        out[~filed] = self._q8[local].astype(np.float32) * self._scale[local][:, None]
        return out

    def _stored(self) -> Iterator[tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]]:
        """(rows, their vectors as float32) for every row of the matrix, `BLOCK` rows at a
        time: the file's in its order, then those in memory."""
        if self._file is not None:
            for start in range(0, self._file.rows, self.BLOCK):
                stop = min(self._file.rows, start + self.BLOCK)
                block = self._file.read(start, stop).astype(np.float32)
                block *= self._file.scale[start:stop, None]
                yield self._order[start:stop].astype(np.intp), block
        for start in range(self._filed, self._base, self.BLOCK):
            rows = np.arange(start, min(self._base, start + self.BLOCK), dtype=np.intp)
            yield rows, self._block(rows)

    def _scan(self, q: npt.NDArray[np.float32], rows: npt.NDArray[np.intp] | None = None) -> npt.NDArray[np.float32]:
        """q · each of `rows` of the matrix in memory (all when None; int8 rows counted from
        `_filed`), `BLOCK` rows at a time over `split_scan`'s threads: one product per block of
        float32 rows, per `READ` int8 rows. Rows picked by index are gathered a block at a
        time: the copy stays small."""
        q8, scale, matrix = self._q8, self._scale, self._matrix
        out = np.empty(len(rows) if rows is not None else len(q8) if q8 is not None else len(matrix), dtype=np.float32)

        def part(lo: int, hi: int) -> None:
            if q8 is None:
                for start in range(lo, hi, self.BLOCK):
                    stop = min(hi, start + self.BLOCK)
                    out[start:stop] = matrix[slice(start, stop) if rows is None else rows[start:stop]] @ q
                return
            buffer = np.empty((min(self.READ, hi - lo), q8.shape[1]), dtype=np.float32)
            start = lo
            while start < hi:  # blocks end at multiples of READ, whatever the threads' parts
                stop = min(hi, (start // self.READ + 1) * self.READ)
                pick = slice(start, stop) if rows is None else rows[start:stop]
                score_into(out[start:stop], q8[pick], scale[pick], q, buffer)
                start = stop

        # int8 parts are whole multiples of READ: a row's block is the same for any threads
        split_scan(len(out), self.BLOCK if q8 is None else max(1, self.BLOCK // self.READ) * self.READ, part)
        return out

    def _scan_file(
        self, q: npt.NDArray[np.float32], runs: Sequence[tuple[int, int]]
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]:
        """(rows, q · row) for the places [start, stop) of each of `runs` in the scratch file,
        read at most `READ` rows at a time into a buffer of each scanning thread and scored as
        they come."""
        file = self._file
        assert file is not None
        sizes = np.array([stop - start for start, stop in runs], dtype=np.int64)
        offsets = np.concatenate(([0], np.cumsum(sizes)))
        total = int(offsets[-1])
        out = np.empty(total, dtype=np.float32)

        def part(lo: int, hi: int) -> None:
            buffer = np.empty((min(self.READ, hi - lo), file.width), dtype=np.int8)
            floats = np.empty(buffer.shape, dtype=np.float32)
            run = int(np.searchsorted(offsets, lo, side="right")) - 1
            at = lo
            while at < hi:
                start = runs[run][0] + at - int(offsets[run])
                # blocks end at runs' ends and at multiples of READ (as the threads' parts do):
                # a row's score does not depend on how many threads there are
                count = min(hi, int(offsets[run + 1]), (at // self.READ + 1) * self.READ) - at
                block = file.read(start, start + count, buffer)
                score_into(out[at : at + count], block, file.scale[start : start + count], q, floats)
                at += count
                if at == offsets[run + 1]:
                    run += 1

        split_scan(total, self.READ, part)
        places = np.concatenate([np.arange(start, stop, dtype=np.int64) for start, stop in runs]) if runs else np.zeros(0, np.int64)
        return self._order[places].astype(np.intp), out
