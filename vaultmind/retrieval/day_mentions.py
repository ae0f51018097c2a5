"""The leaves that name a day of a short window in their words, whenever they were written: a
question about a day ("what happened on Tuesday 23 April?", "what did we decide on 5 March?")
asks what happened that day and also what was said of it — "the launch is on 23 April" written
in March, "Meeting 2024-04-23", "April 23rd" in a runbook. `walk` takes them in beside the
window's own leaves (docs/ranking.md).

A window of at most `MENTION_DAYS` days is looked for by its dates' words: for each of its
days, the leaves holding its day ("23" or "23rd") and its month ("april" or "apr"), or its ISO
date's three numbers ("2024", "04", "23"), in the lexical index's postings (no scan of every
leaf), the `SCAN_LIMIT` written nearest the window read to confirm that their text names the
day: "23 April", "23rd of April", "April 23rd, 2024", "2024-04-23". A date said without its year
is the one nearest the day the leaf was written (a plan's "23 April" written in March, a look
back's written in May); in a leaf without a time, any year's. "May" is a stop word, kept out of
the index: a day of May is looked for by its day alone, and read only where "May" is written
with its capital ("all 23 may come" names no day). A leaf written after the reference time was
not there yet. A day a leaf names by relative words ("tomorrow", "next Tuesday") is not looked
for: only a leaf among the candidates is read for those (`windows.names_a_day_in`).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import numpy as np

from vaultmind.calendar_names import MONTH_NUMBERS, alternation
from vaultmind.index.lexical import terms
from vaultmind.retrieval.signals import CANDIDATES
from vaultmind.retrieval.timeparse import TimeWindow

if TYPE_CHECKING:
    from vaultmind.retrieval.view import MemoryView

MENTION_DAYS = 7  # a window this long or shorter is also looked for in the leaves that name its days
SCAN_LIMIT = 2000  # of the leaves holding a day's words, those read to confirm they name it
_HALF_DAY = timedelta(
    hours=12
)  # a named day is in the window when its midday is (the asker's days, at any offset)

_MONTHS = alternation(MONTH_NUMBERS, longest_first=True)
_ORDINAL = r"(?:st|nd|rd|th)?"
_DAY_NAMED = re.compile(
    rf"\b(?:(?P<d1>\d{{1,2}}){_ORDINAL}(?:\s+of)?\s+(?P<m1>{_MONTHS})\b\.?(?:,?\s+(?P<y1>(?:19|20)\d{{2}})\b)?"
    rf"|(?P<m2>{_MONTHS})\.?\s+(?P<d2>\d{{1,2}}){_ORDINAL}\b(?:,?\s+(?P<y2>(?:19|20)\d{{2}})\b)?"
    rf"|(?<![-/.\w])(?P<y3>(?:19|20)\d{{2}})-(?P<n3>\d{{2}})-(?P<d3>\d{{2}})\b(?![-/.]\w))",
    re.IGNORECASE,
)


def window_days(window: TimeWindow) -> list[datetime]:
    """The days of a window of at most `MENTION_DAYS` days (a day whose midday falls in it), as
    midnights; none for a longer one."""
    if window.end - window.start > timedelta(days=MENTION_DAYS):
        return []
    days, midday = [], window.start.replace(hour=12, minute=0, second=0, microsecond=0)
    if midday < window.start:
        midday += timedelta(days=1)
    while midday < window.end:
        days.append(midday - _HALF_DAY)
        midday += timedelta(days=1)
    return days


def _date_words(day: datetime) -> list[list[list[str]]]:
    """The term groups a leaf naming `day` holds one of each of: its day and month, or its ISO
    date's numbers (a day of May by its day alone: "may" is no term)."""
    months = sorted({t for name, number in MONTH_NUMBERS.items() if number == day.month for t in terms(name)})
    named = [sorted({str(day.day), *terms(f"{day.day}{_suffix(day.day)}")})]
    iso = [[str(day.year)], [f"{day.month:02d}"], [f"{day.day:02d}"]]
    return [named + ([months] if months else []), iso]


def _suffix(day: int) -> str:
    if day in (11, 12, 13):
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def names_day(days: list[datetime], text: str, written: datetime | None) -> bool:
    """Whether `text` names one of `days` (midnights): a date with its year, or without one in
    the year nearest `written` (any year, for a leaf without a time)."""
    wanted = {(d.month, d.day) for d in days}
    for m in _DAY_NAMED.finditer(text):
        month_s = m.group("m1") or m.group("m2")
        if month_s is not None and month_s.lower() == "may" and month_s not in ("May", "MAY"):
            continue  # "all 23 may come": the verb
        month = MONTH_NUMBERS[month_s.lower()] if month_s is not None else int(m.group("n3"))
        day = int(m.group("d1") or m.group("d2") or m.group("d3"))
        if (month, day) not in wanted:
            continue
        year_s = m.group("y1") or m.group("y2") or m.group("y3")
        if year_s is not None:
            year: int | None = int(year_s)
        else:
            year = _nearest_year(month, day, written) if written is not None else None
        if any(d.month == month and d.day == day and (year is None or d.year == year) for d in days):
            return True
    return False


def _nearest_year(month: int, day: int, written: datetime) -> int | None:
    """The year in which day `day` of `month` falls nearest `written`."""
    dates = []
    for year in (written.year - 1, written.year, written.year + 1):
        try:
            dates.append(datetime(year, month, day))
        except (ValueError, OverflowError):
            continue
    return min(dates, key=lambda d: abs(d - written)).year if dates else None


def day_mentions(memory: MemoryView, window: TimeWindow, now: datetime) -> list[str]:
    """The leaves (ids) that name a day of `window` (module doc), written by `now` or without a
    time: up to `CANDIDATES`, those written nearest the window first."""
    days = window_days(window)
    if not days:
        return []
    found: set[str] = set()
    for day in days:
        for groups in _date_words(day):
            found.update(memory.leaves.holding_all(groups, SCAN_LIMIT, near=day))
    ids = sorted(found)
    cols = memory.leaves.columns(ids)
    texts = memory.leaves.rows(ids)
    named: list[tuple[float, str]] = []
    for k, leaf_id in enumerate(ids):
        stamp = cols.ts[k]
        written = None if np.isnat(stamp) else stamp.astype("datetime64[us]").astype(datetime)
        row = texts.get(leaf_id)
        if (
            row is None
            or (written is not None and written > now)
            or not names_day(days, row["text"] or "", written)
        ):
            continue
        distance = abs((written - window.start).total_seconds()) if written is not None else float("inf")
        named.append((distance, leaf_id))
    return [leaf_id for _, leaf_id in sorted(named)[:CANDIDATES]]
