"""Seasons ("last summer", "in spring 2023"), ISO weeks ("week 14", "W14 2024", "KW 14") and a
range of days joined by an unspaced dash ("3-7 June", "June 3-7") read as the windows the asker
means; the same words naming no time ("the summer reading list", "will this fall apart?") open
none."""

from __future__ import annotations

from datetime import datetime

import pytest

from vaultmind.retrieval.asked_window import question_window

JULY = datetime(2024, 7, 1, 12, 0)  # in summer
OCTOBER = datetime(2024, 10, 5, 12, 0)  # in autumn, summer just ended
JANUARY = datetime(2024, 1, 15, 12, 0)  # in winter


def _days(question: str, now: datetime) -> tuple[str, str] | None:
    window = question_window(question, now)
    return None if window is None else (window.start.date().isoformat(), window.end.date().isoformat())


@pytest.mark.parametrize(
    ("question", "now", "days"),
    [
        # seasons: northern meteorological, relative to the season we are in
        ("what did we do last summer?", JULY, ("2023-06-01", "2023-09-01")),
        ("what did we do last summer?", OCTOBER, ("2024-06-01", "2024-09-01")),
        ("what happened over the summer?", OCTOBER, ("2024-06-01", "2024-09-01")),
        ("where did we go in spring 2023?", JULY, ("2023-03-01", "2023-06-01")),
        ("the spring of 2023", JULY, ("2023-03-01", "2023-06-01")),
        ("what are we doing this winter?", OCTOBER, ("2024-12-01", "2025-03-01")),
        ("what did we do this winter?", JANUARY, ("2023-12-01", "2024-03-01")),
        ("last winter", JANUARY, ("2022-12-01", "2023-03-01")),
        ("in winter 2024", JULY, ("2023-12-01", "2024-03-01")),
        ("next spring", JANUARY, ("2024-03-01", "2024-06-01")),
        ("in the fall", JULY, ("2023-09-01", "2023-12-01")),
        ("late summer 2023", JULY, ("2023-08-01", "2023-09-01")),
        ("since the spring", JULY, ("2024-03-01", "2024-07-01")),
        # ISO weeks: Monday to Monday; without a year, the latest of that number begun
        ("what happened in week 14?", JULY, ("2024-04-01", "2024-04-08")),
        ("what happened in week 14?", JANUARY, ("2023-04-03", "2023-04-10")),
        ("week 14 of 2024", JANUARY, ("2024-04-01", "2024-04-08")),
        ("what was done in W14 2024?", JULY, ("2024-04-01", "2024-04-08")),
        ("the 2024-W14 report", JULY, ("2024-04-01", "2024-04-08")),
        ("Was war in KW 14?", JULY, ("2024-04-01", "2024-04-08")),
        ("week 53 of 2020", JULY, ("2020-12-28", "2021-01-04")),
        # a range of days joined by a dash without spaces
        ("what happened 3-7 June?", JULY, ("2024-06-03", "2024-06-08")),
        ("what happened 3–7 June?", JULY, ("2024-06-03", "2024-06-08")),
        ("what happened June 3-7?", JULY, ("2024-06-03", "2024-06-08")),
        ("what happened June 3–7, 2023?", JULY, ("2023-06-03", "2023-06-08")),
        ("what happened 3 June – 7 June?", JULY, ("2024-06-03", "2024-06-08")),  # as before
    ],
)
def test_season_week_and_dash_range_windows(question: str, now: datetime, days: tuple[str, str]) -> None:
    assert _days(question, now) == days


@pytest.mark.parametrize(
    ("question", "now", "days"),
    [
        ("what is on the summer reading list?", JULY, None),  # a season said bare names a thing
        ("how was summer?", JULY, None),
        ("will this fall apart?", JULY, None),  # the verb
        ("did the last fall hurt?", JULY, None),  # a tumble
        ("what are our summer plans?", JULY, None),
        ("week 53", JULY, None),  # neither 2024 nor 2023 has one
        ("what happened after the fall of Rome?", JULY, None),  # another's fall
        ("since the fall of the wall, what changed?", JULY, None),
        ("what did we learn in week 2 of the course?", JULY, None),  # the course's week, not ISO week 2
        ("notes on week 1 of the sprint", JULY, None),
        ("what changed in Python 3.11-12 June?", JULY, ("2024-06-12", "2024-06-13")),  # a version, then a day
        (
            "we met on June 3 - 2 of us came",
            JULY,
            ("2024-06-03", "2024-06-04"),
        ),  # a spaced dash joins no bare day
    ],
)
def test_words_that_name_no_season_or_week(
    question: str, now: datetime, days: tuple[str, str] | None
) -> None:
    assert _days(question, now) == days
