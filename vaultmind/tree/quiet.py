"""How long a stale summary waits before it is sealed again: until what is under it is quiet.

While you type in a note that is already folded into a summary, Obsidian saves it every few
seconds, and each save makes the summary above stale. Sealing it again at once would delete
and write a summary note (and ask the model) on every save. So a stale summary waits until
the notes under it — the notes of its leaves, and at level 2 and above the summary notes of its
children you edited (those vaultmind wrote are not being typed in) — were last written at least `[trees] reseal_quiet_minutes` before "now"; it stays
as it was meanwhile, marked stale (`vaultmind tree` says it waits, and until when). The
outcome depends only on "now" (passed in) and the notes' modification times in the index.
A stale summary whose children were deleted, with nothing left under it being written, is
sealed again at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

import pyarrow as pa

from vaultmind.index.arrow import execute_with
from vaultmind.index.store import Index
from vaultmind.tree.deriver import SummaryRow
from vaultmind.tree.note import naive_utc

_EPOCH = datetime(1970, 1, 1)
_PAIRS = pa.schema([("path", pa.string()), ("id", pa.string())])  # a row's note path, a leaf or child id


def last_written(index: Index, rows: Sequence[SummaryRow], *, not_after: datetime) -> dict[str, datetime]:
    """The last time a note under each of `rows` (by its note path) was written, as naive UTC,
    of the times up to `not_after`; a row with nothing under it left in the index (or written
    only later) is not in the answer. The rows' leaves and children are passed as Arrow tables,
    one pair a row: a stale summary near the top holds every leaf of its tree, and DuckDB binds
    a list parameter element by element (50,000 leaf ids: 14 s under the index's lock)."""
    if not rows:
        return {}
    leaves = pa.table(
        {
            "path": [r.note_path for r in rows for _ in r.leaf_ids],
            "id": [leaf for r in rows for leaf in r.leaf_ids],
        },
        schema=_PAIRS,
    )
    children = pa.table(
        {"path": [r.note_path for r in rows for _ in r.children], "id": [c for r in rows for c in r.children]},
        schema=_PAIRS,
    )
    with index.lock:
        found = execute_with(
            index.con,
            """WITH under AS (
                   SELECT r.path, l.note_path AS note FROM _rows r JOIN leaves l ON l.id = r.id
                   UNION ALL
                   SELECT m.path, s.note_path FROM _more m JOIN summaries s ON s.id = m.id
                   WHERE s.user_edited)
               SELECT u.path, max(n.mtime_ns) FROM under u JOIN notes n ON n.path = u.note
               WHERE n.mtime_ns <= ? GROUP BY u.path""",
            [_ns(not_after)],
            rows=leaves,
            more=children,
        ).fetchall()
    return {str(path): _EPOCH + timedelta(microseconds=int(ns) // 1000) for path, ns in found}


def _ns(at: datetime) -> int:
    """`at` (naive UTC) in nanoseconds since the epoch, as `notes.mtime_ns` counts."""
    return (at - _EPOCH) // timedelta(microseconds=1) * 1000


def still_settling(
    index: Index, rows: Sequence[SummaryRow], now: datetime, minutes: float
) -> dict[str, datetime]:
    """The rows (by note path) to leave stale for now, each with the time it may be sealed
    again: something under it was written less than `minutes` before `now`. A note written
    later than `now` by more than `minutes` is not waited on: that is a clock days off, or a
    date a sync tool made up, not typing now, and its summary would stay stale until then."""
    if minutes <= 0:
        return {}
    quiet = timedelta(minutes=minutes)
    at = naive_utc(now)
    try:
        trusted = at + quiet
    except OverflowError:  # a "now" in the last minutes of year 9999
        trusted = datetime.max
    return {
        path: when + quiet
        for path, when in last_written(index, rows, not_after=trusted).items()
        if when + quiet > at
    }
