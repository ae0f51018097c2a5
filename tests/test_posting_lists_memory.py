"""Building the resident postings' lists holds little beyond what it keeps."""

from __future__ import annotations

import tracemalloc

import numpy as np

from vaultmind.index.postings import PostingLists


def test_posting_lists_find_their_runs_without_a_sorted_copy_of_every_place() -> None:
    """Where each run of rows starts (a term opens one, and so does a change of a row's high
    16 bits) was gathered into one array of places and `np.unique`d: a sort and copies of 8
    bytes a place, at 50k notes (15M postings) ~36 MiB more for a moment in the daemon's
    warm-up. The places are marked in a byte a posting instead; the lists are the same."""
    rng = np.random.default_rng(0)
    counts = rng.integers(1, 30, 200_000)
    counts = counts * 3_000_000 // counts.sum()
    bounds = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    rows = rng.integers(0, 400_000, int(bounds[-1])).astype(np.int32)  # many runs: rows past 2**16
    tfs = rng.integers(1, 5, int(bounds[-1])).astype(np.uint8)
    expected_runs = np.unique(
        np.concatenate([bounds[:-1][bounds[:-1] < bounds[1:]], _high_changes(bounds, rows)])
    )
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        lists = PostingLists(bounds, rows, tfs)
        peak = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
    parts = lists.parts()
    assert np.array_equal(parts["run_start"], expected_runs)
    kept = sum(parts[name].nbytes for name in ("low", "run_start", "run_high", "term_run"))
    # what it keeps, a byte a posting for the marks, and a quarter more for the sort's chunks
    assert peak <= 1.25 * (kept + len(rows)), (peak, kept, len(rows))


def _high_changes(bounds: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Places where a row's high 16 bits differ from the one before, in term-sorted order."""
    term = np.repeat(np.arange(len(bounds) - 1), np.diff(bounds))
    high = rows[np.lexsort((rows, term))] >> 16
    return np.flatnonzero(high[1:] != high[:-1]) + 1
