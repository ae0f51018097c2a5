"""A day written in numbers: "23/04/2024", "04/23/2024", "23.04.2024", "23/4", and year first,
"2024/04/23", "2024.04.23" (always year, month, day: no one writes year, day, month). Which
number is the day and which the month is plain when one of them is over 12 ("23/04", "04/23");
otherwise dots are read day first ("01.02.2024" is 1 February: no one writes month.day.year),
slashes in the vault's `[time] date_order` (`dmy`, the default, as most of the world writes
them: "03/04" is 3 April; `mdy`, as the United States does: 4 March). Not a day: two numbers
without a year that could both be a month ("3/4 of us", "2/3", "9/11" — fractions, scores), two
with dots ("23.4", a decimal), three with dots and no four-digit year ("1.2.3", a version). A
date without its year is the one nearest the day the leaf was written; in a leaf without a
time, any year's.

Two numbers without a year are a score or a fraction, not a day, when their words say so
(English, as the relative day words are): a word that announces a count or a result just
before them ("scored 11/15", "a score of 13/20", "page 13/20", "rated 14/20", "got 17/20")
or a plural naming what is counted, or "correct", "wrong", just after them ("11/15 tests
passed", "13/20 points", "17/20 correct"; not a singular noun: "the 24/10 match" is that
day's, nor a plural after "the", "our" …: "the 11/15 reviews" are that day's). A verb of an
event done is no count: "Grandpa passed 11/15", "completed 11/15", "finished 11/15" are days
("11/15 tests passed", "completed 11/15 tasks" are counted by their plural). A written year
makes a date of them whatever the words.

The leaves are found by their numbers in the lexical index's postings ("23/04/2024" is the
terms "23", "04", "2024"), the `NUMBERS_LIMIT` written nearest the days (`day_mentions`)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vaultmind.retrieval.view import MemoryView

NUMBERS_LIMIT = 60  # of the leaves holding an asked day's and its month's numbers, those read
DATE_ORDERS = ("dmy", "mdy")
_NUMERIC = re.compile(
    r"(?<![\w/.,-])(?:(?P<a>\d{1,2})(?P<sep>[/.])(?P<b>\d{1,2})(?:(?P=sep)(?P<y>\d{4}|\d{2}))?"
    r"|(?P<yf>(?:19|20)\d{2})(?P<ysep>[/.])(?P<ym>\d{1,2})(?P=ysep)(?P<yd>\d{1,2}))(?![\w/-]|[.,]\d)"
)
# a word announcing a count or a result just before two numbers ("scored 11/15", "a score of
# 13/20", "page 13/20"): a score or a fraction, not a day
_COUNT_BEFORE = re.compile(
    r"\b(?:scor(?:e|es|ed|ing)|rat(?:e|ed|ing)|grade[ds]?|marks?|marked|pages?|p|chapter|question|level|round"
    r"|results?|total|tally|ratio|fraction|got|gets|solved|answered|won|lost|out[ \t]+of)"
    r"\.?(?:[ \t]+of)?[ \t]*[:=]?[ \t]*\Z",
    re.IGNORECASE,
)
# a plural naming what two numbers count, or a word saying how they went, just after them ("11/15
# tests", "4/5 stars", "17/20 correct"): a score or a fraction, not a day. Not a singular noun:
# "the 24/10 match", "the 21/1 review" are that day's
_COUNTED_AFTER = re.compile(
    r"[ \t]*(?:tests|exams|quizzes|questions|answers|points|pts|stars|marks|votes|goals|shots|games|matches"
    r"|tasks|items|problems|exercises|attempts|tries|people|students|members|players|participants"
    r"|respondents|cases|reviews|checks|steps|pages|chapters|levels|rounds|correct|wrong)\b",
    re.IGNORECASE,
)
# a determiner just before two numbers makes them name the day of what follows: "the 11/15
# reviews", "our 24/10 games" (a score reads "11/15 reviews", "scored 11/15")
_DETERMINER_BEFORE = re.compile(r"\b(?:the|this|that|these|those|our|my|your|their|his|her)[ \t]+\Z", re.IGNORECASE)
_COUNT_REACH = 40  # the characters before two numbers read for a word announcing a count

# what every match of `_NUMERIC` holds: a text without it (most) is passed over unread by the
# slower pattern (4-12 µs a leaf instead of 57-65 µs, over a 5k-note vault's leaves)
_DIGIT_SEP_DIGIT = re.compile(r"\d[/.]\d")


def number_candidates(memory: MemoryView, days: list[datetime]) -> set[str]:
    """The leaves holding one of the asked days' numbers and one of their months' ("23" or
    "23", "4" or "04"): the `NUMBERS_LIMIT` written nearest the days."""
    groups = [
        sorted({n for d in days for n in (str(d.day), f"{d.day:02d}")}),
        sorted({n for d in days for n in (str(d.month), f"{d.month:02d}")}),
    ]
    return set(memory.leaves.holding_all(groups, NUMBERS_LIMIT, near=days[len(days) // 2]))


def numeric_dates(text: str, order: str) -> list[tuple[int, int, int | None]]:
    """The dates `text` writes in numbers, as (month, day, year or None), read in `order`
    (`dmy` or `mdy`) when ambiguous (module doc)."""
    out: list[tuple[int, int, int | None]] = []
    if _DIGIT_SEP_DIGIT.search(text) is None:
        return out
    for m in _NUMERIC.finditer(text):
        if m.group("yf"):
            year_first = int(m.group("yf")), int(m.group("ym")), int(m.group("yd"))
            if 1 <= year_first[1] <= 12 and 1 <= year_first[2] <= 31:
                out.append((year_first[1], year_first[2], year_first[0]))
            continue
        a, b, said = int(m.group("a")), int(m.group("b")), m.group("y")
        dots = m.group("sep") == "."
        if dots and (said is None or len(said) != 4):
            continue  # "23.4", "1.2.3"
        if said is None and ((a <= 12 and b <= 12) or _counts(text, m)):
            continue  # "3/4 of us", "2/3", "scored 11/15", "13/20 points"
        if a > 12 or dots or (b <= 12 and order != "mdy"):
            day, month = a, b
        else:
            month, day = a, b
        year = (int(said) + 2000 if len(said) == 2 else int(said)) if said else None
        if 1 <= month <= 12 and 1 <= day <= 31:
            out.append((month, day, year))
    return out


def _counts(text: str, m: re.Match[str]) -> bool:
    """Whether the two numbers `m` found in `text` (without a year) are a score or a fraction
    by the words around them: one announcing a count before, or one naming what is counted
    after without a determiner before (module doc)."""
    before = text[max(0, m.start() - _COUNT_REACH) : m.start()]
    if _COUNT_BEFORE.search(before) is not None:
        return True
    return _COUNTED_AFTER.match(text, m.end()) is not None and _DETERMINER_BEFORE.search(before) is None
