"""Posting lists held in memory in two bytes a row instead of four, and the terms' numbers
(`TermCodes`) in one UTF-8 buffer instead of a dict.

Each term's postings are sorted by row. A row is then its low 16 bits (`uint16`, one per
posting) plus its high bits, which change only a few times along a sorted list: at most once
per 65,536 rows, so ~7 runs for a term found everywhere in 430k leaves and one for most terms.
The runs are kept apart (start and high bits). At 50k notes this holds 15.4M postings in 31 MB
less than `int32` rows, and a list decodes with one add per run.

`save_snapshot` / `load_snapshot` keep the lists and the terms' numbers in a file beside the
index, so the next load of the same postings reads them instead of the index.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from vaultmind.index.snapshot_file import load_arrays, save_arrays

log = logging.getLogger(__name__)

SORT_CHUNK = 1 << 18  # postings sorted at a time (whole terms): a few MB of keys, not the whole table


class PostingLists:
    """Terms' postings (row, tf), term `c`'s at `bounds[c]:bounds[c + 1]`. Read-only."""

    __slots__ = ("_low", "_run_high", "_run_start", "_term_run", "_tf", "bounds")

    def __init__(
        self,
        bounds: npt.NDArray[np.int64],
        rows: npt.NDArray[np.int32],
        tfs: npt.NDArray[np.unsignedinteger[Any]],
    ):
        """`rows` and `tfs` grouped by term as `bounds` says, in any order within a term;
        both are sorted in place. Built a chunk at a time: no temporary the size of `rows`."""
        sort_within_terms(bounds, rows, tfs)
        low = np.empty(len(rows), dtype=np.uint16)
        # where a run starts, marked in a byte a posting: the places' union, in order, without
        # gathering them into one array and sorting it (at 50k notes, 15M postings, that
        # gathering and `np.unique`'s copies rose the daemon's warm-up by ~36 MiB for a moment)
        opens = np.zeros(len(rows), dtype=np.bool_)
        opens[bounds[:-1][bounds[:-1] < bounds[1:]]] = True  # every non-empty term opens a run
        for start in range(0, len(rows), SORT_CHUNK):
            stop = min(start + SORT_CHUNK, len(rows))
            high = rows[start : stop + 1] >> 16  # one past the chunk: a change at its edge counts
            opens[np.flatnonzero(high[1:] != high[:-1]) + start + 1] = True
            np.bitwise_and(rows[start:stop], 0xFFFF, out=low[start:stop], casting="unsafe")
        run_start = np.flatnonzero(opens).astype(np.int64)
        del opens
        self.bounds = bounds
        self._low = low
        self._tf = tfs
        self._run_start = run_start
        self._run_high = (rows[run_start] >> 16).astype(np.int32) << 16
        self._term_run = np.searchsorted(run_start, bounds)  # term c's runs: [c, c + 1)

    def parts(self) -> dict[str, npt.NDArray[Any]]:
        """The arrays that make the lists, by name (`from_parts` makes them again)."""
        return {"bounds": self.bounds, "low": self._low, "tf": self._tf, "run_start": self._run_start,
                "run_high": self._run_high, "term_run": self._term_run}  # fmt: skip

    @classmethod
    def from_parts(cls, parts: Mapping[str, npt.NDArray[Any]]) -> PostingLists:
        """Lists from `parts()`' arrays; ValueError when they do not fit together."""
        lists = cls.__new__(cls)
        lists.bounds = np.asarray(parts["bounds"], dtype=np.int64)
        lists._low = np.asarray(parts["low"], dtype=np.uint16)
        lists._tf = np.asarray(parts["tf"])
        lists._run_start = np.asarray(parts["run_start"], dtype=np.int64)
        lists._run_high = np.asarray(parts["run_high"], dtype=np.int32)
        lists._term_run = np.asarray(parts["term_run"])
        postings = len(lists._low)
        if (
            not len(lists.bounds) or int(lists.bounds[0]) != 0 or int(lists.bounds[-1]) != postings
            or len(lists._tf) != postings or lists._tf.dtype.kind != "u"
            or len(lists._term_run) != len(lists.bounds) or len(lists._run_high) != len(lists._run_start)
            or bool((np.diff(lists.bounds) < 0).any())
            or (len(lists._run_start) and not 0 <= int(lists._run_start.min()) <= int(lists._run_start.max()) < postings)
        ):
            raise ValueError("posting lists whose parts do not fit together")
        return lists

    def get(self, code: int) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.unsignedinteger[Any]]]:
        """(rows ascending, tfs) of term `code`."""
        start, end = int(self.bounds[code]), int(self.bounds[code + 1])
        rows = self._low[start:end].astype(np.int32)
        first, last = int(self._term_run[code]), int(self._term_run[code + 1])
        for run in range(first, last):  # a few at most; the first rows' high bits are mostly 0
            high = int(self._run_high[run])
            if high:
                stop = int(self._run_start[run + 1]) if run + 1 < last else end
                rows[int(self._run_start[run]) - start : stop - start] += high
        return rows, self._tf[start:end]

    @property
    def nbytes(self) -> int:
        parts = (self.bounds, self._low, self._tf, self._run_start, self._run_high, self._term_run)
        return sum(a.nbytes for a in parts)


def sort_within_terms(
    bounds: npt.NDArray[np.int64], rows: npt.NDArray[np.int32], tfs: npt.NDArray[np.unsignedinteger[Any]]
) -> None:
    """Sort each term's postings by row, in place, a run of whole terms (about `SORT_CHUNK`
    postings) at a time."""
    terms = len(bounds) - 1
    first = 0
    while first < terms:
        last = max(first + 1, int(np.searchsorted(bounds, bounds[first] + SORT_CHUNK, side="right")) - 1)
        last = min(last, terms)
        start, end = int(bounds[first]), int(bounds[last])
        if end > start:
            term = np.repeat(np.arange(last - first, dtype=np.int64), np.diff(bounds[first : last + 1]))
            order = np.argsort((term << 32) | rows[start:end].astype(np.int64), kind="stable")
            rows[start:end] = rows[start:end][order]
            tfs[start:end] = tfs[start:end][order]
        first = last


class TermCodes:
    """Distinct terms → their number (their place in the array they came in), looked up by
    binary search over the terms' UTF-8 bytes, held sorted in one buffer with their offsets.
    A dict of Python strings held ~110 bytes a term (8.8 MB for 83k terms at 50k notes); this
    holds their bytes and eight more (under 1 MB). Read-only."""

    __slots__ = ("_codes", "_data", "_offsets")

    def __init__(self, terms: pa.Array | pa.ChunkedArray):
        """`terms`: distinct strings (no nulls); each is numbered by its place in it."""
        array = terms.combine_chunks() if isinstance(terms, pa.ChunkedArray) else terms
        array = array.cast(pa.large_string())
        self._codes: npt.NDArray[np.int32] | None = None  # code of each sorted term (None: as placed)
        if len(array) > 1 and not pc.all(pc.less(array[:-1], array[1:])).as_py():
            order = pc.sort_indices(array)  # by bytes, as `get` compares them
            array = array.take(order)
            self._codes = order.to_numpy().astype(np.int32)
        offsets = np.frombuffer(array.buffers()[1], dtype=np.int64)[array.offset : array.offset + len(array) + 1]
        self._offsets = offsets - offsets[0] if len(offsets) else np.zeros(1, dtype=np.int64)
        data = array.buffers()[2]
        start = int(offsets[0]) if len(offsets) else 0
        self._data = bytes(memoryview(data)[start : start + int(self._offsets[-1])]) if data is not None else b""

    def parts(self) -> dict[str, npt.NDArray[Any]]:
        """The arrays that make the codes, by name (`from_parts` makes them again)."""
        codes = self._codes if self._codes is not None else np.zeros(0, dtype=np.int32)
        return {"data": np.frombuffer(self._data, dtype=np.uint8), "offsets": self._offsets, "codes": codes}

    @classmethod
    def from_parts(cls, parts: Mapping[str, npt.NDArray[Any]]) -> TermCodes:
        """Codes from `parts()`' arrays; ValueError when they do not fit together."""
        codes = cls.__new__(cls)
        codes._data = np.asarray(parts["data"], dtype=np.uint8).tobytes()
        codes._offsets = np.asarray(parts["offsets"], dtype=np.int64)
        numbers = np.asarray(parts["codes"], dtype=np.int32)
        codes._codes = numbers if len(numbers) else None
        terms = len(codes._offsets) - 1
        if (
            terms < 0 or int(codes._offsets[0]) != 0 or int(codes._offsets[-1]) != len(codes._data)
            or bool((np.diff(codes._offsets) < 0).any()) or (len(numbers) and len(numbers) != terms)
        ):
            raise ValueError("term codes whose parts do not fit together")
        return codes

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def get(self, term: str) -> int | None:
        """The number of `term` (None: not among them)."""
        try:
            key = term.encode()
        except UnicodeEncodeError:  # a lone surrogate (a command line's undecodable byte): no term
            return None
        data, offsets = self._data, self._offsets
        lo, hi = 0, len(offsets) - 1
        while lo < hi:  # the first term not below `key`
            mid = (lo + hi) // 2
            if data[offsets[mid] : offsets[mid + 1]] < key:
                lo = mid + 1
            else:
                hi = mid
        if lo == len(offsets) - 1 or data[offsets[lo] : offsets[lo + 1]] != key:
            return None
        return int(self._codes[lo]) if self._codes is not None else lo

    @property
    def nbytes(self) -> int:
        return len(self._data) + self._offsets.nbytes + (self._codes.nbytes if self._codes is not None else 0)


_MAGIC = b"vaultmind postings 1\n"


def save_snapshot(path: Path, key: str, codes: TermCodes, lists: PostingLists) -> None:
    """Write `codes` and `lists` to `path` under `key` (`snapshot_file.save_arrays`)."""
    arrays = {f"codes_{k}": v for k, v in codes.parts().items()} | {f"lists_{k}": v for k, v in lists.parts().items()}
    save_arrays(path, _MAGIC, key, arrays)


def load_snapshot(path: Path, key: str) -> tuple[TermCodes, PostingLists] | None:
    """What `save_snapshot` wrote to `path`, when it was written under `key` (None otherwise, or
    when the file is missing or damaged: the caller loads the postings from the index)."""
    arrays = load_arrays(path, _MAGIC, key, "postings")
    if arrays is None:
        return None
    try:
        codes = TermCodes.from_parts({k: arrays[f"codes_{k}"] for k in ("data", "offsets", "codes")})
        lists = PostingLists.from_parts(
            {k: arrays[f"lists_{k}"] for k in ("bounds", "low", "tf", "run_start", "run_high", "term_run")}
        )
    except (ValueError, KeyError, TypeError) as exc:
        log.info("the postings snapshot %s cannot be read (%s); loading them from the index", path, exc)
        return None
    return codes, lists
