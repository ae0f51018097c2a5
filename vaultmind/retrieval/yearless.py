"""Which year a day, a month or a range of them named without one is: the most recent up to the
reference time, as `timeparse` and `spans` read them alike.

A month said alone is this year's when it has begun, else last year's (`recent_year`); a day,
its month's year, except 29 February, in the latest leap year up to it (`latest_existing`); a
range, the latest begun: its start's year, an end month before the start month in the next
(`range_years`). A year said at one end of a range holds for both. A date said with its
weekday ("Tuesday 23 April") is in the year nearest the reference time in which it falls on
that weekday, within one of its reading without the weekday if one fits, else up to seven years
back (`weekday_year`); a weekday that fits no nearby year when that reading is recent (the last
three months) is a slip of the one asking, and the date is read as if it were not said.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TypeVar

WEEKDAY_REACH = 1  # years either side of a date's reading without its weekday where the weekday may place it first
WEEKDAY_YEARS = 7  # a date falls on each weekday within this many years of any other
SLIP_DAYS = 92  # a date this recent whose weekday does not fit is a slip of the weekday, not another year
LEAP_CYCLE = 8  # 29 February comes back within this many years (1896, then 1904)
_T = TypeVar("_T")


def recent_year(now: datetime, month: int) -> int:
    """A month named without a year means its most recent occurrence up to `now`."""
    return now.year if month <= now.month else now.year - 1


def range_years(now: datetime, first: int, last: int, first_year: int | None, last_year: int | None) -> tuple[int, int]:
    """The years of a range from month `first` to month `last`, its years as said (None: not
    said). A year said at one end holds for both, an end month before the start month being in
    the next year ("from November 2024 to February": to February 2025). Without one, the range
    is the latest begun by `now`: its start's year is settled as a single month's
    (`recent_year`), so "between 28 December and 3 January" asked on 30 December runs into the
    coming January."""
    wraps = int(last < first)
    if first_year is None:
        first_year = last_year - wraps if last_year is not None else recent_year(now, first)
    return first_year, first_year + wraps if last_year is None else last_year


def latest_existing(dated: Callable[[int], _T], said: bool) -> _T:
    """`dated(0)`: the days of an expression in the years it settled. Said without a year, a day
    that year lacks (29 February) is in the latest year before it that has it: `dated(back)`
    for the fewest years `back` up to `LEAP_CYCLE` (ValueError when no year has it: 31 April)."""
    for back in range(LEAP_CYCLE if not said else 0):
        try:
            return dated(back)
        except ValueError:
            continue
    return dated(LEAP_CYCLE if not said else 0)


def weekday_year(now: datetime, month: int, day: int, weekday: int) -> int | None:
    """The year, nearest to `now`, in which day `day` of month `month` falls on `weekday` (0
    Monday): first within `WEEKDAY_REACH` of the date's reading without its weekday
    (`recent_year`), no later than next year ("Tuesday 23 April" asked in March 2024 is 2024,
    "Sunday 23 April" 2023); else, unless that reading is recent (`SLIP_DAYS`: the one asking
    remembers the date better than its weekday), within `WEEKDAY_YEARS` back ("Tuesday 23 April"
    asked in December 2026 is 2024). None when no such year: "Tuesday 5 June" asked on 12 June
    2024 (a Wednesday then) is a slip, not 2018's."""
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    near = recent_year(now, month)
    latest = min(near + WEEKDAY_REACH, now.year + 1)
    year = _nearest_fit(today, range(near - WEEKDAY_REACH, latest + 1), month, day, weekday)
    if year is not None:
        return year
    try:
        recent = timedelta(0) <= today - datetime(near, month, day) <= timedelta(days=SLIP_DAYS)
    except ValueError:  # 29 February of a year without one
        recent = False
    return None if recent else _nearest_fit(today, range(now.year - WEEKDAY_YEARS, latest + 1), month, day, weekday)


def _nearest_fit(today: datetime, years: range, month: int, day: int, weekday: int) -> int | None:
    """Of `years`, the one nearest `today` in which day `day` of `month` falls on `weekday`."""
    fits: list[tuple[timedelta, int]] = []
    for year in years:
        try:
            date = datetime(year, month, day)
        except ValueError:  # 29 February of a year without one, or beyond the calendar
            continue
        if date.weekday() == weekday:
            fits.append((abs(date - today), year))
    return min(fits)[1] if fits else None
