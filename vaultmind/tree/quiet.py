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

from vaultmind.index.store import Index
from vaultmind.tree.deriver import SummaryRow
from vaultmind.tree.note import naive_utc

_EPOCH = datetime(1970, 1, 1)


def last_written(index: Index, rows: Sequence[SummaryRow]) -> dict[str, datetime]:
    """The last time a note under each of `rows` (by its note path) was written, as naive UTC;
    a row with nothing under it left in the index is not in the answer."""
    if not rows:
        return {}
    found = index.query(
        """WITH under AS (
               SELECT r.path, l.note_path AS note FROM
                   (SELECT unnest(?::VARCHAR[]) AS path, unnest(?::VARCHAR[][]) AS leaf_ids) r,
                   leaves l WHERE list_contains(r.leaf_ids, l.id)
               UNION ALL
               SELECT r.path, s.note_path FROM
                   (SELECT unnest(?::VARCHAR[]) AS path, unnest(?::VARCHAR[][]) AS children) r,
                   summaries s WHERE list_contains(r.children, s.id) AND s.user_edited)
           SELECT u.path, max(n.mtime_ns) FROM under u JOIN notes n ON n.path = u.note
           GROUP BY u.path""",
        [
            [r.note_path for r in rows],
            [list(r.leaf_ids) for r in rows],
            [r.note_path for r in rows],
            [list(r.children) for r in rows],
        ],
    )
    return {
        str(path): _EPOCH + timedelta(microseconds=int(ns) // 1000) for path, ns in found if ns is not None
    }


def still_settling(
    index: Index, rows: Sequence[SummaryRow], now: datetime, minutes: float
) -> dict[str, datetime]:
    """The rows (by note path) to leave stale for now, each with the time it may be sealed
    again: something under it was written less than `minutes` before `now`."""
    if minutes <= 0:
        return {}
    quiet = timedelta(minutes=minutes)
    at = naive_utc(now)
    return {path: when + quiet for path, when in last_written(index, rows).items() if when + quiet > at}
