"""Two days a question names together, read as the days from the one to the other (`timeparse`
reads these before any single time):

    between/from <day> and/to <day>       "between 15 and 17 May", "from May 15 to May 17, 2024"
    <day> – <day>                         "3 June – 7 June", "June 3 - June 7", "3-7 June",
                                          "June 3–7" (a bare second day: the dash unspaced)
    [on] <day> and/or <day>               "on 7 March or 9 March", "March 7 and March 9"

A weekday written with either day ("between Monday 3 June and Friday 7 June", "from 4 June
(Tuesday) to 6 June") is part of it, as with a single date: it tells that day's year
(`yearless.weekday_year`), which then holds for both, as a year said does (when the two
weekdays tell years the days cannot both be in, the first day's holds); one that fits no year
near the day's reading is a slip, and the day is read as if it were not said.

A month or year said once serves both days; the years of a range said without one are
`yearless.range_years`' (the latest begun). A range said the wrong way round ("between 7 March
and 4 March") runs from the earlier day; two days said together are read both ways, the
shorter range kept ("9 March or 7 March": 7 to 9 March; "3 January or 28 December": across the
new year). A numeric date written day or month first ("7/3/2024") is read both ways
(`numeric_date`). The second day of a pair, or of two joined by a dash alone, names its month
("on 7 March and 2 days later" is no pair), but for a bare day after a dash written without
spaces ("June 3-7"). A range
naming a day that does not exist is no range. "may" in lower case after a bare number is the
verb ("which of the 2 or 3 may come?"), not a month both days are in.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from vaultmind.calendar_names import MONTH_NUMBERS, WEEKDAYS, alternation
from vaultmind.retrieval.not_a_time import written
from vaultmind.retrieval.yearless import latest_existing, range_years, weekday_year

_MONTH_RX = alternation(MONTH_NUMBERS, longest_first=True)
_WEEKDAY_RX = alternation(WEEKDAYS)


def _day_rx(n: int) -> str:
    """One end `n` of a range: "<month> <day>" or "<day> [of <month>]", then a year maybe, a
    weekday written before or after it maybe (groups m<n>/d<n>, e<n>/n<n>, y<n>, w<n>/a<n>)."""
    month_day = rf"(?P<m{n}>{_MONTH_RX}) (?P<d{n}>\d{{1,2}})"
    return (
        rf"(?:(?P<w{n}>{_WEEKDAY_RX}),? )?(?:the )?(?:{month_day}|(?P<e{n}>\d{{1,2}}))(?:st|nd|rd|th)?"
        rf"(?: (?:of )?(?P<n{n}>{_MONTH_RX}))?(?:,? (?P<y{n}>\d{{4}}))?(?:,? \(?(?P<a{n}>{_WEEKDAY_RX})\b\)?)?"
    )


# (pattern, paired): a range said in its order ("from … to …"), then two days said together
# ("… and …", read both ways); both but "between/from" need their second day to name its month
_RANGES = (
    (re.compile(rf"\b(?:between|from) {_day_rx(1)} (?:and|to|until|till|through|-|–|—) {_day_rx(2)}\b"), False),
    (re.compile(rf"(?<!\d[.:/])\b{_day_rx(1)} ?(?P<dash>-|–|—) ?{_day_rx(2)}\b"), False),  # not "3.11-12 June"
    (re.compile(rf"\b(?:on )?{_day_rx(1)},? (?:and|or|&) (?:on )?{_day_rx(2)}\b"), True),
)


def day_range(text: str, now: datetime, cased: str | None = None) -> tuple[datetime, datetime, str] | None:
    """The first range of days in the lower-cased `text` (module doc), read at `now`: its first
    day, its end (exclusive) and its words; `cased`: the text as written, where its letters line
    up with `text` (to tell May by its capital). None when it names none."""
    for pattern, joined in _RANGES:
        for match in pattern.finditer(text):
            g = match.groupdict()
            bare = joined or not match.group(0).startswith(("between", "from"))
            if bare and not (g["m2"] or g["n2"] or _tight(match, g)):
                continue  # "on 7 March and 2 days later": the second end of a pair names its month
            first_month = g["m1"] or g["n1"]
            second_month = g["m2"] or g["n2"] or first_month
            first_month = first_month or second_month
            if first_month is None or second_month is None or (g["m1"] and g["n1"]) or (g["m2"] and g["n2"]):
                continue
            if bare and g["n2"] == "may" and not g["n1"] and not written(cased, match, "n2", "May"):
                continue  # "which of the 2 or 3 may come?"
            months = MONTH_NUMBERS[first_month], MONTH_NUMBERS[second_month]
            days = int(g["d1"] or g["e1"]), int(g["d2"] or g["e2"])
            said = _years(now, months, days, g)
            readings = [(months, days, said), (months[::-1], days[::-1], said[::-1])]
            spans = [span for reading in readings if (span := _span(now, *reading)) is not None]
            if not joined and spans and spans[0][1] > spans[0][0] + timedelta(days=1):
                spans = spans[:1]  # "from … to …" in its order, unless said the wrong way round
            if spans:
                start, end = min(spans, key=lambda span: span[1] - span[0])
                return start, end, match.group(0).strip()
    return None


def _tight(match: re.Match[str], g: dict[str, str | None]) -> bool:
    """Whether a range's second end is a bare day joined by a dash written without spaces to a
    first that names its month: "June 3-7" ("June 3 - 2 of us came" joins no days)."""
    if not (g["m1"] and g["e2"] and g.get("dash")):
        return False
    text, start, end = match.string, match.start("dash"), match.end("dash")
    return text[start - 1] != " " and text[end] != " "


def _years(
    now: datetime, months: tuple[int, int], days: tuple[int, int], g: dict[str, str | None]
) -> tuple[int | None, int | None]:
    """The years said of a range's two days (None: not said), a weekday written with a day
    telling its year when none is (`weekday_year`; the first day's, when the two cannot both
    hold)."""
    said: list[int | None] = []
    for n in (0, 1):
        year, weekday = g[f"y{n + 1}"], g[f"w{n + 1}"] or g[f"a{n + 1}"]
        if year:
            said.append(int(year))
        elif weekday:
            said.append(weekday_year(now, months[n], days[n], WEEKDAYS.index(weekday)))
        else:
            said.append(None)
    first, last = said
    if first is not None and last is not None and last - first != int(months[1] < months[0]):
        if g["y2"] and not g["y1"]:
            first = None  # a weekday telling a year the range cannot start in: the year said holds
        elif not g["y2"]:
            last = None  # a second weekday telling a year the range cannot end in: the first day's holds
    return first, last


def numeric_date(first: int, second: int, year: int) -> tuple[datetime, datetime] | None:
    """"7/3/2024": 7 March (day first) or 3 July (month first); one reading when the other is no
    date, else the days from the earlier reading to the later (None when neither is a date)."""
    days = []
    for day, month in ((first, second), (second, first)):
        try:
            days.append(datetime(year, month, day))
        except ValueError:
            continue
    return (min(days), max(days) + timedelta(days=1)) if days else None


def _span(
    now: datetime, months: tuple[int, int], days: tuple[int, int], said: tuple[int | None, int | None]
) -> tuple[datetime, datetime] | None:
    """`_range_days`, or None for a range that ends before it starts, names a day that does not
    exist or is beyond the calendar (31 December 9999)."""
    try:
        start, end = _range_days(now, months, days, said)
    except (OverflowError, ValueError):
        return None
    return (start, end) if end > start else None


def _range_days(
    now: datetime, months: tuple[int, int], days: tuple[int, int], said: tuple[int | None, int | None]
) -> tuple[datetime, datetime]:
    """The first day and the end (exclusive) of a range from day `days[0]` of month `months[0]`
    to `days[1]` of `months[1]`, in its years (`range_years`; `said`: the years said, None for
    none), a 29 February said without one in the latest year that has it (`latest_existing`)."""
    years = range_years(now, months[0], months[1], *said)
    return latest_existing(
        lambda back: (
            datetime(years[0] - back, months[0], days[0]),
            datetime(years[1] - back, months[1], days[1]) + timedelta(days=1),
        ),
        said != (None, None),
    )
