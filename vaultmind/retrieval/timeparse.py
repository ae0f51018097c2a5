"""Time expressions in a question → a time window, relative to a reference time.

Pure and deterministic: `parse_time_window("what did we decide last week?", now)` gives the
Monday-to-Monday window of the previous ISO week. Understood forms (case-insensitive):

    today, yesterday, the day before yesterday, tomorrow
    this/last/next week|month|year (not "the last week of …"), last weekend, this morning/evening (→ today)
    over/at/on the weekend (the one we are in, else the last), last night (18:00 yesterday to
    06:00 today)
    [in/during/since/before/after] Q1–Q4 or the first…fourth quarter [<year>] (without a year,
    the most recent)
    N days|weeks|months|years ago (N as digits or a word up to twenty; "a"/"a few" → 1/3)
    in/during/over/within the last/past [N] days|weeks|months (rolling back from the reference:
    "in the past week" is the seven days up to it, "in the past (few) days" three; bare "last
    week"/"the past week" is the calendar week before this one)
    last <weekday>, on <weekday> (the most recent one before the reference), this/next <weekday>
    (that day of this week, of the next), since [last] <weekday> (from it to the reference)
    this/last/next quarter (the calendar quarter)
    in/during/since/before/after <month> [<year>], <month> <year>, <year>
    last/next/this <month> (the latest before this month, the first after it, this year's)
    last/this/next summer, in (the) spring, winter 2024, week 14 [of 2024], W14 2024, KW 14
    (northern meteorological seasons and ISO weeks: `seasons`)
    on <day> <month> [<year>], <month> <day>[st|nd|rd|th][,] [<year>], dates 2023-05-08,
    2023/05/08, 2023.5.8, the month 2023-05 (not inside an id: "PROJ-2023-05"), and 8/5/2023
    or 8.5.2023 (a year 19xx or 20xx, not a build number: "6.1.7601"; day or month first: one
    reading when the other is no date, else from the earlier reading to the later)
    (without a year, in its month's most recent year; 29 February in the latest leap year);
    a weekday written with its date ("on Tuesday, 23 April", "April 23 (Tuesday)"): the date, in
    the year nearest the reference in which it falls on that weekday;
    since/after/before/until <day>: open-ended, as for a month ("after 8 March": from 9 March
    to now; "by <day>" is the day: "how many by 10 March?" is told on it)
    early/mid/late/end of/middle of/beginning of/start of <month|year|last year…> narrow the
    window to its first, middle or last third ("mid-March", "at the beginning of April", "late
    last year"; not "was Bob late last week?": the lateness is asked, the week is whole)
    between/from <day> and/to <day>, <day> – <day>, <day> and/or <day> (`day_ranges`: a month
    or year said once serves both days; a weekday written with either day is part of it and
    tells its year, as with a single date — "between Monday 3 June and Friday 7 June"; without
    a year, the latest range begun: its first day's year is settled as a single day's, and an
    end month before the start month is in the next year — "between 28 December and 3
    January"; said backwards, from the earlier day)
    N days|weeks|months|years / the day|week|month before|after <date>

A month, quarter or year said bare between a determiner and a word ("the Q2 budget", "our March
offsite", "the 2024 taxes") names a thing, not a time: no window — but "the May bank holiday",
"May" written with its capital, is the month: "may" is a stop word, in the question and in
every leaf, so the month is the only way the question can name it. "May" alone is the verb,
and so is "may" in lower case after a bare number ("which of the 12 may attend?"): a day of May
in lower case is written as one ("on 12 may", "the 12th of may", "12 may 2023").
"march" in lower case after a determiner ("the last march we went on", "our march") is the
walk; "last march" and "the last March" are the month. These words that name no time, and the
"early" or "late" said of someone, are told apart in `not_a_time`.

A question that names a day ("… last week, as she said on 6 November 2023", "last Friday on 23
January") reads its relative words from that day, not from the reference time: the window
runs from the relative window's start to the end of that day, which takes in both the event
and the message that tells of it ("two weeks before 11 August" → the week two weeks before
it, up to 11 August). "The week before <date>" is the seven days up to the date, "three days
after <date>" the three days from the one after it.

The result is a half-open window [start, end) in naive UTC, plus the matched text, so the
caller can show why the window was chosen. No match → None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from vaultmind import calendar_names
from vaultmind.calendar_names import alternation
from vaultmind.retrieval.day_ranges import day_range, numeric_date
from vaultmind.retrieval.not_a_time import (
    DETERMINER,
    a_march,
    a_number_that_may,
    names_a_thing,
    tardy,
    written,
)
from vaultmind.retrieval.seasons import SEASON, WEEK, season_window, week_window
from vaultmind.retrieval.yearless import latest_existing, recent_year, weekday_year

MONTHS = calendar_names.MONTH_NUMBERS
WEEKDAYS = {name: day for day, name in enumerate(calendar_names.WEEKDAYS)}
NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
    "a few": 3, "few": 3, "a couple of": 2, "couple of": 2, "several": 4,
}  # fmt: skip

_MONTH_RX = alternation(MONTHS, longest_first=True)
_WEEKDAY_RX = alternation(WEEKDAYS)
_NUM_RX = r"\d+|" + "|".join(sorted((re.escape(k) for k in NUMBERS), key=len, reverse=True))
_UNIT_RX = r"days?|weeks?|months?|years?"
QUARTERS = {"first": 1, "second": 2, "third": 3, "fourth": 4}
_QUARTER_RX = "|".join(QUARTERS)


@dataclass(frozen=True, slots=True)
class TimeWindow:
    start: datetime
    end: datetime  # exclusive
    text: str  # the words that produced the window

    def contains(self, when: datetime) -> bool:
        return self.start <= when < self.end

    def to_dict(self) -> dict[str, str]:
        return {"start": self.start.isoformat() + "Z", "end": self.end.isoformat() + "Z", "text": self.text}


def day_start(d: datetime) -> datetime:
    return d.replace(hour=0, minute=0, second=0, microsecond=0)


def _month_start(year: int, month: int) -> datetime:
    return datetime(year, month, 1)


def _add_months(d: datetime, months: int) -> datetime:
    index = d.year * 12 + (d.month - 1) + months
    return datetime(index // 12, index % 12 + 1, 1)


def _num(text: str) -> int:
    text = text.strip().lower()
    return int(text) if text.isdigit() else NUMBERS.get(text, 1)


def _unit_window(now: datetime, unit: str, offset: int) -> tuple[datetime, datetime]:
    """The calendar unit containing `now`, shifted by `offset` units."""
    unit = unit.rstrip("s")
    today = day_start(now)
    if unit == "day":
        start = today + timedelta(days=offset)
        return start, start + timedelta(days=1)
    if unit == "week":
        start = today - timedelta(days=today.weekday()) + timedelta(weeks=offset)
        return start, start + timedelta(weeks=1)
    if unit == "month":
        start = _add_months(today, offset)
        return start, _add_months(start, 1)
    if unit == "quarter":
        start = _add_months(today, offset * 3 - (today.month - 1) % 3)
        return start, _add_months(start, 3)
    start = datetime(today.year + offset, 1, 1)
    return start, datetime(start.year + 1, 1, 1)


def _narrow(start: datetime, end: datetime, qualifier: str | None) -> tuple[datetime, datetime]:
    if not qualifier:
        return start, end
    span = end - start
    third = span / 3
    if qualifier in ("early", "beginning of", "start of"):
        return start, start + third
    if qualifier in ("mid", "middle of"):
        return start + third, start + 2 * third
    return start + 2 * third, end  # late / end of


# a part of a month, year or week: "early March", "mid-March", "at the beginning of April", "late last year"
_QUALIFIER_RX = r"(early|mid|late|end of|middle of|beginning of|start of)[- ](?:the )?"

_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b(\d{4})([-/.])(\d{1,2})\2(\d{1,2})\b"), "iso"),  # 2024-03-07, 2024/03/07, 2024.3.7
    # 2024-03, not a part of an id ("PROJ-2024-03", "2024-03-0042")
    (re.compile(r"(?<!\w[-/.])\b(\d{4})-(\d{2})\b(?![-/.]\w)"), "iso_month"),
    # 7/3/2024, 7.3.2024; not a version or build number ("6.1.7601")
    (re.compile(r"\b(\d{1,2})([/.])(\d{1,2})\2((?:19|20)\d{2})\b"), "numeric_date"),
    (re.compile(r"\bthe day before yesterday\b"), "day_before_yesterday"),
    (re.compile(r"\bthe day after tomorrow\b"), "day_after_tomorrow"),
    # "in the past week" rolls back from now (as "in the past 1 week"); "the last week of March" is March's
    (re.compile(rf"\b(?:in|during|over|within) the (?:last|past) (?:({_NUM_RX}) )?({_UNIT_RX})\b(?! of\b)"), "in_last"),
    (re.compile(rf"\b({_NUM_RX}) ({_UNIT_RX}) (?:ago|before)\b"), "ago"),
    (re.compile(r"\b(this|last|next|previous|past) weekend\b"), "weekend"),
    (re.compile(r"\b(?:over|at|on|during) the weekend\b"), "the_weekend"),
    (re.compile(r"\blast night\b"), "last_night"),
    # "the last week of March" is March's
    (re.compile(rf"\b(?:{_QUALIFIER_RX})?(this|last|next|previous|past) (week|month|quarter|year)\b(?! of\b)"), "rel_unit"),
    (re.compile(rf"\b(?:(last|this|next|past|previous|since(?: last)?) |on )({_WEEKDAY_RX})\b"), "weekday"),
    (re.compile(r"\b(today|tonight|this morning|this afternoon|this evening)\b"), "today"),
    (re.compile(r"\byesterday\b"), "yesterday"),
    (re.compile(r"\btomorrow\b"), "tomorrow"),
    (
        re.compile(rf"\b(?:on |the )?(\d{{1,2}})(?:st|nd|rd|th)? (?:of )?({_MONTH_RX})\b,?(?: (\d{{4}}))?"),
        "day_month",
    ),
    (re.compile(rf"\b({_MONTH_RX}) (\d{{1,2}})(?:st|nd|rd|th)?\b,?(?: (\d{{4}}))?"), "month_day"),
    (re.compile(rf"\b(last|next|this|coming|past|previous) ({_MONTH_RX})\b"), "rel_month"),
    (SEASON, "season"),  # "last summer", "in spring 2023" (`seasons`)
    (WEEK, "iso_week"),  # "week 14", "W14 2024", "KW 14"
    (
        re.compile(
            rf"\b(?:{_QUALIFIER_RX})?(?:(in|during|since|before|after|by|until|of) )?"
            rf"({_MONTH_RX})(?:,? (?:of )?(\d{{4}}))?\b"
        ),
        "month",
    ),
    (
        re.compile(
            rf"\b(?:(in|during|since|before|after|by|until|of) )?(?:q([1-4])|the ({_QUARTER_RX}) quarter)"
            rf"(?:,? (?:of )?(\d{{4}}))?\b"
        ),
        "quarter",
    ),
    (
        re.compile(
            rf"\b(?:{_QUALIFIER_RX})?(?:(in|during|since|before|after|by|until|of) )?"
            r"((?:19|20)\d{2})\b"
        ),
        "year",
    ),
]


_DAY_KINDS = ("iso", "numeric_date", "day_month", "month_day")  # expressions that name one day
_RELATIVE_KINDS = frozenset(
    ("day_before_yesterday", "day_after_tomorrow", "in_last", "ago", "weekend", "the_weekend", "last_night",
     "rel_unit", "rel_month", "weekday", "today", "yesterday", "tomorrow")
)  # fmt: skip
_DAY_PREP = re.compile(r"\b(since|after|before|until|till) $")  # right before a day: open-ended
_AROUND = re.compile(rf"\b(the|a|an|{_NUM_RX}) ({_UNIT_RX}) (before|after) (?:on |the )?$")


def parse_time_window(question: str, now: datetime) -> TimeWindow | None:
    """The first time expression found in `question`, as a window relative to `now` (naive UTC);
    relative words are read from a day the question names, when it names one (module doc)."""
    written = " ".join(question.replace("’", "'").split())
    text = written.lower()
    cased = written if len(written) == len(text) else None  # the question's capitals, where they line up
    spanned = day_range(text, now, cased)
    if spanned is not None:
        return TimeWindow(*spanned)
    anchored = _anchored(text, now, cased)
    if anchored is not None:
        return anchored
    for pattern, kind in _PATTERNS:
        for found in pattern.finditer(text):
            match = _without_tardiness(pattern, kind, found)
            window = _try_window(kind, match, now, cased) if not _of_a_date(kind, match) else None
            if window is None:
                continue
            start = match.start()
            if kind in ("day_month", "month_day") and (weekday := _WEEKDAY_BEFORE.search(text, 0, match.start(1))):
                start = weekday.start()  # "tuesday 23 april": its year is told
            if kind in (*_DAY_KINDS, "iso_month") and (prep := _DAY_PREP.search(text, 0, start)) is not None:
                window, start = _open_ended(prep.group(1), *window, now), prep.start()
            return TimeWindow(window[0], window[1], text[start : match.end()].strip())
    return None


def _anchored(text: str, now: datetime, cased: str | None = None) -> TimeWindow | None:
    """The window of a relative expression read from the day the question names, or of "N
    units before/after <day>"; None when the question names no day or says nothing relative."""
    day: tuple[datetime, re.Match[str]] | None = None
    for pattern, kind in _PATTERNS:
        if kind in _DAY_KINDS:
            for match in pattern.finditer(text):
                found = _try_window(kind, match, now, cased)
                if found is not None and (day is None or match.start() < day[1].start()):
                    day = (found[0], match)
    if day is None:
        return None
    anchor, match = day
    day_end = anchor + timedelta(days=1)
    around = _AROUND.search(text, 0, match.start())
    if around is not None:
        n, unit = _num(around.group(1)), around.group(2).rstrip("s")
        try:
            if around.group(3) == "before":
                start, end = _back(anchor, n, unit), day_end
            else:
                start, end = day_end, _back(day_end, -n, unit)
        except (OverflowError, ValueError):  # "99999 years before …": beyond the calendar
            return TimeWindow(anchor, day_end, match.group(0).strip())
        return TimeWindow(start, end, text[around.start() : match.end()].strip())
    for pattern, kind in _PATTERNS:
        if kind in _RELATIVE_KINDS:
            for relative in pattern.finditer(text):
                if (relative.start() < match.end() and match.start() < relative.end()) or _of_a_date(kind, relative):
                    continue  # part of the date itself
                found = _try_window(kind, relative, anchor, cased)
                if found is not None:
                    words = sorted((relative, match), key=lambda m: m.start())
                    return TimeWindow(
                        min(found[0], anchor), max(found[1], day_end),
                        " … ".join(m.group(0).strip() for m in words),
                    )
    return None


_QUALIFIED = ("rel_unit", "month", "year")  # the patterns whose first group is a qualifier


def _without_tardiness(pattern: re.Pattern[str], kind: str, m: re.Match[str]) -> re.Match[str]:
    """`m`, or `m` read from after its "early"/"late" when that word tells of someone's
    timing (`not_a_time.tardy`): the window is the whole unit, and the word stays searched."""
    if kind not in _QUALIFIED or m.group(1) not in ("early", "late") or not tardy(m):
        return m
    return pattern.match(m.string, m.end(1) + 1) or m


# a weekday written with its date ("on Tuesday, 23 April", "Tuesday the 23rd of April", "April
# 23 (Tuesday)") is part of it: it tells the date's year, and is no day of its own
_DATE_NEXT = re.compile(rf",? (?:the )?(?:\d{{1,2}}(?:st|nd|rd|th)? (?:of )?(?:{_MONTH_RX})\b|(?:{_MONTH_RX}) \d{{1,2}}\b)")
_WEEKDAY_BEFORE = re.compile(rf"\b({_WEEKDAY_RX}),? (?:the )?$")
_WEEKDAY_AFTER = re.compile(rf",? \(?({_WEEKDAY_RX})\b")


def _of_a_date(kind: str, m: re.Match[str]) -> bool:
    """Whether a `weekday` match is the weekday of the date written right after it."""
    return kind == "weekday" and m.group(1) in (None, "since") and _DATE_NEXT.match(m.string, m.end()) is not None


def _weekday_year(now: datetime, month: int, day: int, m: re.Match[str]) -> int | None:
    """The year of a date `m` said without one, told by the weekday written beside it
    (`yearless.weekday_year`); None without one."""
    said = _WEEKDAY_BEFORE.search(m.string, 0, m.start(1)) or _WEEKDAY_AFTER.match(m.string, m.end())
    return weekday_year(now, month, day, WEEKDAYS[said.group(1)]) if said is not None else None


def _try_window(kind: str, m: re.Match[str], now: datetime, cased: str | None = None) -> tuple[datetime, datetime] | None:
    """`_window`, or None for an expression beyond the calendar ("99999 years ago")."""
    try:
        return _window(kind, m, now, cased)
    except (OverflowError, ValueError):
        return None


def _window(kind: str, m: re.Match[str], now: datetime, cased: str | None = None) -> tuple[datetime, datetime] | None:
    """The window of a `_PATTERNS` match of `kind` in the lower-cased question (`cased`: as
    written, where its letters line up, to tell May the month by its capital)."""
    today = day_start(now)
    if kind == "iso":
        try:
            start = datetime(int(m.group(1)), int(m.group(3)), int(m.group(4)))
        except ValueError:
            return None
        return start, start + timedelta(days=1)
    if kind == "iso_month":
        if not 1 <= int(m.group(2)) <= 12:
            return None  # "2023-24": a season, not a month
        start = _month_start(int(m.group(1)), int(m.group(2)))
        return start, _add_months(start, 1)
    if kind == "numeric_date":
        return numeric_date(int(m.group(1)), int(m.group(3)), int(m.group(4)))
    if kind == "day_before_yesterday":
        return today - timedelta(days=2), today - timedelta(days=1)
    if kind == "day_after_tomorrow":
        return today + timedelta(days=2), today + timedelta(days=3)
    if kind == "today":
        return today, today + timedelta(days=1)
    if kind == "yesterday":
        return today - timedelta(days=1), today
    if kind == "tomorrow":
        return today + timedelta(days=1), today + timedelta(days=2)
    if kind == "in_last":
        # no number: one unit, or a few of them ("in the past weeks")
        n = _num(m.group(1)) if m.group(1) else NUMBERS["a few"] if m.group(2).endswith("s") else 1
        unit = m.group(2).rstrip("s")
        return _back(now, n, unit), now + timedelta(seconds=1)
    if kind == "ago":
        n, unit = _num(m.group(1)), m.group(2).rstrip("s")
        return _unit_window(now, unit, -n)
    if kind == "weekend":
        offset = 0 if m.group(1) == "this" else 1 if m.group(1) == "next" else -1
        monday = today - timedelta(days=today.weekday()) + timedelta(weeks=offset)
        return monday + timedelta(days=5), monday + timedelta(days=7)
    if kind == "the_weekend":  # the weekend we are in, else the one before
        saturday = today - timedelta(days=(today.weekday() - 5) % 7)
        return saturday, saturday + timedelta(days=2)
    if kind == "last_night":  # yesterday's evening to this morning (what is told of it later: after the window)
        return today - timedelta(hours=6), today + timedelta(hours=6)
    if kind == "quarter":
        prep, number, ordinal, year_s = m.group(1), m.group(2), m.group(3), m.group(4)
        if not (prep or year_s) and names_a_thing(m):
            return None  # "the Q2 budget" is a budget, not a time
        first_month = 3 * ((int(number) if number else QUARTERS[ordinal]) - 1) + 1
        year = int(year_s) if year_s else recent_year(now, first_month)
        start = _month_start(year, first_month)
        return _open_ended(prep, start, _add_months(start, 3), now)
    if kind == "rel_unit":
        offset = 0 if m.group(2) == "this" else 1 if m.group(2) == "next" else -1
        return _narrow(*_unit_window(now, m.group(3), offset), m.group(1))
    if kind == "weekday":
        target = WEEKDAYS[m.group(2)]
        if m.group(1) in ("this", "next"):  # that day of this week, or of the next
            monday = today - timedelta(days=today.weekday()) + timedelta(weeks=1 if m.group(1) == "next" else 0)
            return monday + timedelta(days=target), monday + timedelta(days=target + 1)
        back = (today.weekday() - target) % 7
        if m.group(1) in ("last", "past", "previous", "since last") and back == 0:
            back = 7
        start = today - timedelta(days=back)
        if m.group(1) in ("since", "since last"):  # from that day to now
            return _open_ended("since", start, start + timedelta(days=1), now)
        return start, start + timedelta(days=1)
    if kind in ("day_month", "month_day"):
        day_s, month_s = (m.group(1), m.group(2)) if kind == "day_month" else (m.group(2), m.group(1))
        month = MONTHS[month_s]
        if kind == "day_month" and month_s == "may" and not m.group(3) and a_number_that_may(cased, m):
            return None  # "which of the 12 may attend?"
        year = int(m.group(3)) if m.group(3) else _weekday_year(now, month, int(day_s), m) or recent_year(now, month)
        try:
            start = latest_existing(lambda back: datetime(year - back, month, int(day_s)), bool(m.group(3)))
        except ValueError:
            return None
        return start, start + timedelta(days=1)
    if kind in ("season", "iso_week"):
        span = season_window(m, now) if kind == "season" else week_window(m, now)
        if span is None:
            return None
        return _open_ended(m.group("prep") if kind == "season" else None, *_narrow(*span, m.groupdict().get("q")), now)
    if kind == "rel_month":
        name = m.group(2)
        if len(name) <= 4 and name not in ("may", "june", "july"):
            return None  # "last mar": too ambiguous
        lower_may = name == "may" and not written(cased, m, 2, "May")
        if lower_may and (m.group(1) == "this" or DETERMINER.search(m.string, 0, m.start())):
            return None  # "this may take a while", "the last may be late"
        if a_march(cased, m, 2):
            return None  # "the last march we went on"
        return _relative_month(now, MONTHS[name], m.group(1))
    if kind == "month":
        qualifier, prep, name, year_s = m.group(1), m.group(2), m.group(3), m.group(4)
        anchored = bool(qualifier or prep or year_s)
        # "the May bank holiday": May, which no leaf's words can hold (a stop word, as the
        # verb), is the month, the only way the question can ask for it
        the_may = name == "may" and written(cased, m, 3, "May") and names_a_thing(m)
        if name == "may" and not anchored and not the_may:
            return None  # "may" alone is far more often the verb
        if not anchored and a_march(cased, m, 3):
            return None  # "when was the last march?", "who organised our march?"
        if not anchored and not the_may and names_a_thing(m):
            return None  # "the March newsletter" is a newsletter, not a time
        if len(name) <= 4 and name not in ("may", "june", "july") and not year_s:
            return None  # bare abbreviations ("mar", "jan") are too ambiguous without a year
        month = MONTHS[name]
        year = int(year_s) if year_s else recent_year(now, month)
        start = _month_start(year, month)
        start, end = _narrow(start, _add_months(start, 1), qualifier)
        return _open_ended(prep, start, end, now)
    if kind == "year":
        if not (m.group(1) or m.group(2)) and names_a_thing(m):
            return None  # "the 2024 taxes" are taxes, whenever they are talked of
        year = int(m.group(3))
        start, end = _narrow(datetime(year, 1, 1), datetime(year + 1, 1, 1), m.group(1))
        return _open_ended(m.group(2), start, end, now)
    return None


def _relative_month(now: datetime, month: int, which: str) -> tuple[datetime, datetime]:
    """"Last March" is the latest March before this month ("last March" asked in March is a year
    ago), "next March" the first after it, "this March" this year's."""
    year = now.year
    if which in ("last", "past", "previous") and month >= now.month:
        year -= 1
    elif which in ("next", "coming") and month <= now.month:
        year += 1
    start = _month_start(year, month)
    return start, _add_months(start, 1)


def _open_ended(prep: str | None, start: datetime, end: datetime, now: datetime) -> tuple[datetime, datetime]:
    """ "since X" runs from X to now, "after X" from the end of X, "before/by/until X" up to X."""
    if prep == "since":
        return start, max(end, now + timedelta(seconds=1))
    if prep == "after":
        return end, max(end + timedelta(days=1), now + timedelta(seconds=1))
    if prep in ("before", "until", "till", "by"):
        return datetime(1970, 1, 1), start if prep == "before" else end
    return start, end


def _back(now: datetime, n: int, unit: str) -> datetime:
    days = {"day": 1, "week": 7, "month": 30, "year": 365}[unit]
    return day_start(now) - timedelta(days=n * days)
