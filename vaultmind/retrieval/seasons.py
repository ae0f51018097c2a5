"""Seasons and ISO weeks as time windows (`timeparse` reads them among its forms):

    last/this/next summer, the past winter        the season relative to the one we are in
    in/during/over (the) spring, since the fall   the latest one begun (with a preposition)
    summer 2023, the spring of 2023, winter 2024  that year's
    week 14, week 14 of 2024, W14 2024, 2024-W14, KW 14, CW 14, calendar week 14
                                                  the ISO week (Monday to Monday); without a
                                                  year, the latest week of that number begun

Seasons are the northern hemisphere's meteorological ones: spring March to May, summer June to
August, autumn (fall) September to November, winter December to February. "Winter 2024" is the
winter whose January and February are in 2024 (from December 2023). "Last summer" is the latest
summer before the season we are in (asked in September, the summer just ended; asked in July,
last year's), "next summer" the first after it, "this winter" the one we are in or, outside it,
the one of this year still to come (asked in October: from December). A season said bare ("the
summer reading list", "a hot summer") is no window: it needs a relative word, a preposition or a
year; "fall" after "this" before a word ("will this fall apart?") is the verb, and a season
after a determiner ("the last fall", "our summer") names a thing. A season or a week followed
by "of" and no year is another's ("the fall of Rome", "week 2 of the course"): no window.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

from vaultmind.retrieval.not_a_time import DETERMINER

SEASON_STARTS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}  # the month each begins

_QUALIFIER_RX = r"(?P<q>early|mid|late|end of|middle of|beginning of|start of)[- ](?:the )?"
_PREP_RX = r"(?P<prep>in|during|over|since|before|after|by|until|through|throughout)"
SEASON = re.compile(
    rf"\b(?:{_QUALIFIER_RX})?(?:{_PREP_RX} )?(?:the )?(?:(?P<rel>last|this|next|past|previous|coming) )?"
    r"(?P<season>spring|summer|autumn|fall|winter)(?:,? (?:of )?(?P<year>(?:19|20)\d{2}))?\b"
)
_OF_ANOTHER = re.compile(r",? of\b")  # after a season or week with no year: "the fall of Rome"

WEEK = re.compile(
    r"\b(?:(?:calendar |iso )?week|wk|kw|cw)\.? ?(?P<week>\d{1,2})\b(?:,? (?:of )?(?P<year>(?:19|20)\d{2})\b)?"
    r"|\b(?P<year2>(?:19|20)\d{2})-?w(?P<week2>\d{1,2})\b|\bw(?P<week3>\d{1,2})[ /-](?P<year3>(?:19|20)\d{2})\b"
)


def season_window(m: re.Match[str], now: datetime) -> tuple[datetime, datetime] | None:
    """The months of a `SEASON` match read at `now` (module doc), before its qualifier and
    preposition are applied; None when the season names no time where it stands."""
    name, rel, year = m.group("season"), m.group("rel"), m.group("year")
    if not (rel or year or m.group("prep")):
        return None  # "the summer reading list"
    if not year and _OF_ANOTHER.match(m.string, m.end()):
        return None  # "since the fall of the wall"
    named = m.start("rel") if rel else m.start("season")
    if not (year or m.group("prep")) and DETERMINER.search(m.string, 0, named):
        return None  # "the last fall", "our summer"
    if name == "fall" and rel == "this" and re.match(r" [a-z]", m.string[m.end() :]):
        return None  # "will this fall apart?"
    first = SEASON_STARTS[name]
    if year:
        return _season(int(year) - 1 if name == "winter" else int(year), first)
    current = _season_begun(now, first)  # the latest of this season begun by now
    ongoing = now < _season(current, first)[1]
    if rel in ("last", "past", "previous"):
        return _season(current - 1 if ongoing else current, first)
    if rel in ("next", "coming"):
        return _season(current + 1, first)
    if rel == "this" and not ongoing:
        return _season(current + 1, first)  # this year's, still to come
    return _season(current, first)


def _season_begun(now: datetime, first: int) -> int:
    """The year in which the latest season beginning in month `first` began by `now`."""
    return now.year if now.month >= first else now.year - 1


def _season(year: int, first: int) -> tuple[datetime, datetime]:
    """The three months from month `first` of `year`."""
    end = first + 3
    return datetime(year, first, 1), datetime(year + (end - 1) // 12, (end - 1) % 12 + 1, 1)


def week_window(m: re.Match[str], now: datetime) -> tuple[datetime, datetime] | None:
    """The Monday-to-Monday ISO week of a `WEEK` match, in the year said or, without one, the
    latest week of that number begun by `now`; None for a week the year does not have (54, 0,
    or 53 of a year of 52)."""
    week = int(m.group("week") or m.group("week2") or m.group("week3"))
    said = m.group("year") or m.group("year2") or m.group("year3")
    if not said and _OF_ANOTHER.match(m.string, m.end()):
        return None  # "week 2 of the course"
    years = [int(said)] if said else [now.isocalendar()[0], now.isocalendar()[0] - 1]
    for year in years:
        try:
            monday = datetime.combine(date.fromisocalendar(year, week, 1), datetime.min.time())
        except ValueError:
            if said:
                return None
            continue
        if said or monday <= now:
            return monday, monday + timedelta(weeks=1)
    return None
