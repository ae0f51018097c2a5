"""A day named by its number without its month: "the 23rd", "Tuesday 23rd", "on Tuesday the
23rd". Its month is the one the leaf's own date puts nearest: the 23rd of the month it was
written in, of the one before or of the one after, whichever is nearest when it was written —
and, with a weekday said, the nearest of those three that falls on that weekday ("Tuesday 23rd"
written on 2 April 2024 is 23 April, a Tuesday, not 23 March, a Saturday). A leaf without a
time names no day so. "The 3rd" needs its ordinal's ending, a weekday's "Tuesday 23" not; an
ordinal followed by a month ("the 23rd of April") is the named date's (`day_mentions`), and
one followed by a word it counts ("the 2nd time", "the 3rd floor") names no day.

The leaves are found by their words in the lexical index's postings (the asked days' ordinals,
or their numbers beside their weekdays), the `ORDINAL_LIMIT` written nearest the window, and
only those written within `ORDINAL_REACH` of it are read (`day_mentions`)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from vaultmind.calendar_names import MONTH_NUMBERS, WEEKDAYS, alternation
from vaultmind.index.lexical import terms

if TYPE_CHECKING:
    from vaultmind.retrieval.view import MemoryView

ORDINAL_LIMIT = 60  # of the leaves holding an asked day's ordinal (or number and weekday), those read
ORDINAL_REACH = timedelta(days=62)  # the farthest a "Tuesday 23rd" names a day from when it was written
_COUNTED = (  # "the 2nd time": an ordinal that counts, not a day
    "time|times|try|attempt|round|place|floor|row|step|edition|generation|century|grade|version|level|half|quarter"
)


def ordinal_words(days: list[datetime]) -> list[list[list[str]]]:
    """The term groups of the leaves that may name one of `days` by its number alone: its
    ordinal ("23rd"), or its number and its weekday ("23", "tuesday")."""
    ordinals = sorted({t for d in days for t in terms(f"{d.day}{suffix(d.day)}")})
    numbers = sorted({str(d.day) for d in days})
    weekdays = sorted({t for d in days for t in terms(WEEKDAYS[d.weekday()])})
    return [[ordinals], [numbers, weekdays]]


def ordinal_candidates(memory: MemoryView, days: list[datetime]) -> set[str]:
    """The leaves holding the words of `ordinal_words`, the `ORDINAL_LIMIT` nearest the days."""
    middle = days[len(days) // 2]
    return {leaf for groups in ordinal_words(days) for leaf in memory.leaves.holding_all(groups, ORDINAL_LIMIT, near=middle)}


def suffix(day: int) -> str:
    """The ending of `day`'s ordinal: "st" of 1, "th" of 11."""
    if day in (11, 12, 13):
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def _ordinal_pattern(days: list[datetime]) -> re.Pattern[str]:
    numbers = alternation(sorted({str(d.day) for d in days}, key=len, reverse=True))
    months = alternation(MONTH_NUMBERS, longest_first=True)
    return re.compile(
        rf"\b(?:(?P<wd>{alternation(WEEKDAYS)}),?\s+(?:the\s+)?0?(?P<d1>{numbers})(?:st|nd|rd|th)?"
        rf"|the\s+0?(?P<d2>{numbers})(?:st|nd|rd|th))\b"
        rf"(?![:.,]\d)(?!\s+(?:of\s+)?(?:{months}|{_COUNTED})\b)",
        re.IGNORECASE,
    )


def names_by_ordinal(days: list[datetime], text: str, written: datetime) -> bool:
    """Whether `text`, written at `written`, names one of `days` by its number alone (module doc)."""
    for m in _ordinal_pattern(days).finditer(text):
        weekday = WEEKDAYS.index(m.group("wd").lower()) if m.group("wd") else None
        named = _nearest(int(m.group("d1") or m.group("d2")), weekday, written)
        if named is not None and any(named == (d.year, d.month, d.day) for d in days):
            return True
    return False


def _nearest(day: int, weekday: int | None, written: datetime) -> tuple[int, int, int] | None:
    """The day `day` of the month before, of, or after `written`'s nearest it (on `weekday`, when
    one is said), as (year, month, day)."""
    found: list[datetime] = []
    for step in (-1, 0, 1):
        months = written.year * 12 + written.month - 1 + step
        try:
            date = datetime(months // 12, months % 12 + 1, day)
        except ValueError:  # "the 31st" of a shorter month, or the calendar's ends
            continue
        if weekday is None or date.weekday() == weekday:
            found.append(date)
    if not found:
        return None
    near = min(found, key=lambda d: abs(d + timedelta(hours=12) - written))
    return near.year, near.month, near.day
