"""The leaves that name a day of a short window in their words, whenever they were written: a
question about a day ("what happened on Tuesday 23 April?", "what did we decide on 5 March?")
asks what happened that day and also what was said of it — "the launch is on 23 April" written
in March, "Meeting 2024-04-23", "April 23rd" in a runbook. `walk` takes them in beside the
window's own leaves (docs/ranking.md).

A window of at most `MENTION_DAYS` days is looked for by its dates' words: for the days of
each of its months at once (a week's seven days are one look-up, not seven), the leaves holding
one of their days ("23" or "23rd") and their month ("april" or "apr"), or their ISO dates'
numbers ("2024", "04", "23"), in the lexical index's postings (no scan of every leaf), the
`SCAN_LIMIT` a day written nearest them read to confirm that their text names one of the days: "23 April", "23rd of April", "April 23rd, 2024", "2024-04-23" (on one line, its day's number
no part of a version, an amount or a time: not "2.23 April", "10:23 April"). A date said without its year
is the one nearest the day the leaf was written (a plan's "23 April" written in March, a look
back's written in May); in a leaf without a time, any year's. "May" is a stop word, kept out of
the index: a day of May is looked for by its ordinal ("14th") or, when the window is that one
day, by its number alone (the `BARE_LIMIT` leaves written nearest it: a number is common), and
read only where "May" is written with its capital ("all 23 may come" names no day). A leaf written after the reference time was
not there yet.

A day written in numbers ("23/04/2024", "23/4"; day or month first: `day_numbers`, the vault's
`[time] date_order`; year first, "2024/04/23", among the leaves its ISO date's numbers find) is
found by its numbers in the postings, the same way; "scored 11/15", "13/20 points" are scores,
no day.

A day a leaf names by its number without its month ("the 23rd", "Tuesday 23rd") is the one its
own date puts nearest (`day_ordinals`).

A day a leaf names by relative words is read from when the leaf was written: the `RELATIVE_LIMIT`
leaves written nearest the window, within `RELATIVE_REACH` days before or after it, that hold
one of its relative words — "tomorrow", "next", "in two days", the asked days' weekday names
before it; "yesterday", "ago", "last", their weekday names after it (the lexical index's
postings, no scan). One written before a day names it as a plan does, forward ("see you
tomorrow", "the launch is on Tuesday", "in two days": `windows.names_a_day_in`); one written
after, as a look back does ("yesterday was wild", "last Tuesday", "two days ago": its first time
expression, `retold.tells_of`). Only one that tells of the day beyond naming it counts
(`RELATIVE_TELLS` words that name no time and are no goodbye's or thanks' — "see", "bye",
"night", "thanks" …): "alright, see you tomorrow, have a good night!" is a goodbye, not an
account of the day.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from functools import cache
from itertools import groupby
from typing import TYPE_CHECKING

from vaultmind.calendar_names import MONTH_NUMBERS, alternation
from vaultmind.index.lexical import terms
from vaultmind.retrieval.day_numbers import number_candidates, numeric_dates
from vaultmind.retrieval.day_ordinals import ORDINAL_REACH, names_by_ordinal, ordinal_candidates, suffix
from vaultmind.retrieval.retold import tells_of
from vaultmind.retrieval.signals import CANDIDATES
from vaultmind.retrieval.timeparse import WEEKDAYS, TimeWindow
from vaultmind.retrieval.windows import beyond_dating, names_a_day_in

if TYPE_CHECKING:
    from vaultmind.retrieval.view import MemoryView

MENTION_DAYS = 7  # a window this long or shorter is also looked for in the leaves that name its days
SCAN_LIMIT = 400  # a day, of the leaves holding a window's days' words (of a month), those read to confirm they name one
BARE_LIMIT = 60  # … for a day of May, found by its day's number alone ("may" is no term)
RELATIVE_REACH = timedelta(days=14)  # a leaf naming a day by relative words is written this near it
RELATIVE_LIMIT = 60  # of the leaves holding a relative day word on either side, those read
RELATIVE_TELLS = 2  # … and that tells this many words beyond the day it names and a goodbye's
# The words of a goodbye or a thanks: "Alright, see you tomorrow, have a good night!" tells
# nothing of tomorrow (English, as the relative day words are).
_GOODBYE = frozenset(terms("ok okay alright bye goodbye cya see talk later soon night thanks thank cheers care love hug xoxo lol haha"))
_AHEAD_WORDS = ("tomorrow", "next", "coming", "days")  # "tomorrow", "next Friday", "in two days"
_BACK_WORDS = ("yesterday", "ago", "last")  # "yesterday", "two days ago", "last Friday"
_HALF_DAY = timedelta(hours=12)  # a named day is in the window when its midday is (at any offset)
_ORDINAL = r"(?:st|nd|rd|th)?"
_YEAR = r"(?:,?[ \t]+(?P<{}>(?:19|20)\d{{2}})\b)?"
# a day's number is no part of a longer number: not "2.23" (a version, an amount), "10:23" (a
# time) or "1/23", before a month or after one ("April 23.5%"); and a date does not span lines
_NOT_IN_NUMBER_BEFORE = r"(?<!\d[.,:/])"
_NOT_IN_NUMBER_AFTER = r"(?![.:/]\d)"
_GAP = r"[ \t]+"


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


def _date_words(days: list[datetime]) -> list[tuple[list[list[str]], int, datetime]]:
    """The term groups a leaf naming one of `days` holds one of each of, each with how many such
    leaves are read and the day they are read nearest: for the days of each month, their days
    and their month ("23" or "23rd", and "april" or "apr"), or their ISO dates' numbers — one
    look-up of the postings for a week's days, not one for each. As many leaves are read for
    each day as for a day asked alone (`SCAN_LIMIT` a day): in a vault where hundreds of leaves
    near a week hold "april" and one of its days' numbers, a leaf written months before that
    names one of its days is not crowded out by them. Days of May ("may" is no term) by their
    ordinals ("14th") alone, or by the number too when the window is that one day, the
    `BARE_LIMIT` a day written nearest them."""
    out: list[tuple[list[list[str]], int, datetime]] = []
    for (year, month), held in groupby(sorted(days), key=lambda d: (d.year, d.month)):
        same = list(held)
        near = same[len(same) // 2]
        months = sorted({t for name, number in MONTH_NUMBERS.items() if number == month for t in terms(name)})
        ordinals = sorted({t for d in same for t in terms(f"{d.day}{suffix(d.day)}")})
        numbers = sorted({str(d.day) for d in same} | set(ordinals))
        if months:
            out.append(([numbers, months], SCAN_LIMIT * len(same), near))
        else:
            out.append(([numbers if len(days) == 1 else ordinals], BARE_LIMIT * len(same), near))
        out.append(([[str(year)], [f"{month:02d}"], sorted({f"{d.day:02d}" for d in same})], SCAN_LIMIT * len(same), near))
    return out


def _days_pattern(days: list[datetime]) -> re.Pattern[str]:
    """A pattern for the dates of the months of `days` (any year, said or not): "23 April",
    "23rd of Apr", "April 23rd, 2024", "2024-04-23" — built for the months asked, so a leaf is
    searched for their names, not for every date's, and made once for every question about
    them (a pattern made for the days asked cost a question about new days 3-8 ms to compile);
    `names_day` keeps the days asked."""
    return _months_pattern(tuple(sorted({d.month for d in days})))


@cache
def _months_pattern(months: tuple[int, ...]) -> re.Pattern[str]:
    """`_days_pattern` of the days of `months` (month numbers), made once."""
    names = alternation(sorted((n for n, k in MONTH_NUMBERS.items() if k in months), key=len, reverse=True))
    day = rf"\d{{1,2}}{_ORDINAL}"
    named = (
        rf"(?:{_NOT_IN_NUMBER_BEFORE}{day}(?:{_GAP}of)?{_GAP}(?:{names})\b\.?{_YEAR.format('y')}"
        rf"|(?:{names})\.?{_GAP}{day}\b{_NOT_IN_NUMBER_AFTER}{_YEAR.format('z')})"
    )
    iso = "|".join(f"{month:02d}" for month in months)
    return re.compile(
        rf"\b{named}|(?<![-/.\w])(?P<iso>(?:19|20)\d{{2}})-(?:{iso})-\d{{2}}\b(?![-/.]\w)",
        re.IGNORECASE,
    )


def names_day(
    days: list[datetime], text: str, written: datetime | None, pattern: re.Pattern[str] | None = None
) -> bool:
    """Whether `text` names one of `days` (midnights): a date with its year, or without one in
    the year nearest `written` (any year, for a leaf without a time). `pattern`: `_days_pattern`
    of `days`, made once for many texts."""
    if all(d.month == 5 for d in days) and not any(may in text for may in ("May", "MAY", "-05-")):
        return False  # no day of May written as one: spare the pattern a long text
    for m in (pattern or _days_pattern(days)).finditer(text):
        said = next((v for k, v in m.groupdict().items() if v and k != "iso"), None) or m.group("iso")
        month, day = _month_day(m.group(0))
        if month == 5 and not _capital_may(m.group(0)):
            continue  # "all 23 may come": the verb
        year = int(said) if said else _nearest_year(month, day, written) if written is not None else None
        if any(d.month == month and d.day == day and (year is None or d.year == year) for d in days):
            return True
    return False


_PARTS = re.compile(
    r"(?P<iso>\d{4})-(?P<im>\d{2})-(?P<id>\d{2})|(?P<day>\d{1,2})|(?P<month>[a-z]+)", re.IGNORECASE
)


def _month_day(found: str) -> tuple[int, int]:
    """The month and day of a date `_days_pattern` found."""
    month = day = 0
    for part in _PARTS.finditer(found):
        if part.group("iso"):
            return int(part.group("im")), int(part.group("id"))
        if part.group("day") and not day:
            day = int(part.group("day"))
        elif part.group("month") and part.group("month").lower() in MONTH_NUMBERS and not month:
            month = MONTH_NUMBERS[part.group("month").lower()]
    return month, day


def _capital_may(found: str) -> bool:
    """Whether a date of May found writes "May" with its capital (or in capitals), or is ISO."""
    return "May" in found or "MAY" in found or "-" in found


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
    for groups, limit, near in _date_words(days):
        found.update(memory.leaves.holding_all(groups, limit, near=near))
    pattern = _days_pattern(days)
    ordinal, numbered = ordinal_candidates(memory, days), number_candidates(memory, days)
    ids = sorted(found | numbered | ordinal | _relative_candidates(memory, window, days))
    times: list[datetime | None] = memory.leaves.columns(ids).ts.astype("datetime64[us]").tolist()  # NaT: None
    # of the leaves holding only relative words or ordinals, those written within reach of the window
    kept = [
        (leaf_id, written)
        for leaf_id, written in zip(ids, times, strict=True)
        if (written is None or written <= now)
        and (leaf_id in found or leaf_id in numbered or _within_reach(window, written) or _within_reach(window, written, ORDINAL_REACH))
    ]
    texts = memory.leaves.texts([leaf_id for leaf_id, _ in kept])
    named: list[tuple[float, str]] = []
    for leaf_id, written in kept:
        text = texts.get(leaf_id) or ""
        if not (
            (leaf_id in found and names_day(days, text, written, pattern))
            or (written is not None and _within_reach(window, written) and _says_relatively(window, text, written))
            or (leaf_id in ordinal and written is not None and names_by_ordinal(days, text, written))
            or ((leaf_id in numbered or leaf_id in found) and _names_in_numbers(days, text, written, memory.config.date_order))
        ):
            continue
        distance = abs((written - window.start).total_seconds()) if written is not None else float("inf")
        named.append((distance, leaf_id))
    return [leaf_id for _, leaf_id in sorted(named)[:CANDIDATES]]


def _names_in_numbers(days: list[datetime], text: str, written: datetime | None, order: str) -> bool:
    """Whether `text` writes one of `days` in numbers ("23/04/2024", "23/4": `day_numbers`), its
    year said or the nearest `written` (any year, for a leaf without a time)."""
    for month, day, said in numeric_dates(text, order):
        year = said if said is not None else _nearest_year(month, day, written) if written is not None else None
        if any(d.month == month and d.day == day and (year is None or d.year == year) for d in days):
            return True
    return False


def _relative_candidates(memory: MemoryView, window: TimeWindow, days: list[datetime]) -> set[str]:
    """The leaves that may name a day of `window` by relative words (module doc): those holding
    one of them, the `RELATIVE_LIMIT` written nearest each side of it."""
    weekdays = sorted({t for name, number in WEEKDAYS.items() if number in {d.weekday() for d in days} for t in terms(name)})
    found: set[str] = set()
    for words, near in ((_AHEAD_WORDS, window.start), (_BACK_WORDS, window.end)):
        group = sorted({t for word in words for t in terms(word)} | set(weekdays))
        found.update(memory.leaves.holding_all([group], RELATIVE_LIMIT, near=near))
    return found


def _within_reach(window: TimeWindow, written: datetime | None, reach: timedelta = RELATIVE_REACH) -> bool:
    """Whether a leaf written at `written` is within `reach` of `window`, outside it."""
    return written is not None and (window.start - reach <= written < window.start or window.end <= written < window.end + reach)


def _says_relatively(window: TimeWindow, text: str, written: datetime) -> bool:
    """Whether `text`, written at `written` within `RELATIVE_REACH` of `window` but outside it,
    names one of its days relatively: forward when written before it, back when after — and
    tells of it beyond naming it (module doc)."""
    said = names_a_day_in(window, text, written) if written < window.start else tells_of(window, text, written)
    return said and beyond_dating(text, _GOODBYE) >= RELATIVE_TELLS
