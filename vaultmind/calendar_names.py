"""The names of the weekdays and the months, lower-cased and in calendar order: the one list
every module that reads a date in text builds its words and patterns from."""

from __future__ import annotations

from collections.abc import Iterable

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip
# the short names of the months other than their full name ("may" is both), "sept" beside "sep"
MONTH_ABBREVIATIONS = ("jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec")
# each full and short name with its month's number: "march" 3, "mar" 3, "sept" 9
MONTH_NUMBERS = {name: number for number, name in enumerate(MONTHS, start=1)} | {
    short: next(number for number, name in enumerate(MONTHS, start=1) if name.startswith(short))
    for short in MONTH_ABBREVIATIONS
}


def alternation(names: Iterable[str], *, longest_first: bool = False) -> str:
    """The regex alternation of `names` ("monday|tuesday|…"), in their order, or longest first
    (so that "june" is tried before "jun"; names of one length keep their order)."""
    return "|".join(sorted(names, key=len, reverse=True) if longest_first else names)
