"""The weekdays' and months' names every date-reading module builds on: English, in calendar
order, each short name with its month, read the same wherever a date is read."""

from __future__ import annotations

import calendar
import re
from datetime import datetime

import pytest

from vaultmind.calendar_names import MONTH_ABBREVIATIONS, MONTH_NUMBERS, MONTHS, WEEKDAYS, alternation
from vaultmind.ingest.locomo import parse_session_time
from vaultmind.retrieval.timeparse import parse_time_window


def test_names_are_the_english_calendars() -> None:
    assert tuple(name.lower() for name in calendar.day_name) == WEEKDAYS
    assert tuple(name.lower() for name in calendar.month_name[1:]) == MONTHS
    english = {name.lower(): n for names in (calendar.month_name, calendar.month_abbr) for n, name in enumerate(names)}
    assert {**{name: n for name, n in english.items() if name}, "sept": 9} == MONTH_NUMBERS
    assert set(MONTH_ABBREVIATIONS) == set(MONTH_NUMBERS) - set(MONTHS)


@pytest.mark.parametrize("name", sorted(MONTH_NUMBERS))
def test_every_month_name_dates_a_question_and_a_session(name: str) -> None:
    window = parse_time_window(f"what did we plan in {name.title()} 2024?", datetime(2025, 6, 1))
    assert window is not None
    assert (window.start.year, window.start.month) == (2024, MONTH_NUMBERS[name])
    assert parse_session_time(f"1:56 pm on 8 {name.title()}, 2023").month == MONTH_NUMBERS[name]


def test_alternation_tries_the_longest_name_first() -> None:
    assert alternation(WEEKDAYS) == "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
    longest = alternation(("jun", "june", "sep", "sept", "may"), longest_first=True)
    assert longest == "june|sept|jun|sep|may"
    assert re.match(f"(?:{longest})", "june 3").group(0) == "june"  # type: ignore[union-attr]
    assert re.match(f"(?:{alternation(('jun', 'june'))})", "june 3").group(0) == "jun"  # type: ignore[union-attr]
