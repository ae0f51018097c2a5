"""A message that tells of a question's window from outside it. People tell of an event
afterwards ("we went to a convention last month", written in April, is about March; "last
week", "yesterday", "last year") or plan it before ("a trip there next month", written in
August, is about September), so the message's own time is outside the window the question
names. Read from when it was written, its first time expression (`timeparse`, the parser that
reads the question's window) names a time inside the window: walk counts it as inside (its time
factor 1, `breakdown.retold`). Only the `RETOLD_TOP` strongest dated leaves outside the window
are read, and only an expression no longer than the window counts ("last year" tells nothing of
March in particular). Not for a question about nothing but its window ("what happened last
week?"): that ranks the window's own messages by what they say."""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from vaultmind.calendar_names import alternation
from vaultmind.retrieval.timeparse import MONTHS, WEEKDAYS, TimeWindow, parse_time_window

if TYPE_CHECKING:
    from vaultmind.index.leaf_columns import LeafColumns
    from vaultmind.retrieval.view import MemoryView

RETOLD_TOP = 40  # of the dated leaves outside the window, this many strongest are read for the time they name
# a word or digit without which no time expression is read: most messages name none, and the
# parser's patterns cost 0.2 ms a message (40 of them on every question with a window)
_TIME_CUE = re.compile(
    r"\d|\b(?:yesterday|today|tonight|tomorrow|days?|weeks?|weekends?|months?|years?|nights?|mornings?"
    r"|evenings?|afternoons?|ago|quarters?|q[1-4]|spring|summer|autumn|fall|winter|"
    + alternation({*MONTHS, *WEEKDAYS}, longest_first=True)
    + r")\b",
    re.IGNORECASE,
)


def retold_leaves(
    memory: MemoryView,
    ids: list[str],
    cols: LeafColumns,
    unscaled: npt.NDArray[np.float64],
    factors: npt.NDArray[np.float64],
    window: TimeWindow,
) -> npt.NDArray[np.int64]:
    """Places (in walk's arrays) of the `RETOLD_TOP` strongest dated leaves outside `window` —
    time factor below 1, ranked by `unscaled`, their score before it — that tell of a time inside
    it (`tells_of`)."""
    outside = np.flatnonzero((factors < 1.0) & ~np.isnat(cols.ts[: len(factors)]) & (unscaled > 0))
    strongest = outside[np.argsort(-unscaled[outside], kind="stable")[:RETOLD_TOP]].tolist()
    rows = memory.leaves.rows([ids[k] for k in strongest])
    return np.array(
        [
            k
            for k in strongest
            if (row := rows.get(ids[k])) is not None
            and tells_of(window, row["text"] or "", cols.ts[k].astype("datetime64[us]").astype(datetime))
        ],
        dtype=np.int64,
    )


def tells_of(window: TimeWindow, text: str, written: datetime) -> bool:
    """Whether `text`, written at `written` (naive UTC), names by its first time expression a
    time inside `window`, read from when it was written ("last month" in April: March), no
    longer than the window."""
    told = _named(text, written)
    if told is None:
        return False
    start, end = told
    return end - start <= window.end - window.start and start < window.end and window.start < end


@lru_cache(maxsize=16_384)
def _named(text: str, written: datetime) -> tuple[datetime, datetime] | None:
    """The window of `text`'s first time expression, read from `written`; kept by text and time
    (the strongest leaves of one question are often among those of the next)."""
    found = parse_time_window(text, written) if _TIME_CUE.search(text) else None
    return (found.start, found.end) if found is not None else None
