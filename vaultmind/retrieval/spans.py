"""Spans of time a question names by their two ends, or by the week a day is in, read before
any single time it names (`asked_window.question_window`):

    from/between <weekday> to/and <weekday>     "what did Bob say from Monday to Friday?"
    from/between <month> to/and <month>         "what happened from March to May?"
    in/during <month> and/or <month>            "what happened in March and April?"
    [during/in] the week of <day>               "what did we discuss during the week of 4 March?"

A span of weekdays or months is the latest one begun by the reference time, as "on Monday" is
the latest Monday: "from Monday to Friday" asked on a Tuesday runs from the day before to the
end of Friday, "from March to May" asked in March from this March to the end of May; an end
before the start is in the next week, or the next year ("from Friday to Monday", "from November
to February"); two months said together are read both ways, the shorter span kept ("in April
and March" asked in May: March to April; "in November and February": November to February).
The years of a month span are those of a range of days (`yearless.range_years`:
a year said at either end holds for both; without one, the start's is settled as any month's,
and `asked_window.year_held` may move it). "The week of 4 March"
is the Monday-to-Monday week that holds 4 March, read as `timeparse` reads the day. Without
one of these, the single time the question names is its window (`timeparse`); the days
between two dates ("between 4 and 6 March") are `timeparse`'s too. A span beyond the calendar
(asked on 31 December 9999) is none.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from vaultmind.calendar_names import alternation
from vaultmind.retrieval.timeparse import MONTHS, WEEKDAYS, TimeWindow, day_start, parse_time_window
from vaultmind.retrieval.yearless import range_years

_TO = r"(?:and|to|until|till|through|-)"
_WEEKDAY_RX = alternation(WEEKDAYS)
# months written out ("mar" alone is too ambiguous, as for a single month), "sept" besides
_MONTH_RX = alternation((name for name in MONTHS if len(name) > 3 or name == "may"), longest_first=True)

_WEEKDAY_SPAN = re.compile(rf"\b(?:from|between) (?:the )?({_WEEKDAY_RX}) {_TO} (?:the )?({_WEEKDAY_RX})\b")
_MONTH_SPAN = re.compile(
    rf"\b(?:from|between) (?:the )?({_MONTH_RX})(?:,? (\d{{4}}))? {_TO} (?:the )?({_MONTH_RX})(?:,? (\d{{4}}))?\b"
)
# two months said together: the months from the one to the other, the earlier first
_MONTH_PAIR = re.compile(
    rf"\b(?:in|during) ({_MONTH_RX})(?:,? (\d{{4}}))?,? (?:and|or|&) (?:in )?({_MONTH_RX})(?:,? (\d{{4}}))?\b"
)
_WEEK_OF = re.compile(r"\b(?:(?:in|during|over) )?the week of ")


def span_window(question: str, now: datetime) -> TimeWindow | None:
    """The span `question` names (module doc), read at `now` (naive, the asker's calendar);
    None when it names none."""
    text = " ".join(question.replace("’", "'").split()).lower()
    for read in (_weekdays, _months, _week_of):
        window = read(text, now)
        if window is not None:
            return window
    return None


def _weekdays(text: str, now: datetime) -> TimeWindow | None:
    """ "from Monday to Friday": the latest Monday up to today, to the end of the Friday after it."""
    found = _WEEKDAY_SPAN.search(text)
    if found is None:
        return None
    first, last = WEEKDAYS[found.group(1)], WEEKDAYS[found.group(2)]
    today = day_start(now)
    try:
        start = today - timedelta(days=(today.weekday() - first) % 7)
        return TimeWindow(start, start + timedelta(days=(last - first) % 7 + 1), found.group(0))
    except OverflowError:  # beyond the calendar
        return None


def _months(text: str, now: datetime) -> TimeWindow | None:
    """ "from March to May": the latest March begun by `now` (or of the year said), to the end of
    the May after it."""
    found = _MONTH_SPAN.search(text) or _MONTH_PAIR.search(text)
    if found is None:
        return None
    first, last = MONTHS[found.group(1)], MONTHS[found.group(3)]
    said = (int(found.group(2)) if found.group(2) else None), (int(found.group(4)) if found.group(4) else None)
    spans = [_month_span(now, (first, last), said)]
    if found.re is _MONTH_PAIR:  # said together, in either order: the shorter of the two readings
        spans.append(_month_span(now, (last, first), (said[1], said[0])))
    held = [span for span in spans if span is not None]
    if not held:
        return None
    start, end = min(held, key=lambda span: span[1] - span[0])
    return TimeWindow(start, end, found.group(0))


def _month_span(
    now: datetime, months: tuple[int, int], said: tuple[int | None, int | None]
) -> tuple[datetime, datetime] | None:
    """The start of month `months[0]` to the end of month `months[1]`, in their years
    (`range_years`); None for a span that ends before it starts or is beyond the calendar."""
    first, last = months
    start_year, end_year = range_years(now, first, last, *said)
    try:
        start, end = datetime(start_year, first, 1), datetime(end_year + (last == 12), last % 12 + 1, 1)
    except ValueError:  # a year beyond the calendar
        return None
    return (start, end) if end > start else None


def _week_of(text: str, now: datetime) -> TimeWindow | None:
    """ "the week of 4 March": Monday to Monday around the day named right after it."""
    found = _WEEK_OF.search(text)
    if found is None:
        return None
    day = parse_time_window(text[found.end() :], now)
    if day is None or day.end - day.start != timedelta(days=1) or not text.startswith(day.text, found.end()):
        return None
    monday = day.start - timedelta(days=day.start.weekday())
    try:
        return TimeWindow(monday, monday + timedelta(weeks=1), f"{found.group(0)}{day.text}".strip())
    except OverflowError:  # the week of 31 December 9999
        return None
